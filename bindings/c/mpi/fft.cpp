// C thunks of the FMM-FFT across MPI ranks (gpufmm_mpi.h; src/mpi/fmmfft_mpi.hpp).
#include <exception>

#include "core/context.hpp"
#include "core/error.hpp"
#include "fft_convert.hpp"
#include "gpufmm_mpi.h"
#include "mpi/fmmfft_mpi.hpp"

using namespace gpufmm;

extern "C" {

gpufmm_status_t gpufmm_fft_plan_create_mpi(gpufmm_context_t ctx, MPI_Comm comm, const gpufmm_fft_options_t* opt,
                                           gpufmm_fft_plan_t* plan) {
  return guard("gpufmm_fft_plan_create_mpi", [&] {
    // An argument error of one rank is agreed on with the others.
    Context* c = nullptr;
    fmmfft::Options o;
    std::exception_ptr early;
    try {
      require_out(plan, "plan");
      *plan = nullptr;
      c = checked_context(ctx);
      o = capi::fft_options(opt);
    } catch (...) {
      early = std::current_exception();
    }
    *plan = capi::register_fft_plan(mpi::fft_plan_create(c, comm, o, early));
  });
}

gpufmm_status_t gpufmm_fft_plan_create_mpi_f(gpufmm_context_t ctx, MPI_Fint comm, const gpufmm_fft_options_t* opt,
                                             gpufmm_fft_plan_t* plan) {
  return gpufmm_fft_plan_create_mpi(ctx, MPI_Comm_f2c(comm), opt, plan);
}

}  // extern "C"
