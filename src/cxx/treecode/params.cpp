// Treecode parameters from eps (plan.hpp: choose_params, predicted_error).
//
// The error table is measured, not derived: relative L2 errors (at 3000
// sampled targets) of the particle-cluster treecode in double, potential
// and gradient, N = 5e5 sources = targets, for theta in kThetas and n =
// 0..kMaxTableDegree: the largest error over points on an ellipsoid surface
// and Plummer-clustered points (uniform points in a cube are up to 10x more
// accurate) and over the Coulomb and the regularized Yukawa (kappa 0.5,
// delta 0.02) kernels, with leaves and batches of 100 points, so that the
// size check (papers/001 eq. 13) leaves as few clusters to the direct sum as
// any leaf size does (larger leaves are more accurate: the errors at N_L =
// 2000 were up to 10x smaller). Measured on an H100 (bench/results/
// treecode_calibrate_h100.txt); regenerate with
//   build/bench/bench_treecode --calibrate --n 5e5 --leaf 100 --skip-uniform
// tests/cxx/test_treecode.cpp and tests/cuda/test_cuda_treecode.cpp check
// every kernel, compute type and distribution against eps.
#include <cmath>

#include "treecode/plan.hpp"

namespace gpufmm {
namespace treecode {

namespace {

constexpr int kNumThetas = 5;
constexpr double kThetas[kNumThetas] = {0.5, 0.6, 0.7, 0.8, 0.9};
constexpr int kMaxTableDegree = 16;

// kErr[grad][theta][n]
#include "treecode/params_table.inc"

// Safety factor on the largest measured error (other sizes, compute types
// and seeds).
constexpr double kSafety = 2.0;

}  // namespace

double predicted_error(double theta, int degree, bool grad) {
  // Linear interpolation in theta of log(error); beyond the table's degrees,
  // the last decay rate continues.
  const double th = std::fmin(std::fmax(theta, kThetas[0]), kThetas[kNumThetas - 1]);
  int i = 0;
  while (i + 2 < kNumThetas && th > kThetas[i + 1]) ++i;
  const double f = (th - kThetas[i]) / (kThetas[i + 1] - kThetas[i]);
  auto at = [&](int ti, int n) {
    if (n <= kMaxTableDegree) return std::log(kErr[grad][ti][n]);
    const double rate = std::log(kErr[grad][ti][kMaxTableDegree]) - std::log(kErr[grad][ti][kMaxTableDegree - 1]);
    return std::log(kErr[grad][ti][kMaxTableDegree]) + rate * (n - kMaxTableDegree);
  };
  double e = (1 - f) * at(i, degree) + f * at(i + 1, degree);
  // Below theta 0.5 the error falls at least as theta^(n+1).
  if (theta < kThetas[0]) e += (degree + 1) * std::log(theta / kThetas[0]);
  return std::exp(e);
}

double predicted_work(double theta, int degree) { return std::pow(degree + 1.0, 3) / (theta * theta * theta); }

std::vector<std::pair<double, int>> table_candidates() {
  std::vector<std::pair<double, int>> c;
  for (double th : kThetas)
    for (int n = 0; n <= kMaxTableDegree; ++n) c.emplace_back(th, n);
  return c;
}

Params choose_params(const Options& o, bool gpu, int64_t nsrc, int64_t ntrg) {
  (void)nsrc;
  (void)ntrg;
  Params p;
  const double target = std::fmax(o.eps, 1e-15) / kSafety;
  // Candidates: the given theta / degree, or the table's; the cheapest by
  // the work per target, ~ (n+1)^3 proxies of ~ 1/theta^3 clusters.
  double best = HUGE_VAL;
  for (int ti = 0; ti < kNumThetas; ++ti) {
    const double th = o.theta > 0 ? o.theta : kThetas[ti];
    for (int n = 0; n <= approx::kMaxDegree; ++n) {
      const int deg = o.degree >= 0 ? o.degree : n;
      const bool ok = (o.theta > 0 && o.degree >= 0) ||
                      (predicted_error(th, deg, false) <= target && (!o.grad || predicted_error(th, deg, true) <= target));
      if (ok) {
        const double cost = predicted_work(th, deg);
        if (cost < best) best = cost, p.theta = th, p.degree = deg;
        break;
      }
      if (o.degree >= 0) break;
    }
    if (o.theta > 0) break;
  }
  if (best == HUGE_VAL) {  // eps beyond the table: the most accurate candidate
    p.theta = o.theta > 0 ? o.theta : kThetas[0];
    p.degree = o.degree >= 0 ? o.degree : approx::kMaxDegree;
  }
  // Leaf and batch sizes: a batch against a cluster costs N_B min(N_C,
  // (n+1)^3) (the size check), so smaller leaves cut the direct part until
  // the tree's depth costs more than it saves. Measured on the H100 (N = 1e6
  // uniform, Coulomb, theta 0.7, n = 8; bench/results/
  // treecode_leafsweep_h100.txt): N_L = N_B = 500 evaluates in 0.16 s
  // against 0.25 s at 2000 (the paper's choice) and 0.18 s at 250, whose
  // plan is slower. The CPU uses the same.
  (void)gpu;
  const int dflt = 500;
  p.leaf_size = o.leaf_size > 0 ? o.leaf_size : dflt;
  p.batch_size = o.batch_size > 0 ? o.batch_size : dflt;
  return p;
}

}  // namespace treecode
}  // namespace gpufmm
