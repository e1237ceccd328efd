// C thunks of gpufmm_mpi.h (library gpufmm_mpi; src/mpi/treecode_mpi.hpp).
#include "gpufmm_mpi.h"

#include <exception>

#include "core/context.hpp"
#include "core/error.hpp"
#include "mpi/treecode_mpi.hpp"
#include "treecode_convert.hpp"

using namespace gpufmm;

extern "C" {

gpufmm_status_t gpufmm_treecode_plan_create_mpi(gpufmm_context_t ctx, MPI_Comm comm,
                                                const gpufmm_treecode_options_t* opt, int64_t nlocal_src,
                                                const double* sources, int64_t nlocal_trg, const double* targets,
                                                gpufmm_treecode_plan_t* plan) {
  return guard("gpufmm_treecode_plan_create_mpi", [&] {
    // An argument error of one rank is agreed on with the others (it must
    // not leave them waiting): passed in, thrown in the first agreement.
    Context* c = nullptr;
    treecode::Options o;
    std::exception_ptr early;
    try {
      require_out(plan, "plan");
      *plan = nullptr;
      c = checked_context(ctx);
      o = capi::treecode_options(opt);
      require(!o.calibrate, GPUFMM_ERROR_INVALID_ARGUMENT,
              "options field 'calibrate' = 1 is for single-process plans (an MPI plan takes theta and degree "
              "from the error table, or as given)");
    } catch (...) {
      early = std::current_exception();
    }
    auto obj = mpi::treecode_plan_create(c, comm, o, early, nlocal_src, sources, nlocal_trg, targets);
    *plan = capi::register_treecode_plan(std::move(obj));
  });
}

gpufmm_status_t gpufmm_treecode_plan_create_mpi_f(gpufmm_context_t ctx, MPI_Fint comm,
                                                  const gpufmm_treecode_options_t* opt, int64_t nlocal_src,
                                                  const double* sources, int64_t nlocal_trg, const double* targets,
                                                  gpufmm_treecode_plan_t* plan) {
  return gpufmm_treecode_plan_create_mpi(ctx, MPI_Comm_f2c(comm), opt, nlocal_src, sources, nlocal_trg, targets,
                                         plan);
}

}  // extern "C"
