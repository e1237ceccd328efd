// C thunks of the FMM-FFT (gpufmm_fft_*; src/cxx/fmmfft/plan.hpp): every
// argument checked before anything is computed, outputs untouched on error.
#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "array/array.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/handles.hpp"
#include "fft_convert.hpp"
#include "fmmfft/plan.hpp"
#include "gpufmm.h"

using namespace gpufmm;

static_assert(GPUFMM_FFT_STAGES == fmmfft::kStages && GPUFMM_FFT_STAGE_S2T == fmmfft::kS2T &&
                  GPUFMM_FFT_STAGE_FFT_M == fmmfft::kFftM && GPUFMM_FFT_MAX_Q == fmmfft::kMaxQ,
              "the C stage indices mirror fmmfft::Stage");

namespace {

fmmfft::PlanObject* checked_plan(gpufmm_fft_plan_t p) {
  return checked_handle<fmmfft::PlanObject>(p, HandleKind::FftPlan, "plan");
}

}  // namespace

namespace gpufmm {
namespace capi {

fmmfft::Options fft_options(const gpufmm_fft_options_t* opt) {
  require(opt != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'opt' is NULL (the options carry n)");
  const gpufmm_fft_options_t& c = *opt;
  fmmfft::Options o;
  o.n = c.n;
  o.dtype = checked_dtype(c.dtype, "options field 'dtype'");
  o.eps = c.eps;
  o.P = c.p;
  o.ml = c.ml;
  o.B = c.b;
  o.Q = c.q;
  o.direction = c.direction;
  o.tune = c.tune;
  o.post = c.post;
  fmmfft::validate(o);
  return o;
}

gpufmm_fft_plan_t register_fft_plan(std::unique_ptr<fmmfft::PlanObject> h) {
  auto* plan = static_cast<gpufmm_fft_plan_t>(register_handle(h.get(), HandleKind::FftPlan));
  h.release();
  return plan;
}

}  // namespace capi
}  // namespace gpufmm

namespace {

// The errors of a transform's arguments found before the plan's own
// checks: on a plan over several ranks they reach fmmfft::execute, which
// agrees on them with the other ranks (no rank is left waiting).
template <class F>
std::exception_ptr caught(F&& f) {
  try {
    f();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace

extern "C" {

gpufmm_status_t gpufmm_fft_options_init(gpufmm_fft_options_t* opt) {
  return guard("gpufmm_fft_options_init", [&] {
    require_out(opt, "opt");
    const fmmfft::Options d;
    *opt = gpufmm_fft_options_t{};
    opt->n = d.n;
    opt->dtype = d.dtype;
    opt->eps = d.eps;
    opt->direction = d.direction;
    opt->tune = d.tune;
    opt->post = d.post;
  });
}

gpufmm_status_t gpufmm_fft_plan_create(gpufmm_context_t ctx, const gpufmm_fft_options_t* opt,
                                       gpufmm_fft_plan_t* plan) {
  return guard("gpufmm_fft_plan_create", [&] {
    Context* c = checked_context(ctx);
    require_out(plan, "plan");
    const fmmfft::Options o = capi::fft_options(opt);
    auto h = std::make_unique<fmmfft::PlanObject>();
    h->plan = fmmfft::plan_create(*c, o);
    *plan = capi::register_fft_plan(std::move(h));
  });
}

gpufmm_status_t gpufmm_fft_plan_create_multi(const gpufmm_context_t* ctxs, int count, const gpufmm_fft_options_t* opt,
                                             gpufmm_fft_plan_t* plan) {
  return guard("gpufmm_fft_plan_create_multi", [&] {
    require(ctxs != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'ctxs' is NULL");
    require(count >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'count' = ", count, ": at least one context");
    require_out(plan, "plan");
    std::vector<Context*> cs;
    for (int g = 0; g < count; ++g) cs.push_back(checked_context(ctxs[g]));
    const fmmfft::Options o = capi::fft_options(opt);
    *plan = capi::register_fft_plan(fmmfft::plan_create_multi(cs, o));
  });
}

gpufmm_status_t gpufmm_fft_plan_destroy(gpufmm_fft_plan_t plan) {
  return guard("gpufmm_fft_plan_destroy", [&] {
    if (plan == nullptr) return;
    delete retired_handle<fmmfft::PlanObject>(plan, HandleKind::FftPlan, "plan");
  });
}

gpufmm_status_t gpufmm_fft_execute(gpufmm_fft_plan_t plan, gpufmm_array_t in, gpufmm_array_t out, int direction) {
  return guard("gpufmm_fft_execute", [&] {
    fmmfft::PlanObject& obj = *checked_plan(plan);
    require(obj.count() == 1, GPUFMM_ERROR_INVALID_ARGUMENT, "the plan is over ", obj.count(),
            " GPUs: gpufmm_fft_execute_multi takes an array per GPU");
    fmmfft::Plan& P = *obj.plan;
    std::lock_guard<std::mutex> lock(P.mutex);
    const void* x = nullptr;
    void* y = nullptr;
    const std::exception_ptr early = caught([&] {
      require(in != nullptr, GPUFMM_ERROR_INVALID_HANDLE, "array handle 'in' is NULL");
      require(out != nullptr, GPUFMM_ERROR_INVALID_HANDLE, "array handle 'out' is NULL");
      x = plan_array_data(P.ctx, P.options.dtype, in, P.local_n(), "in");
      y = plan_array_data(P.ctx, P.options.dtype, out, P.local_n(), "out");
    });
    fmmfft::execute(P, x, y, direction, true, early);
  });
}

gpufmm_status_t gpufmm_fft_execute_multi(gpufmm_fft_plan_t plan, const gpufmm_array_t* in, const gpufmm_array_t* out,
                                         int direction) {
  return guard("gpufmm_fft_execute_multi", [&] {
    fmmfft::PlanObject& obj = *checked_plan(plan);
    require(in != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'in' is NULL (an array per GPU)");
    require(out != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'out' is NULL (an array per GPU)");
    std::lock_guard<std::mutex> lock(obj.head().mutex);
    const int G = obj.count();
    std::vector<const void*> x(static_cast<size_t>(G), nullptr);
    std::vector<void*> y(static_cast<size_t>(G), nullptr);
    std::vector<std::exception_ptr> early(static_cast<size_t>(G));
    for (int g = 0; g < G; ++g) {
      fmmfft::Plan& P = obj.part(g);
      const std::string at = G > 1 ? "[" + std::to_string(g) + "]" : "[0]";
      early[size_t(g)] = caught([&] {
        require(in[g] != nullptr, GPUFMM_ERROR_INVALID_HANDLE, "array handle 'in", at, "' is NULL");
        require(out[g] != nullptr, GPUFMM_ERROR_INVALID_HANDLE, "array handle 'out", at, "' is NULL");
        x[size_t(g)] = plan_array_data(P.ctx, P.options.dtype, in[g], P.local_n(), ("in" + at).c_str());
        y[size_t(g)] = plan_array_data(P.ctx, P.options.dtype, out[g], P.local_n(), ("out" + at).c_str());
      });
    }
    fmmfft::execute_multi(obj, x, y, direction, true, early);
  });
}

gpufmm_status_t gpufmm_fft_execute_host(gpufmm_fft_plan_t plan, const void* in, void* out, int direction) {
  return guard("gpufmm_fft_execute_host", [&] {
    fmmfft::PlanObject& obj = *checked_plan(plan);
    std::lock_guard<std::mutex> lock(obj.head().mutex);
    const int G = obj.count();
    if (G == 1) return fmmfft::execute(*obj.plan, in, out, direction, false);
    // The parts' blocks of the whole input and output.
    const size_t block = size_t(obj.head().real_bytes()) * 2 * size_t(obj.head().local_n());
    std::vector<const void*> x(static_cast<size_t>(G), nullptr);
    std::vector<void*> y(static_cast<size_t>(G), nullptr);
    for (int g = 0; g < G && in && out; ++g) {
      x[size_t(g)] = static_cast<const char*>(in) + block * size_t(g);
      y[size_t(g)] = static_cast<char*>(out) + block * size_t(g);
    }
    fmmfft::execute_multi(obj, x, y, direction, false, std::vector<std::exception_ptr>(static_cast<size_t>(G)));
  });
}

gpufmm_status_t gpufmm_fft_plan_info(gpufmm_fft_plan_t plan, gpufmm_fft_info_t* info) {
  return guard("gpufmm_fft_plan_info", [&] {
    fmmfft::PlanObject& obj = *checked_plan(plan);
    fmmfft::Plan& P = obj.head();
    require_out(info, "info");
    std::lock_guard<std::mutex> lock(P.mutex);
    gpufmm_fft_info_t r{};
    r.n = P.par.N;
    r.m = P.par.M;
    r.p = P.par.P;
    r.ml = P.par.ml;
    r.levels = P.par.L;
    r.base = P.par.B;
    r.q = P.par.Q;
    r.dtype = P.options.dtype;
    r.backend = P.ctx.on_gpu() ? GPUFMM_BACKEND_CUDA : GPUFMM_BACKEND_CPU;
    r.eps = P.eps;
    r.predicted_error = fmmfft::predicted_error(P.par.Q, P.single(), P.par.ml);
    r.gamma = P.machine.gamma;
    r.beta = P.machine.beta;
    for (int s = 0; s < GPUFMM_FFT_STAGES; ++s) {
      r.flops[s] = P.predicted.flops[s];
      r.bytes[s] = P.predicted.bytes[s];
      r.model[s] = P.predicted.seconds[s];
      r.time[s] = P.times[s];
    }
    r.parts = obj.count();
    r.t_total = P.t_total;
    for (int g = 1; g < obj.count(); ++g) r.t_total = std::max(r.t_total, obj.part(g).t_total);
    r.plan_seconds = P.plan_seconds;
    r.ranks = P.G();
    r.rank = P.dist ? P.dist->rank : 0;
    r.n_local = P.local_n();
    if (P.dist) {
      r.sent_input = P.dist->sent_input;
      r.sent_multipoles = P.dist->sent_multipoles;
      r.sent_base = P.dist->sent_base;
      r.t_wait = P.dist->t_wait;
      r.messages = P.dist->device_memory() ? 2 : 1;
    }
    *info = r;
  });
}

const char* gpufmm_fft_stage_name(int stage) { return fmmfft::stage_name(stage); }

}  // extern "C"
