// Quick checks of laplace_p_for_eps / laplace_p_reduced with the small FMM of
// tests/common/mini_fmm.hpp (the full sweep is the long test
// test_laplace_math_calibration_long.cpp).
#include <gtest/gtest.h>

#include "common/mini_fmm.hpp"

namespace {

using namespace gpufmm;
using namespace mini_fmm_test;

TEST(LaplaceCalibration, PForEpsReachesEps) {
  // Double: the eps of the pipeline's acceptance list, signed charges.
  for (double eps : {1e-2, 1e-4, 1e-6, 1e-9, 1e-12}) {
    const int p = laplace_p_for_eps(eps);
    auto e = mini_fmm<double>(Dist::kUniform, 3, 3000, 11, false, p, true, 3, 30);
    EXPECT_LE(e.pot, eps) << "uniform, p=" << p;
    if (eps < 1e-10) continue;  // keep the test fast; the sweep covers the rest
    auto c = mini_fmm<double>(Dist::kPlummer, 3, 2000, 12, false, p, true, 2, 30);
    EXPECT_LE(c.pot, eps) << "plummer, p=" << p;
    const int pg = laplace_p_for_eps(eps, false, true);
    auto eg = mini_fmm<double>(Dist::kEllipsoid, 3, 2000, 13, false, pg, true, 2, 30);
    EXPECT_LE(eg.grad, eps) << "gradient, p=" << pg;
  }
  // Float: 1e-2, 1e-4, 1e-5.
  for (double eps : {1e-2, 1e-4, 1e-5}) {
    const int p = laplace_p_for_eps(eps, true);
    auto e = mini_fmm<float>(Dist::kUniform, 3, 3000, 14, false, p, true, 3, 30);
    EXPECT_LE(e.pot, eps) << "float, p=" << p;
    auto c = mini_fmm<float>(Dist::kPlummer, 3, 2000, 15, false, p, true, 2, 30);
    EXPECT_LE(c.pot, eps) << "float plummer, p=" << p;
  }
}

TEST(LaplaceCalibration, ReducedTruncationKeepsErrorAndSavesWork) {
  const int p = 20;
  auto full = mini_fmm<double>(Dist::kUniform, 3, 3000, 21, false, p, false, 3, 30);
  auto red = mini_fmm<double>(Dist::kUniform, 3, 3000, 21, false, p, true, 3, 30);
  EXPECT_LT(red.pot, 3 * full.pot);
  EXPECT_LT(red.m2l_work, 0.85);
  // eq. (24) without the budget split loses accuracy (why the split exists).
  EXPECT_LT(laplace_p_reduced(p, 0.5, kLaplaceEtaStar, 1.0), laplace_p_reduced(p, 0.5));
}

}  // namespace
