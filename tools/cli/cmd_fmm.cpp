// gpufmm fmm: plans and evaluates an FMM (--method; the Laplace FMM, the
// only one yet) on a generated point set; prints the truncation number,
// depth, boxes, plan time, the per-stage profile in the form of papers/000
// Table 8, and the relative L2 error (eq. 36) against the direct sum on K
// sampled targets.
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
               "usage: gpufmm fmm --n N [--method laplace] [--eps E] [--dist uniform|ellipsoid|plummer|clusters|patch]\n"
               "                  [--grad] [--hess] [--nd D] [--float] [--check K] [--cpu|--gpu] [--targets M]\n"
               "                  [--seed S] [--tree auto|uniform|adaptive] [--smax S] [--cube F] [--model]\n"
               "  --n        number of sources (required); charges uniform in (0, 1) as in papers/000\n"
               "  --method   the FMM: laplace, kernel 1/r (the default, and the only method yet)\n"
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

// What the command line asks for.
struct Args {
  long long n = -1, m = -1, check = 200, seed = 1, nd = 1, smax = -1;
  double eps = 1e-6, cube = 0;
  int tree = GPUFMM_LAPLACE_TREE_AUTO;
  gpufmm_test::Dist dist;
  bool grad = false, hess = false, single = false, model = false;
  int device = GPUFMM_DEVICE_DEFAULT;
};

// The points and the densities of a run.
struct Inputs {
  gpufmm_cli::Problem prob;
  std::vector<double> q;  // charge(nd, n)
};

// One FMM of --method: plans, evaluates, reports and checks (0, or the exit
// status of a failure).
struct Method {
  const char* name;
  int (*run)(gpufmm_context_t ctx, const char* device_name, const Args& a, const Inputs& in);
};
int run_laplace(gpufmm_context_t ctx, const char* device_name, const Args& a, const Inputs& in);
constexpr Method kMethods[] = {{"laplace", run_laplace}};

// The method named by --method (default laplace); nullptr, said on stderr,
// when there is none of that name.
const Method* parse_method(const std::vector<std::string>& args) {
  const std::string name = gpufmm_cli::option_value(args, "--method", "laplace");
  for (const Method& m : kMethods)
    if (name == m.name) return &m;
  std::string names;
  for (const Method& m : kMethods) names += std::string(names.empty() ? "" : ", ") + m.name;
  std::fprintf(stderr, "gpufmm fmm: --method '%s' is not a method of this command; the methods: %s\n", name.c_str(),
               names.c_str());
  return nullptr;
}

// false: an argument is not understood (the caller prints the usage).
bool parse_args(const std::vector<std::string>& args, Args& a) {
  if (!gpufmm_cli::check_known(args, {"--n", "--method", "--eps", "--dist", "--check", "--targets", "--seed", "--nd",
                                      "--tree", "--smax", "--cube"},
                               {"--grad", "--hess", "--float", "--cpu", "--gpu", "--model"}))
    return false;
  a.single = gpufmm_cli::has_flag(args, "--float");
  const std::string ns = gpufmm_cli::option_value(args, "--n", "");
  const std::string ms = gpufmm_cli::option_value(args, "--targets", "");
  if (ns.empty() || !parse_int(ns, a.n) || a.n < 1 || (!ms.empty() && (!parse_int(ms, a.m) || a.m < 1)) ||
      !parse_double(gpufmm_cli::option_value(args, "--eps", a.single ? "1e-5" : "1e-6"), a.eps) ||
      !parse_int(gpufmm_cli::option_value(args, "--check", "200"), a.check) || a.check < 0 ||
      !parse_int(gpufmm_cli::option_value(args, "--seed", "1"), a.seed) ||
      !parse_int(gpufmm_cli::option_value(args, "--nd", "1"), a.nd) || a.nd < 1 || a.nd > 1024 ||
      !parse_int(gpufmm_cli::option_value(args, "--smax", "-1"), a.smax) || a.smax == 0 || a.smax < -1 ||
      a.smax > (1 << 30) || !parse_double(gpufmm_cli::option_value(args, "--cube", "0"), a.cube))
    return false;
  const std::string tree_name = gpufmm_cli::option_value(args, "--tree", "auto");
  a.tree = tree_name == "auto"       ? GPUFMM_LAPLACE_TREE_AUTO
           : tree_name == "uniform"  ? GPUFMM_LAPLACE_TREE_UNIFORM
           : tree_name == "adaptive" ? GPUFMM_LAPLACE_TREE_ADAPTIVE
                                     : -1;
  a.hess = gpufmm_cli::has_flag(args, "--hess");
  a.grad = gpufmm_cli::has_flag(args, "--grad") || a.hess;
  a.model = gpufmm_cli::has_flag(args, "--model");
  return a.tree >= 0 && gpufmm_test::parse_dist(gpufmm_cli::option_value(args, "--dist", "uniform"), a.dist) &&
         gpufmm_cli::parse_device(args, a.device);
}

// The problem's points and nd densities, interleaved (charge(nd, n)): the
// problem's charges, then more uniform in (0, 1).
Inputs make_inputs(const Args& a) {
  Inputs in{gpufmm_cli::make_problem(a.dist, a.n, a.m, static_cast<uint64_t>(a.seed), false), {}};
  in.q.resize(static_cast<size_t>(a.nd * a.n));
  gpufmm_test::Rng r(static_cast<uint64_t>(a.seed) + 99);
  for (long long j = 0; j < a.n; ++j)
    for (long long k = 0; k < a.nd; ++k) in.q[k + a.nd * j] = k == 0 ? in.prob.charges[j] : r.uniform();
  return in;
}

// The values at the evaluation points (nd per point, FMM3D's layouts).
struct Outputs {
  std::vector<double> pot, grad, hess;
};

// ---------------------------------------------------------------- laplace

// Plans, evaluates twice (the first evaluation warms up) and returns the
// plan's information; 1 on a failure (said on stderr).
int laplace_evaluate(gpufmm_context_t ctx, const Args& a, const Inputs& in, Outputs& out,
                     gpufmm_laplace_info_t& info) {
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_options_init(&opt);
  opt.eps = a.eps;
  opt.precision = a.single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  opt.tree = a.tree;
  opt.s_max = int(a.smax);
  opt.cube_padding = a.cube;  // out of range: the plan says so
  opt.calibrate = a.model ? 0 : 1;
  opt.densities = GPUFMM_LAPLACE_DENSITIES_CHARGES;
  gpufmm_laplace_plan_t plan = nullptr;
  const std::vector<double>& trg = in.prob.targets;
  if (gpufmm_laplace_plan_create(ctx, &opt, a.n, in.prob.sources.data(), a.m > 0 ? a.m : 0,
                                 a.m > 0 ? trg.data() : nullptr, &plan) != GPUFMM_SUCCESS)
    return fail("plan");
  const size_t per = static_cast<size_t>(a.nd * in.prob.ntrg);
  out.pot.resize(per);
  out.grad.resize(a.grad ? 3 * per : 0);
  out.hess.resize(a.hess ? 6 * per : 0);
  double* grad = a.grad ? out.grad.data() : nullptr;
  for (int round = 0; round < 2; ++round)
    if ((a.nd == 1 && !a.hess ? gpufmm_laplace_evaluate(plan, in.q.data(), nullptr, out.pot.data(), grad)
                              : gpufmm_laplace_evaluate_nd(plan, int(a.nd), in.q.data(), nullptr, out.pot.data(), grad,
                                                           a.hess ? out.hess.data() : nullptr)) != GPUFMM_SUCCESS) {
      gpufmm_laplace_plan_destroy(plan);
      return fail("evaluate");
    }
  gpufmm_laplace_plan_info(plan, &info);
  gpufmm_laplace_plan_destroy(plan);
  return 0;
}

// The heading, the plan's sizes and times.
void laplace_print_plan(const char* device_name, const Args& a, const gpufmm_laplace_info_t& info) {
  std::printf("gpufmm fmm: %s, %lld sources, %s targets, %s precision, eps %.1e, %s\n",
              gpufmm_test::dist_name(a.dist), a.n, a.m > 0 ? std::to_string(a.m).c_str() : "the same",
              a.single ? "single" : "double", a.eps, device_name);
  if (a.nd > 1 || a.hess)
    std::printf("%lld densities%s\n", a.nd, a.hess ? ", potential, gradient and Hessian" : "");
  // Below depth 2 no box is well separated from another: no expansion is
  // formed, and the plan's p is unused.
  const std::string p_text = info.l_max >= 2 ? std::to_string(info.p)
                                             : "- (depth " + std::to_string(info.l_max) + ": direct sum only)";
  char cube_text[64] = "";
  if (info.cube_padding != 1) std::snprintf(cube_text, sizeof cube_text, ", cube %.3gx the points'", info.cube_padding);
  std::printf("p = %s, l_max = %d (%s tree%s), boxes: %lld source, %lld target; M2L translations %lld, P2P pairs %lld\n",
              p_text.c_str(), info.l_max, info.adaptive ? "adaptive" : "uniform", cube_text,
              static_cast<long long>(info.source_boxes), static_cast<long long>(info.target_boxes),
              static_cast<long long>(info.m2l_translations), static_cast<long long>(info.p2p_pairs));
  if (info.calibration_evaluates > 0)
    std::printf("plan: %.4f s (p calibrated: %d test evaluates, measured error %.2e)\n\n", info.plan_seconds,
                info.calibration_evaluates, info.measured_eps);
  else
    std::printf("plan: %.4f s\n\n", info.plan_seconds);
  if (info.calibration_evaluates > 0 && info.measured_eps > a.eps)
    std::fprintf(stderr, "gpufmm fmm: warning: the measured error %.2e is above eps %.1e; p = %d, the most terms the plan takes, "
                 "reaches no further on these points\n", info.measured_eps, a.eps, info.p);
}

// The evaluate's profile as in papers/000 Table 8.
void laplace_print_profile(const Args& a, const gpufmm_laplace_info_t& info) {
  const double stages[6] = {info.t_p2m, info.t_upward, info.t_downward, info.t_l2p, info.t_p2p, info.t_total};
  std::printf("%-12s %10s %10s %10s %10s %10s %10s\n", "evaluate", "S exp", "up trans", "down trans", "R eval",
              "sparse", "total");
  std::printf("%-12s", "seconds");
  for (double t : stages) std::printf(" %10.4g", t);
  std::printf("\n%-12s", "% of total");
  for (double t : stages) std::printf(" %10.1f", info.t_total > 0 ? 100.0 * t / info.t_total : 0.0);
  std::printf("\n");
  if (a.nd > 1) std::printf("per density: %.4g s\n", info.t_total / double(a.nd));
}

// The relative L2 errors against the direct sum at --check sampled targets
// (passed as the targets); 1 when the direct sum fails.
int laplace_check(gpufmm_context_t ctx, const Args& a, const Inputs& in, const Outputs& out) {
  const int64_t ntrg = in.prob.ntrg;
  const int64_t k = std::min<int64_t>(a.check, ntrg);
  std::vector<int64_t> idx;
  const size_t kd = static_cast<size_t>(k * a.nd);
  std::vector<double> y, ref_pot(kd), ref_grad(a.grad ? 3 * kd : 0), ref_hess(a.hess ? 6 * kd : 0);
  gpufmm_cli::sample_points(in.prob.eval_points(), ntrg, k, idx, y);
  if (gpufmm_laplace_direct_nd(ctx, GPUFMM_FLOAT64, int(a.nd), a.n, in.prob.sources.data(), in.q.data(), nullptr, k,
                               y.data(), ref_pot.data(), a.grad ? ref_grad.data() : nullptr,
                               a.hess ? ref_hess.data() : nullptr) != GPUFMM_SUCCESS)
    return fail("direct sum");
  const int w = static_cast<int>(a.nd);  // a target's values of every density are contiguous: nd * per of them
  std::printf("\nrelative L2 error on %lld sampled targets (direct sum in double): pot %.3e", static_cast<long long>(k),
              rel_l2(out.pot, idx, ref_pot, w));
  if (a.grad) std::printf(", grad %.3e", rel_l2(out.grad, idx, ref_grad, 3 * w));
  if (a.hess) std::printf(", hess %.3e", rel_l2(out.hess, idx, ref_hess, 6 * w));
  std::printf("  (eps %.1e)\n", a.eps);
  return 0;
}

int run_laplace(gpufmm_context_t ctx, const char* device_name, const Args& a, const Inputs& in) {
  Outputs out;
  gpufmm_laplace_info_t info;
  if (const int rc = laplace_evaluate(ctx, a, in, out, info)) return rc;
  laplace_print_plan(device_name, a, info);
  laplace_print_profile(a, info);
  return a.check > 0 ? laplace_check(ctx, a, in, out) : 0;
}

// ---------------------------------------------------------------- the command

int run_fmm(const std::vector<std::string>& args) {
  Args a;
  if (!parse_args(args, a)) {
    usage(stderr);
    return 2;
  }
  const Method* method = parse_method(args);
  if (method == nullptr) return 2;
  const Inputs in = make_inputs(a);
  gpufmm_context_t ctx = nullptr;
  if (gpufmm_context_create(a.device, &ctx) != GPUFMM_SUCCESS) return fail("context");
  gpufmm_device_info_t dev;
  gpufmm_context_device_info(ctx, &dev);
  const int rc = method->run(ctx, dev.name, a, in);
  gpufmm_context_destroy(ctx);
  return rc;
}

}  // namespace

GPUFMM_SUBCOMMAND(fmm, "fmm", "an FMM (--method laplace) on generated points: profile (papers/000 Table 8) and error",
                  run_fmm, usage);
