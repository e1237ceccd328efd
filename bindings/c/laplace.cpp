// C thunks of the Laplace FMM section of gpufmm.h (except
// gpufmm_laplace_direct, in laplace_direct.cpp): argument checks and status
// codes; the work is in src/cxx/fmm/laplace_plan.* and laplace_cpu.cpp.
// Every argument is checked before anything is computed, so outputs are
// untouched on any error.
#include <memory>
#include <mutex>

#include "array/array.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/handles.hpp"
#include "fmm/laplace/plan.hpp"
#include "gpufmm.h"

using namespace gpufmm;

namespace {

// A non-NULL array argument of evaluate_arrays: live, on the plan's context,
// of the plan's precision, with `count` elements. Returns its data pointer.
void* checked_eval_array(const fmm::LaplacePlan& plan, gpufmm_array_t a, int64_t count,
                         const char* name) {
  if (a == nullptr) return nullptr;
  Array* arr = checked_array(a, name);
  require(arr->ctx == &plan.ctx, GPUFMM_ERROR_INVALID_ARGUMENT, "array '", name,
          "' belongs to another context than the plan's");
  require(arr->dtype == plan.options.precision, GPUFMM_ERROR_TYPE_MISMATCH, "array '", name,
          "' has dtype ", dtype_name(arr->dtype), " but the plan's precision is ",
          dtype_name(plan.options.precision));
  require(arr->count == count, GPUFMM_ERROR_SIZE_MISMATCH, "array '", name, "' has ", arr->count,
          " elements, expected ", count);
  // A zero-size array has no data pointer; any non-NULL marker will do.
  static double empty = 0.0;
  return arr->data != nullptr ? arr->data : &empty;
}

}  // namespace

extern "C" {

gpufmm_status_t gpufmm_laplace_options_init(gpufmm_laplace_options_t* opt) {
  return guard("gpufmm_laplace_options_init", [&] {
    require_out(opt, "opt");
    fmm::laplace_options_defaults(opt);
  });
}

gpufmm_status_t gpufmm_laplace_plan_create(gpufmm_context_t ctx, const gpufmm_laplace_options_t* opt,
                                           int64_t nsrc, const double* sources, int64_t ntrg,
                                           const double* targets, gpufmm_laplace_plan_t* plan) {
  return guard("gpufmm_laplace_plan_create", [&] {
    Context* c = checked_context(ctx);
    require_out(plan, "plan");
    const fmm::LaplaceOptions o = fmm::laplace_options_from_c(opt);
    *plan = fmm::laplace_plan_handle(fmm::laplace_plan_create(*c, o, nsrc, sources, ntrg, targets));
  });
}

gpufmm_status_t gpufmm_laplace_plan_destroy(gpufmm_laplace_plan_t plan) {
  return guard("gpufmm_laplace_plan_destroy", [&] {
    if (plan == nullptr) return;
    require(unregister_handle(plan, HandleKind::LaplacePlan), GPUFMM_ERROR_INVALID_HANDLE,
            "Laplace plan handle 'plan' is not a live handle (never created, or already destroyed)");
    delete plan;
  });
}

gpufmm_status_t gpufmm_laplace_evaluate(gpufmm_laplace_plan_t plan, const double* charges,
                                        const double* dipoles, double* pot, double* grad) {
  return guard("gpufmm_laplace_evaluate", [&] {
    gpufmm_laplace_plan_s* h = checked_laplace_plan(plan);
    std::lock_guard<std::mutex> lock(h->mutex);
    fmm::LaplaceEvalArgs a;
    a.dtype = GPUFMM_FLOAT64;
    a.on_context = false;
    a.charges = charges;
    a.dipoles = dipoles;
    a.pot = pot;
    a.grad = grad;
    fmm::laplace_evaluate(*h->plan, a);
  });
}

gpufmm_status_t gpufmm_laplace_evaluate_arrays(gpufmm_laplace_plan_t plan, gpufmm_array_t charges,
                                               gpufmm_array_t dipoles, gpufmm_array_t pot,
                                               gpufmm_array_t grad) {
  return guard("gpufmm_laplace_evaluate_arrays", [&] {
    gpufmm_laplace_plan_s* h = checked_laplace_plan(plan);
    std::lock_guard<std::mutex> lock(h->mutex);
    const fmm::LaplacePlan& P = *h->plan;
    fmm::LaplaceEvalArgs a;
    a.dtype = P.options.precision;
    a.on_context = true;
    a.charges = checked_eval_array(P, charges, P.nsrc, "charges");
    a.dipoles = checked_eval_array(P, dipoles, 3 * P.nsrc, "dipoles");
    a.pot = checked_eval_array(P, pot, P.ntrg, "pot");
    a.grad = checked_eval_array(P, grad, 3 * P.ntrg, "grad");
    fmm::laplace_evaluate(*h->plan, a);
  });
}

gpufmm_status_t gpufmm_laplace_plan_info(gpufmm_laplace_plan_t plan, gpufmm_laplace_info_t* info) {
  return guard("gpufmm_laplace_plan_info", [&] {
    gpufmm_laplace_plan_s* h = checked_laplace_plan(plan);
    require_out(info, "info");
    std::lock_guard<std::mutex> lock(h->mutex);
    *info = fmm::laplace_plan_info(*h->plan);
  });
}

gpufmm_status_t gpufmm_laplace(gpufmm_context_t ctx, double eps, int64_t nsrc, const double* sources,
                               const double* charges, const double* dipoles, int64_t ntrg,
                               const double* targets, double* pot, double* grad) {
  return guard("gpufmm_laplace", [&] {
    Context* c = checked_context(ctx);
    require(eps > 0.0 && eps < 1.0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'eps' = ", eps,
            " is not in (0, 1)");
    fmm::LaplaceOptions o;
    o.eps = eps;
    // Cheap checks first, so that bad evaluate arguments fail before the plan.
    require(charges != nullptr || dipoles != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'charges' and 'dipoles' are both NULL: the sources carry nothing");
    require(pot != nullptr || grad != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'pot' and 'grad' are both NULL: nothing to compute");
    auto plan = fmm::laplace_plan_create(*c, o, nsrc, sources, ntrg, targets);
    fmm::LaplaceEvalArgs a;
    a.charges = charges;
    a.dipoles = dipoles;
    a.pot = pot;
    a.grad = grad;
    fmm::laplace_evaluate(*plan, a);
  });
}

}  // extern "C"
