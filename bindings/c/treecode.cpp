// C thunks of the treecode (gpufmm_treecode_*; src/cxx/treecode/plan.hpp):
// every argument checked before anything is computed, outputs untouched
// on error.
#include <mutex>

#include "array/array.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/handles.hpp"
#include "gpufmm.h"
#include "kernel_convert.hpp"
#include "treecode/plan.hpp"
#include "treecode_convert.hpp"

using namespace gpufmm;

static_assert(int(treecode::Type::kPC) == GPUFMM_TREECODE_PC && int(treecode::Type::kCP) == GPUFMM_TREECODE_CP &&
                  int(treecode::Type::kCC) == GPUFMM_TREECODE_CC,
              "treecode::Type mirrors gpufmm_treecode_type_t");
static_assert(GPUFMM_TREECODE_MAX_DEGREE == approx::kMaxDegree, "one largest degree");

namespace {

void defaults(gpufmm_treecode_options_t* o) {
  const treecode::Options d;
  *o = gpufmm_treecode_options_t{};
  o->kernel.type = GPUFMM_KERNEL_LAPLACE;
  o->kernel.nparams = 0;
  o->eps = d.eps;
  o->theta = d.theta;
  o->degree = d.degree;
  o->leaf_size = d.leaf_size;
  o->batch_size = d.batch_size;
  o->type = int(d.type);
  o->precision = int(d.precision);
  o->grad = d.grad ? 1 : 0;
  o->calibrate = d.calibrate ? 1 : 0;
}

}  // namespace

namespace gpufmm {
namespace capi {

treecode::Options treecode_options(const gpufmm_treecode_options_t* opt) {
  gpufmm_treecode_options_t c;
  if (opt != nullptr)
    c = *opt;
  else
    defaults(&c);
  treecode::Options o;
  o.kernel = capi::kernel_desc(&c.kernel, "opt->kernel");
  o.eps = c.eps;
  o.theta = c.theta;
  o.degree = c.degree;
  o.leaf_size = c.leaf_size;
  o.batch_size = c.batch_size;
  require(c.type >= 0 && c.type <= 2, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'type' = ", c.type,
          " is not GPUFMM_TREECODE_PC, _CP or _CC");
  o.type = treecode::Type(c.type);
  o.precision = checked_precision(c.precision, "options field 'precision'");
  require_flag(c.grad, "grad");
  o.grad = c.grad == 1;
  require_flag(c.calibrate, "calibrate");
  o.calibrate = c.calibrate == 1;
  treecode::validate(o);
  return o;
}

gpufmm_treecode_plan_t register_treecode_plan(std::unique_ptr<treecode::PlanObject> h) {
  auto* handle = static_cast<gpufmm_treecode_plan_t>(register_handle(h.get(), HandleKind::TreecodePlan));
  h.release();
  return handle;
}

}  // namespace capi
}  // namespace gpufmm

namespace {

treecode::PlanObject* checked_plan(gpufmm_treecode_plan_t p) {
  return checked_handle<treecode::PlanObject>(p, HandleKind::TreecodePlan, "plan");
}

gpufmm_treecode_plan_t register_plan(std::unique_ptr<treecode::Plan> plan) {
  auto h = std::make_unique<treecode::PlanObject>();
  h->plan = std::move(plan);
  return capi::register_treecode_plan(std::move(h));
}

// An MPI plan's view of this rank over the local plan's (RankInfo).
void rank_info(const treecode::RankInfo& d, gpufmm_treecode_info_t& r) {
  r.nsrc = d.nsrc;
  r.ntrg = d.ntrg;
  r.nranks = d.nranks;
  r.rank = d.rank;
  r.nsrc_owned = d.nsrc_owned;
  r.ntrg_owned = d.ntrg_owned;
  r.nsrc_global = d.nsrc_global;
  r.ntrg_global = d.ntrg_global;
  r.let_boxes = d.let_boxes;
  r.let_clusters = d.let_clusters;
  r.let_points = d.let_points;
  r.let_bytes_plan = d.let_bytes_plan;
  r.let_bytes_evaluate = d.let_bytes_evaluate;
  r.plan_seconds = d.plan_seconds;
  r.t_rcb = d.t_rcb;
  r.t_redistribute = d.t_redistribute;
  r.t_let_tree = d.t_let_tree;
  r.t_let_data = d.t_let_data;
  r.t_route = d.t_route;
  r.t_exchange = d.t_exchange;
  r.t_total = d.t_total;
}

}  // namespace

extern "C" {

gpufmm_status_t gpufmm_treecode_options_init(gpufmm_treecode_options_t* opt) {
  return guard("gpufmm_treecode_options_init", [&] {
    require_out(opt, "opt");
    defaults(opt);
  });
}

gpufmm_status_t gpufmm_treecode_plan_create(gpufmm_context_t ctx, const gpufmm_treecode_options_t* opt,
                                            int64_t nsrc, const double* sources, int64_t ntrg,
                                            const double* targets, gpufmm_treecode_plan_t* plan) {
  return guard("gpufmm_treecode_plan_create", [&] {
    Context* c = checked_context(ctx);
    require_out(plan, "plan");
    const treecode::Options o = capi::treecode_options(opt);
    *plan = register_plan(treecode::plan_create(*c, o, nsrc, sources, ntrg, targets));
  });
}

gpufmm_status_t gpufmm_treecode_plan_destroy(gpufmm_treecode_plan_t plan) {
  return guard("gpufmm_treecode_plan_destroy", [&] {
    if (plan == nullptr) return;
    delete retired_handle<treecode::PlanObject>(plan, HandleKind::TreecodePlan, "plan");
  });
}

gpufmm_status_t gpufmm_treecode_evaluate(gpufmm_treecode_plan_t plan, const double* charges, double* pot,
                                         double* grad) {
  return guard("gpufmm_treecode_evaluate", [&] {
    treecode::PlanObject& obj = *checked_plan(plan);
    treecode::Plan& P = *obj.plan;
    std::lock_guard<std::mutex> lock(P.mutex);
    treecode::EvalArgs a;
    a.charges = charges;
    a.pot = pot;
    a.grad = grad;
    if (obj.dist)
      obj.dist->evaluate(a);
    else
      treecode::evaluate(P, a);
  });
}

gpufmm_status_t gpufmm_treecode_evaluate_arrays(gpufmm_treecode_plan_t plan, gpufmm_array_t charges,
                                                gpufmm_array_t pot, gpufmm_array_t grad) {
  return guard("gpufmm_treecode_evaluate_arrays", [&] {
    treecode::PlanObject& obj = *checked_plan(plan);
    require(!obj.dist, GPUFMM_ERROR_NOT_SUPPORTED,
            "an MPI plan evaluates host arrays: call gpufmm_treecode_evaluate");
    treecode::Plan& P = *obj.plan;
    std::lock_guard<std::mutex> lock(P.mutex);
    require(charges != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charges' is a NULL handle");
    treecode::EvalArgs a;
    a.on_context = true;
    a.charges = plan_array_data(P.ctx, P.options.precision, charges, P.nsrc, "charges");
    a.pot = plan_array_data(P.ctx, P.options.precision, pot, P.ntrg, "pot");
    a.grad = plan_array_data(P.ctx, P.options.precision, grad, 3 * P.ntrg, "grad");
    treecode::evaluate(P, a);
  });
}

gpufmm_status_t gpufmm_treecode_plan_info(gpufmm_treecode_plan_t plan, gpufmm_treecode_info_t* info) {
  return guard("gpufmm_treecode_plan_info", [&] {
    treecode::PlanObject& obj = *checked_plan(plan);
    treecode::Plan& P = *obj.plan;
    require_out(info, "info");
    std::lock_guard<std::mutex> lock(P.mutex);
    gpufmm_treecode_info_t r{};
    r.theta = P.par.theta;
    r.degree = P.par.degree;
    r.leaf_size = P.par.leaf_size;
    r.batch_size = P.par.batch_size;
    r.type = int(P.options.type);
    r.precision = int(P.options.precision);
    r.backend = P.ctx.on_gpu() ? GPUFMM_BACKEND_CUDA : GPUFMM_BACKEND_CPU;
    r.nsrc = P.nsrc;
    r.ntrg = P.ntrg;
    r.source_clusters = P.stats.source_clusters;
    r.target_clusters = P.stats.target_clusters;
    r.batches = P.stats.batches;
    r.source_proxy_clusters = P.stats.source_proxies;
    r.target_proxy_clusters = P.stats.target_proxies;
    r.list_entries = P.stats.list_entries;
    r.approx_interactions = P.stats.approx_pairs;
    r.direct_interactions = P.stats.direct_pairs;
    r.predicted_error = treecode::predicted_error(P.par.theta, P.par.degree, P.options.grad);
    r.plan_seconds = P.plan_seconds;
    r.t_plan_tree = P.times.tree;
    r.t_plan_lists = P.times.lists;
    r.t_plan_setup = P.times.setup;
    r.t_precompute = P.times.upward;
    r.t_compute = P.times.nearfield;
    r.t_downward = P.times.downward;
    r.t_total = P.times.total;
    r.calibration_evaluates = P.calibration_evaluates;
    r.measured_eps = P.measured_eps;
    r.nranks = 1;
    r.nsrc_owned = r.nsrc_global = P.nsrc;
    r.ntrg_owned = r.ntrg_global = P.ntrg;
    if (obj.dist) rank_info(obj.dist->info(), r);
    *info = r;
  });
}

gpufmm_status_t gpufmm_treecode(gpufmm_context_t ctx, const gpufmm_kernel_t* kernel, double eps, int64_t nsrc,
                                const double* sources, const double* charges, int64_t ntrg, const double* targets,
                                double* pot, double* grad) {
  return guard("gpufmm_treecode", [&] {
    Context* c = checked_context(ctx);
    treecode::Options o;
    o.kernel = capi::kernel_desc(kernel, "kernel");
    require(eps > 0.0 && eps < 1.0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'eps' = ", eps, " is not in (0, 1)");
    o.eps = eps;
    o.grad = grad != nullptr;
    require(charges != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charges' is NULL");
    require(pot != nullptr || grad != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'pot' and 'grad' are both NULL: nothing to compute");
    auto P = treecode::plan_create(*c, o, nsrc, sources, ntrg, targets);
    treecode::EvalArgs a;
    a.charges = charges;
    a.pot = pot;
    a.grad = grad;
    treecode::evaluate(*P, a);
  });
}

}  // extern "C"
