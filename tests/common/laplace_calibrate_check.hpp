// Shared by the truncation-calibration tests (issue 19, item 2) of both
// backends: tests/cxx/test_laplace_calibrate.cpp and
// tests/cuda/test_cuda_laplace_calibrate.cpp. One case = one plan (p from
// eps, calibrated on the densities the case evaluates), one evaluate, and
// its errors at every target against the double direct sum on a CPU
// context.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/hessian_check.hpp"
#include "common/laplace_adaptive_check.hpp"
#include "common/laplace_kernels.hpp"
#include "gpufmm.h"
#include "plan/sampled_error.hpp"

namespace gpufmm_test {

// Fresh seeds as the adaptive tests' (printed; GPUFMM_TEST_SEED replays).
inline uint64_t calibrate_seed() { return adaptive_seed(); }

struct CalibrationCase {
  Dist dist = Dist::Uniform;
  bool same = true;
  int kind = kCharges;  // kCharges (signed), kDipoles or kBoth
  bool positive = false;  // charges in (0, 1) instead of (-1, 1)
  double eps = 1e-6;
  int precision = GPUFMM_FLOAT64;
  int64_t n = 8000;
  // >= 0: LaplaceOptions::adaptive_v_direct (the share of the same-level
  // translations summed directly instead; 0: none), else the library's.
  double v_direct = -1;
  // Density sets evaluated on the plan: the first, then sets - 1 more of the
  // same kind (values uniform in (-1, 1), seeds apart), for the worst error
  // over them (CalibrationResult::worst_robust).
  int sets = 1;
  // > 0: the second source moved to this distance from the first, a closest
  // pair whose values hold nearly all of the norm.
  double close_pair = 0;
  // The sources on a cell-centred cubic lattice of floor(cbrt(n))^3 points
  // (n is that many then), where the error model of calibrate = 0 misses eps.
  bool lattice = false;
  // > 0: distinct targets (2n/3) on a sphere of this radius around the
  // centre of the unit cube (the Plummer centre), so far from every source
  // that their near fields are all but empty (create.cpp: a sparse plan).
  double far_targets = 0;
  // The tree: ADAPTIVE with at most s_max points per leaf (run_calibration_case),
  // or UNIFORM at the cost model's depth.
  bool uniform_tree = false;
  // The densities of every set shifted so that their sum (total charge,
  // dipole moment) has its typical magnitude, as the calibration's reference
  // sets are (plan::typical_leading_moment): far targets see a set through
  // that sum, and one that cancels by chance has a larger relative error
  // by as much, whatever p.
  bool typical_moments = false;
  // > 0: the plan's p, given (not calibrated).
  int p = 0;
  // The options' cube_padding of a uniform tree (0: the cost model's).
  double cube_padding = 0;
  std::string name() const {
    char b[192];
    std::snprintf(b, sizeof b, "%s %s %s%s %s eps=%.0e n=%lld%s", dist_name(dist), same ? "same" : "distinct",
                  positive ? "positive " : "", source_kind_name(kind),
                  precision == GPUFMM_FLOAT32 ? "float" : "double", eps, static_cast<long long>(n),
                  close_pair > 0 ? " close pair" : lattice ? " lattice" : far_targets > 0 ? " far targets" : "");
    return b;
  }
};

struct CalibrationResult {
  gpufmm_status_t status = GPUFMM_SUCCESS;
  gpufmm_laplace_info_t info{};
  NdErrors err;     // relative L2 (eq. 36) at every target
  NdErrors robust;  // the same against the norm without its dominating targets
  double worst_robust = 0;  // the largest achieved_robust over the case's sets
  std::vector<double> achieved_sets;  // achieved() of each set
  double achieved() const { return std::max(err.pot, err.grad); }
  double achieved_robust() const { return std::max(robust.pot, robust.grad); }
};

// Relative L2 error of a (per x nt) against ref, at every target: plain
// (eq. 36), and over the targets left when those that dominate the norm of
// ref are left out (largest first, each holding more than 1/32 of the rest;
// at most 64, and one target in 64), the norm the calibration uses
// (calibrate.cpp): with targets close to sources a few pairs hold most of
// the norm, and how much depends on the densities at those pairs, so the
// calibration leaves them out and lands further below eps in the plain
// norm there.
inline void rel_l2_plain_and_robust(const std::vector<double>& a, const std::vector<double>& ref, int per,
                                    double& plain, double& robust) {
  const size_t nt = ref.size() / size_t(per);
  std::vector<double> v(nt), d2(nt);
  double e = 0, n = 0;
  for (size_t t = 0; t < nt; ++t) {
    for (int c = 0; c < per; ++c) {
      const double d = a[t * per + c] - ref[t * per + c];
      d2[t] += d * d;
      v[t] += ref[t * per + c] * ref[t * per + c];
    }
    e += d2[t];
    n += v[t];
  }
  plain = std::sqrt(e / n);
  std::vector<size_t> order(nt);
  for (size_t t = 0; t < nt; ++t) order[t] = t;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return v[x] > v[y]; });
  // rest[k]: the norm without the k largest, summed from the smallest up (not
  // the total less the largest: a closest pair can hold 1e15 times the rest).
  std::vector<double> rest(nt + 1, 0.0);
  for (size_t k = nt; k-- > 0;) rest[k] = rest[k + 1] + v[order[k]];
  size_t out = 0;
  while (out < std::min<size_t>(nt / 64, 64) && v[order[out]] * 32 > rest[out]) ++out;
  double e_rest = 0;
  for (size_t k = nt; k-- > out;) e_rest += d2[order[k]];
  robust = std::sqrt(e_rest / rest[out]);
}

// Targets far from every source (the calibration tests' FarTargets*): n
// Plummer sources, 2n/3 targets on a sphere of radius 3 around them, the
// cost model's uniform depth in the points' own cube (a sparse plan; a
// larger cube, which the model may choose, can fill the targets' near
// fields: FarTargetsInTheModelsCube), 5 density sets with sums of typical
// magnitude.
inline CalibrationCase far_targets_case(double eps, int kind, int64_t n) {
  CalibrationCase k;
  k.dist = Dist::Plummer;
  k.far_targets = 3;
  k.uniform_tree = true;
  k.cube_padding = 1;
  k.same = false;
  k.n = n;
  k.eps = eps;
  k.kind = kind;
  k.sets = 5;
  k.typical_moments = true;
  return k;
}

// The median and the largest of the achieved errors of a case's sets.
inline double median_achieved(const CalibrationResult& r) {
  std::vector<double> v = r.achieved_sets;
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
inline double worst_achieved(const CalibrationResult& r) {
  return r.achieved_sets.empty() ? 0.0 : *std::max_element(r.achieved_sets.begin(), r.achieved_sets.end());
}

// The densities option a case's plan is made for.
inline int case_densities(const CalibrationCase& c) {
  return c.kind == kCharges ? GPUFMM_LAPLACE_DENSITIES_CHARGES
         : c.kind == kDipoles ? GPUFMM_LAPLACE_DENSITIES_DIPOLES
                              : GPUFMM_LAPLACE_DENSITIES_ANY;
}

// Plans on ctx with an adaptive tree of at most s_max points per leaf (so
// that every distribution has a far field at test sizes; c.uniform_tree: a
// uniform one at the cost model's depth), evaluates, and
// measures against the direct sum on ref (a CPU context).
inline CalibrationResult run_calibration_case(gpufmm_context_t ctx, gpufmm_context_t ref, const CalibrationCase& c,
                                              uint64_t seed, int s_max = 64) {
  CalibrationResult r;
  const int64_t side = c.lattice ? int64_t(std::cbrt(double(c.n)) + 1e-9) : 0;
  const int64_t n = c.lattice ? side * side * side : c.n;
  NdProblem p = make_nd_problem(c.dist, n, c.same && c.far_targets <= 0 ? -1 : (2 * n) / 3, 1, c.kind, seed);
  if (c.far_targets > 0) {
    Rng g(seed + 11);
    for (int64_t i = 0; i < p.nt; ++i) {
      double u[3];
      g.direction(u[0], u[1], u[2]);
      for (int k = 0; k < 3; ++k) p.trg[size_t(3 * i + k)] = 0.5 + c.far_targets * u[k];
    }
  }
  for (int64_t i = 0; i < n && c.lattice; ++i) {
    const int64_t at[3] = {i % side, (i / side) % side, i / (side * side)};
    for (int k = 0; k < 3; ++k) p.src[size_t(3 * i + k)] = (double(at[k]) + 0.5) / double(side);
  }
  if (c.positive)
    for (double& v : p.q) v = 0.5 * (v + 1.0);
  auto typical = [&c, &p] {
    if (!c.typical_moments) return;
    gpufmm::plan::typical_leading_moment(p.q, 1);
    gpufmm::plan::typical_leading_moment(p.d, 3);
  };
  typical();
  if (c.close_pair > 0) {
    Rng g(seed + 7);
    double u[3];
    g.direction(u[0], u[1], u[2]);
    for (int k = 0; k < 3; ++k) p.src[size_t(3 + k)] = p.src[size_t(k)] + c.close_pair * u[k];
  }
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.eps = c.eps;
  o.precision = c.precision;
  o.tree = c.uniform_tree ? GPUFMM_LAPLACE_TREE_UNIFORM : GPUFMM_LAPLACE_TREE_ADAPTIVE;
  if (!c.uniform_tree) o.s_max = s_max;
  o.densities = case_densities(c);
  o.p = c.p;
  if (c.uniform_tree) o.cube_padding = c.cube_padding;
  gpufmm_laplace_plan_t plan = nullptr;
  const std::string keys = c.v_direct >= 0 ? "v_direct=" + std::to_string(c.v_direct) : "";
  r.status = laplace_plan_create_kernels(ctx, &o, keys.c_str(), p.ns, p.src.data(), p.nt, p.targets(), &plan);
  if (r.status != GPUFMM_SUCCESS) return r;
  gpufmm_laplace_plan_info(plan, &r.info);
  for (int set = 0; set < c.sets && r.status == GPUFMM_SUCCESS; ++set) {
    if (set > 0) {  // the next set of the case's kind
      Rng g(seed + 1000 + uint64_t(set));
      for (double& v : p.q) v = 2 * g.uniform() - 1;
      for (double& v : p.d) v = 2 * g.uniform() - 1;
      typical();
    }
    NdOutputs out(p, false);
    r.status = gpufmm_laplace_evaluate(plan, p.charges(), p.dipoles(), out.pot.data(), out.grad.data());
    if (r.status != GPUFMM_SUCCESS) break;
    std::vector<double> pot(size_t(p.nt)), grad(size_t(3 * p.nt));
    r.status = gpufmm_laplace_direct(ref, GPUFMM_FLOAT64, p.ns, p.src.data(), p.charges(), p.dipoles(), p.nt,
                                     p.target_xyz(), pot.data(), grad.data());
    CalibrationResult e;
    rel_l2_plain_and_robust(out.pot, pot, 1, e.err.pot, e.robust.pot);
    rel_l2_plain_and_robust(out.grad, grad, 3, e.err.grad, e.robust.grad);
    if (set == 0) {
      r.err = e.err;
      r.robust = e.robust;
    }
    r.worst_robust = std::max(r.worst_robust, e.achieved_robust());
    r.achieved_sets.push_back(e.achieved());
  }
  gpufmm_laplace_plan_destroy(plan);
  return r;
}

}  // namespace gpufmm_test
