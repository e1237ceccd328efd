// The conversions of the Laplace FMM thunks (bindings/c/laplace.cpp) between
// the structs of gpufmm.h and the core's; the tests use them too (to build
// plans with the tuning knobs the C options do not carry, and to compare
// plans). The fields every FMM shares are converted by fmm_convert.hpp.
#pragma once

#include "fmm/laplace/plan.hpp"
#include "gpufmm.h"

namespace gpufmm {
namespace capi {

// C options (NULL = defaults) -> validated options; throws INVALID_ARGUMENT
// naming the field.
fmm::LaplaceOptions laplace_options(const gpufmm_laplace_options_t* opt);
// The defaults of the core's options, as C options.
void laplace_options_defaults(gpufmm_laplace_options_t* opt);
// Sizes and times of a plan (gpufmm_laplace_plan_info).
gpufmm_laplace_info_t laplace_info(const fmm::LaplacePlan& plan);

}  // namespace capi
}  // namespace gpufmm
