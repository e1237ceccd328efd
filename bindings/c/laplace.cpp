// C thunks of the Laplace FMM section of gpufmm.h (except
// gpufmm_laplace_direct, in direct.cpp): argument checks, status codes and
// the conversions of options and plan information (laplace_convert.hpp); the
// work is in src/cxx/fmm/laplace/.
// Every argument is checked before anything is computed, so outputs are
// untouched on any error.
#include <cstring>
#include <memory>
#include <mutex>

#include "array/array.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/handles.hpp"
#include "fmm/laplace/basis.hpp"
#include "fmm/laplace/plan.hpp"
#include "gpufmm.h"
#include "fmm_convert.hpp"
#include "laplace_convert.hpp"

using namespace gpufmm;

// The largest p of the math, as gpufmm.h names it (Fortran's constant of
// that name, in gpufmm_core, is generated from the header).
static_assert(GPUFMM_LAPLACE_MAX_P == kMaxP, "GPUFMM_LAPLACE_MAX_P (gpufmm.h) is not kMaxP of the math (basis.hpp)");

namespace gpufmm {
namespace capi {

namespace {

// gpufmm.h's table of the defaults (GPUFMM_LAPLACE_OPTIONS_DEFAULT, which the
// Fortran type gpufmm_laplace_options takes its default values from) and
// whether it says what the core's options default to.
constexpr gpufmm_laplace_options_t kLaplaceDefaults = GPUFMM_LAPLACE_OPTIONS_DEFAULT;

constexpr int flag(bool b) { return b ? 1 : 0; }

constexpr bool same_defaults(const gpufmm_laplace_options_t& c, const fmm::LaplaceOptions& d) {
  return c.eps == d.eps && c.precision == d.precision && c.p == d.p && c.l_max == d.l_max && c.s_max == d.s_max &&
         c.stencil == d.stencil && c.variable_truncation == flag(d.variable_truncation) &&
         c.table_cache == flag(d.table_cache) && c.gpu_p2m == d.gpu.p2m && c.gpu_m2m == d.gpu.m2m &&
         c.gpu_m2l == d.gpu.m2l && c.gpu_l2l == d.gpu.l2l && c.gpu_l2p == d.gpu.l2p && c.gpu_p2p == d.gpu.p2p &&
         c.gpu_overlap == flag(d.gpu.overlap) && c.gpu_graph == flag(d.gpu.graph) && c.tree == d.tree &&
         c.calibrate == flag(d.calibrate) && c.densities == d.densities && c.cube_padding == d.cube_padding;
}

static_assert(same_defaults(kLaplaceDefaults, fmm::LaplaceOptions{}),
              "GPUFMM_LAPLACE_OPTIONS_DEFAULT (gpufmm.h) differs from fmm::LaplaceOptions' defaults");

}  // namespace

void laplace_options_defaults(gpufmm_laplace_options_t* opt) {
  std::memset(opt, 0, sizeof *opt);
  *opt = kLaplaceDefaults;
}

fmm::LaplaceOptions laplace_options(const gpufmm_laplace_options_t* opt) {
  fmm::LaplaceOptions o;
  if (opt == nullptr) return o;
  fmm_options_common(*opt, o);
  // The Laplace expansion's own.
  o.p = opt->p;
  o.stencil = opt->stencil;
  require_flag(opt->variable_truncation, "variable_truncation");
  o.variable_truncation = opt->variable_truncation != 0;
  fmm::set_gpu_strategies(o.gpu, {opt->gpu_p2m, opt->gpu_m2m, opt->gpu_m2l, opt->gpu_l2l, opt->gpu_l2p, opt->gpu_p2p});
  fmm::validate_options(o);
  return o;
}

gpufmm_laplace_info_t laplace_info(const fmm::LaplacePlan& plan) {
  gpufmm_laplace_info_t info;
  fmm_info_common(plan, info);
  info.p = plan.p;  // one p at every level
  return info;
}

// gpufmm_laplace_evaluate (nd_api false: nd 1, no hess) and _nd with host arrays.
void laplace_evaluate_host(gpufmm_laplace_plan_t plan, int nd, bool nd_api, const double* charges,
                           const double* dipoles, double* pot, double* grad, double* hess) {
  fmm::PlanObject* h = checked_laplace_plan(plan);
  std::lock_guard<std::mutex> lock(h->mutex);
  fmm::LaplaceEvalArgs a;
  a.dtype = GPUFMM_FLOAT64;
  a.on_context = false;
  a.nd_api = nd_api;
  a.nd = nd;
  a.charges = charges;
  a.dipoles = dipoles;
  a.pot = pot;
  a.grad = grad;
  a.hess = hess;
  fmm::laplace_evaluate(*h->plan, a);
}

}  // namespace capi
}  // namespace gpufmm


extern "C" {

gpufmm_status_t gpufmm_laplace_options_init(gpufmm_laplace_options_t* opt) {
  return guard("gpufmm_laplace_options_init", [&] {
    require_out(opt, "opt");
    capi::laplace_options_defaults(opt);
  });
}

gpufmm_status_t gpufmm_laplace_plan_create(gpufmm_context_t ctx, const gpufmm_laplace_options_t* opt,
                                           int64_t nsrc, const double* sources, int64_t ntrg,
                                           const double* targets, gpufmm_laplace_plan_t* plan) {
  return guard("gpufmm_laplace_plan_create", [&] {
    Context* c = checked_context(ctx);
    require_out(plan, "plan");
    const fmm::LaplaceOptions o = capi::laplace_options(opt);
    *plan = fmm::laplace_plan_handle(fmm::laplace_plan_create(*c, o, nsrc, sources, ntrg, targets));
  });
}

gpufmm_status_t gpufmm_laplace_plan_destroy(gpufmm_laplace_plan_t plan) {
  return guard("gpufmm_laplace_plan_destroy", [&] {
    if (plan == nullptr) return;
    delete retired_handle<fmm::PlanObject>(plan, HandleKind::LaplacePlan, "plan");
  });
}

gpufmm_status_t gpufmm_laplace_evaluate(gpufmm_laplace_plan_t plan, const double* charges,
                                        const double* dipoles, double* pot, double* grad) {
  return guard("gpufmm_laplace_evaluate",
               [&] { capi::laplace_evaluate_host(plan, 1, false, charges, dipoles, pot, grad, nullptr); });
}

gpufmm_status_t gpufmm_laplace_evaluate_arrays(gpufmm_laplace_plan_t plan, gpufmm_array_t charges,
                                               gpufmm_array_t dipoles, gpufmm_array_t pot,
                                               gpufmm_array_t grad) {
  return guard("gpufmm_laplace_evaluate_arrays", [&] {
    fmm::PlanObject* h = checked_laplace_plan(plan);
    std::lock_guard<std::mutex> lock(h->mutex);
    const fmm::LaplacePlan& P = *h->plan;
    fmm::LaplaceEvalArgs a;
    a.dtype = P.options.precision;
    a.on_context = true;
    a.charges = plan_array_data(P.ctx, P.options.precision, charges, P.nsrc, "charges");
    a.dipoles = plan_array_data(P.ctx, P.options.precision, dipoles, 3 * P.nsrc, "dipoles");
    a.pot = plan_array_data(P.ctx, P.options.precision, pot, P.ntrg, "pot");
    a.grad = plan_array_data(P.ctx, P.options.precision, grad, 3 * P.ntrg, "grad");
    fmm::laplace_evaluate(*h->plan, a);
  });
}

gpufmm_status_t gpufmm_laplace_evaluate_nd(gpufmm_laplace_plan_t plan, int nd, const double* charges,
                                           const double* dipoles, double* pot, double* grad, double* hess) {
  return guard("gpufmm_laplace_evaluate_nd",
               [&] { capi::laplace_evaluate_host(plan, nd, true, charges, dipoles, pot, grad, hess); });
}

gpufmm_status_t gpufmm_laplace_evaluate_nd_arrays(gpufmm_laplace_plan_t plan, int nd, gpufmm_array_t charges,
                                                  gpufmm_array_t dipoles, gpufmm_array_t pot, gpufmm_array_t grad,
                                                  gpufmm_array_t hess) {
  return guard("gpufmm_laplace_evaluate_nd_arrays", [&] {
    fmm::PlanObject* h = checked_laplace_plan(plan);
    std::lock_guard<std::mutex> lock(h->mutex);
    require(nd >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nd' = ", nd, " is not positive");
    const fmm::LaplacePlan& P = *h->plan;
    const gpufmm_dtype_t dt = P.options.precision;
    fmm::LaplaceEvalArgs a;
    a.dtype = dt;
    a.on_context = true;
    a.nd_api = true;
    a.nd = nd;
    a.charges = plan_array_data(P.ctx, dt, charges, nd * P.nsrc, "charges");
    a.dipoles = plan_array_data(P.ctx, dt, dipoles, nd * 3 * P.nsrc, "dipoles");
    a.pot = plan_array_data(P.ctx, dt, pot, nd * P.ntrg, "pot");
    a.grad = plan_array_data(P.ctx, dt, grad, nd * 3 * P.ntrg, "grad");
    a.hess = plan_array_data(P.ctx, dt, hess, nd * 6 * P.ntrg, "hess");
    fmm::laplace_evaluate(*h->plan, a);
  });
}

gpufmm_status_t gpufmm_laplace_plan_info(gpufmm_laplace_plan_t plan, gpufmm_laplace_info_t* info) {
  return guard("gpufmm_laplace_plan_info", [&] {
    fmm::PlanObject* h = checked_laplace_plan(plan);
    require_out(info, "info");
    std::lock_guard<std::mutex> lock(h->mutex);
    *info = capi::laplace_info(*h->plan);
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
