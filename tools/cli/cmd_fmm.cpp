// gpufmm fmm: plans and evaluates the Laplace FMM on a generated point set;
// prints the truncation number, depth, boxes, plan time, the per-stage
// profile in the form of papers/000 Table 8, and the relative L2 error
// (eq. 36) against the direct sum on K sampled targets.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.hpp"
#include "common/distributions.hpp"
#include "gpufmm.h"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: gpufmm fmm --n N [--eps E] [--dist uniform|ellipsoid|plummer|clusters] [--grad]\n"
               "                  [--float] [--check K] [--cpu|--gpu] [--targets M] [--seed S]\n"
               "  --n        number of sources (required); charges uniform in (0, 1) as in papers/000\n"
               "  --eps      requested relative L2 error (default 1e-6)\n"
               "  --dist     point distribution of sources and targets (default uniform)\n"
               "  --grad     compute the gradient too (default: potential only)\n"
               "  --float    single-precision arithmetic (default double)\n"
               "  --check    compare K sampled targets with the direct sum (default 200; 0: no check)\n"
               "  --targets  M separate targets from the same distribution (default: at the sources)\n"
               "  --seed     random seed (default 1)\n"
               "  --cpu / --gpu  backend (default: the first GPU if any, else the CPU)\n"
               "The plan is evaluated twice; the second evaluation is reported.\n");
}

bool parse_int(const std::string& s, long long& v) {
  char* end = nullptr;
  v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  if (*end == 'e' || *end == 'E' || *end == '.') {  // 1e6
    const double d = std::strtod(s.c_str(), &end);
    v = static_cast<long long>(d);
  }
  return *end == '\0';
}

bool parse_double(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

int fail(const char* what) {
  std::fprintf(stderr, "gpufmm fmm: %s: %s\n", what, gpufmm_last_error_message());
  return 1;
}

// Relative L2 error (papers/000 eq. 36) of a[width * idx[i] + k] against
// ref[width * i + k].
double rel_l2(const std::vector<double>& a, const std::vector<int64_t>& idx, const std::vector<double>& ref,
              int width) {
  double e = 0, r = 0;
  for (size_t i = 0; i < idx.size(); ++i)
    for (int k = 0; k < width; ++k) {
      const double d = a[width * idx[i] + k] - ref[width * i + k];
      e += d * d;
      r += ref[width * i + k] * ref[width * i + k];
    }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

int run_fmm(const std::vector<std::string>& args) {
  if (!gpufmm_cli::check_known(args, {"--n", "--eps", "--dist", "--check", "--targets", "--seed"},
                               {"--grad", "--float", "--cpu", "--gpu"})) {
    usage();
    return 2;
  }
  long long n = -1, m = -1, check = 200, seed = 1;
  double eps = 1e-6;
  const std::string ns = gpufmm_cli::option_value(args, "--n", "");
  const std::string ms = gpufmm_cli::option_value(args, "--targets", "");
  if (ns.empty() || !parse_int(ns, n) || n < 1 || (!ms.empty() && (!parse_int(ms, m) || m < 1)) ||
      !parse_double(gpufmm_cli::option_value(args, "--eps", "1e-6"), eps) ||
      !parse_int(gpufmm_cli::option_value(args, "--check", "200"), check) || check < 0 ||
      !parse_int(gpufmm_cli::option_value(args, "--seed", "1"), seed)) {
    usage();
    return 2;
  }
  gpufmm_test::Dist dist;
  if (!gpufmm_test::parse_dist(gpufmm_cli::option_value(args, "--dist", "uniform"), dist)) {
    usage();
    return 2;
  }
  const bool want_grad = gpufmm_cli::has_flag(args, "--grad");
  const bool single = gpufmm_cli::has_flag(args, "--float");
  const bool want_cpu = gpufmm_cli::has_flag(args, "--cpu"), want_gpu = gpufmm_cli::has_flag(args, "--gpu");
  if (want_cpu && want_gpu) {
    usage();
    return 2;
  }
  const int device = want_cpu ? GPUFMM_DEVICE_CPU : (want_gpu ? 0 : GPUFMM_DEVICE_DEFAULT);

  // Points and charges.
  const std::vector<double> src = gpufmm_test::make_points(dist, n, static_cast<uint64_t>(seed));
  std::vector<double> trg;
  if (m > 0) trg = gpufmm_test::make_points(dist, m, static_cast<uint64_t>(seed) + 1000);
  const int64_t ntrg = m > 0 ? m : n;
  const std::vector<double>& points = m > 0 ? trg : src;  // where the potential is evaluated
  std::vector<double> q(static_cast<size_t>(n));
  gpufmm_test::Rng rng(static_cast<uint64_t>(seed) + 7);
  for (auto& v : q) v = rng.uniform_open();

  gpufmm_context_t ctx = nullptr;
  if (gpufmm_context_create(device, &ctx) != GPUFMM_SUCCESS) return fail("context");
  gpufmm_device_info_t dev;
  gpufmm_context_device_info(ctx, &dev);

  gpufmm_laplace_options_t opt;
  gpufmm_laplace_options_init(&opt);
  opt.eps = eps;
  opt.precision = single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  gpufmm_laplace_plan_t plan = nullptr;
  if (gpufmm_laplace_plan_create(ctx, &opt, n, src.data(), m > 0 ? m : 0, m > 0 ? trg.data() : nullptr,
                                 &plan) != GPUFMM_SUCCESS) {
    gpufmm_context_destroy(ctx);
    return fail("plan");
  }
  std::vector<double> pot(static_cast<size_t>(ntrg)), grad(want_grad ? static_cast<size_t>(3 * ntrg) : 0);
  for (int round = 0; round < 2; ++round)  // the first evaluation warms up
    if (gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), want_grad ? grad.data() : nullptr) !=
        GPUFMM_SUCCESS) {
      gpufmm_laplace_plan_destroy(plan);
      gpufmm_context_destroy(ctx);
      return fail("evaluate");
    }
  gpufmm_laplace_info_t info;
  gpufmm_laplace_plan_info(plan, &info);

  std::printf("gpufmm fmm: %s, %lld sources, %s targets, %s precision, eps %.1e, %s\n",
              gpufmm_test::dist_name(dist), n, m > 0 ? std::to_string(m).c_str() : "the same",
              single ? "single" : "double", eps, dev.name);
  std::printf("p = %d, l_max = %d, boxes: %lld source, %lld target; M2L translations %lld, P2P pairs %lld\n",
              info.p, info.l_max, static_cast<long long>(info.source_boxes),
              static_cast<long long>(info.target_boxes), static_cast<long long>(info.m2l_translations),
              static_cast<long long>(info.p2p_pairs));
  std::printf("plan: %.4f s\n\n", info.plan_seconds);
  // The profile as in papers/000 Table 8.
  const double stages[6] = {info.t_p2m, info.t_upward, info.t_downward, info.t_l2p, info.t_p2p, info.t_total};
  std::printf("%-12s %10s %10s %10s %10s %10s %10s\n", "evaluate", "S exp", "up trans", "down trans", "R eval",
              "sparse", "total");
  std::printf("%-12s", "seconds");
  for (double t : stages) std::printf(" %10.4g", t);
  std::printf("\n%-12s", "% of total");
  for (double t : stages) std::printf(" %10.1f", info.t_total > 0 ? 100.0 * t / info.t_total : 0.0);
  std::printf("\n");

  int rc = 0;
  if (check > 0) {
    // The direct sum at K sampled targets only (passed as the targets).
    const int64_t k = std::min<int64_t>(check, ntrg);
    std::vector<int64_t> idx(static_cast<size_t>(k));
    std::vector<double> y(static_cast<size_t>(3 * k)), ref_pot(static_cast<size_t>(k)),
        ref_grad(want_grad ? static_cast<size_t>(3 * k) : 0);
    for (int64_t i = 0; i < k; ++i) {
      idx[i] = i * ntrg / k;
      for (int c = 0; c < 3; ++c) y[3 * i + c] = points[3 * idx[i] + c];
    }
    if (gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, n, src.data(), q.data(), nullptr, k, y.data(), ref_pot.data(),
                              want_grad ? ref_grad.data() : nullptr) != GPUFMM_SUCCESS) {
      rc = fail("direct sum");
    } else {
      std::printf("\nrelative L2 error on %lld sampled targets (direct sum in double): pot %.3e",
                  static_cast<long long>(k), rel_l2(pot, idx, ref_pot, 1));
      if (want_grad) std::printf(", grad %.3e", rel_l2(grad, idx, ref_grad, 3));
      std::printf("  (eps %.1e)\n", eps);
    }
  }
  gpufmm_laplace_plan_destroy(plan);
  gpufmm_context_destroy(ctx);
  return rc;
}

}  // namespace

GPUFMM_SUBCOMMAND(fmm, "fmm", "Laplace FMM on generated points: profile (papers/000 Table 8) and error",
                  run_fmm);
