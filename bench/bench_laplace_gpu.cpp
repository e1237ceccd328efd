// The Laplace FMM on the GPU (issue 5): plan and evaluate times, the
// per-stage profile (papers/000 Table 8: S exp = P2M, up trans = M2M, down
// trans = M2L + L2L, R eval = L2P, sparse = P2P), and the achieved error on
// sampled targets against gpufmm_laplace_direct (double, on the GPU).
// Sources = targets, random charges in [-1, 1], potential and gradient.
// Evaluate uses device arrays (gpufmm_laplace_evaluate_arrays: no host
// transfers); "host" is the same with host arrays (one copy in, one out).
//
//   bench_laplace_gpu [--csv PATH] [--quick] [--sizes 1e5,1e6,1e7]
//                     [--eps 1e-3,1e-6,1e-9] [--dists uniform,ellipsoid]
//                     [--repeat 3] [--no-strategies] [--lmax 3,4]
//                     [--kernels "m2l=bpb;m2l=wpb"] [--precisions double,float]
//
// --lmax forces the depths listed (default: the plan's cost model); --kernels
// runs every case once per kernel-strategy string (';'-separated; keys and
// values of fmm::laplace_gpu_parse_kernels, e.g. "m2l=bpb,p2p=tpt,m2l_group=4",
// and the plan keys tree=, s_max=, v_direct=, cost=, c_pair= and cube= of
// tests/common/laplace_kernels.hpp).
//
// Then, at N = 1e6 (uniform, double, eps 1e-6), every stage with each of its
// kernel strategies (options.gpu_*, docs/laplace_gpu.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/laplace_kernels.hpp"
#include "common/rel_l2.hpp"
#include "bench_args.hpp"
#include "gpufmm.h"

namespace {

using bench::flag;
using bench::now;
using bench::option;
using bench::split;

struct Row {
  std::string dist, precision, kernels;
  long long n = 0;
  double eps = 0;
  int p = 0, l_max = 0;
  double plan = 0, eval = 0, eval_host = 0;
  gpufmm_laplace_info_t info{};
  double err_pot = -1, err_grad = -1;
};

using gpufmm_test::rel_l2;

struct Case {
  gpufmm_context_t ctx;
  std::vector<double> src, q;
  std::vector<int64_t> sample;
  std::vector<double> sample_xyz, ref_pot, ref_grad;
};

// One plan + repeated evaluates; error on the sampled targets.
Row run(Case& c, const std::string& dist, int precision, double eps, int repeat, bool host_too,
        const char* kernels, int l_max = -1) {
  Row r;
  r.dist = dist;
  r.precision = precision == GPUFMM_FLOAT64 ? "double" : "float";
  r.kernels = kernels ? kernels : "default";
  r.eps = eps;
  const int64_t n = int64_t(c.src.size() / 3);
  r.n = n;
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.eps = eps;
  o.precision = precision;
  o.l_max = l_max;
  gpufmm_laplace_plan_t plan = nullptr;
  double t = now();
  CHECK(gpufmm_test::laplace_plan_create_kernels(c.ctx, &o, kernels ? kernels : "", n, c.src.data(), 0, nullptr,
                                                 &plan));
  r.plan = now() - t;
  const gpufmm_dtype_t dt = gpufmm_dtype_t(precision);
  const int64_t dn[1] = {n}, dg[1] = {3 * n};
  gpufmm_array_t aq, ap, ag;
  CHECK(gpufmm_array_create(c.ctx, dt, 1, dn, &aq));
  CHECK(gpufmm_array_create(c.ctx, dt, 1, dn, &ap));
  CHECK(gpufmm_array_create(c.ctx, dt, 1, dg, &ag));
  std::vector<double> pot(n), grad(3 * n);
  if (precision == GPUFMM_FLOAT64) {
    CHECK(gpufmm_array_upload(aq, c.q.data(), n));
  } else {
    std::vector<float> qf(c.q.begin(), c.q.end());
    CHECK(gpufmm_array_upload(aq, qf.data(), n));
  }
  r.eval = 1e30;
  gpufmm_laplace_info_t best{};
  for (int k = 0; k <= repeat; ++k) {  // first call: warm-up (workspace allocation)
    t = now();
    CHECK(gpufmm_laplace_evaluate_arrays(plan, aq, nullptr, ap, ag));
    const double e = now() - t;
    if (k > 0 && e < r.eval) {
      r.eval = e;
      CHECK(gpufmm_laplace_plan_info(plan, &best));
    }
  }
  r.info = best;
  r.p = best.p;
  r.l_max = best.l_max;
  if (host_too) {
    r.eval_host = 1e30;
    for (int k = 0; k < std::max(1, repeat - 1); ++k) {
      t = now();
      CHECK(gpufmm_laplace_evaluate(plan, c.q.data(), nullptr, pot.data(), grad.data()));
      r.eval_host = std::min(r.eval_host, now() - t);
    }
  } else {
    if (precision == GPUFMM_FLOAT64) {
      CHECK(gpufmm_array_download(ap, pot.data(), n));
      CHECK(gpufmm_array_download(ag, grad.data(), 3 * n));
    } else {
      std::vector<float> pf(n), gf(3 * n);
      CHECK(gpufmm_array_download(ap, pf.data(), n));
      CHECK(gpufmm_array_download(ag, gf.data(), 3 * n));
      for (int64_t i = 0; i < n; ++i) pot[i] = pf[i];
      for (int64_t i = 0; i < 3 * n; ++i) grad[i] = gf[i];
    }
  }
  std::vector<double> sp, sg;
  for (int64_t i : c.sample) {
    sp.push_back(pot[i]);
    for (int k = 0; k < 3; ++k) sg.push_back(grad[3 * i + k]);
  }
  r.err_pot = rel_l2(sp, c.ref_pot);
  r.err_grad = rel_l2(sg, c.ref_grad);
  gpufmm_array_destroy(aq);
  gpufmm_array_destroy(ap);
  gpufmm_array_destroy(ag);
  CHECK(gpufmm_laplace_plan_destroy(plan));
  return r;
}

void print(const Row& r, FILE* csv) {
  const auto& i = r.info;
  std::printf("%-9s %-6s %9lld %7.0e %3d %2d %5.3f | %8.2f %8.2f %8.2f | %7.2f %7.2f %7.2f %7.2f %7.2f | %8.1e %8.1e | %8lld "
              "%8.2e | %s\n",
              r.dist.c_str(), r.precision.c_str(), r.n, r.eps, r.p, r.l_max, i.cube_padding, r.plan * 1e3, r.eval * 1e3,
              r.eval_host * 1e3, i.t_p2m * 1e3, i.t_upward * 1e3, i.t_downward * 1e3, i.t_l2p * 1e3,
              i.t_p2p * 1e3, r.err_pot, r.err_grad, (long long)i.m2l_translations, double(i.p2p_pairs),
              r.kernels.c_str());
  std::fflush(stdout);
  if (csv)
    std::fprintf(csv, "%s,%s,%lld,%g,%d,%d,%.4f,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.3e,%.3e,%lld,%lld,\"%s\"\n",
                 r.dist.c_str(), r.precision.c_str(), r.n, r.eps, r.p, r.l_max, i.cube_padding, r.plan, r.eval,
                 r.eval_host,
                 i.t_p2m, i.t_upward, i.t_downward, i.t_l2p, i.t_p2p, r.err_pot, r.err_grad,
                 (long long)i.m2l_translations, (long long)i.p2p_pairs, r.kernels.c_str());
}

void header() {
  std::printf("%-9s %-6s %9s %7s %3s %2s %5s | %8s %8s %8s | %7s %7s %7s %7s %7s | %8s %8s | %8s %8s | %s\n", "dist",
              "prec", "N", "eps", "p", "L", "cube", "plan ms", "eval ms", "host ms", "P2M", "M2M", "down", "L2P", "P2P",
              "err pot", "err grad", "M2L", "P2P prs", "kernels");
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = flag(argc, argv, "--quick");
  const std::string csv_path = option(argc, argv, "--csv", "");
  const auto sizes = split(option(argc, argv, "--sizes", quick ? "1e5,1e6" : "1e5,1e6,1e7"));
  const auto epss = split(option(argc, argv, "--eps", quick ? "1e-6" : "1e-3,1e-6,1e-9"));
  const auto dists = split(option(argc, argv, "--dists", quick ? "uniform" : "uniform,ellipsoid"));
  const int repeat = std::atoi(option(argc, argv, "--repeat", "3").c_str());
  const bool strategies = !flag(argc, argv, "--no-strategies");
  const auto lmaxs = split(option(argc, argv, "--lmax", "-1"));
  const auto klist = split(option(argc, argv, "--kernels", "default"), ';');
  const std::string precs = option(argc, argv, "--precisions", "double,float");
  const bool run_double = precs.find("double") != std::string::npos;
  const bool run_float = precs.find("float") != std::string::npos;
  const int nsample = 1000;

  int ndev = 0;
  if (gpufmm_device_count(&ndev) != GPUFMM_SUCCESS || ndev == 0) {
    std::printf("bench_laplace_gpu: no CUDA device visible, nothing to do\n");
    return 0;
  }
  gpufmm_context_t ctx;
  CHECK(gpufmm_context_create(0, &ctx));
  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv)
    std::fprintf(csv,
                 "dist,precision,n,eps,p,l_max,cube_padding,plan_s,eval_s,eval_host_s,p2m_s,m2m_s,down_s,l2p_s,p2p_s,err_pot,"
                 "err_grad,m2l,p2p_pairs,kernels\n");
  header();
  for (const auto& ds : dists) {
    gpufmm_test::Dist d;
    if (!gpufmm_test::parse_dist(ds, d)) continue;
    for (const auto& ns : sizes) {
      const int64_t n = int64_t(std::strtod(ns.c_str(), nullptr));
      Case c;
      c.ctx = ctx;
      c.src = gpufmm_test::make_points(d, n, 1);
      std::mt19937_64 g(2);
      std::uniform_real_distribution<double> u(-1, 1);
      c.q.resize(n);
      for (auto& x : c.q) x = u(g);
      for (int k = 0; k < nsample && k < n; ++k) c.sample.push_back((int64_t(k) * 7919 * 104729) % n);
      for (int64_t i : c.sample)
        for (int k = 0; k < 3; ++k) c.sample_xyz.push_back(c.src[3 * i + k]);
      c.ref_pot.assign(c.sample.size(), 0);
      c.ref_grad.assign(3 * c.sample.size(), 0);
      CHECK(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, n, c.src.data(), c.q.data(), nullptr,
                                  int64_t(c.sample.size()), c.sample_xyz.data(), c.ref_pot.data(),
                                  c.ref_grad.data()));
      for (const auto& es : epss) {
        const double eps = std::strtod(es.c_str(), nullptr);
        for (const auto& ls : lmaxs)
          for (const auto& ks : klist) {
            const int lm = std::atoi(ls.c_str());
            const char* k = ks == "default" ? nullptr : ks.c_str();
            if (run_double)
              print(run(c, ds, GPUFMM_FLOAT64, eps, repeat, n <= 1000000 && k == nullptr && lm < 0, k, lm), csv);
            // float refuses eps < 1e-5 (kLaplaceMinEpsFloat): the 1e-6 row is run at 1e-5
            if (run_float && eps >= 1e-6) print(run(c, ds, GPUFMM_FLOAT32, std::max(eps, 1e-5), repeat, false, k, lm), csv);
          }
      }
      if (strategies && n == 1000000 && ds == "uniform") {
        std::printf("-- strategies (N = 1e6, uniform, double, eps 1e-6) --\n");
        for (const char* k : {"p2m=wpb,m2m=bpb,m2l=bpb,l2l=bpb,l2p=tpt,p2p=bpb",
                              "p2m=wpb,m2m=gpb,m2l=wpb,l2l=tpb,l2p=tpt,p2p=bpb",
                              "p2m=tpb,m2m=tpb,m2l=tpb,l2l=tpb,l2p=tpb,p2p=bpb", "m2m=bpb", "m2m=gemm", "p2p=tpt",
                              "overlap=off", "graph=off"})
          print(run(c, ds, GPUFMM_FLOAT64, 1e-6, repeat, false, k), csv);
        std::printf("-- strategies (N = 1e6, uniform, float, eps 1e-5) --\n");
        for (const char* k : {"p2m=wpb,m2m=bpb,m2l=bpb,l2l=bpb,l2p=tpt,p2p=bpb",
                              "p2m=wpb,m2m=gpb,m2l=wpb,l2l=tpb,l2p=tpt,p2p=bpb",
                              "p2m=tpb,m2m=tpb,m2l=tpb,l2l=tpb,l2p=tpb,p2p=bpb", "p2p=tpt", "overlap=off",
                              "graph=off"})
          print(run(c, ds, GPUFMM_FLOAT32, 1e-5, repeat, false, k), csv);
      }
    }
  }
  if (csv) std::fclose(csv);
  CHECK(gpufmm_context_destroy(ctx));
  return 0;
}
