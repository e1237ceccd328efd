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
// The reference, the test evaluates and the search: plan/calibrate.hpp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "plan/calibrate.hpp"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace treecode {

namespace {

// Plans built and measured after the table's.
constexpr int kMaxSteps = 4;

struct Candidate {
  double theta;
  int degree;
};

// The candidates: the table's grid, or the given theta with every degree,
// or the given degree with the table's thetas; cheapest first (by the work
// model of choose_params), each once.
std::vector<Candidate> candidate_grid(const Options& o) {
  std::vector<Candidate> grid;
  auto add = [&grid](double theta, int degree) {
    for (const Candidate& c : grid)
      if (c.theta == theta && c.degree == degree) return;
    grid.push_back({theta, degree});
  };
  if (o.theta > 0) {
    for (int n = 0; n <= approx::kMaxDegree; ++n) add(o.theta, n);
  } else {
    for (const auto& c : table_candidates())
      if (o.degree < 0 || c.second == o.degree) add(c.first, c.second);
  }
  std::stable_sort(grid.begin(), grid.end(), [](const Candidate& a, const Candidate& b) {
    return predicted_work(a.theta, a.degree) < predicted_work(b.theta, b.degree);
  });
  return grid;
}

// The test evaluates of plan Q (set by the caller) on two reference charge
// sets (random signs of magnitude 1; uniform in (0, 1)) against the direct
// sum of the plan's kernel at the samples.
plan::TestEvaluates treecode_tests(Plan& P, Plan*& Q, const double* sources, const double* targets) {
  const Options& o = P.options;
  const double* txyz = targets != nullptr ? targets : sources;
  plan::Reference ref = plan::make_reference(plan::strata_samples(P.ntrg, plan::kCalibrationSamples, 0x7EEC0DEull),
                                             txyz, P.nsrc, {{1, false, false, false}, {1, true, false, false}},
                                             o.grad, plan::direct_reference(P.ctx, o.kernel, P.nsrc, sources),
                                             "the calibration's reference charges");
  return plan::TestEvaluates(std::move(ref), P.ntrg, [&Q](const double* values, int, double* pot, double* grad) {
    EvalArgs a;
    a.charges = values;
    a.pot = pot;
    a.grad = grad;
    evaluate(*Q, a);
  });
}

}  // namespace

void calibrate(std::unique_ptr<Plan>& P, const double* sources, const double* targets) {
  const double t0 = omp_get_wtime() - P->plan_seconds;
  const Options o = P->options;
  const int64_t ns = P->nsrc, nt = P->ntrg;
  if (ns == 0 || nt == 0 || (o.theta > 0 && o.degree >= 0)) return;
  Plan* on = P.get();  // the plan the test evaluates run on
  plan::TestEvaluates tests = treecode_tests(*P, on, sources, targets);
  // The larger error over the reference sets (potential and, with grad,
  // gradient) of the plan `on`; not finite: unmeasurable (overflow near a
  // source).
  auto measure = [&tests] {
    double e = 0;
    for (size_t k = 0; k < tests.sets(); ++k) {
      tests.evaluate(k);
      e = plan::max_error(e, tests.error(k));
    }
    return e;
  };
  // The candidates, the table's (theta, n) last when not among them.
  std::vector<Candidate> grid = candidate_grid(o);
  plan::GridSearch s;
  for (int i = 0; i < int(grid.size()); ++i) s.order.push_back(i);
  int start = 0;
  while (start < int(grid.size()) && !(grid[size_t(start)].theta == P->par.theta &&
                                       grid[size_t(start)].degree == P->par.degree))
    ++start;
  if (start == int(grid.size())) grid.push_back({P->par.theta, P->par.degree});
  const double e = measure();
  if (!std::isfinite(e)) {  // unmeasurable: the table's parameters stay
    P->calibration_evaluates = tests.count();
    return;
  }
  s.goal = o.eps / kCalibrationMargin;
  s.max_steps = kMaxSteps;
  s.cost = [&grid](int i) { return predicted_work(grid[size_t(i)].theta, grid[size_t(i)].degree); };
  s.predicted = [&grid, &o](int i) {
    const Candidate& c = grid[size_t(i)];
    return std::max(predicted_error(c.theta, c.degree, false), o.grad ? predicted_error(c.theta, c.degree, true) : 0.0);
  };
  s.ruled_out = [&grid](int i, int x) {
    return grid[size_t(i)].theta >= grid[size_t(x)].theta && grid[size_t(i)].degree <= grid[size_t(x)].degree;
  };
  std::unique_ptr<Plan> built, best;  // the last plan built; the cheapest within goal, when not P
  s.measure = [&](int i) {
    Params par = P->par;
    par.theta = grid[size_t(i)].theta;
    par.degree = grid[size_t(i)].degree;
    built = plan_build(P->ctx, o, ns, sources, targets != nullptr ? nt : 0, targets, &par);
    finish(*built);
    on = built.get();
    return measure();
  };
  s.keep = [&](int) { best = std::move(built); };
  const plan::GridResult r = plan::search_grid(s, start, e);
  if (best) P = std::move(best);
  P->calibration_evaluates = tests.count();
  P->measured_eps = r.error;
  P->plan_seconds = omp_get_wtime() - t0;
  P->times.plan = P->plan_seconds;
}

}  // namespace treecode
}  // namespace gpufmm
