// Truncation number from the error a plan reaches (issue 19, item 2;
// src/cxx/fmm/laplace/calibrate.cpp), CPU backend:
//  * achieved error (the larger relative L2 error of potential and gradient
//    at every target, against the double direct sum) <= eps, and >= eps/30
//    against the norm the calibration uses (without the few targets that
//    dominate it; laplace_calibrate_check.hpp), so that a regression to the
//    conservative model p is caught, for eps
//    1e-3, 1e-6, 1e-9, 1e-12 (double) and 1e-3, 1e-5 (float) on uniform,
//    ellipsoid, Plummer, two-cluster and refined-patch points, sources =
//    targets and distinct, signed charges and dipoles (densities CHARGES /
//    DIPOLES); positive charges and both kinds (ANY) within eps;
//  * what the plan reports: the measured error within eps / 2.2, the test
//    evaluates, and the same p and measured error for the same points, on
//    any number of threads;
//  * a closest pair 1e-7 apart, which holds nearly all of the norm, does
//    not decide p (it sent p to 50); points on a cubic lattice, where the
//    worst-case model's p misses eps, land in the window;
//  * float's rounding floor above the goal: the smallest p that reaches it;
//  * small problems (46-400 points) within eps;
//  * targets far from every source (a sparse near field at the cost
//    model's depth) are calibrated from the sparse p upwards and meet eps
//    (5 density sets whose sums have their typical magnitude);
//  * calibrate = 0 keeps the worst-case model's p; a forced p and a sparse
//    near field on a forced deep tree (the model's p plus its extra terms)
//    are not calibrated;
//  * the densities option: an evaluate with the kind the plan was not made
//    for, bad option values.
// Seeds are fresh every run (printed); GPUFMM_TEST_SEED=<seed> replays one.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/laplace_calibrate_check.hpp"
#include "fmm/laplace/error.hpp"
#include "fmm/laplace/options.hpp"
#include "gpufmm.h"

namespace {

using namespace gpufmm_test;

struct CpuContext {
  gpufmm_context_t ctx = nullptr;
  CpuContext() { EXPECT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  ~CpuContext() { gpufmm_context_destroy(ctx); }
};

std::string note() { return " [rerun with GPUFMM_TEST_SEED=" + std::to_string(calibrate_seed()) + "]"; }

// The error lands in [eps/30, eps] and the plan says what it measured.
void check_window(gpufmm_context_t ctx, const CalibrationCase& c, uint64_t seed, CalibrationResult* out = nullptr) {
  const CalibrationResult r = run_calibration_case(ctx, ctx, c, seed);
  if (out != nullptr) *out = r;
  const std::string what = c.name() + note();
  ASSERT_EQ(r.status, GPUFMM_SUCCESS) << what << ": " << gpufmm_last_error_message();
  std::printf("  %-56s p=%2d (model %2d) L=%d M2L %6lld evaluates %2d measured %.2e achieved %.2e (eps/%.1f; without dominating targets eps/%.1f; worst of %d sets eps/%.1f)\n",
              c.name().c_str(), r.info.p,
              gpufmm::fmm::laplace_p_from_eps(c.eps, c.precision == GPUFMM_FLOAT32), r.info.l_max,
              static_cast<long long>(r.info.m2l_translations),
              r.info.calibration_evaluates, r.info.measured_eps, r.achieved(), c.eps / r.achieved(), c.eps / r.achieved_robust(),
              c.sets, c.eps / r.worst_robust);
  ASSERT_GE(r.info.l_max, 2) << what;  // a far field to truncate
  ASSERT_GT(r.info.m2l_translations, 0) << what;  // not all of it summed directly
  EXPECT_GT(r.info.calibration_evaluates, 0) << what;
  // Within the goal, or the most terms allowed reach no further (then the
  // plan has the largest p, or in float the smallest at float's rounding
  // floor, FloatRoundingFloorTakesTheSmallestP, and says what it measured
  // there: an honest estimate of the error in the calibration's norm,
  // within 3x of the worst of as many density sets as the calibration
  // measured: c.sets, 4 on plans of few targets, whose sets' errors differ
  // by up to 3.8x; against one set the estimate was 7.2x high on Plummer
  // dipoles at eps 1e-12).
  if (r.info.measured_eps > c.eps / gpufmm::kLaplaceCalibrationMargin) {
    if (c.precision == GPUFMM_FLOAT64) EXPECT_EQ(r.info.p, gpufmm::kMaxP) << what << ": missed the goal below the largest p";
    EXPECT_LE(r.info.measured_eps, 3 * r.worst_robust) << what;
    EXPECT_GE(r.info.measured_eps, r.worst_robust / 3) << what;
  }
  EXPECT_LE(r.achieved(), c.eps) << what;
  if (!c.positive && c.kind != kBoth) EXPECT_GE(r.achieved_robust(), c.eps / 30) << what;
}

TEST(LaplaceCalibration, DoubleLandsWithinEpsAndAboveEpsOver30) {
  CpuContext c;
  int i = 0;
  for (Dist d : kAdaptiveDists)
    for (double eps : {1e-3, 1e-6, 1e-9}) {
      ++i;
      CalibrationCase k;
      k.dist = d;
      k.eps = eps;
      k.same = i % 2 == 0;
      k.kind = i % 3 == 0 ? kDipoles : kCharges;
      check_window(c.ctx, k, calibrate_seed() + i);
    }
}

TEST(LaplaceCalibration, DoubleAtEps1e12) {
  CpuContext c;
  int i = 0;
  for (Dist d : {Dist::Uniform, Dist::Plummer}) {
    CalibrationCase k;
    k.dist = d;
    k.eps = 1e-12;
    k.n = 4000;
    k.same = i % 2 == 0;
    k.kind = i == 0 ? kCharges : kDipoles;
    // Every translation kept: at 4000 points and p ~ 50 the CPU's cost
    // constants send them all to the direct sum (a translation costs as
    // much as ~85000 pairs), which leaves nothing to calibrate.
    k.v_direct = 0;
    k.sets = 4;  // as the calibration of 4000 targets (kFewTargetSets)
    check_window(c.ctx, k, calibrate_seed() + 50 + i++);
  }
}

TEST(LaplaceCalibration, FloatLandsWithinEpsAndAboveEpsOver30) {
  CpuContext c;
  int i = 0;
  for (Dist d : {Dist::Uniform, Dist::Ellipsoid, Dist::Clusters})
    for (double eps : {1e-3, 1e-5}) {
      ++i;
      CalibrationCase k;
      k.dist = d;
      k.eps = eps;
      k.precision = GPUFMM_FLOAT32;
      k.same = i % 2 == 1;
      k.kind = i % 2 == 0 ? kDipoles : kCharges;
      check_window(c.ctx, k, calibrate_seed() + 100 + i);
    }
}

// Float's rounding floor above the goal: 30000 uniform points in leaves of
// ~470 (s_max 600: depth 2), eps 1e-5. The calibration's estimate leaves
// the targets that dominate the gradient's norm out of the norm, but not
// their errors, which in float are rounding: signed charges measure ~1.7e-5
// at every p from 12 to 16, while their plain error is ~1e-6. The plan
// takes the smallest p at that floor instead of the largest (16 before).
// The test checks, in the norm without those targets and their errors
// (where truncation is not hidden), that the potential's and the
// gradient's errors e each exceed the plan's at p = 16, e16, by no more
// than the calibration's margin for other densities allows
// (e^2 <= e16^2 + (2 eps / 2.2)^2), and that they are within eps.
TEST(LaplaceCalibration, FloatRoundingFloorTakesTheSmallestP) {
  CpuContext c;
  CalibrationCase k;
  k.n = 30000;
  k.eps = 1e-5;
  k.precision = GPUFMM_FLOAT32;
  const uint64_t seed = calibrate_seed() + 150;
  const CalibrationResult r = run_calibration_case(c.ctx, c.ctx, k, seed, 600);
  const std::string what = k.name() + note();
  ASSERT_EQ(r.status, GPUFMM_SUCCESS) << what << ": " << gpufmm_last_error_message();
  k.p = gpufmm::kLaplaceMaxPFloat;
  const CalibrationResult top = run_calibration_case(c.ctx, c.ctx, k, seed, 600);
  ASSERT_EQ(top.status, GPUFMM_SUCCESS) << what << ": " << gpufmm_last_error_message();
  std::printf("  %s: p=%d L=%d evaluates %d measured %.2e achieved %.2e (without dominating targets %.2e); at p=%d %.2e (%.2e)\n",
              what.c_str(), r.info.p, r.info.l_max, r.info.calibration_evaluates, r.info.measured_eps, r.achieved(),
              r.achieved_robust(), top.info.p, top.achieved(), top.achieved_robust());
  ASSERT_EQ(r.info.l_max, 2) << what;
  EXPECT_GT(r.info.measured_eps, k.eps / gpufmm::kLaplaceCalibrationMargin) << what << ": not the floor case";
  EXPECT_LT(r.info.p, gpufmm::kLaplaceMaxPFloat) << what;
  const double t = 2 * k.eps / gpufmm::kLaplaceCalibrationMargin;
  EXPECT_LE(r.robust.pot * r.robust.pot, top.robust.pot * top.robust.pot + t * t) << what << ": potential";
  EXPECT_LE(r.robust.grad * r.robust.grad, top.robust.grad * top.robust.grad + t * t) << what << ": gradient";
  EXPECT_LE(r.achieved(), k.eps) << what;
}

// Positive charges and both kinds at once (ANY): within eps (their error
// may sit further below it: the plan's p is that of the worst kind).
TEST(LaplaceCalibration, PositiveChargesAndBothKindsWithinEps) {
  CpuContext c;
  int i = 0;
  for (Dist d : {Dist::Uniform, Dist::Plummer, Dist::Patch}) {
    ++i;
    CalibrationCase k;
    k.dist = d;
    k.eps = i == 2 ? 1e-9 : 1e-6;
    k.same = i % 2 == 0;
    k.positive = true;
    check_window(c.ctx, k, calibrate_seed() + 200 + i);
    k.positive = false;
    k.kind = kBoth;
    check_window(c.ctx, k, calibrate_seed() + 210 + i);
  }
}

// A closest pair 1e-7 apart: its two targets hold all but ~1e-20 (dipoles)
// or ~1e-10 (charges) of the norm. The calibration leaves them out of its
// norm; it subtracted them from the total, which left rounding (negative
// on 6000 ellipsoid points with dipoles) and sent p to 50.
TEST(LaplaceCalibration, AClosestPairDoesNotDecideP) {
  CpuContext c;
  int i = 0;
  for (Dist d : {Dist::Ellipsoid, Dist::Uniform})
    for (int kind : {kDipoles, kCharges}) {
      ++i;
      CalibrationCase k;
      k.dist = d;
      k.n = 6000;
      k.kind = kind;
      k.close_pair = 1e-7;
      check_window(c.ctx, k, calibrate_seed() + 250 + i);
    }
}

// A cubic lattice puts points at every box's corners, where translations
// converge slowest: there the error model of calibrate = 0 misses eps (24^3
// points, dipoles, eps 1e-9: p = 38 gave 1.6e-9), and the calibration goes
// above the model's p (43) to land in the window.
TEST(LaplaceCalibration, ALatticeLandsInTheWindow) {
  CpuContext c;
  int i = 0;
  for (double eps : {1e-9, 1e-6})
    for (int kind : {kDipoles, kCharges}) {
      ++i;
      CalibrationCase k;
      k.lattice = true;
      k.n = i % 2 == 1 ? 13824 : 8000;
      k.eps = eps;
      k.kind = kind;
      k.same = i != 4;
      check_window(c.ctx, k, calibrate_seed() + 270 + i);
    }
}

// Targets far from every source (a sphere of radius 3 around 6000 Plummer
// sources), on the cost model's uniform tree: their near fields are all but
// empty, so the plan is sparse, and all of their field comes through
// translations from boxes whose sources sit at a corner (the Plummer centre
// is a corner on every level), where the error falls 1.4x per term. The
// sparse model's p + 8 missed eps there (dipoles, eps 1e-6: 7.1e-6 at p =
// 30; this test failed so); such plans are now calibrated from that p
// upwards (create.cpp). Far targets see the densities through their sum
// (total charge, dipole moment), and a set whose sum cancels by chance has a
// larger relative error by as much, whatever p (8 sets of random charges on
// one plan: 14x apart). So the calibration's reference sets, and this
// test's 5 sets, have that sum at its typical magnitude
// (plan::typical_leading_moment; docs/laplace_fmm.md sec. 3): every set
// within eps, and the median above eps/30 where the search added terms (at
// the sparse p itself that rule, not the calibration, sets p: charges at
// eps 1e-3 land at eps/20 .. eps/36 there).
TEST(LaplaceCalibration, FarTargetsMeetEps) {
  CpuContext c;
  int i = 0;
  for (double eps : {1e-6, 1e-3})
    for (int kind : {kDipoles, kCharges}) {
      ++i;
      const CalibrationCase k = far_targets_case(eps, kind, 6000);
      const CalibrationResult r = run_calibration_case(c.ctx, c.ctx, k, calibrate_seed() + 280 + i);
      const std::string what = k.name() + note();
      ASSERT_EQ(r.status, GPUFMM_SUCCESS) << what << ": " << gpufmm_last_error_message();
      const double median = median_achieved(r);
      const double worst = worst_achieved(r);
      std::printf("  %-56s p=%2d L=%d evaluates %2d measured %.2e achieved: median %.2e (eps/%.1f), worst %.2e\n",
                  k.name().c_str(), r.info.p, r.info.l_max, r.info.calibration_evaluates, r.info.measured_eps,
                  median, eps / median, worst);
      const double near_per_target = double(r.info.p2p_pairs) / double(r.info.ntrg);
      ASSERT_GE(r.info.l_max, 2) << what;
      ASSERT_LT(near_per_target, gpufmm::kLaplaceSparseNearPerTarget) << what;  // the sparse plan's path
      EXPECT_GT(r.info.calibration_evaluates, 0) << what;
      EXPECT_GE(r.info.p, gpufmm::laplace_p_sparse(gpufmm::fmm::laplace_p_from_eps(eps, false), near_per_target))
          << what;  // only terms added
      EXPECT_LE(r.info.measured_eps, eps / gpufmm::kLaplaceCalibrationMargin) << what;
      EXPECT_LE(worst, eps) << what;
      if (r.info.p > gpufmm::laplace_p_sparse(gpufmm::fmm::laplace_p_from_eps(eps, false), near_per_target))
        EXPECT_GE(median, eps / 30) << what;
    }
}

// The same far targets in the cube the cost model chooses (options.
// cube_padding = 0): a cube larger than the points' can put sources into
// the targets' near fields, and the plan then takes the dense path. Every
// set meets eps, or, in float, the plan is refused: no silent miss (float
// plans with distinct targets keep the points' cube, create.cpp). At eps 1e-9 (20000 sources: 6000 take the direct sum) the points'
// own cube reached no p within eps (dipoles: 1.8e-8 at p = 50, the
// largest: the Plummer centre is a box corner on every level, where the
// error falls 1.4x per term); the model's cube (1.59x) meets it at p =
// 38-40, and the median lands above eps/30 there.
TEST(LaplaceCalibration, FarTargetsInTheModelsCube) {
  CpuContext c;
  int i = 0;
  for (double eps : {1e-6, 1e-5, 1e-9})
    for (int kind : {kDipoles, kCharges}) {
      ++i;
      const int precision = eps == 1e-5 ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
      CalibrationCase k = far_targets_case(eps, kind, eps == 1e-9 ? 20000 : 6000);
      k.cube_padding = 0;
      k.precision = precision;
      const CalibrationResult r = run_calibration_case(c.ctx, c.ctx, k, calibrate_seed() + 285 + i);
      const std::string what = k.name() + note();
      if (precision == GPUFMM_FLOAT32 && r.status == GPUFMM_ERROR_ACCURACY) {
        const std::string message = gpufmm_last_error_message();
        std::printf("  %-56s refused: %s\n", k.name().c_str(), message.c_str());
        EXPECT_NE(message.find("below what single precision reaches on these points"), std::string::npos) << message;
        continue;
      }
      ASSERT_EQ(r.status, GPUFMM_SUCCESS) << what << ": " << gpufmm_last_error_message();
      if (precision == GPUFMM_FLOAT32) EXPECT_EQ(r.info.cube_padding, 1.0) << what << ": distinct targets in float";
      std::printf("  %-56s cube %.3f p=%2d L=%d near/target %.1f evaluates %2d achieved: median %.2e, worst %.2e\n",
                  k.name().c_str(), r.info.cube_padding, r.info.p, r.info.l_max,
                  double(r.info.p2p_pairs) / double(r.info.ntrg), r.info.calibration_evaluates, median_achieved(r),
                  worst_achieved(r));
      EXPECT_LE(worst_achieved(r), k.eps) << what;
      if (eps == 1e-9) {
        EXPECT_GT(r.info.cube_padding, 1.0) << what;
        EXPECT_GE(median_achieved(r), eps / 30) << what;
      }
    }
}

// The same far targets in single precision: p = 16, the largest in float,
// reaches ~1e-3 for dipoles there (the error falls 1.4x per term), so a
// float plan asked for eps 1e-5 is refused with GPUFMM_ERROR_ACCURACY and a
// message naming what it measured (issue 19, item 3: no silent miss; it
// returned SUCCESS and 2.7e-3 before). Double, as the message advises,
// meets eps on the same points.
TEST(LaplaceCalibration, FloatFarTargetsAreRefused) {
  CpuContext c;
  CalibrationCase k = far_targets_case(1e-5, kDipoles, 6000);
  k.precision = GPUFMM_FLOAT32;
  const uint64_t seed = calibrate_seed() + 290;
  const CalibrationResult f = run_calibration_case(c.ctx, c.ctx, k, seed);
  EXPECT_EQ(f.status, GPUFMM_ERROR_ACCURACY) << k.name() << note();
  const std::string message = gpufmm_last_error_message();
  EXPECT_NE(message.find("below what single precision reaches on these points"), std::string::npos) << message;
  EXPECT_NE(message.find("the error still falls with p"), std::string::npos) << message;
  EXPECT_NE(message.find("GPUFMM_FLOAT64"), std::string::npos) << message;
  k.precision = GPUFMM_FLOAT64;
  const CalibrationResult d = run_calibration_case(c.ctx, c.ctx, k, seed);
  ASSERT_EQ(d.status, GPUFMM_SUCCESS) << k.name() << note() << ": " << gpufmm_last_error_message();
  EXPECT_LE(worst_achieved(d), k.eps) << k.name() << note();
}

TEST(LaplaceCalibration, PlanReportsAndRepeats) {
  CpuContext c;
  const std::vector<double> x = make_points(Dist::Ellipsoid, 6000, calibrate_seed() + 300);
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  EXPECT_EQ(o.calibrate, 1);
  EXPECT_EQ(o.densities, GPUFMM_LAPLACE_DENSITIES_ANY);
  o.eps = 1e-6;
  o.l_max = 3;
  gpufmm_laplace_info_t info[3];
  const int threads = omp_get_max_threads();
  for (int k = 0; k < 3; ++k) {
    o.calibrate = k < 2 ? 1 : 0;
    omp_set_num_threads(k == 1 ? 1 : threads);  // the second plan on one thread
    gpufmm_laplace_plan_t plan = nullptr;
    ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, 6000, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_laplace_plan_info(plan, &info[k]), GPUFMM_SUCCESS);
    gpufmm_laplace_plan_destroy(plan);
  }
  omp_set_num_threads(threads);
  // Reproducible, on any number of threads: fixed reference densities and
  // samples, sums in a fixed order.
  EXPECT_EQ(info[0].p, info[1].p);
  EXPECT_EQ(info[0].measured_eps, info[1].measured_eps);
  EXPECT_EQ(info[0].calibration_evaluates, info[1].calibration_evaluates);
  EXPECT_GT(info[0].measured_eps, 0.0);
  // Not evaluated yet: the test evaluates leave no stage times behind.
  EXPECT_EQ(info[0].t_total, 0.0);
  // The model: its p, nothing measured; on these points 5+ terms more.
  EXPECT_EQ(info[2].p, gpufmm::fmm::laplace_p_from_eps(1e-6, false));
  EXPECT_EQ(info[2].calibration_evaluates, 0);
  EXPECT_EQ(info[2].measured_eps, 0.0);
  EXPECT_LE(info[0].p, info[2].p - 5);
}

// Few targets (found by the C-API fuzzer: 46 points, l_max = 2): no target
// is left out of the norm, so the estimate is the error itself (it was 0,
// every target left out one by one, and p = 3 gave 4.8e-3 at eps 1e-6).
TEST(LaplaceCalibration, SmallProblemsMeetEps) {
  CpuContext c;
  for (int64_t n : {46, 120, 400}) {
    const NdProblem p = make_nd_problem(Dist::Uniform, n, -1, 1, kCharges, calibrate_seed() + 450 + n);
    gpufmm_laplace_options_t o;
    gpufmm_laplace_options_init(&o);
    o.l_max = 2;
    gpufmm_laplace_plan_t plan = nullptr;
    ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, n, p.src.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
    NdOutputs out(p, false);
    ASSERT_EQ(gpufmm_laplace_evaluate(plan, p.q.data(), nullptr, out.pot.data(), out.grad.data()), GPUFMM_SUCCESS);
    gpufmm_laplace_info_t info;
    gpufmm_laplace_plan_info(plan, &info);
    gpufmm_laplace_plan_destroy(plan);
    const NdErrors e = nd_errors(c.ctx, p, out);
    const std::string what = "n = " + std::to_string(n) + ", near-field pairs " +
                             std::to_string(info.p2p_pairs) + note();
    // 46 uniform points in 64 boxes have ~11 near-field sources per target,
    // some draws fewer than the sparse-tree bound: such a plan keeps the
    // sparse model's p (create.cpp), any other is calibrated.
    if (double(info.p2p_pairs) < gpufmm::kLaplaceSparseNearPerTarget * double(n)) {
      EXPECT_EQ(info.calibration_evaluates, 0) << what;
      EXPECT_EQ(info.p, gpufmm::laplace_p_sparse(gpufmm::fmm::laplace_p_from_eps(1e-6, false),
                                                      double(info.p2p_pairs) / double(n)))
          << what;
    } else {
      EXPECT_GT(info.calibration_evaluates, 0) << what;
      EXPECT_GT(info.measured_eps, 0.0) << what;
    }
    EXPECT_LE(e.pot, 1e-6) << what;
    EXPECT_LE(e.grad, 1e-6) << what;
  }
}

TEST(LaplaceCalibration, ForcedPAndSparseTreesAreNotCalibrated) {
  CpuContext c;
  const std::vector<double> x = make_points(Dist::Uniform, 1500, calibrate_seed() + 400);
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  gpufmm_laplace_info_t info;
  gpufmm_laplace_plan_t plan = nullptr;
  o.p = 9;
  o.l_max = 3;
  ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, 1500, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
  gpufmm_laplace_plan_info(plan, &info);
  gpufmm_laplace_plan_destroy(plan);
  EXPECT_EQ(info.p, 9);
  EXPECT_EQ(info.calibration_evaluates, 0);
  // l_max = 5: ~1.5 near-field sources per target.
  o.p = 0;
  o.l_max = 5;
  ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, 1500, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
  gpufmm_laplace_plan_info(plan, &info);
  gpufmm_laplace_plan_destroy(plan);
  EXPECT_LT(info.p2p_pairs, 9 * 1500);
  EXPECT_EQ(info.calibration_evaluates, 0);
  EXPECT_EQ(info.p, gpufmm::fmm::laplace_p_from_eps(1e-6, false) + 8);
}

TEST(LaplaceCalibration, DensitiesOptionIsEnforced) {
  CpuContext c;
  const int64_t n = 3000;
  const NdProblem p = make_nd_problem(Dist::Uniform, n, -1, 1, kBoth, calibrate_seed() + 500);
  std::vector<double> pot(n, 7.0), grad(3 * n, 7.0);
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.l_max = 3;
  for (int dens : {GPUFMM_LAPLACE_DENSITIES_CHARGES, GPUFMM_LAPLACE_DENSITIES_DIPOLES}) {
    o.densities = dens;
    std::fill(pot.begin(), pot.end(), 7.0);
    std::fill(grad.begin(), grad.end(), 7.0);
    gpufmm_laplace_plan_t plan = nullptr;
    ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, n, p.src.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
    const bool charges = dens == GPUFMM_LAPLACE_DENSITIES_CHARGES;
    // The other kind, alone or with this one: refused, outputs untouched.
    EXPECT_EQ(gpufmm_laplace_evaluate(plan, charges ? nullptr : p.q.data(), charges ? p.d.data() : nullptr,
                                      pot.data(), grad.data()),
              GPUFMM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(gpufmm_last_error_message(), "densities"), nullptr) << gpufmm_last_error_message();
    EXPECT_EQ(gpufmm_laplace_evaluate(plan, p.q.data(), p.d.data(), pot.data(), grad.data()),
              GPUFMM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(pot[0], 7.0);
    EXPECT_EQ(grad[0], 7.0);
    // Its own kind: fine.
    EXPECT_EQ(gpufmm_laplace_evaluate(plan, charges ? p.q.data() : nullptr, charges ? nullptr : p.d.data(),
                                      pot.data(), grad.data()),
              GPUFMM_SUCCESS);
    gpufmm_laplace_plan_destroy(plan);
  }
  gpufmm_laplace_plan_t plan = nullptr;
  o.densities = 3;
  EXPECT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, n, p.src.data(), 0, nullptr, &plan), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(gpufmm_last_error_message(), "'densities'"), nullptr) << gpufmm_last_error_message();
  o.densities = GPUFMM_LAPLACE_DENSITIES_ANY;
  o.calibrate = 2;
  EXPECT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, n, p.src.data(), 0, nullptr, &plan), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(gpufmm_last_error_message(), "'calibrate'"), nullptr) << gpufmm_last_error_message();
  EXPECT_EQ(plan, nullptr);
}

}  // namespace
