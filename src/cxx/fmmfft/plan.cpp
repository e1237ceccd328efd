// The FMM-FFT plan (plan.hpp): parameters, operator matrices, backend
// set-up, and the execute entry that dispatches to a backend.
#include "fmmfft/plan.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <random>

#include "approx/chebyshev.hpp"
#include "core/error.hpp"
#include "fmmfft/operators.hpp"

namespace gpufmm {
namespace fmmfft {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The roofline of the context's backend and precision, measured once per
// process (and device), then cached.
Machine machine_of(Context& ctx, bool single) {
  static std::mutex mu;
  static std::map<std::pair<int, bool>, Machine> cache;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(ctx.on_gpu() ? ctx.device : -1, single);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
#ifdef GPUFMM_HAVE_CUDA
  const Machine m = ctx.on_gpu() ? detail::calibrate_cuda(ctx, single) : detail::calibrate_cpu(single);
#else
  const Machine m = detail::calibrate_cpu(single);
#endif
  cache[key] = m;
  return m;
}

void build_operators(Plan& p) {
  const int Q = p.par.Q, ml = p.par.ml;
  p.z.resize(Q);
  for (int j = 0; j < Q; ++j) p.z[j] = approx::cheb1_node<double>(Q, j);
  p.s2m.resize(size_t(Q) * ml);
  for (int m = 0; m < ml; ++m)
    for (int q = 0; q < Q; ++q) p.s2m[q + size_t(Q) * m] = approx::cheb1_lagrange<double>(Q, q, leaf_point(ml, m));
  p.m2m.resize(size_t(Q) * 2 * Q);
  for (int k = 0; k < 2 * Q; ++k) {
    // Children's nodes in the parent's [-1, 1]: left (z - 1) / 2, right (z + 1) / 2.
    const double zc = k < Q ? (p.z[k] - 1) / 2 : (p.z[k - Q] + 1) / 2;
    for (int q = 0; q < Q; ++q) p.m2m[q + size_t(Q) * k] = approx::cheb1_lagrange<double>(Q, q, zc);
  }
  p.level_offset.resize(p.par.L - p.par.B + 2);
  int64_t off = 0;
  for (int l = p.par.B; l <= p.par.L + 1; ++l) {
    p.level_offset[l - p.par.B] = off;
    if (l <= p.par.L) off += p.rows() * Q * p.boxes(l);
  }
  if (p.dist) {
    const int64_t leaf = int64_t(ml) * 2 * p.par.P, box = p.rows() * Q;
    p.halo_offset = {0, leaf, 2 * leaf};
    for (int l = p.par.B + 1; l <= p.par.L; ++l)
      for (int side = 0; side < 2; ++side) p.halo_offset.push_back(p.halo_offset.back() + 2 * box);
    p.halo_offset.push_back(p.halo_offset.back() + (box << p.par.B));
  }
}

void setup_backend(Plan& p) {
#ifdef GPUFMM_HAVE_CUDA
  if (p.ctx.on_gpu()) return detail::setup_cuda(p);
#endif
  detail::setup_cpu(p);
}

std::unique_ptr<Plan> make_plan(Context& ctx, const Options& o, const Params& par, const Machine& m, double eps,
                                const Cluster* cluster) {
  auto p = std::make_unique<Plan>(ctx, o);
  p->par = par;
  p->machine = m;
  p->eps = eps;
  p->predicted = model(par, p->real_bytes(), m, cluster ? cluster->G : 1);
  if (cluster) {
    p->dist = cluster->make(*p);  // collective
    p->dist->agree([&] {          // allocations that may fail on one rank only
      build_operators(*p);
      setup_backend(*p);
    });
  } else {
    build_operators(*p);
    setup_backend(*p);
  }
  return p;
}

}  // namespace

#ifndef GPUFMM_HAVE_CUDA
void CudaPlanDeleter::operator()(CudaPlan*) const {}  // no CUDA plan without CUDA
#endif

std::unique_ptr<Plan> plan_create(Context& ctx, const Options& o, const Cluster* cluster) {
  const auto t0 = Clock::now();
  const int G = cluster ? cluster->G : 1;
  const bool single = o.dtype == GPUFMM_COMPLEX64;
  const double eps = o.eps > 0 ? o.eps : default_eps(single);
  const bool fixed = o.P != 0 && o.B != 0;
  const size_t keep = fixed ? 1 : size_t(std::max(o.tune, 1));
  // Over several ranks every step that can fail on one rank ends in an
  // agreement, and every rank ranks the candidates with the same (agreed,
  // the slowest rank's) roofline.
  auto local = [&](const std::function<void()>& f) {
    if (cluster)
      cluster->agree(f);
    else
      f();
  };
  Machine m;
  local([&] {
    validate(o);
    require(o.post == 0 || ctx.on_gpu(), GPUFMM_ERROR_INVALID_ARGUMENT,
            "options field 'post' = GPUFMM_FFT_POST_CALLBACK needs a GPU context (a cuFFT load callback); "
            "the CPU backend applies POST in its near field");
    check_size(o.n, G);
    m = machine_of(ctx, single);
  });
  if (cluster) m = cluster->agree_machine(m);
  std::vector<Params> cand;
  local([&] { cand = candidates(o, eps, m, single ? 4 : 8, keep, G); });
  std::unique_ptr<Plan> best;
  if (o.tune > 0 && cand.size() > 1) {
    // Time the best-predicted few on random input; keep the fastest.
    std::vector<double> x(2 * size_t(o.n / G));
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : x) v = u(rng);
    std::vector<float> xf(single ? x.size() : 0);
    for (size_t i = 0; i < xf.size(); ++i) xf[i] = float(x[i]);
    const void* in = single ? static_cast<const void*>(xf.data()) : static_cast<const void*>(x.data());
    std::vector<double> out(x.size());
    const int sign = o.direction == 1 ? 1 : -1;
    double best_t = 0;
    for (const Params& par : cand) {
      auto p = make_plan(ctx, o, par, m, eps, cluster);
      execute(*p, in, out.data(), sign, false);  // warm-up
      const auto t1 = Clock::now();
      execute(*p, in, out.data(), sign, false);
      const double t = cluster ? cluster->max_over_ranks(since(t1)) : since(t1);
      if (!best || t < best_t) best = std::move(p), best_t = t;
    }
  } else {
    best = make_plan(ctx, o, cand.front(), m, eps, cluster);
  }
  best->plan_seconds = since(t0);
  return best;
}

void execute(Plan& p, const void* in, void* out, int sign, bool on_context, std::exception_ptr early) {
  auto checks = [&] {
    if (early) std::rethrow_exception(early);
    require(sign == -1 || sign == 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'direction' = ", sign,
            " is not GPUFMM_FFT_FORWARD (-1) or GPUFMM_FFT_INVERSE (+1)");
    require(p.options.direction == 0 || p.options.direction == sign, GPUFMM_ERROR_INVALID_ARGUMENT,
            "argument 'direction' = ", sign, ": the plan was made for direction ", p.options.direction, " only");
    require(in != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'in' is NULL");
    require(out != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'out' is NULL");
  };
  if (p.dist)
    p.dist->agree(checks);
  else
    checks();
  const auto t0 = Clock::now();
#ifdef GPUFMM_HAVE_CUDA
  if (p.ctx.on_gpu()) {
    detail::execute_cuda(p, in, out, sign, on_context);
    p.t_total = since(t0);
    return;
  }
#endif
  (void)on_context;  // host memory is the CPU backend's memory
  detail::execute_cpu(p, in, out, sign);
  p.t_total = since(t0);
}

std::unique_ptr<PlanObject> plan_create_multi(const std::vector<Context*>& ctxs, const Options& o) {
  const int G = int(ctxs.size());
  require(G >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'count' = ", G, ": at least one context");
  require((G & (G - 1)) == 0, GPUFMM_ERROR_NOT_SUPPORTED, "the FMM-FFT over several GPUs needs a power of two of "
          "GPUs (", G, " given)");
  for (int g = 0; g < G; ++g) {
    require(ctxs[size_t(g)]->on_gpu() || G == 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'ctxs'[", g,
            "] is a CPU context: a plan over several GPUs takes GPU contexts (CPU ranks: "
            "gpufmm_fft_plan_create_mpi)");
    for (int h = 0; h < g; ++h)
      require(ctxs[size_t(h)]->device != ctxs[size_t(g)]->device, GPUFMM_ERROR_INVALID_ARGUMENT, "arguments 'ctxs'[",
              h, "] and 'ctxs'[", g, "] are on the same GPU ", ctxs[size_t(g)]->device,
              ": NCCL takes one GPU once (ranks sharing a GPU: gpufmm_fft_plan_create_mpi)");
  }
  auto obj = std::make_unique<PlanObject>();
  if (G == 1) {
    obj->plan = plan_create(*ctxs[0], o);
    return obj;
  }
  validate(o);
#if defined(GPUFMM_HAVE_CUDA) && defined(GPUFMM_HAVE_NCCL)
  detail::create_parts(*obj, ctxs, o);
#else
  fail(GPUFMM_ERROR_NOT_SUPPORTED, "the FMM-FFT over several GPUs of one process needs the CUDA backend and NCCL's "
       "header at build time (this build has neither or one); MPI ranks (gpufmm_fft_plan_create_mpi) need no NCCL");
#endif
  return obj;
}

void execute_multi(PlanObject& obj, const std::vector<const void*>& in, const std::vector<void*>& out, int sign,
                   bool on_context, const std::vector<std::exception_ptr>& early) {
  if (obj.plan) return execute(*obj.plan, in[0], out[0], sign, on_context, early[0]);
#if defined(GPUFMM_HAVE_CUDA) && defined(GPUFMM_HAVE_NCCL)
  detail::execute_parts(obj, in, out, sign, on_context, early);
#else
  (void)in, (void)out, (void)sign, (void)on_context, (void)early;
  fail(GPUFMM_ERROR_INTERNAL, "a plan over several GPUs in a build without them");
#endif
}

std::string nccl_device_key(const Context& ctx) {
#if defined(GPUFMM_HAVE_CUDA) && defined(GPUFMM_HAVE_NCCL)
  if (ctx.on_gpu()) return detail::nccl_device_key(ctx);
#else
  (void)ctx;
#endif
  return "";
}

std::unique_ptr<Distributed> nccl_distributed(const Plan& p, int G, int rank,
                                              const std::function<void(void*, int)>& share_id,
                                              std::function<void(const std::function<void()>&)> agree) {
#if defined(GPUFMM_HAVE_CUDA) && defined(GPUFMM_HAVE_NCCL)
  return detail::nccl_distributed(p, G, rank, share_id, std::move(agree));
#else
  (void)p, (void)G, (void)rank, (void)share_id, (void)agree;
  fail(GPUFMM_ERROR_INTERNAL, "NCCL asked of a build without it");
#endif
}

}  // namespace fmmfft
}  // namespace gpufmm
