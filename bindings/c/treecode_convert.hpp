// The C treecode options as the library's, and plan registration: shared by
// the treecode thunks (treecode.cpp) and those of the MPI plan
// (treecode_mpi.cpp, library gpufmm_mpi).
#pragma once

#include <memory>

#include "gpufmm.h"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace capi {

// *opt checked field by field (NULL: the defaults); INVALID_ARGUMENT names
// the field.
treecode::Options treecode_options(const gpufmm_treecode_options_t* opt);

// The handle of a new plan object (it owns it from then on).
gpufmm_treecode_plan_t register_treecode_plan(std::unique_ptr<treecode::PlanObject> h);

}  // namespace capi
}  // namespace gpufmm
