// Issue 14, defects 3 and 4 on the CPU backend: the accuracy of the Laplace
// FMM does not depend on where the points are, and what a precision cannot
// hold is an error, never SUCCESS with a wrong answer
// (tests/common/laplace_placement.hpp holds the checks):
//  * cubes shifted by 1e11, 1e12, +-1e15: potential and gradient <= eps;
//  * pairs 1e-15 and 1e-12 apart: as the double direct sum computes them;
//  * coordinates spanning 1e-300 .. 1e300, or a span of 2e200: ACCURACY;
//  * results that overflow (double: a pair 1e-130 apart; float: 1e-14):
//    ACCURACY at evaluate, outputs untouched;
//  * float: pairs 1e-12 apart accurate; a scale float cannot hold, charges
//    or dipoles of 1e300 or 1e-300: INVALID_ARGUMENT naming the argument.
#include <gtest/gtest.h>

#include "common/laplace_placement.hpp"

namespace {

namespace pl = gpufmm_test::placement;

class LaplacePlacement : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  void TearDown() override { EXPECT_EQ(gpufmm_context_destroy(ctx), GPUFMM_SUCCESS); }
  gpufmm_context_t ctx = nullptr;
};

TEST_F(LaplacePlacement, UnitCubeAt1e11) { pl::check_offset(ctx, 1e11, 1); }
TEST_F(LaplacePlacement, UnitCubeAt1e12) { pl::check_offset(ctx, 1e12, 1); }
TEST_F(LaplacePlacement, CubeAtMinus1e15) { pl::check_offset(ctx, -1e15, 1024); }
TEST_F(LaplacePlacement, CubeAt1e15) { pl::check_offset(ctx, 1e15, 1024); }
TEST_F(LaplacePlacement, PairsApart1e15) { pl::check_close_pairs(ctx, 1e-15); }
TEST_F(LaplacePlacement, PairsApart1e12) { pl::check_close_pairs(ctx, 1e-12); }
TEST_F(LaplacePlacement, CoordinatesBeyondDoubleAreRefused) { pl::check_coordinates_refused(ctx); }
TEST_F(LaplacePlacement, DoubleOverflowIsRefused) { pl::check_overflow_refused(ctx, false); }
// The CPU near field forms float differences from double (the CUDA float
// P2P rounds coordinates relative to the leaf's centre, docs/laplace_fmm.md).
TEST_F(LaplacePlacement, FloatOverflowIsRefused) { pl::check_overflow_refused(ctx, true); }
TEST_F(LaplacePlacement, FloatClosePairsThatFitAreAccurate) { pl::check_float_close_pairs(ctx); }
TEST_F(LaplacePlacement, FloatRefusesWhatDoesNotFitFloat) { pl::check_float_refusals(ctx); }

}  // namespace
