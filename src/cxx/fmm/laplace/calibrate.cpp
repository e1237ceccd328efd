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
// the magnitudes and the margin. The reference, the test evaluates and the
// search over p are plan/calibrate.hpp's; here are the samples, the sets,
// the phases' bookkeeping by p and float's floor.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "fmm/laplace/error.hpp"
#include "fmm/laplace/plan.hpp"
#include "plan/calibrate.hpp"
#include "plan/sampled_error.hpp"

namespace gpufmm {
namespace fmm {

namespace {

using plan::Samples;
using plan::splitmix64;

// Targets compared with the direct sum (all of them below this count).
constexpr int64_t kSamples = plan::kCalibrationSamples;
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

// The reference sets options.densities asks for, in the order they are
// drawn: signed charges, positive charges, then (few targets) more signed
// charges uniform in (-1, 1); dipoles, then (few targets) more of them
// uniform in (-1, 1). Signed sets have their sum at its typical magnitude.
std::vector<plan::DensitySpec> reference_specs(const LaplacePlan& P) {
  const int sets = P.ntrg <= kFewTargets ? kFewTargetSets : 1;  // of signed charges and of dipoles
  std::vector<plan::DensitySpec> specs;
  if (P.options.densities != GPUFMM_LAPLACE_DENSITIES_DIPOLES) {
    specs.push_back({1, false, false, true});
    specs.push_back({1, true, false, true});
    for (int k = 1; k < sets; ++k) specs.push_back({1, false, true, true});
  }
  if (P.options.densities != GPUFMM_LAPLACE_DENSITIES_CHARGES)
    for (int k = 0; k < sets; ++k) specs.push_back({3, false, k > 0, true});
  return specs;
}

// A reference set that overflows (sources within ~1e-154 of a target in
// double, ~1e-19 in float: the user's densities may be small enough there)
// or an error that is not finite leaves the model's p in place.
struct Unmeasurable {};

double checked(double e) {
  if (!std::isfinite(e)) throw Unmeasurable{};
  return e;
}

// The test evaluates of the plan on the reference sets: the samples, the
// reference densities and their direct sums at the samples.
plan::TestEvaluates laplace_tests(LaplacePlan& P, const double* sources, const double* targets) {
  PlanTimes& times = P.plan_times;
  Stopwatch reference(times.cal_reference);
  const double* txyz = targets != nullptr ? targets : sources;
  plan::Reference ref =
      plan::make_reference(choose_samples(P, txyz), txyz, P.nsrc, reference_specs(P), true,
                           plan::direct_reference(P.ctx, kernels::KernelDesc{}, P.nsrc, sources),
                           "the calibration's reference densities");
  reference.stop();
  return plan::TestEvaluates(std::move(ref), P.ntrg, [&P, &times](const double* values, int per, double* pot,
                                                                    double* grad) {
    LaplaceEvalArgs a;
    (per == 1 ? a.charges : a.dipoles) = values;
    a.pot = pot;
    a.grad = grad;
    try {
      Stopwatch w(times.cal_evaluate);
      laplace_evaluate(P, a);
    } catch (const Error& err) {
      if (err.status() != GPUFMM_ERROR_ACCURACY) throw;
      throw Unmeasurable{};
    }
  });
}

// The errors measured by p: of the first reference set, the largest of all
// sets; in float, the distance from the evaluates at the largest p.
class Measurements {
 public:
  Measurements(LaplacePlan& P, plan::TestEvaluates& tests, const std::function<void(int)>& set_p, int pmax)
      : P_(P), tests_(tests), set_p_(set_p), pmax_(pmax), top_(tests.sets()), first_(size_t(pmax + 1), -1.0),
        all_(size_t(pmax + 1), -1.0), from_top_(size_t(pmax + 1), 0.0), top_sets_(size_t(pmax + 1), 0),
        complete_(size_t(pmax + 1), 0) {}

  // The plan ready at q.
  void use(int q) {
    if (q == P_.p) return;
    Stopwatch w(P_.plan_times.cal_setup);
    set_p_(q);
  }

  // The error at q of the first set, or (every) the largest of all sets;
  // sets measured at q before are not evaluated again unless `again`.
  double measure(int q, bool every, bool again = false) {
    const size_t n = tests_.sets();
    const size_t from = again ? 0 : complete_[size_t(q)] ? n : first_[size_t(q)] < 0 ? 0 : 1;
    for (size_t k = from; k < (every ? n : 1); ++k) {
      use(q);
      tests_.evaluate(k);
      Stopwatch w(P_.plan_times.cal_estimate);
      const double e = checked(tests_.error(k));
      if (P_.single() && q == pmax_) {  // float's floor: the evaluate at the largest p, kept
        top_[k] = tests_.outputs_at_samples();
      } else if (!top_[k].pot.empty()) {
        from_top_[size_t(q)] = plan::max_error(from_top_[size_t(q)], tests_.error_against(top_[k]));
        ++top_sets_[size_t(q)];
      }
      w.stop();
      if (k == 0) first_[size_t(q)] = e;
      all_[size_t(q)] = std::max(all_[size_t(q)], e);
    }
    if (every) complete_[size_t(q)] = 1;
    return every ? all_[size_t(q)] : first_[size_t(q)];
  }

  double all(int q) const { return all_[size_t(q)]; }

  // Float's floor: every set's potential and gradient at q within goal of
  // their evaluate at the largest p (the sets measured before it, again).
  bool hidden(int q, double goal) {
    if (top_sets_[size_t(q)] < tests_.sets()) {
      from_top_[size_t(q)] = 0;
      top_sets_[size_t(q)] = 0;
      measure(q, true, true);
    }
    return from_top_[size_t(q)] <= goal;
  }

 private:
  LaplacePlan& P_;
  plan::TestEvaluates& tests_;
  const std::function<void(int)>& set_p_;
  int pmax_;
  std::vector<plan::SampledField> top_;  // by set: the evaluate at the largest p, at the samples
  // By p: the first set's error; the largest over the sets; the largest
  // over the sets evaluated after the largest p (their count in top_sets_)
  // of the potential's or the gradient's distance from the evaluate there;
  // whether all_ covers every set.
  std::vector<double> first_, all_, from_top_;
  std::vector<size_t> top_sets_;
  std::vector<uint8_t> complete_;
};

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
// 1e7 refined-patch points reach 1.3e-5.) Returns the p kept.
int float_floor(LaplacePlan& P, Measurements& M, int ok, int pmax, double goal) {
  if (!(P.single() && ok == pmax && M.all(ok) > goal && pmax - 2 >= 2)) return ok;
  const double e_max = M.all(ok);
  const bool falls = M.measure(pmax - 2, true) >= kTruncationFall * e_max;
  P.float_truncation_miss = falls && e_max > P.options.eps;
  // The truncation falls with p, so the hidden p are those from the
  // smallest one up: found by bisection over the last kMaxSteps terms
  // (3 probes, against up to 6 one term at a time; each probe sets the
  // plan up at its p and evaluates every set).
  for (int lo = std::max(2, pmax - kMaxSteps); !falls && lo < ok;) {
    const int mid = (lo + ok) / 2;
    if (M.hidden(mid, goal))
      ok = mid;
    else
      lo = mid + 1;
  }
  return ok;
}

// The search for p (phases as plan::search_integer says), from kStartBelow
// terms under the model's p (from it, only up), stepping first by
// the model's error ratio of one more term (the gradient's, the slower);
// nothing within goal: the most terms tried or allowed.
int search_p(Measurements& M, size_t sets, int p_model, int pmax, double goal, bool only_up) {
  plan::IntegerSearch s;
  s.lo = only_up ? p_model : 2;
  s.hi = pmax;
  s.start = only_up ? p_model : std::max(2, std::min(pmax, p_model - kStartBelow));
  s.goal = goal;
  s.ratio = std::pow(10.0, laplace_log10_error_model(s.start, true) - laplace_log10_error_model(s.start + 1, true));
  s.min_ratio = kMinRatio;
  s.max_ratio = kMaxRatio;
  s.max_steps = kMaxSteps;
  s.one_set = sets == 1;
  s.measure = [&M](int q, bool every) { return M.measure(q, every); };
  const plan::IntegerResult r = plan::search_integer(s);
  if (r.ok >= 0) return r.ok;
  const int ok = std::min(pmax, std::max(r.bad, p_model));
  M.measure(ok, true);
  return ok;
}

}  // namespace

void laplace_calibrate(LaplacePlan& P, const double* sources, const double* targets,
                       const std::function<void(int)>& set_p, bool only_up) {
  const int pmax = P.single() ? kLaplaceMaxPFloat : kMaxP;
  plan::TestEvaluates tests = laplace_tests(P, sources, targets);
  Measurements M(P, tests, set_p, pmax);
  const double goal = P.options.eps / kLaplaceCalibrationMargin;
  const int p_model = P.p;
  double e_ok = 0;
  try {
    const int ok = float_floor(P, M, search_p(M, tests.sets(), p_model, pmax, goal, only_up), pmax, goal);
    M.use(ok);
    e_ok = M.all(ok);
  } catch (const Unmeasurable&) {
    M.use(p_model);
    e_ok = 0;
  }
  P.calibration_evaluates = tests.count();
  P.measured_eps = e_ok;
}

}  // namespace fmm
}  // namespace gpufmm
