// theta and n from the error a plan reaches (options.calibrate; plan.hpp).
//
// The error table of params.cpp bounds clustered points and the regularized
// Yukawa kernel with leaves of 100 points, so on uniform points with the
// default leaves of 500 a plan lands 100-1000x below eps (docs/treecode.md).
// With calibrate on, the plan measures instead: it evaluates itself on two
// reference charge sets (random signs of magnitude 1; uniform in (0, 1); a
// fixed seed, so the parameters are reproducible) and compares at up to
// kSamples targets with the double-precision direct sum of the plan's
// kernel on the same backend (plan/sampled_error.hpp: the relative L2 error
// of potential and, with options.grad, gradient, the larger of the two and
// of the sets). The table's (theta, n) is measured first. Then, up to
// kMaxSteps times, the cheapest (theta, n) of the table's grid (by the work
// model of choose_params) whose predicted error times the last measured
// ratio (measured / predicted) is within eps / kCalibrationMargin is built
// and measured, skipping those that a measured miss rules out (a larger theta
// and a lower n than a miss both raise the error). The plan keeps the
// cheapest measured within eps / kCalibrationMargin, or the table's when none is.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "nearfield/direct.hpp"
#include "plan/sampled_error.hpp"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace treecode {

namespace {

// Targets compared with the direct sum (all of them below this count).
constexpr int64_t kSamples = 2048;
// Plans built and measured after the table's.
constexpr int kMaxSteps = 4;

struct Reference {
  std::vector<double> charges;   // nsrc, user order
  std::vector<double> pot, grad;  // direct sum at the samples
};

struct Candidate {
  double theta;
  int degree;
};

}  // namespace

void calibrate(std::unique_ptr<Plan>& P, const double* sources, const double* targets) {
  const double t0 = omp_get_wtime() - P->plan_seconds;
  Context& ctx = P->ctx;
  const Options o = P->options;
  const int64_t ns = P->nsrc, nt = P->ntrg;
  if (ns == 0 || nt == 0 || (o.theta > 0 && o.degree >= 0)) return;
  const double* txyz = targets != nullptr ? targets : sources;

  const plan::Samples at = plan::strata_samples(nt, kSamples, 0x7EEC0DEull);
  const int64_t m = int64_t(at.at.size());
  std::vector<double> sxyz(size_t(3 * m));
  for (int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c) sxyz[size_t(3 * i + c)] = txyz[3 * at.at[size_t(i)] + c];
  std::vector<Reference> refs(2);
  uint64_t seed = 0xC0FFEEull;
  for (size_t k = 0; k < refs.size(); ++k) {
    Reference& r = refs[k];
    allocating("the calibration's reference charges", 8.0 * (double(ns) + 4.0 * double(m)), [&] {
      r.charges.resize(size_t(ns));
      r.pot.resize(size_t(m));
      r.grad.resize(size_t(3 * m));
    });
    for (double& v : r.charges) v = plan::reference_value(seed, k == 1);
    nearfield::DirectArgs d;
    d.nsrc = ns;
    d.sources = sources;
    d.charges = r.charges.data();
    d.ntrg = m;
    d.targets = sxyz.data();
    d.pot = r.pot.data();
    d.grad = o.grad ? r.grad.data() : nullptr;
    nearfield::direct(ctx, o.kernel, GPUFMM_FLOAT64, d);
  }

  std::vector<double> pot, grad, v2;
  allocating("the calibration's outputs", 32.0 * double(nt), [&] {
    pot.resize(size_t(nt));
    grad.resize(o.grad ? size_t(3 * nt) : 0);
  });
  int evaluates = 0;
  // The larger error over the reference sets (potential and, with grad,
  // gradient) of plan Q; not finite: unmeasurable (overflow near a source).
  auto measure = [&](Plan& Q) {
    double e = 0;
    for (const Reference& r : refs) {
      EvalArgs a;
      a.charges = r.charges.data();
      a.pot = pot.data();
      a.grad = o.grad ? grad.data() : nullptr;
      evaluate(Q, a);
      ++evaluates;
      e = std::max(e, plan::estimated_rel_l2(pot, r.pot, at, 1, v2));
      if (o.grad) e = std::max(e, plan::estimated_rel_l2(grad, r.grad, at, 3, v2));
    }
    return e;
  };
  auto predicted = [&](const Candidate& c) {
    return std::max(predicted_error(c.theta, c.degree, false), o.grad ? predicted_error(c.theta, c.degree, true) : 0.0);
  };
  const double goal = o.eps / kCalibrationMargin;

  // The candidates: the table's grid, or the given theta with every degree,
  // or the given degree with the table's thetas; cheapest first.
  std::vector<Candidate> grid;
  if (o.theta > 0) {
    for (int n = 0; n <= approx::kMaxDegree; ++n) grid.push_back({o.theta, n});
  } else {
    for (const auto& c : table_candidates())
      if (o.degree < 0 || c.second == o.degree) grid.push_back({c.first, c.second});
  }
  std::stable_sort(grid.begin(), grid.end(), [](const Candidate& a, const Candidate& b) {
    return predicted_work(a.theta, a.degree) < predicted_work(b.theta, b.degree);
  });

  std::vector<Candidate> measured, missed;
  const Candidate first{P->par.theta, P->par.degree};
  double e = measure(*P);
  if (!std::isfinite(e)) {  // unmeasurable: the table's parameters stay
    P->calibration_evaluates = evaluates;
    return;
  }
  measured.push_back(first);
  std::unique_ptr<Plan> best;  // the cheapest within goal, when not P
  double best_work = e <= goal ? predicted_work(first.theta, first.degree) : HUGE_VAL, best_e = e;
  if (e > goal) missed.push_back(first);
  double ratio = e / predicted(first);
  for (int step = 0; step < kMaxSteps; ++step) {
    const Candidate* next = nullptr;
    for (const Candidate& c : grid) {
      if (predicted_work(c.theta, c.degree) >= best_work) break;
      auto same = [&](const Candidate& x) { return x.theta == c.theta && x.degree == c.degree; };
      if (std::any_of(measured.begin(), measured.end(), same)) continue;
      auto ruled_out = [&](const Candidate& x) { return c.theta >= x.theta && c.degree <= x.degree; };
      if (std::any_of(missed.begin(), missed.end(), ruled_out)) continue;
      if (predicted(c) * ratio <= goal) {
        next = &c;
        break;
      }
    }
    if (next == nullptr) break;
    Params par = P->par;
    par.theta = next->theta;
    par.degree = next->degree;
    std::unique_ptr<Plan> Q = plan_build(ctx, o, ns, sources, targets != nullptr ? nt : 0, targets, &par);
    finish(*Q);
    const double eq = measure(*Q);
    measured.push_back(*next);
    if (!std::isfinite(eq)) break;
    ratio = eq / predicted(*next);
    if (eq <= goal) {
      best = std::move(Q);
      best_work = predicted_work(next->theta, next->degree);
      best_e = eq;
    } else {
      missed.push_back(*next);
    }
  }
  if (best) P = std::move(best);
  P->calibration_evaluates = evaluates;
  P->measured_eps = best_e;
  P->plan_seconds = omp_get_wtime() - t0;
  P->times.plan = P->plan_seconds;
}

}  // namespace treecode
}  // namespace gpufmm
