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

using gpufmm_cli::parse_double;
using gpufmm_cli::parse_int;
using gpufmm_cli::rel_l2;

void usage(FILE* out) {
  std::fprintf(out,
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

int fail(const char* what) {
  std::fprintf(stderr, "gpufmm fmm: %s: %s\n", what, gpufmm_last_error_message());
  return 1;
}

int run_fmm(const std::vector<std::string>& args) {
  if (!gpufmm_cli::check_known(args, {"--n", "--eps", "--dist", "--check", "--targets", "--seed"},
                               {"--grad", "--float", "--cpu", "--gpu"})) {
    usage(stderr);
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
    usage(stderr);
    return 2;
  }
  gpufmm_test::Dist dist;
  if (!gpufmm_test::parse_dist(gpufmm_cli::option_value(args, "--dist", "uniform"), dist)) {
    usage(stderr);
    return 2;
  }
  const bool want_grad = gpufmm_cli::has_flag(args, "--grad");
  const bool single = gpufmm_cli::has_flag(args, "--float");
  int device;
  if (!gpufmm_cli::parse_device(args, device)) {
    usage(stderr);
    return 2;
  }

  // Points and charges.
  const gpufmm_cli::Problem prob = gpufmm_cli::make_problem(dist, n, m, static_cast<uint64_t>(seed), false);
  const std::vector<double>& src = prob.sources;
  const std::vector<double>& trg = prob.targets;
  const std::vector<double>& q = prob.charges;
  const int64_t ntrg = prob.ntrg;
  const std::vector<double>& points = prob.eval_points();

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
  // Below depth 2 no box is well separated from another: no expansion is
  // formed, and the plan's p is unused.
  const std::string p_text = info.l_max >= 2 ? std::to_string(info.p)
                                             : "- (depth " + std::to_string(info.l_max) + ": direct sum only)";
  std::printf("p = %s, l_max = %d, boxes: %lld source, %lld target; M2L translations %lld, P2P pairs %lld\n",
              p_text.c_str(), info.l_max, static_cast<long long>(info.source_boxes),
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
    std::vector<int64_t> idx;
    std::vector<double> y, ref_pot(static_cast<size_t>(k)), ref_grad(want_grad ? static_cast<size_t>(3 * k) : 0);
    gpufmm_cli::sample_points(points, ntrg, k, idx, y);
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
                  run_fmm, usage);
