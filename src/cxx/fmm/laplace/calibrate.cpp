// Truncation number from the error a plan reaches (issue 19, item 2).
//
// The fitted model of error.hpp bounds the error over every input it was
// calibrated on, so on most inputs it asks 5-8 more terms than needed (eps
// 1e-6: p = 22 reaches 2e-8 on uniform points, the worst case being a
// Plummer cluster with signed charges). The error of one plan depends on its
// points and tree, and on the densities; the model's slope in p does not.
// So the plan measures: it evaluates itself on reference densities (charges
// of random sign and magnitude 1, charges uniform in (0, 1), dipoles with
// components of random sign and magnitude 1, as options.densities asks; a
// fixed seed, so a plan's p is reproducible; signed sets shifted so that
// their sum has its typical magnitude, plan::typical_leading_moment, as far
// targets see a set through it) and compares, at up to
// kSamples targets, with the double-precision direct sum on the same
// backend. The error of one evaluate is the larger relative L2 error (eq. 36,
// estimated from the samples) of potential and gradient. p is the smallest
// value whose error is within eps / kLaplaceCalibrationMargin (error.hpp)
// for every reference set (plans with few targets have several sets of
// signed charges and of dipoles, kFewTargetSets): the search runs on the
// first set (signed charges, or dipoles), starting kStartBelow terms under
// the model's p (at the plan's p when only terms may be added: sparse near
// fields) and stepping by the error ratio per term (the model's, then the measured one),
// until the smallest p within the goal has its predecessor measured or
// predicted above it; the other sets are then evaluated at that p, and if
// one misses the goal the search goes on above it with every set. A float
// plan that reaches no p within the goal is at float's rounding floor or
// misses by truncation (refused by the caller); at the floor it takes the
// smallest p that reaches it.
// docs/laplace_fmm.md section 3 has the measurements behind the sampling,
// the magnitudes and the margin.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "fmm/laplace/error.hpp"
#include "fmm/laplace/plan.hpp"
#include "kernels/kernel.hpp"
#include "nearfield/direct.hpp"
#include "plan/sampled_error.hpp"

namespace gpufmm {
namespace fmm {

namespace {

using plan::estimated_rel_l2;
using plan::Samples;
using plan::splitmix64;

// Targets compared with the direct sum (all of them below this count).
constexpr int64_t kSamples = 2048;
// The search starts this many terms below the worst-case model's p.
constexpr int kStartBelow = 4;
// At most this many test evaluates (per reference density).
constexpr int kMaxSteps = 6;
// Bounds of the measured error ratio of one term (measured: 1.4-2.0).
constexpr double kMinRatio = 1.2, kMaxRatio = 4.0;
// In float, an error above eps at the largest p is a truncation miss when
// two terms fewer give at least this much more (truncation: >= 1.4x per
// term, so >= 2x; float's rounding floor: flat, 1.00-1.03x measured; a
// floor with truncation still above it is a miss too: dipoles at targets
// far from their sources in a tree cube 1.59x theirs gave 1.32-1.36x, and
// plain errors of 1.3e-5 .. 1.7e-5 at eps 1e-5 where 1.5 let them pass).
constexpr double kTruncationFall = 1.2;
// Plans with at most kFewTargets targets measure kFewTargetSets sets of
// signed charges and of dipoles (one of each above): the first of magnitude
// 1, the others with values uniform in (-1, 1). With few targets the
// error of one set of densities is carried by a few targets and box pairs,
// and another set's error can be several times larger (measured, CPU, 25-60
// sets of charges uniform in (-1, 1) against one reference: up to 3.8x on
// 4000 Plummer points at depth 3, eps 1e-10, where one set's error was 1.5x
// the reference's on average; 2.8x on 100 points; <= 1.5x on 8000 points,
// uniform, ellipsoid or Plummer). These extra sets are evaluated only at the
// p the search found; the larger error of all sets decides. Their evaluates
// cost (CPU, 2 cores, 20000 points, charges in (0, 1): plan 0.80 s with 11
// test evaluates, 0.24 s with 3 without them; with a bound of 8192 CI took
// 33.2 minutes against 30.1 at 4096, mostly its tests of 6000-8000 points
// under the sanitizers), so the bound is the largest size measured to miss
// (4000 points).
constexpr int64_t kFewTargets = 4096;
constexpr int kFewTargetSets = 4;

// Adds the seconds from its construction to stop() (or its end) to a field.
class Stopwatch {
 public:
  explicit Stopwatch(double& field) : field_(field), t0_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() { stop(); }
  void stop() {
    if (done_) return;
    done_ = true;
    field_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  double& field_;
  std::chrono::steady_clock::time_point t0_;
  bool done_ = false;
};

// One reference density: charges (per = 1) or dipoles (per = 3).
struct Reference {
  int per = 1;
  bool positive = false;                   // charges in (0, 1)
  bool uniform = false;                    // values uniform in (-1, 1); else (and not positive) +-1
  std::vector<double> values;              // per x nsrc, user order
  std::vector<double> pot, grad;           // direct sum at the sampled targets
  std::vector<double> top_pot, top_grad;   // the evaluate at the largest p, there
};

// How close target x is to a corner of its box on some level 2..l_max:
// max over those levels of |x - centre| / (sqrt(3)/2 side), in [0, 1].
double corner_closeness(const tree::Cube& cube, int l_max, const double* x) {
  double u[3];
  for (int c = 0; c < 3; ++c) u[c] = (x[c] - cube.corner[c]) / cube.side;
  double best = 0;
  for (int l = 2; l <= l_max; ++l) {
    const double n = std::ldexp(1.0, l);
    double r2 = 0;
    for (int c = 0; c < 3; ++c) {
      const double f = u[c] * n - std::floor(u[c] * n) - 0.5;
      r2 += f * f;
    }
    best = std::max(best, std::sqrt(r2 / 0.75));
  }
  return best;
}

// Every target when there are at most kSamples; else two strata. The error
// is concentrated at targets near box corners, where local expansions
// converge slowest (measured, uniform points, p = 15: the 100 worst of 20000
// targets hold 70% of the squared gradient error, all within a few percent
// of a box corner on some level): the kSamples / 4 targets closest to a
// corner are all taken (weight 1); the others are sampled one per stratum of
// the user's order (weight: the targets per sample).
Samples choose_samples(const LaplacePlan& P, const double* txyz) {
  const int64_t nt = P.ntrg;
  if (nt <= kSamples) return plan::strata_samples(nt, kSamples, 0);  // every target
  Samples S;
  std::vector<float> closeness(static_cast<size_t>(nt));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nt; ++i) closeness[size_t(i)] = float(corner_closeness(P.tree->cube, P.l_max, txyz + 3 * i));
  const int64_t k = kSamples / 4, rest = kSamples - k;
  std::vector<float> sorted(closeness);
  std::nth_element(sorted.begin(), sorted.begin() + (nt - k), sorted.end());
  const float cut = sorted[size_t(nt - k)];  // the corner stratum: close > cut, then ties
  std::vector<uint8_t> corner(static_cast<size_t>(nt), 0);
  int64_t taken = 0;
  for (int64_t i = 0; i < nt && taken < k; ++i)
    if (closeness[size_t(i)] > cut) corner[size_t(i)] = 1, ++taken;
  for (int64_t i = 0; i < nt && taken < k; ++i)
    if (closeness[size_t(i)] == cut) corner[size_t(i)] = 1, ++taken;
  for (int64_t i = 0; i < nt; ++i)
    if (corner[size_t(i)]) S.at.push_back(i), S.weight.push_back(1.0);
  uint64_t seed = 0x5EEDull;
  std::vector<int64_t> others;
  for (int64_t j = 0; j < rest; ++j) {  // one per stratum of the user's order, outside the corner stratum
    const int64_t lo = j * nt / rest, hi = (j + 1) * nt / rest;
    const int64_t start = lo + int64_t(splitmix64(seed) % uint64_t(hi - lo));
    for (int64_t t = 0; t < hi - lo; ++t) {
      const int64_t i = lo + (start - lo + t) % (hi - lo);
      if (!corner[size_t(i)]) {
        others.push_back(i);
        break;
      }
    }
  }
  const double w = double(nt - k) / double(std::max<size_t>(others.size(), 1));
  for (int64_t i : others) S.at.push_back(i), S.weight.push_back(w);
  return S;
}

}  // namespace

void laplace_calibrate(LaplacePlan& P, const double* sources, const double* targets,
                       const std::function<void(int)>& set_p, bool only_up) {
  PlanTimes& times = P.plan_times;
  Stopwatch reference(times.cal_reference);
  const int pmax = P.single() ? kLaplaceMaxPFloat : kMaxP;
  const int64_t nt = P.ntrg, ns = P.nsrc;
  const double* txyz = targets != nullptr ? targets : sources;

  const Samples at = choose_samples(P, txyz);
  const int64_t m = int64_t(at.at.size());
  std::vector<double> sxyz(size_t(3 * m));
  for (int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c) sxyz[size_t(3 * i + c)] = txyz[3 * at.at[size_t(i)] + c];

  const int sets = nt <= kFewTargets ? kFewTargetSets : 1;  // of signed charges and of dipoles
  std::vector<Reference> refs;
  if (P.options.densities != GPUFMM_LAPLACE_DENSITIES_DIPOLES) {
    refs.push_back(Reference{1, false, false, {}, {}, {}, {}, {}});
    refs.push_back(Reference{1, true, false, {}, {}, {}, {}, {}});
    for (int k = 1; k < sets; ++k) refs.push_back(Reference{1, false, true, {}, {}, {}, {}, {}});
  }
  if (P.options.densities != GPUFMM_LAPLACE_DENSITIES_CHARGES)
    for (int k = 0; k < sets; ++k) refs.push_back(Reference{3, false, k > 0, {}, {}, {}, {}, {}});
  uint64_t seed = 0xC0FFEEull;
  for (Reference& r : refs) {
    allocating("the calibration's reference densities", 8.0 * (double(r.per) * double(ns) + 4.0 * double(m)), [&] {
      r.values.resize(size_t(r.per * ns));
      r.pot.resize(size_t(m));
      r.grad.resize(size_t(3 * m));
    });
    for (double& v : r.values) v = r.uniform ? plan::reference_uniform(seed) : plan::reference_value(seed, r.positive);
    if (!r.positive) plan::typical_leading_moment(r.values, r.per);
    nearfield::DirectArgs d;
    d.nsrc = ns;
    d.sources = sources;
    (r.per == 1 ? d.charges : d.dipoles) = r.values.data();
    d.ntrg = m;
    d.targets = sxyz.data();
    d.pot = r.pot.data();
    d.grad = r.grad.data();
    nearfield::direct(P.ctx, kernels::KernelDesc{}, GPUFMM_FLOAT64, d);
  }

  reference.stop();

  std::vector<double> pot, grad;
  allocating("the calibration's outputs", 32.0 * double(nt), [&] {
    pot.resize(size_t(nt));
    grad.resize(size_t(3 * nt));
  });
  std::vector<double> v2;  // scratch of estimated_rel_l2
  int evaluates = 0;
  // Errors by p: of the first reference set, and the largest of all sets.
  std::vector<double> first(size_t(pmax + 1), -1.0), all(size_t(pmax + 1), -1.0);
  // By p, the largest over the sets evaluated after the largest p (their
  // count in top_sets) of the potential's or the gradient's distance from
  // the evaluate there.
  std::vector<double> from_top(size_t(pmax + 1), 0.0);
  std::vector<size_t> top_sets(size_t(pmax + 1), 0);
  std::vector<uint8_t> complete(size_t(pmax + 1), 0);  // all[q] covers every set
  auto use = [&](int q) {
    if (q == P.p) return;
    Stopwatch w(times.cal_setup);
    set_p(q);
  };
  // A reference set that overflows (sources within ~1e-154 of a target in
  // double, ~1e-19 in float: the user's densities may be small enough there)
  // or an error that is not finite leaves the model's p in place.
  struct Unmeasurable {};
  auto checked = [](double e) {
    if (!std::isfinite(e)) throw Unmeasurable{};
    return e;
  };
  auto measure = [&](int q, bool every, bool again = false) {
    const size_t from = again ? 0 : complete[size_t(q)] ? refs.size() : first[size_t(q)] < 0 ? 0 : 1;
    for (size_t k = from; k < (every ? refs.size() : 1); ++k) {
      use(q);
      Reference& r = refs[k];
      LaplaceEvalArgs a;
      (r.per == 1 ? a.charges : a.dipoles) = r.values.data();
      a.pot = pot.data();
      a.grad = grad.data();
      try {
        Stopwatch w(times.cal_evaluate);
        laplace_evaluate(P, a);
      } catch (const Error& err) {
        if (err.status() != GPUFMM_ERROR_ACCURACY) throw;
        throw Unmeasurable{};
      }
      ++evaluates;
      Stopwatch w(times.cal_estimate);
      const double e = checked(std::max(estimated_rel_l2(pot, r.pot, at, 1, v2),
                                        estimated_rel_l2(grad, r.grad, at, 3, v2)));
      if (P.single() && q == pmax) {  // float's floor: the evaluate at the largest p, kept
        r.top_pot.resize(size_t(m));
        r.top_grad.resize(size_t(3 * m));
        for (int64_t i = 0; i < m; ++i) {
          const int64_t t = at.at[size_t(i)];
          r.top_pot[size_t(i)] = pot[size_t(t)];
          for (int c = 0; c < 3; ++c) r.top_grad[size_t(3 * i + c)] = grad[size_t(3 * t + c)];
        }
      } else if (!r.top_pot.empty()) {
        from_top[size_t(q)] = std::max({from_top[size_t(q)], estimated_rel_l2(pot, r.top_pot, at, 1, v2),
                                        estimated_rel_l2(grad, r.top_grad, at, 3, v2)});
        ++top_sets[size_t(q)];
      }
      w.stop();
      if (k == 0) first[size_t(q)] = e;
      all[size_t(q)] = std::max(all[size_t(q)], e);
    }
    if (every) complete[size_t(q)] = 1;
    return every ? all[size_t(q)] : first[size_t(q)];
  };
  const double goal = P.options.eps / kLaplaceCalibrationMargin;
  const int p_model = P.p;
  double e_ok = 0;
  try {
    // Smallest p within goal (every set); largest measured above it, or
    // below the smallest allowed.
    int ok = -1, bad = only_up ? P.p - 1 : 1;
    // Error ratio of one more term: first the model's (the gradient's, the
    // slower), then the one measured between the last two evaluates.
    int q = only_up ? P.p : std::max(2, std::min(pmax, P.p - kStartBelow));
    double r = std::pow(10.0, laplace_log10_error_model(q, true) - laplace_log10_error_model(q + 1, true));
    // Two phases: the search on the first reference set (signed charges, or
    // dipoles), then the other sets at the p found; if one misses the goal
    // there, the search goes on above it with every set.
    for (int phase = 0; phase < 2 && ok < 0; ++phase) {
      const bool every = phase == 1 || refs.size() == 1;
      int q_prev = -1, candidate = -1;
      double e_prev = 0;
      for (int step = 0; step < kMaxSteps; ++step) {
        const double e = measure(q, every);
        if (q_prev > 0 && e > 0 && e_prev > 0)
          r = std::min(kMaxRatio, std::max(kMinRatio, std::pow(e_prev / e, 1.0 / double(q - q_prev))));
        q_prev = q;
        e_prev = e;
        if (e <= goal) {
          if (candidate < 0 || q < candidate) candidate = q;
        } else {
          bad = std::max(bad, q);
        }
        const int hi = candidate < 0 ? pmax : candidate - 1;  // candidates: bad + 1 .. hi
        if (bad + 1 > hi) break;
        int next;
        if (e <= goal) {  // down by as many terms as the slope allows
          const int k = e > 0 ? int(std::floor(std::log(goal / e) / std::log(r))) : q;
          if (k <= 0) break;  // p - 1 predicted above goal
          next = q - k;
        } else {  // up by as many terms as the slope says are missing
          next = q + std::max(1, int(std::ceil(std::log(e / goal) / std::log(r))));
        }
        q = std::max(bad + 1, std::min(hi, next));
      }
      if (candidate < 0) break;
      if (measure(candidate, true) <= goal) {
        ok = candidate;
      } else {
        bad = std::max(bad, candidate);
        q = std::min(pmax, candidate + 1);
      }
    }
    if (ok < 0) {  // nothing within goal: the most terms tried or allowed
      ok = std::min(pmax, std::max(bad, p_model));
      measure(ok, true);
    }
    // Float above the goal at its largest p: truncation that more terms
    // would close, which float has not (targets far from every source: the
    // error falls 1.4x per term; above eps the plan is refused), or float's
    // rounding floor (flat: 100000 uniform points, the gradient 1.28e-5,
    // 1.21e-5, 1.20e-5 at p = 12, 14, 16 by the estimate's norm, where its
    // plain error is 6e-7), which the plan reports and keeps, at the
    // smallest p whose truncation the floor hides: every set's potential
    // and gradient within the goal of their evaluate at the largest p. The
    // near field, where the floor comes from, has the same bits at every p,
    // so that distance is the far field's truncation alone. (Judged by the
    // errors, the floor hid the truncation: the gradient's floor let the
    // potential of 1e7 ellipsoid points reach 1.7e-5 at p = 10, and the
    // floor itself moves with p, so that comparing errors in quadrature let
    // 1e7 refined-patch points reach 1.3e-5.)
    if (P.single() && ok == pmax && all[size_t(ok)] > goal && pmax - 2 >= 2) {
      const double e_max = all[size_t(ok)];
      const bool falls = measure(pmax - 2, true) >= kTruncationFall * e_max;
      P.float_truncation_miss = falls && e_max > P.options.eps;
      auto hidden = [&](int q) {
        if (top_sets[size_t(q)] < refs.size()) {  // some sets measured before the largest p: all again
          from_top[size_t(q)] = 0;
          top_sets[size_t(q)] = 0;
          measure(q, true, true);
        }
        return from_top[size_t(q)] <= goal;
      };
      // The truncation falls with p, so the hidden p are those from the
      // smallest one up: found by bisection over the last kMaxSteps terms
      // (3 probes, against up to 6 one term at a time; each probe sets the
      // plan up at its p and evaluates every set).
      for (int lo = std::max(2, pmax - kMaxSteps); !falls && lo < ok;) {
        const int mid = (lo + ok) / 2;
        if (hidden(mid))
          ok = mid;
        else
          lo = mid + 1;
      }
    }
    use(ok);
    e_ok = all[size_t(ok)];
  } catch (const Unmeasurable&) {
    use(p_model);
    P.calibration_evaluates = evaluates;
    P.measured_eps = 0;
    return;
  }
  P.calibration_evaluates = evaluates;
  P.measured_eps = e_ok;
}

}  // namespace fmm
}  // namespace gpufmm
