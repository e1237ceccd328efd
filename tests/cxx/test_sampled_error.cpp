// The relative L2 error estimated from sampled targets (plan/sampled_error.hpp),
// which the Laplace FMM's and the treecode's calibrations decide p by:
//  * every target sampled and none dominant: the exact relative L2 error;
//  * a closest pair whose |grad|^2 is 1e30-1e36 times the others' (points a
//    few 1e-7 apart with dipoles): those targets are left out of the norm
//    and of the error, and the estimate is the error over the rest against
//    the norm of the rest (it was the rounding of the total less the pair,
//    even negative, and a plan calibrated on such points went to p = 50);
//  * a target holding less than 1/32 of the rest stays in;
//  * sampled strata: the estimate within a factor of the exact error;
//  * the same bits on one thread and on all;
//  * reference densities given a sum of typical magnitude (the shift of
//    typical_leading_moment).
// Seeds are fresh every run (printed); GPUFMM_TEST_SEED=<seed> replays one.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/distributions.hpp"
#include "common/test_seed.hpp"
#include "plan/sampled_error.hpp"

namespace {

using gpufmm::plan::estimated_rel_l2;
using gpufmm::plan::Samples;
using gpufmm::plan::strata_samples;

uint64_t seed() {
  static const uint64_t s = gpufmm_test::fresh_test_seed("sampled error tests");
  return s;
}

// Values per x nt in [-1, 1] and an approximation off by a relative `rel`
// per value, at random.
struct Field {
  int per = 3;
  std::vector<double> ref, approx;
};

Field make_field(int64_t nt, int per, double rel, uint64_t s) {
  gpufmm_test::Rng r(s);
  Field f;
  f.per = per;
  f.ref.resize(size_t(nt * per));
  f.approx.resize(f.ref.size());
  for (size_t i = 0; i < f.ref.size(); ++i) {
    f.ref[i] = 2.0 * r.uniform() - 1.0;
    f.approx[i] = f.ref[i] * (1.0 + rel * (2.0 * r.uniform() - 1.0));
  }
  return f;
}

// The reference values at the samples, in their order.
std::vector<double> at_samples(const Field& f, const Samples& S) {
  std::vector<double> v;
  for (int64_t t : S.at)
    for (int c = 0; c < f.per; ++c) v.push_back(f.ref[size_t(t * f.per + c)]);
  return v;
}

// The exact relative L2 error over the targets not in `skip`.
double exact_rel_l2(const Field& f, const std::vector<int64_t>& skip) {
  double e = 0, n = 0;
  const int64_t nt = int64_t(f.ref.size()) / f.per;
  for (int64_t t = 0; t < nt; ++t) {
    if (std::find(skip.begin(), skip.end(), t) != skip.end()) continue;
    for (int c = 0; c < f.per; ++c) {
      const double d = f.approx[size_t(t * f.per + c)] - f.ref[size_t(t * f.per + c)];
      e += d * d;
      n += f.approx[size_t(t * f.per + c)] * f.approx[size_t(t * f.per + c)];
    }
  }
  return std::sqrt(e / n);
}

TEST(SampledError, EveryTargetNoneDominantIsTheExactError) {
  for (int per : {1, 3}) {
    const Field f = make_field(5000, per, 1e-6, seed() + uint64_t(per));
    const Samples S = strata_samples(5000, 5000, 0);
    std::vector<double> v2;
    const double est = estimated_rel_l2(f.approx, at_samples(f, S), S, per, v2);
    EXPECT_NEAR(est, exact_rel_l2(f, {}), 1e-12 * est) << "per " << per;
  }
}

// Two targets 1e-7 apart carrying dipoles: |grad|^2 ~ 1e42 at both, against
// ~1 elsewhere; their own errors are rounding of their values (1e-16
// relative, 1e5 absolute), the others' 1e-7.
TEST(SampledError, AClosestPairIsLeftOutOfNormAndError) {
  const int64_t nt = 6000;
  for (double big : {1e15, 1e18, 1e21}) {
    Field f = make_field(nt, 3, 1e-7, seed() + 10);
    gpufmm_test::Rng r(seed() + 11);
    const std::vector<int64_t> pair = {int64_t(r.next() % 3000), 3000 + int64_t(r.next() % 3000)};
    for (int64_t t : pair)
      for (int c = 0; c < 3; ++c) {
        f.ref[size_t(3 * t + c)] = big * (c + 1);
        f.approx[size_t(3 * t + c)] = big * (c + 1) * (1.0 + 1e-16 * (c - 1));
      }
    const double want = exact_rel_l2(f, pair);
    const Samples S = strata_samples(nt, nt, 0);
    std::vector<double> v2;
    const double est = estimated_rel_l2(f.approx, at_samples(f, S), S, 3, v2);
    EXPECT_NEAR(est, want, 1e-12 * want) << "pair at |v| ~ " << big << ", seed " << seed();
  }
}

// A target at 1/40 of the rest's norm is not dominant: kept, with its error.
TEST(SampledError, ATargetBelowTheDominantShareStays) {
  const int64_t nt = 6400;
  Field f = make_field(nt, 1, 1e-8, seed() + 20);
  double n = 0;
  for (double v : f.approx) n += v * v;
  const int64_t t = int64_t(seed() % uint64_t(nt));
  n -= f.approx[size_t(t)] * f.approx[size_t(t)];
  f.ref[size_t(t)] = std::sqrt(n / 40.0);
  f.approx[size_t(t)] = f.ref[size_t(t)] * (1.0 + 1e-4);  // its error dominates the sum's
  const Samples S = strata_samples(nt, nt, 0);
  std::vector<double> v2;
  const double est = estimated_rel_l2(f.approx, at_samples(f, S), S, 1, v2);
  EXPECT_NEAR(est, exact_rel_l2(f, {}), 1e-12 * est);
  EXPECT_GT(est, 1e-5);
}

// Samples in strata: one per stratum, weighted by its targets; the estimate
// near the exact error (errors spread evenly here), and the same bits on one
// thread and on all.
TEST(SampledError, StrataEstimateAndThreads) {
  const int64_t nt = 20000;
  const Field f = make_field(nt, 3, 1e-6, seed() + 30);
  const Samples S = strata_samples(nt, 2048, seed() + 31);
  ASSERT_EQ(S.at.size(), size_t(2048));
  const std::vector<double> ref = at_samples(f, S);
  std::vector<double> v2;
  const int threads = omp_get_max_threads();
  const double est = estimated_rel_l2(f.approx, ref, S, 3, v2);
  omp_set_num_threads(1);
  const double one = estimated_rel_l2(f.approx, ref, S, 3, v2);
  omp_set_num_threads(threads);
  EXPECT_EQ(est, one);
  const double exact = exact_rel_l2(f, {});
  EXPECT_GT(est, exact / 1.2);
  EXPECT_LT(est, exact * 1.2);
}

}  // namespace

// Reference densities with the sum of typical magnitude: after the shift
// the sum (total charge, dipole moment) has the root of the sum of squares
// of the drawn values as its magnitude and keeps its direction; a draw that
// sums to zero (up to rounding) gets that magnitude too; every value moves
// by the same constant.
TEST(SampledError, TypicalLeadingMoment) {
  gpufmm_test::Rng r(seed() + 5);
  for (int per : {1, 3})
    for (int zero = 0; zero < 2; ++zero) {
      const size_t n = 1000;
      std::vector<double> v(n * size_t(per));
      for (double& x : v) x = 2 * r.uniform() - 1;
      if (zero)  // a draw whose sum is exactly zero
        for (size_t i = 0; i < n / 2; ++i)
          for (int c = 0; c < per; ++c) v[(n / 2 + i) * size_t(per) + size_t(c)] = -v[i * size_t(per) + size_t(c)];
      double s2 = 0, m[3] = {0, 0, 0};
      for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < per; ++c) {
          s2 += v[i * size_t(per) + size_t(c)] * v[i * size_t(per) + size_t(c)];
          m[c] += v[i * size_t(per) + size_t(c)];
        }
      std::vector<double> w = v;
      gpufmm::plan::typical_leading_moment(w, per);
      double t[3] = {0, 0, 0}, t2 = 0, m2 = 0;
      for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < per; ++c) t[c] += w[i * size_t(per) + size_t(c)];
      for (int c = 0; c < per; ++c) t2 += t[c] * t[c], m2 += m[c] * m[c];
      EXPECT_NEAR(std::sqrt(t2), std::sqrt(s2), 1e-9 * std::sqrt(s2)) << "per " << per << " zero " << zero;
      for (int c = 0; c < per; ++c) {
        if (!zero) EXPECT_NEAR(t[c] / std::sqrt(t2), m[c] / std::sqrt(m2), 1e-9) << "per " << per << " component " << c;
        const double shift = w[size_t(c)] - v[size_t(c)];
        for (size_t i = 0; i < n; ++i)
          EXPECT_NEAR(w[i * size_t(per) + size_t(c)] - v[i * size_t(per) + size_t(c)], shift, 1e-12);
      }
    }
}
