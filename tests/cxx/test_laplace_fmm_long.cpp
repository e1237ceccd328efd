// Long Laplace FMM tests (label "long": left out of CI, run by tools/gpu-check
// on the 16-core GPU host). The full cross product of the CI accuracy test
// (tests/cxx/test_laplace_fmm.cpp) at larger N:
//   distributions  uniform, ellipsoid surface, Plummer, two clusters
//   targets        = sources, distinct
//   sources        charges, dipoles, both
//   eps            1e-2 1e-4 1e-6 1e-9 1e-12 (double), 1e-2 1e-4 1e-5 (float)
//   stencil        modified (all), standard (eps 1e-4 and 1e-9)
// each with the depth of the cost model, and the error-versus-p table of
// docs/laplace_fmm.md (papers/000 Fig. 8 form). Achieved relative L2 errors
// (eq. 36) of potential and gradient at every target must be <= eps: the
// direct sum runs on GPU 0 where there is one (N^2 = 1e10 pairs in
// milliseconds; on a machine without, on the CPU, slow at the default N).
// They were measured at 2000 sampled targets until a fresh seed showed the
// sample's bias where a few targets hold most of the error: 1.61e-12 there
// against 3.88e-13 over all targets (uniform, 50000 points, charges, eps
// 1e-12, p = 44), a miss of the sample, not of the plan.
// Environment: GPUFMM_LONG_N (default 100000) sets N (N/2 for eps 1e-12),
// GPUFMM_TEST_SEED replays a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/test_seed.hpp"
#include "gpufmm.h"

namespace {

using gpufmm_test::Dist;

uint64_t base_seed() {
  static const uint64_t seed = gpufmm_test::fresh_test_seed(nullptr);
  return seed;
}

int64_t long_n() {
  if (const char* e = std::getenv("GPUFMM_LONG_N")) return std::max<int64_t>(100, std::atoll(e));
  return 100000;
}

// The context of the reference direct sums: GPU 0 if there is one, else ctx.
gpufmm_context_t reference_context(gpufmm_context_t ctx) {
  static gpufmm_context_t gpu = [] {
    int count = 0;
    gpufmm_context_t c = nullptr;
    if (gpufmm_device_count(&count) != GPUFMM_SUCCESS || count < 1 || gpufmm_context_create(0, &c) != GPUFMM_SUCCESS)
      c = nullptr;
    return c;
  }();
  return gpu != nullptr ? gpu : ctx;
}

struct Errors {
  double pot = 0, grad = 0;
  gpufmm_laplace_info_t info{};
};

Errors run(gpufmm_context_t ctx, Dist dist, int64_t n, bool same, int kind, double eps, int precision,
           int stencil, int p, int l_max, uint64_t seed) {
  const auto src = gpufmm_test::make_points(dist, n, seed);
  const int64_t nt = same ? n : (2 * n) / 3;
  const auto trg = same ? std::vector<double>() : gpufmm_test::make_points(dist, nt, seed ^ 0x5bd1e995u);
  gpufmm_test::Rng r(seed + 17);
  std::vector<double> q(n), d(3 * n);
  for (auto& v : q) v = 2 * r.uniform() - 1;
  for (auto& v : d) v = 2 * r.uniform() - 1;
  const double* qp = kind != 1 ? q.data() : nullptr;
  const double* dp = kind != 0 ? d.data() : nullptr;
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.eps = eps;
  o.precision = precision;
  o.stencil = stencil;
  o.p = p;
  o.l_max = l_max;
  gpufmm_laplace_plan_t plan = nullptr;
  Errors e;
  EXPECT_EQ(gpufmm_laplace_plan_create(ctx, &o, n, src.data(), nt, same ? nullptr : trg.data(), &plan),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  if (!plan) return e;
  std::vector<double> pot(nt), grad(3 * nt);
  EXPECT_EQ(gpufmm_laplace_evaluate(plan, qp, dp, pot.data(), grad.data()), GPUFMM_SUCCESS);
  gpufmm_laplace_plan_info(plan, &e.info);
  gpufmm_laplace_plan_destroy(plan);
  std::vector<double> pe(nt), ge(3 * nt);
  EXPECT_EQ(gpufmm_laplace_direct(reference_context(ctx), GPUFMM_FLOAT64, n, src.data(), qp, dp, nt,
                                  same ? nullptr : trg.data(), pe.data(), ge.data()),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  double e2 = 0, n2 = 0, g2 = 0, gn = 0;
  for (int64_t i = 0; i < nt; ++i) {
    e2 += (pot[i] - pe[i]) * (pot[i] - pe[i]);
    n2 += pe[i] * pe[i];
    for (int k = 0; k < 3; ++k) {
      g2 += (grad[3 * i + k] - ge[3 * i + k]) * (grad[3 * i + k] - ge[3 * i + k]);
      gn += ge[3 * i + k] * ge[3 * i + k];
    }
  }
  e.pot = std::sqrt(e2 / n2);
  e.grad = std::sqrt(g2 / gn);
  return e;
}

const char* kind_name(int k) { return k == 0 ? "charges" : k == 1 ? "dipoles" : "both"; }

TEST(LaplaceFmmLong, FullCrossProduct) {
  gpufmm_context_t ctx = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS);
  struct EpsCase {
    double eps;
    int precision;
  };
  const EpsCase cases[] = {{1e-2, GPUFMM_FLOAT64}, {1e-4, GPUFMM_FLOAT64}, {1e-6, GPUFMM_FLOAT64},
                           {1e-9, GPUFMM_FLOAT64}, {1e-12, GPUFMM_FLOAT64}, {1e-2, GPUFMM_FLOAT32},
                           {1e-4, GPUFMM_FLOAT32}, {1e-5, GPUFMM_FLOAT32}};
  const Dist dists[] = {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer, Dist::Clusters};
  std::printf("%-9s %-8s %-7s %-6s %7s %-8s %3s %2s %10s %10s %8s\n", "dist", "targets", "sources",
              "prec", "eps", "stencil", "p", "L", "err pot", "err grad", "time s");
  uint64_t seed = base_seed();
  for (const EpsCase& ec : cases)
    for (Dist dist : dists)
      for (bool same : {true, false})
        for (int kind = 0; kind < 3; ++kind)
          for (int stencil : {GPUFMM_STENCIL_MODIFIED, GPUFMM_STENCIL_STANDARD}) {
            if (stencil == GPUFMM_STENCIL_STANDARD && !(ec.eps == 1e-4 || ec.eps == 1e-9)) continue;
            const int64_t n = ec.eps < 1e-10 ? long_n() / 2 : long_n();
            ++seed;
            const Errors e = run(ctx, dist, n, same, kind, ec.eps, ec.precision, stencil, 0, -1, seed);
            std::printf("%-9s %-8s %-7s %-6s %7.0e %-8s %3d %2d %10.2e %10.2e %8.2f\n",
                        gpufmm_test::dist_name(dist), same ? "same" : "distinct", kind_name(kind),
                        ec.precision == GPUFMM_FLOAT32 ? "float" : "double", ec.eps,
                        stencil == GPUFMM_STENCIL_STANDARD ? "standard" : "modified", e.info.p,
                        e.info.l_max, e.pot, e.grad, e.info.t_total);
            std::fflush(stdout);
            const std::string what = std::string(gpufmm_test::dist_name(dist)) + " " + kind_name(kind) +
                                     " eps " + std::to_string(ec.eps) + " seed " + std::to_string(seed) +
                                     " [GPUFMM_TEST_SEED=" + std::to_string(base_seed()) + "]";
            EXPECT_LE(e.pot, ec.eps) << what;
            EXPECT_LE(e.grad, ec.eps) << what;
          }
  gpufmm_context_destroy(ctx);
}

// Float at eps 1e-5 on 2e5 uniform points with distinct targets (L = 3,
// ~8000 near-field sources per target): the calibration's positive charges
// reach only ~2e-5 at p = 16, float's rounding floor (flat in p), where
// signed charges reach ~5e-7. The plan is not refused (only a miss that
// more terms would close is: LaplaceCalibration.FloatFarTargetsAreRefused),
// reports what it measured, and meets eps for signed charges.
TEST(LaplaceFmmLong, FloatRoundingFloorIsNotRefused) {
  gpufmm_context_t ctx = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS);
  const Errors e = run(ctx, Dist::Uniform, 200000, false, 0, 1e-5, GPUFMM_FLOAT32, 0, 0, -1, base_seed() + 3);
  std::printf("uniform distinct charges float eps 1e-5: p %d measured %.2e, pot %.2e grad %.2e\n", e.info.p,
              e.info.measured_eps, e.pot, e.grad);
  EXPECT_GT(e.info.calibration_evaluates, 0);
  EXPECT_GT(e.info.measured_eps, 1e-5);  // the floor above eps: the case this test is for
  EXPECT_LE(e.pot, 1e-5);
  EXPECT_LE(e.grad, 1e-5);
  gpufmm_context_destroy(ctx);
}

// Error versus p at a fixed depth (papers/000 Fig. 8 form): uniform and
// Plummer, charges in [-1, 1], targets = sources, double and float.
TEST(LaplaceFmmLong, ErrorVersusP) {
  gpufmm_context_t ctx = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS);
  const int64_t n = long_n();
  std::printf("N = %lld, depth from the cost model at eps = 1e-6 (uniform) / fixed below\n",
              (long long)n);
  std::printf("%3s | %10s %10s | %10s %10s | %10s %10s\n", "p", "unif pot", "unif grad",
              "plum pot", "plum grad", "f32 pot", "f32 grad");
  double prev = 1;
  for (int p : {2, 4, 6, 8, 10, 12, 16, 20, 24, 30, 36, 40}) {
    const Errors u = run(ctx, Dist::Uniform, n, true, 0, 1e-6, GPUFMM_FLOAT64, 0, p, 4, base_seed() + 1);
    const Errors pl = run(ctx, Dist::Plummer, n, true, 0, 1e-6, GPUFMM_FLOAT64, 0, p, 7, base_seed() + 2);
    Errors f;
    if (p <= 16) f = run(ctx, Dist::Uniform, n, true, 0, 1e-6, GPUFMM_FLOAT32, 0, p, 4, base_seed() + 1);
    std::printf("%3d | %10.2e %10.2e | %10.2e %10.2e | %10.2e %10.2e\n", p, u.pot, u.grad, pl.pot,
                pl.grad, f.pot, f.grad);
    std::fflush(stdout);
    if (p <= 30) EXPECT_LT(u.pot, prev);
    prev = u.pot;
  }
  gpufmm_context_destroy(ctx);
}

}  // namespace
