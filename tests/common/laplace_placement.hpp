// The checks of issue 14's defects 3 and 4 on the Laplace FMM (placement
// and precision ranges), on any context: tests/cxx/test_laplace_placement.cpp
// runs them on the CPU backend, tests/cuda/test_cuda_laplace_placement.cpp on
// GPU 0. Reference: a long-double direct sum of the exact inputs
// (kernel_ref.hpp). Seeds are fixed (the inputs are the point).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/kernel_ref.hpp"
#include "common/rel_l2.hpp"
#include "gpufmm.h"

namespace gpufmm_test {
namespace placement {

inline std::vector<double> charges(int64_t n, uint64_t seed) {
  gpufmm_test::Rng r(seed);
  std::vector<double> q(static_cast<size_t>(n));
  for (auto& v : q) v = 2 * r.uniform() - 1;
  return q;
}

// n0 uniform points (seed) and, for each of the first npairs, a partner
// `delta` away in a random direction.
inline std::vector<double> with_close_pairs(int64_t n0, int64_t npairs, double delta, uint64_t seed) {
  std::vector<double> x = gpufmm_test::uniform_cube(n0, seed);
  gpufmm_test::Rng r(seed + 1);
  for (int64_t i = 0; i < npairs; ++i) {
    double u[3];
    r.direction(u[0], u[1], u[2]);
    for (int k = 0; k < 3; ++k) x.push_back(x[3 * i + k] + delta * u[k]);
  }
  return x;
}

struct Reference {
  std::vector<double> pot, grad;  // long double direct sum, rounded
};

inline Reference reference(const std::vector<double>& x, const std::vector<double>& q) {
  Reference r;
  const int64_t n = static_cast<int64_t>(q.size());
  gpufmm_test::direct_ref({"laplace", GPUFMM_KERNEL_LAPLACE, {}}, n, x.data(), q.data(), n, x.data(), r.pot, r.grad);
  return r;
}

struct Result {
  double pot = 0, grad = 0;
};

// FMM (targets = sources, charges) against the reference.
inline Result fmm_error(gpufmm_context_t ctx, const std::vector<double>& x, const std::vector<double>& q,
                        const Reference& ref, double eps, int s_max, int l_max = -1, int precision = GPUFMM_FLOAT64) {
  const int64_t n = static_cast<int64_t>(q.size());
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_options_init(&opt);
  opt.eps = eps;
  opt.s_max = s_max;
  opt.l_max = l_max;
  opt.precision = precision;
  gpufmm_laplace_plan_t plan = nullptr;
  EXPECT_EQ(gpufmm_laplace_plan_create(ctx, &opt, n, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  std::vector<double> pot(static_cast<size_t>(n)), grad(static_cast<size_t>(3 * n));
  EXPECT_EQ(gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), grad.data()), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  gpufmm_laplace_plan_destroy(plan);
  return {gpufmm_test::rel_l2(pot, ref.pot), gpufmm_test::rel_l2(grad, ref.grad)};
}

// A cube of side `side` shifted by `offset` (the points are then exact
// doubles near the offset; every difference of two of them is exact), at
// forced depths so that the far field carries most of the sum: potential and
// gradient <= eps = 1e-6 (l_max = 3, 4; s_max = 16 gives l_max 3 here, the
// issue's case). The unit cube at 1e15 is
// left out: its points lie on a grid of 0.125 (the ulp there), i.e. on the
// boxes' faces and corners, the FMM's worst geometry, and give the same
// error at the origin (docs/laplace_fmm.md section 3).
inline void check_offset(gpufmm_context_t ctx, double offset, double side) {
  const int64_t n = 1500;
  std::vector<double> x = uniform_cube(n, 11);
  for (auto& v : x) v = offset + side * v;
  const std::vector<double> q = charges(n, 12);
  const Reference ref = reference(x, q);
  const double eps = 1e-6;
  for (int depth : {3, 4}) {
    const Result e = fmm_error(ctx, x, q, ref, eps, -1, depth);
    EXPECT_LE(e.pot, eps) << "offset " << offset << ", side " << side << ", depth " << depth;
    EXPECT_LE(e.grad, eps) << "offset " << offset << ", side " << side << ", depth " << depth;
  }
}

// 1000 uniform points and, for each of the first 300, a partner `delta`
// away: the near field computes the pairs as the double direct sum does.
inline void check_close_pairs(gpufmm_context_t ctx, double delta) {
  const std::vector<double> x = with_close_pairs(1000, 300, delta, 21);
  const std::vector<double> q = charges(1300, 23);
  const Reference ref = reference(x, q);
  const double eps = 1e-6;
  for (int l_max : {-1, 3}) {
    const Result e = fmm_error(ctx, x, q, ref, eps, -1, l_max);
    EXPECT_LE(e.pot, eps) << "pairs " << delta << " apart, l_max " << l_max;
    EXPECT_LE(e.grad, eps) << "pairs " << delta << " apart, l_max " << l_max;
  }
}

// ACCURACY at plan creation, the message containing `what`.
inline void expect_plan_refused(gpufmm_context_t ctx, const std::vector<double>& x, const char* what) {
  const int64_t n = static_cast<int64_t>(x.size() / 3);
  gpufmm_laplace_plan_t plan = nullptr;
  EXPECT_EQ(gpufmm_laplace_plan_create(ctx, nullptr, n, x.data(), 0, nullptr, &plan), GPUFMM_ERROR_ACCURACY)
      << gpufmm_last_error_message();
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find(what), std::string::npos) << gpufmm_last_error_message();
  if (plan) gpufmm_laplace_plan_destroy(plan);
}

// Coordinates of magnitude 1e-300 .. 1e300 (either sign), whose pairs'
// squared distances underflow or overflow double, and points spanning 2e200
// (no tiny coordinate): ACCURACY at plan creation, with a message.
inline void check_coordinates_refused(gpufmm_context_t ctx) {
  Rng r(31);
  std::vector<double> x(1500);
  for (auto& v : x) v = (r.uniform() < 0.5 ? -1 : 1) * std::pow(10.0, -300 + 600 * r.uniform());
  expect_plan_refused(ctx, x, "sources");
  std::vector<double> y = uniform_cube(300, 32);
  for (auto& v : y) v = 1e200 * (2 * v - 1);
  expect_plan_refused(ctx, y, "span");
}

// A result that overflows the precision is ACCURACY at evaluate, with the
// outputs untouched, never SUCCESS with Inf or NaN (defects 3 and 4).
// Double: a pair 1e-130 apart (1/r^3 = 1e390 on the way to its gradient).
// Float: a pair 1e-14 apart in the unit cube (1/r^3 = 1e42); its potential
// alone (1e14) fits float and comes back finite and accurate.
inline void check_overflow_refused(gpufmm_context_t ctx, bool single) {
  const double delta = single ? 1e-14 : 1e-130;
  const double base = single ? 0.3 : 0.0;
  std::vector<double> x = uniform_cube(200, 33);
  x.insert(x.end(), {base, base, base, base + delta, base, base});
  const int64_t n = static_cast<int64_t>(x.size() / 3);
  const std::vector<double> q = charges(n, 34);
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_options_init(&opt);
  opt.precision = single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  opt.eps = single ? 1e-5 : 1e-6;
  opt.l_max = 2;
  gpufmm_laplace_plan_t plan = nullptr;
  ASSERT_EQ(gpufmm_laplace_plan_create(ctx, &opt, n, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  std::vector<double> pot(static_cast<size_t>(n), 7.0), grad(static_cast<size_t>(3 * n), 7.0);
  EXPECT_EQ(gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), grad.data()), GPUFMM_ERROR_ACCURACY)
      << (single ? "float" : "double") << ": " << gpufmm_last_error_message();
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find(single ? "single" : "double"), std::string::npos) << msg;
  EXPECT_NE(msg.find("target"), std::string::npos) << msg;
  for (double v : pot) ASSERT_EQ(v, 7.0);
  for (double v : grad) ASSERT_EQ(v, 7.0);
  if (single) {  // the potential alone fits
    ASSERT_EQ(gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), nullptr), GPUFMM_SUCCESS)
        << gpufmm_last_error_message();
    const Reference ref = reference(x, q);
    EXPECT_LE(rel_l2(pot, ref.pot), opt.eps);
  }
  gpufmm_laplace_plan_destroy(plan);
}

// Single precision keeps close pairs that float holds: pairs 1e-12 apart
// (gradients ~1e24), against the long-double sum, as double does.
inline void check_float_close_pairs(gpufmm_context_t ctx) {
  const std::vector<double> x = with_close_pairs(1000, 300, 1e-12, 41);
  const std::vector<double> q = charges(1300, 43);
  const Reference ref = reference(x, q);
  for (int l_max : {-1, 3}) {
    const Result e = fmm_error(ctx, x, q, ref, 1e-5, -1, l_max, GPUFMM_FLOAT32);
    EXPECT_LE(e.pot, 1e-5) << "l_max " << l_max;
    EXPECT_LE(e.grad, 1e-5) << "l_max " << l_max;
  }
}

// Single precision: coordinates whose scale float cannot hold, and charges
// or dipoles outside float's normal range (1e300 would be Inf, 1e-300 would
// be 0), are INVALID_ARGUMENT naming the argument. Double takes them.
inline void check_float_refusals(gpufmm_context_t ctx) {
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_options_init(&opt);
  opt.precision = GPUFMM_FLOAT32;
  opt.eps = 1e-4;
  const int64_t n = 300;
  for (double scale : {1e150, 1e-150, 1e20, 1e-12}) {
    std::vector<double> x = uniform_cube(n, 51);
    for (auto& v : x) v *= scale;
    gpufmm_laplace_plan_t plan = nullptr;
    EXPECT_EQ(gpufmm_laplace_plan_create(ctx, &opt, n, x.data(), 0, nullptr, &plan),
              scale == 1e-150 ? GPUFMM_ERROR_ACCURACY : GPUFMM_ERROR_INVALID_ARGUMENT)  // 1e-150: tiny for double too
        << "scale " << scale << ": " << gpufmm_last_error_message();
    EXPECT_EQ(plan, nullptr);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("sources"), std::string::npos)
        << gpufmm_last_error_message();
    if (plan) gpufmm_laplace_plan_destroy(plan);
  }
  const std::vector<double> x = uniform_cube(n, 52);
  gpufmm_laplace_plan_t plan = nullptr, dplan = nullptr;
  ASSERT_EQ(gpufmm_laplace_plan_create(ctx, &opt, n, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_laplace_plan_create(ctx, nullptr, n, x.data(), 0, nullptr, &dplan), GPUFMM_SUCCESS);
  std::vector<double> q = charges(n, 53), d(static_cast<size_t>(3 * n), 0.5);
  std::vector<double> pot(static_cast<size_t>(n), 7.0);
  for (double big : {1e300, -1e39, 1e-300, -1e-39}) {
    for (int dip = 0; dip < 2; ++dip) {
      std::vector<double> qq = q, dd = d;
      (dip ? dd[3 * 17 + 1] : qq[17]) = big;
      EXPECT_EQ(gpufmm_laplace_evaluate(plan, qq.data(), dd.data(), pot.data(), nullptr),
                GPUFMM_ERROR_INVALID_ARGUMENT)
          << big;
      const std::string msg = gpufmm_last_error_message();
      EXPECT_NE(msg.find(dip ? "'dipoles'" : "'charges'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(" 17 "), std::string::npos) << msg;
      EXPECT_NE(msg.find("single precision"), std::string::npos) << msg;
      for (double v : pot) ASSERT_EQ(v, 7.0);
      if (std::fabs(big) < 1) {  // double holds it
        std::vector<double> dp(static_cast<size_t>(n));
        EXPECT_EQ(gpufmm_laplace_evaluate(dplan, qq.data(), dd.data(), dp.data(), nullptr), GPUFMM_SUCCESS)
            << gpufmm_last_error_message();
      }
    }
  }
  gpufmm_laplace_plan_destroy(plan);
  gpufmm_laplace_plan_destroy(dplan);
}

}  // namespace placement
}  // namespace gpufmm_test
