// The C FMM-FFT options as the library's, and plan registration: shared by
// the FMM-FFT thunks (fft.cpp) and those of the MPI plan (mpi/fft.cpp,
// library gpufmm_mpi).
#pragma once

#include <memory>

#include "fmmfft/plan.hpp"
#include "gpufmm.h"

namespace gpufmm {
namespace capi {

// *opt checked field by field; INVALID_ARGUMENT names the field (opt NULL:
// INVALID_ARGUMENT, the options carry n).
fmmfft::Options fft_options(const gpufmm_fft_options_t* opt);

// The handle of a new plan object (it owns it from then on).
gpufmm_fft_plan_t register_fft_plan(std::unique_ptr<fmmfft::PlanObject> h);

}  // namespace capi
}  // namespace gpufmm
