// The calibration every plan shares (src/cxx/plan/calibrate.hpp), on
// synthetic errors: the integer search finds the smallest q within the goal
// and goes on above a miss of the other sets; the grid search takes the
// cheapest candidate within the goal and skips what a miss rules out; the
// reference takes any field callback (here a constant field, as an Ewald
// sum would plug in), and its sets are drawn reproducibly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "plan/calibrate.hpp"

namespace {

using namespace gpufmm::plan;

TEST(PlanCalibrate, IntegerSearchFindsTheSmallestWithinGoal) {
  for (int truth : {3, 9, 20, 33}) {  // the error 10^(truth - q) * goal: within goal from q = truth on
    IntegerSearch s;
    s.lo = 2;
    s.hi = 40;
    s.start = 12;
    s.goal = 1e-6;
    s.ratio = 2.0;
    s.max_ratio = 20.0;
    s.one_set = true;
    int calls = 0;
    s.measure = [&](int q, bool) {
      ++calls;
      return s.goal * std::pow(10.0, double(truth - q));
    };
    const IntegerResult r = search_integer(s);
    EXPECT_EQ(r.ok, truth) << "calls " << calls;
    EXPECT_LE(calls, 2 * (s.max_steps + 1));
  }
}

TEST(PlanCalibrate, IntegerSearchGoesOnAboveAMissOfTheOtherSets) {
  // The first set is within goal from q = 10 on, the others from 14.
  IntegerSearch s;
  s.lo = 2;
  s.hi = 30;
  s.start = 8;
  s.goal = 1.0;
  s.ratio = 4.0;
  s.measure = [](int q, bool every) { return std::pow(2.0, double((every ? 14 : 10) - q)); };
  const IntegerResult r = search_integer(s);
  EXPECT_EQ(r.ok, 14);
  // Nothing within goal: none, and the largest measured above it.
  s.measure = [](int, bool) { return 10.0; };
  const IntegerResult none = search_integer(s);
  EXPECT_EQ(none.ok, -1);
  EXPECT_GE(none.bad, s.start);
}

TEST(PlanCalibrate, GridSearchTakesTheCheapestWithinGoal) {
  // Candidates (a, b): cost a + b, error 2^(a - b); within goal (1) where a <= b.
  std::vector<std::pair<int, int>> c;
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) c.push_back({a, b});
  GridSearch s;
  for (int i = 0; i < int(c.size()); ++i) s.order.push_back(i);
  std::sort(s.order.begin(), s.order.end(), [&](int x, int y) {
    return c[size_t(x)].first + c[size_t(x)].second < c[size_t(y)].first + c[size_t(y)].second;
  });
  s.goal = 1.0;
  s.max_steps = 10;
  s.cost = [&](int i) { return double(c[size_t(i)].first + c[size_t(i)].second); };
  s.predicted = [&](int i) { return std::pow(2.0, double(c[size_t(i)].first - c[size_t(i)].second)); };
  s.ruled_out = [&](int i, int x) {
    return c[size_t(i)].first >= c[size_t(x)].first && c[size_t(i)].second <= c[size_t(x)].second;
  };
  std::vector<int> measured;
  s.measure = [&](int i) {
    measured.push_back(i);
    return s.predicted(i);
  };
  int kept = -1;
  s.keep = [&](int i) { kept = i; };
  const int start = 4 * 5 + 4;  // (4, 4): within goal, cost 8
  const GridResult r = search_grid(s, start, s.predicted(start));
  ASSERT_GE(r.best, 0);
  EXPECT_EQ(r.best, kept);
  EXPECT_EQ(s.cost(r.best), 0.0);  // (0, 0)
  EXPECT_EQ(r.error, 1.0);
  // An unmeasurable start's successor ends the search with the start kept.
  s.measure = [](int) { return std::nan(""); };
  kept = -1;
  const GridResult u = search_grid(s, start, 1.0);
  EXPECT_EQ(u.best, -1);
  EXPECT_EQ(kept, -1);
  EXPECT_EQ(u.error, 1.0);
}

TEST(PlanCalibrate, ReferenceTakesAnyFieldAndRepeats) {
  const int64_t ns = 50, nt = 3000;
  std::vector<double> xyz(size_t(3 * nt));
  for (int64_t i = 0; i < 3 * nt; ++i) xyz[size_t(i)] = double(i % 97) / 97.0;
  std::vector<DensitySpec> specs{{1, false, false, true}, {1, true, false, false}, {3, false, true, true}};
  int calls = 0;
  const ReferenceField field = [&](const double* values, int per, int64_t m, const double*, double* pot,
                                   double* grad) {
    ++calls;
    double sum = 0;
    for (int64_t j = 0; j < per * ns; ++j) sum += values[j];
    for (int64_t i = 0; i < m; ++i) pot[i] = sum;
    ASSERT_NE(grad, nullptr);
    for (int64_t i = 0; i < 3 * m; ++i) grad[i] = 1.0;
  };
  const Reference a = make_reference(strata_samples(nt, kCalibrationSamples, 1), xyz.data(), ns, specs, true,
                                     field, "test sets");
  const Reference b = make_reference(strata_samples(nt, kCalibrationSamples, 1), xyz.data(), ns, specs, true,
                                     field, "test sets");
  EXPECT_EQ(calls, 6);
  ASSERT_EQ(a.sets.size(), 3u);
  EXPECT_EQ(a.m(), kCalibrationSamples);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(a.sets[k].values, b.sets[k].values);
    EXPECT_EQ(a.sets[k].values.size(), size_t(specs[k].per * ns));
    EXPECT_EQ(a.sets[k].field.pot.size(), size_t(a.m()));
  }
  for (double v : a.sets[1].values) EXPECT_TRUE(v > 0 && v < 1);
  // The test evaluates: an exact plan measures 0, one 1e-3 off in every
  // potential 1e-3 / 1.001 (the norm is the outputs').
  double off = 0;
  TestEvaluates t(a, nt, [&](const double* values, int per, double* pot, double* grad) {
    double sum = 0;
    for (int64_t j = 0; j < per * ns; ++j) sum += values[j];
    for (int64_t i = 0; i < nt; ++i) pot[i] = sum * (1 + off);
    for (int64_t i = 0; i < 3 * nt; ++i) grad[i] = 1.0;
  });
  t.evaluate(0);
  EXPECT_EQ(t.error(0), 0.0);
  off = 1e-3;
  t.evaluate(2);
  EXPECT_NEAR(t.error(2), 1e-3 / 1.001, 1e-12);  // the potential's; the gradient is exact
  EXPECT_EQ(t.count(), 2);
  EXPECT_TRUE(std::isnan(max_error(std::nan(""), 1.0)));
  EXPECT_TRUE(std::isnan(max_error(1.0, std::nan(""))));
  EXPECT_EQ(max_error(1.0, 2.0), 2.0);
}

}  // namespace
