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
               "usage: gpufmm fmm --n N [--eps E] [--dist uniform|ellipsoid|plummer|clusters|patch] [--grad]\n"
               "                  [--hess] [--nd D] [--float] [--check K] [--cpu|--gpu] [--targets M] [--seed S]\n"
               "                  [--tree auto|uniform|adaptive] [--smax S] [--cube F] [--model]\n"
               "  --n        number of sources (required); charges uniform in (0, 1) as in papers/000\n"
               "  --eps      requested relative L2 error (default 1e-6; 1e-5 with --float, the smallest it takes)\n"
               "  --dist     point distribution of sources and targets (default uniform)\n"
               "  --grad     compute the gradient too (default: potential only)\n"
               "  --hess     compute the gradient and the Hessian (xx yy zz xy xz yz) too\n"
               "  --nd       D densities on the same points in one evaluate (default 1)\n"
               "  --float    single-precision arithmetic (default double)\n"
               "  --tree     octree: adaptive where it pays (auto, the default), uniform depth, or adaptive\n"
               "  --smax     most points per leaf box (default: the cost model, or the adaptive default)\n"
               "  --cube     a uniform tree's cube F times the points' (1 <= F < 2; default 0: the cost model\n"
               "             chooses, so that leaves can fall between two depths' sizes)\n"
               "  --model    p from the worst-case error model (default: the plan measures its error on\n"
               "             charges, the densities this command evaluates, and takes the smallest p within eps)\n"
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
  if (!gpufmm_cli::check_known(args, {"--n", "--eps", "--dist", "--check", "--targets", "--seed", "--nd", "--tree", "--smax", "--cube"},
                               {"--grad", "--hess", "--float", "--cpu", "--gpu", "--model"})) {
    usage(stderr);
    return 2;
  }
  long long n = -1, m = -1, check = 200, seed = 1, nd = 1, smax = -1;
  double eps = 1e-6, cube = 0;
  const std::string ns = gpufmm_cli::option_value(args, "--n", "");
  const std::string ms = gpufmm_cli::option_value(args, "--targets", "");
  if (ns.empty() || !parse_int(ns, n) || n < 1 || (!ms.empty() && (!parse_int(ms, m) || m < 1)) ||
      !parse_double(gpufmm_cli::option_value(args, "--eps", gpufmm_cli::has_flag(args, "--float") ? "1e-5" : "1e-6"),
                    eps) ||
      !parse_int(gpufmm_cli::option_value(args, "--check", "200"), check) || check < 0 ||
      !parse_int(gpufmm_cli::option_value(args, "--seed", "1"), seed) ||
      !parse_int(gpufmm_cli::option_value(args, "--nd", "1"), nd) || nd < 1 || nd > 1024 ||
      !parse_int(gpufmm_cli::option_value(args, "--smax", "-1"), smax) || smax == 0 || smax < -1 || smax > (1 << 30) ||
      !parse_double(gpufmm_cli::option_value(args, "--cube", "0"), cube)) {
    usage(stderr);
    return 2;
  }
  const std::string tree_name = gpufmm_cli::option_value(args, "--tree", "auto");
  const int tree_kind = tree_name == "auto"      ? GPUFMM_LAPLACE_TREE_AUTO
                        : tree_name == "uniform"  ? GPUFMM_LAPLACE_TREE_UNIFORM
                        : tree_name == "adaptive" ? GPUFMM_LAPLACE_TREE_ADAPTIVE
                                                  : -1;
  if (tree_kind < 0) {
    usage(stderr);
    return 2;
  }
  gpufmm_test::Dist dist;
  if (!gpufmm_test::parse_dist(gpufmm_cli::option_value(args, "--dist", "uniform"), dist)) {
    usage(stderr);
    return 2;
  }
  const bool want_hess = gpufmm_cli::has_flag(args, "--hess");
  const bool want_grad = gpufmm_cli::has_flag(args, "--grad") || want_hess;
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
  // nd densities, interleaved (charge(nd, n)): the problem's charges, then
  // more uniform in (0, 1).
  std::vector<double> q(static_cast<size_t>(nd * n));
  {
    gpufmm_test::Rng r(static_cast<uint64_t>(seed) + 99);
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < nd; ++k) q[k + nd * j] = k == 0 ? prob.charges[j] : r.uniform();
  }
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
  opt.tree = tree_kind;
  opt.s_max = int(smax);
  opt.cube_padding = cube;  // out of range: the plan says so
  opt.calibrate = gpufmm_cli::has_flag(args, "--model") ? 0 : 1;
  opt.densities = GPUFMM_LAPLACE_DENSITIES_CHARGES;
  gpufmm_laplace_plan_t plan = nullptr;
  if (gpufmm_laplace_plan_create(ctx, &opt, n, src.data(), m > 0 ? m : 0, m > 0 ? trg.data() : nullptr,
                                 &plan) != GPUFMM_SUCCESS) {
    gpufmm_context_destroy(ctx);
    return fail("plan");
  }
  const size_t per = static_cast<size_t>(nd * ntrg);
  std::vector<double> pot(per), grad(want_grad ? 3 * per : 0), hess(want_hess ? 6 * per : 0);
  for (int round = 0; round < 2; ++round)  // the first evaluation warms up
    if ((nd == 1 && !want_hess
             ? gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), want_grad ? grad.data() : nullptr)
             : gpufmm_laplace_evaluate_nd(plan, int(nd), q.data(), nullptr, pot.data(),
                                          want_grad ? grad.data() : nullptr, want_hess ? hess.data() : nullptr)) !=
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
  if (nd > 1 || want_hess)
    std::printf("%lld densities%s\n", nd, want_hess ? ", potential, gradient and Hessian" : "");
  // Below depth 2 no box is well separated from another: no expansion is
  // formed, and the plan's p is unused.
  const std::string p_text = info.l_max >= 2 ? std::to_string(info.p)
                                             : "- (depth " + std::to_string(info.l_max) + ": direct sum only)";
  char cube_text[64] = "";
  if (info.cube_padding != 1) std::snprintf(cube_text, sizeof cube_text, ", cube %.3gx the points'", info.cube_padding);
  std::printf("p = %s, l_max = %d (%s tree%s), boxes: %lld source, %lld target; M2L translations %lld, P2P pairs %lld\n",
              p_text.c_str(), info.l_max, info.adaptive ? "adaptive" : "uniform", cube_text, static_cast<long long>(info.source_boxes),
              static_cast<long long>(info.target_boxes), static_cast<long long>(info.m2l_translations),
              static_cast<long long>(info.p2p_pairs));
  if (info.calibration_evaluates > 0)
    std::printf("plan: %.4f s (p calibrated: %d test evaluates, measured error %.2e)\n\n", info.plan_seconds,
                info.calibration_evaluates, info.measured_eps);
  else
    std::printf("plan: %.4f s\n\n", info.plan_seconds);
  if (info.calibration_evaluates > 0 && info.measured_eps > eps)
    std::fprintf(stderr, "gpufmm fmm: warning: the measured error %.2e is above eps %.1e; p = %d, the most terms the plan takes, "
                 "reaches no further on these points\n", info.measured_eps, eps, info.p);
  // The profile as in papers/000 Table 8.
  const double stages[6] = {info.t_p2m, info.t_upward, info.t_downward, info.t_l2p, info.t_p2p, info.t_total};
  std::printf("%-12s %10s %10s %10s %10s %10s %10s\n", "evaluate", "S exp", "up trans", "down trans", "R eval",
              "sparse", "total");
  std::printf("%-12s", "seconds");
  for (double t : stages) std::printf(" %10.4g", t);
  std::printf("\n%-12s", "% of total");
  for (double t : stages) std::printf(" %10.1f", info.t_total > 0 ? 100.0 * t / info.t_total : 0.0);
  std::printf("\n");
  if (nd > 1) std::printf("per density: %.4g s\n", info.t_total / double(nd));

  int rc = 0;
  if (check > 0) {
    // The direct sum at K sampled targets only (passed as the targets).
    const int64_t k = std::min<int64_t>(check, ntrg);
    std::vector<int64_t> idx;
    const size_t kd = static_cast<size_t>(k * nd);
    std::vector<double> y, ref_pot(kd), ref_grad(want_grad ? 3 * kd : 0), ref_hess(want_hess ? 6 * kd : 0);
    gpufmm_cli::sample_points(points, ntrg, k, idx, y);
    if (gpufmm_laplace_direct_nd(ctx, GPUFMM_FLOAT64, int(nd), n, src.data(), q.data(), nullptr, k, y.data(),
                                 ref_pot.data(), want_grad ? ref_grad.data() : nullptr,
                                 want_hess ? ref_hess.data() : nullptr) != GPUFMM_SUCCESS) {
      rc = fail("direct sum");
    } else {  // a target's values of every density are contiguous: nd * per of them
      const int w = static_cast<int>(nd);
      std::printf("\nrelative L2 error on %lld sampled targets (direct sum in double): pot %.3e",
                  static_cast<long long>(k), rel_l2(pot, idx, ref_pot, w));
      if (want_grad) std::printf(", grad %.3e", rel_l2(grad, idx, ref_grad, 3 * w));
      if (want_hess) std::printf(", hess %.3e", rel_l2(hess, idx, ref_hess, 6 * w));
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
