// gpufmm treecode: plans and evaluates the barycentric Lagrange treecode
// (papers/001) on a generated point set; prints the parameters the plan runs
// with (theta, degree, leaf and batch sizes), its clusters, proxies and
// interactions, the stage profile of the plan and of the evaluate, and the
// relative L2 error (papers/001 eq. 16) against the direct sum of the same
// kernel on K sampled targets.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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
               "usage: gpufmm treecode --n N [--kernel coulomb|yukawa|reg-coulomb|reg-yukawa] [--kappa K]\n"
               "                       [--delta D] [--eps E | --theta T --degree D] [--leaf L] [--batch B]\n"
               "                       [--type pc|cp|cc] [--grad] [--float] [--calibrate] [--check K] [--cpu|--gpu]\n"
               "                       [--dist uniform|ellipsoid|plummer|clusters] [--targets M] [--seed S]\n"
               "  --n        number of sources (required); charges uniform in (-1, 1) as in papers/001\n"
               "  --kernel   coulomb 1/r (default), yukawa exp(-kappa r)/r, reg-coulomb 1/sqrt(r^2 + delta^2),\n"
               "             reg-yukawa exp(-kappa sqrt(r^2 + delta^2))/sqrt(r^2 + delta^2) (docs/kernels.md)\n"
               "  --kappa    Yukawa screening kappa >= 0 (default 0.5)\n"
               "  --delta    regularization delta > 0 (default 0.01)\n"
               "  --eps      requested relative L2 error (default 1e-6): theta and degree from it\n"
               "  --theta    MAC parameter in (0, 1) and --degree the interpolation degree, 0..%d: set\n"
               "  --degree   them directly (either alone: the other from eps)\n"
               "  --leaf     N_L, most sources of a leaf cluster; --batch N_B, most targets of a batch\n"
               "  --batch    (default: the backend's cost model)\n"
               "  --type     pc particle-cluster (default), cp cluster-particle, cc cluster-cluster\n"
               "  --grad     compute the gradient too, eps holding for it (default: potential only)\n"
               "  --float    single-precision arithmetic (default double)\n"
               "  --calibrate  theta and degree from eps by the plan's measured error (test evaluates at\n"
               "             the create; default: from the worst-case error table)\n"
               "  --check    compare K sampled targets with the direct sum (default 200; 0: no check)\n"
               "  --dist     point distribution of sources and targets (default uniform)\n"
               "  --targets  M separate targets from the same distribution (default: at the sources)\n"
               "  --seed     random seed (default 1)\n"
               "  --cpu / --gpu  backend (default: the first GPU if any, else the CPU)\n"
               "The plan is evaluated twice; the second evaluation is reported. On a terminal, a\n"
               "progress line on stderr says which stage is running.\n",
               GPUFMM_TREECODE_MAX_DEGREE);
}

int fail(const char* what) {
  std::fprintf(stderr, "gpufmm treecode: %s: %s\n", what, gpufmm_last_error_message());
  return 1;
}

struct KernelName {
  const char* name;
  int type;
};
constexpr KernelName kKernels[] = {{"coulomb", GPUFMM_KERNEL_LAPLACE},
                                   {"yukawa", GPUFMM_KERNEL_YUKAWA},
                                   {"reg-coulomb", GPUFMM_KERNEL_REGULARIZED_LAPLACE},
                                   {"reg-yukawa", GPUFMM_KERNEL_REGULARIZED_YUKAWA}};
constexpr const char* kTypes[] = {"pc", "cp", "cc"};

// The kernel named on the command line with its parameters (kappa, then
// delta, as the type takes them), and a description for the heading. false:
// not a kernel name.
bool parse_kernel(const std::string& name, double kappa, double delta, int& type, std::vector<double>& params,
                  std::string& text) {
  for (const KernelName& kn : kKernels)
    if (name == kn.name) {
      char buf[96];
      std::string values;
      type = kn.type;
      params.clear();
      if (type == GPUFMM_KERNEL_YUKAWA || type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) {
        params.push_back(kappa);
        std::snprintf(buf, sizeof buf, "kappa %g", kappa);
        values = buf;
      }
      if (type == GPUFMM_KERNEL_REGULARIZED_LAPLACE || type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) {
        params.push_back(delta);
        std::snprintf(buf, sizeof buf, "%sdelta %g", values.empty() ? "" : ", ", delta);
        values += buf;
      }
      text = std::string(kn.name) + (values.empty() ? "" : " (" + values + ")");
      return true;
    }
  return false;
}

void print_row(const char* label, const std::vector<double>& t, const char* format = " %10.4g") {
  std::printf("%-12s", label);
  for (double v : t) std::printf(format, v);
  std::printf("\n");
}

// What the command line asks for.
struct Args {
  long long n = -1, m = -1, check = 200, seed = 1, degree = -1, leaf = 0, batch = 0;
  double eps = 1e-6, theta = 0, kappa = 0.5, delta = 0.01;
  gpufmm_test::Dist dist;
  int kernel_type = GPUFMM_KERNEL_LAPLACE;
  std::vector<double> kernel_params;
  std::string kernel_text;
  int type = 0;  // an index of kTypes
  int device = GPUFMM_DEVICE_DEFAULT;
  bool grad = false, single = false, calibrate = false;
};

// false: an argument is not understood (the caller prints the usage).
// Ranges are the library's to check (its message names the field).
bool parse_args(const std::vector<std::string>& args, Args& a) {
  if (!gpufmm_cli::check_known(args,
                               {"--n", "--kernel", "--kappa", "--delta", "--eps", "--theta", "--degree", "--leaf",
                                "--batch", "--type", "--check", "--dist", "--targets", "--seed"},
                               {"--grad", "--float", "--calibrate", "--cpu", "--gpu"}))
    return false;
  const std::string ns = gpufmm_cli::option_value(args, "--n", "");
  const std::string ms = gpufmm_cli::option_value(args, "--targets", "");
  if (ns.empty() || !parse_int(ns, a.n) || a.n < 1 || (!ms.empty() && (!parse_int(ms, a.m) || a.m < 1)) ||
      !parse_double(gpufmm_cli::option_value(args, "--eps", "1e-6"), a.eps) ||
      !parse_double(gpufmm_cli::option_value(args, "--theta", "0"), a.theta) ||
      !parse_int(gpufmm_cli::option_value(args, "--degree", "-1"), a.degree) ||
      !parse_int(gpufmm_cli::option_value(args, "--leaf", "0"), a.leaf) ||
      !parse_int(gpufmm_cli::option_value(args, "--batch", "0"), a.batch) ||
      !parse_double(gpufmm_cli::option_value(args, "--kappa", "0.5"), a.kappa) ||
      !parse_double(gpufmm_cli::option_value(args, "--delta", "0.01"), a.delta) ||
      !parse_int(gpufmm_cli::option_value(args, "--check", "200"), a.check) || a.check < 0 ||
      !parse_int(gpufmm_cli::option_value(args, "--seed", "1"), a.seed))
    return false;
  const std::string type_name = gpufmm_cli::option_value(args, "--type", "pc");
  a.type = int(std::find_if(std::begin(kTypes), std::end(kTypes), [&](const char* t) { return type_name == t; }) -
               std::begin(kTypes));
  a.grad = gpufmm_cli::has_flag(args, "--grad");
  a.single = gpufmm_cli::has_flag(args, "--float");
  a.calibrate = gpufmm_cli::has_flag(args, "--calibrate");
  return gpufmm_test::parse_dist(gpufmm_cli::option_value(args, "--dist", "uniform"), a.dist) &&
         parse_kernel(gpufmm_cli::option_value(args, "--kernel", "coulomb"), a.kappa, a.delta, a.kernel_type,
                      a.kernel_params, a.kernel_text) &&
         a.type <= GPUFMM_TREECODE_CC && gpufmm_cli::parse_device(args, a.device);
}

gpufmm_treecode_options_t treecode_options(const Args& a, const gpufmm_kernel_t& kernel) {
  gpufmm_treecode_options_t opt;
  gpufmm_treecode_options_init(&opt);
  opt.kernel = kernel;
  opt.eps = a.eps;
  opt.theta = a.theta;
  opt.degree = static_cast<int>(std::clamp<long long>(a.degree, -2, 1 << 20));  // out of range: the library says so
  opt.leaf_size = static_cast<int>(std::clamp<long long>(a.leaf, -1, 1 << 30));
  opt.batch_size = static_cast<int>(std::clamp<long long>(a.batch, -1, 1 << 30));
  opt.type = a.type;
  opt.precision = a.single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  opt.grad = a.grad ? 1 : 0;
  opt.calibrate = a.calibrate ? 1 : 0;
  return opt;
}

// The values at the evaluation points.
struct Outputs {
  std::vector<double> pot, grad;
};

// Plans, evaluates twice (the first evaluation warms up) and returns the
// plan's information; 1 on a failure (said on stderr).
int evaluate(gpufmm_context_t ctx, const Args& a, const gpufmm_kernel_t& kernel, const gpufmm_cli::Problem& prob,
             gpufmm_cli::Progress& progress, Outputs& out, gpufmm_treecode_info_t& info) {
  const gpufmm_treecode_options_t opt = treecode_options(a, kernel);
  gpufmm_treecode_plan_t plan = nullptr;
  progress.stage("plan");
  if (gpufmm_treecode_plan_create(ctx, &opt, a.n, prob.sources.data(), a.m > 0 ? a.m : 0,
                                  a.m > 0 ? prob.targets.data() : nullptr, &plan) != GPUFMM_SUCCESS)
    return fail("plan");
  out.pot.resize(static_cast<size_t>(prob.ntrg));
  out.grad.resize(a.grad ? static_cast<size_t>(3 * prob.ntrg) : 0);
  for (int round = 0; round < 2; ++round) {
    progress.stage(round == 0 ? "evaluate 1 of 2" : "evaluate 2 of 2");
    if (gpufmm_treecode_evaluate(plan, prob.charges.data(), out.pot.data(), a.grad ? out.grad.data() : nullptr) !=
        GPUFMM_SUCCESS) {
      gpufmm_treecode_plan_destroy(plan);
      return fail("evaluate");
    }
  }
  gpufmm_treecode_plan_info(plan, &info);
  gpufmm_treecode_plan_destroy(plan);
  return 0;
}

// The line of the relative L2 errors against the direct sum of the same
// kernel at --check sampled targets (passed as the targets); 1 when the
// direct sum fails.
int check_direct(gpufmm_context_t ctx, const Args& a, const gpufmm_kernel_t& kernel, const gpufmm_cli::Problem& prob,
                 const Outputs& out, const gpufmm_treecode_info_t& info, std::string& line) {
  const int64_t k = std::min<int64_t>(a.check, prob.ntrg);
  std::vector<int64_t> idx;
  std::vector<double> y, ref_pot(static_cast<size_t>(k)), ref_grad(a.grad ? static_cast<size_t>(3 * k) : 0);
  gpufmm_cli::sample_points(prob.eval_points(), prob.ntrg, k, idx, y);
  if (gpufmm_direct(ctx, &kernel, GPUFMM_FLOAT64, a.n, prob.sources.data(), prob.charges.data(), k, y.data(),
                    ref_pot.data(), a.grad ? ref_grad.data() : nullptr) != GPUFMM_SUCCESS)
    return fail("direct sum");
  char buf[256];
  std::snprintf(buf, sizeof buf, "\nrelative L2 error on %lld sampled targets (direct sum in double): pot %.3e",
                static_cast<long long>(k), rel_l2(out.pot, idx, ref_pot, 1));
  line = buf;
  if (a.grad) {
    std::snprintf(buf, sizeof buf, ", grad %.3e", rel_l2(out.grad, idx, ref_grad, 3));
    line += buf;
  }
  if (a.theta > 0 && a.degree >= 0)
    std::snprintf(buf, sizeof buf, "  (predicted %.1e)\n", info.predicted_error);
  else
    std::snprintf(buf, sizeof buf, "  (eps %.1e)\n", a.eps);
  line += buf;
  return 0;
}

// The heading, the parameters, clusters and interactions of the plan.
void print_plan(const char* device_name, const Args& a, const gpufmm_treecode_info_t& info) {
  std::printf("gpufmm treecode: %s, %lld sources, %s targets, %s, %s, %s precision, %s\n",
              gpufmm_test::dist_name(a.dist), a.n, a.m > 0 ? std::to_string(a.m).c_str() : "the same",
              a.kernel_text.c_str(), kTypes[a.type], a.single ? "single" : "double", device_name);
  std::printf("parameters: theta %.3g, degree %d, leaf %d, batch %d", info.theta, info.degree, info.leaf_size,
              info.batch_size);
  if (a.theta > 0 && a.degree >= 0)
    std::printf(" (theta and degree given; predicted error %.1e)\n", info.predicted_error);
  else if (info.calibration_evaluates > 0)
    std::printf(" (from eps %.1e, calibrated: measured error %.1e in %d test evaluates)\n", a.eps,
                info.measured_eps, info.calibration_evaluates);
  else
    std::printf(" (from eps %.1e; predicted error %.1e)\n", a.eps, info.predicted_error);
  std::printf("clusters: %lld source (%lld with proxies), %lld target (%lld with proxies), %lld batches\n",
              static_cast<long long>(info.source_clusters), static_cast<long long>(info.source_proxy_clusters),
              static_cast<long long>(info.target_clusters), static_cast<long long>(info.target_proxy_clusters),
              static_cast<long long>(info.batches));
  std::printf("interactions per evaluate: %.4g through proxies, %.4g direct; %lld list entries\n\n",
              static_cast<double>(info.approx_interactions), static_cast<double>(info.direct_interactions),
              static_cast<long long>(info.list_entries));
}

// The stage profiles of the plan and of the evaluate.
void print_profile(const gpufmm_treecode_info_t& info) {
  std::printf("%-12s %10s %10s %10s %10s\n", "plan", "tree", "lists", "setup", "total");
  print_row("seconds", {info.t_plan_tree, info.t_plan_lists, info.t_plan_setup, info.plan_seconds});
  std::printf("%-12s %10s %10s %10s %10s\n", "evaluate", "precompute", "compute", "downward", "total");
  const std::vector<double> stages = {info.t_precompute, info.t_compute, info.t_downward, info.t_total};
  print_row("seconds", stages);
  std::vector<double> share;
  for (double t : stages) share.push_back(info.t_total > 0 ? 100.0 * t / info.t_total : 0.0);
  print_row("% of total", share, " %10.1f");
}

// Everything after the context: plan, evaluate, check, report.
int run_on(gpufmm_context_t ctx, const char* device_name, const Args& a, const gpufmm_kernel_t& kernel) {
  gpufmm_cli::Progress progress("treecode");
  progress.stage("points");
  const gpufmm_cli::Problem prob = gpufmm_cli::make_problem(a.dist, a.n, a.m, static_cast<uint64_t>(a.seed), true);
  Outputs out;
  gpufmm_treecode_info_t info;
  if (const int rc = evaluate(ctx, a, kernel, prob, progress, out, info)) return rc;
  int rc = 0;
  std::string error_line;
  if (a.check > 0) {
    progress.stage("direct sum at the sampled targets");
    rc = check_direct(ctx, a, kernel, prob, out, info, error_line);
  }
  progress.stage(nullptr);
  print_plan(device_name, a, info);
  print_profile(info);
  std::printf("%s", error_line.c_str());
  return rc;
}

int run_treecode(const std::vector<std::string>& args) {
  Args a;
  if (!parse_args(args, a)) {
    usage(stderr);
    return 2;
  }
  gpufmm_kernel_t kernel;
  if (gpufmm_kernel_init(&kernel, a.kernel_type, int(a.kernel_params.size()), a.kernel_params.data()) !=
      GPUFMM_SUCCESS)
    return fail("kernel");
  gpufmm_context_t ctx = nullptr;
  if (gpufmm_context_create(a.device, &ctx) != GPUFMM_SUCCESS) return fail("context");
  gpufmm_device_info_t dev;
  gpufmm_context_device_info(ctx, &dev);
  const int rc = run_on(ctx, dev.name, a, kernel);
  gpufmm_context_destroy(ctx);
  return rc;
}

}  // namespace

GPUFMM_SUBCOMMAND(treecode, "treecode",
                  "barycentric Lagrange treecode on generated points, any kernel: parameters, profile, error",
                  run_treecode, usage);
