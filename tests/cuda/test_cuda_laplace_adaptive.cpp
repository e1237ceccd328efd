// The adaptive Laplace FMM on the CUDA driver (issue 19, item 1) against
// the CPU pipeline and the direct sum:
//  * the GPU plan's lists equal the CPU plan's (the same tree, the same U,
//    W, X rows and same-level lists for the same direct-sum bound and cost
//    constants), and its results equal the
//    CPU's to rounding (double: 1e-11 relative L2; float: 5e-6), for
//    uniform, ellipsoid, Plummer, two-cluster and refined-patch points,
//    sources = targets and distinct; the GPU's default bound within eps too;
//    the M2M as dense products (m2m=gemm) equal to the CPU's to rounding;
//  * within eps of the double direct sum (eps 1e-3, 1e-6, 1e-9 double, 1e-3
//    and 1e-5 float), with the default direct-sum shortcut of small W / X
//    boxes and with every W / X box through M2P and P2L; charges, dipoles;
//    the Hessian and nd = 2 (M2P's Hessian on the GPU);
//  * every translation moved to the direct sum: the direct sum's results.
// Seeds are fresh every run (printed); GPUFMM_TEST_SEED=<seed> replays one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_cpu_fixture.hpp"
#include "common/hessian_check.hpp"
#include "common/laplace_adaptive_check.hpp"
#include "core/context.hpp"
#include "fmm/laplace/error.hpp"
#include "fmm/laplace/plan.hpp"
#include "gpufmm.h"

namespace {

using namespace gpufmm;
using namespace gpufmm_test;


class CudaLaplaceAdaptive : public GpuCpuContexts {};

double rel(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    e += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return n > 0 ? std::sqrt(e / n) : std::sqrt(e);
}

TEST_F(CudaLaplaceAdaptive, EqualsCpuAndWithinEps) {
  int i = 0;
  for (Dist d : kAdaptiveDists)
    for (bool same : {true, false})
      for (bool single : {false, true}) {
        ++i;
        const double eps = single ? 1e-5 : 1e-6;
        const gpufmm_dtype_t prec = single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
        const NdProblem p = make_nd_problem(d, 30000, same ? -1 : 20000, 1, i % 3, adaptive_seed() + i);
        NdOutputs og(p, false), oc(p, false), od(p, false), om(p, false);
        // The same direct-sum bound, cost constants and factor on both (their
        // defaults differ: W / X boxes of p^2 points on the CPU, 16 p^2 on
        // the GPU; the translations each moves to the direct sum), then the
        // GPU's defaults.
        const fmm::LaplaceCostConstants k = fmm::laplace_cost_constants_gpu(single);
        auto pg = adaptive_evaluate(*checked_context(gpu), p, eps, prec, 48, 1000, og, GPUFMM_STRATEGY_TPT, &k, 0.5);
        auto pc = adaptive_evaluate(*checked_context(cpu), p, eps, prec, 48, 1000, oc, GPUFMM_STRATEGY_TPT, &k, 0.5);
        adaptive_evaluate(*checked_context(gpu), p, eps, prec, 48, -1, od);
        adaptive_evaluate(*checked_context(gpu), p, eps, prec, 48, 1000, om, GPUFMM_STRATEGY_TPT, &k, 0.5,
                          GPUFMM_STRATEGY_GEMM);
        const std::string what = std::string(dist_name(d)) + (same ? " same" : " distinct") +
                                 (single ? " float" : " double") + adaptive_seed_note();
        ASSERT_TRUE(pg->adaptive && !pg->cpu_pipeline()) << what;
        EXPECT_EQ(pg->l_max, pc->l_max) << what;
        EXPECT_EQ(pg->alists->u, pc->alists->u) << what;
        EXPECT_EQ(pg->alists->w, pc->alists->w) << what;
        EXPECT_EQ(pg->alists->x, pc->alists->x) << what;
        EXPECT_GT(pg->alists->v_moved, 0) << what;
        EXPECT_EQ(pg->m2l_translations, pc->m2l_translations) << what;
        const double tol = single ? 5e-6 : 1e-11;
        EXPECT_LE(rel(og.pot, oc.pot), tol) << what;
        EXPECT_LE(rel(og.grad, oc.grad), tol) << what;
        EXPECT_LE(rel(om.pot, oc.pot), tol) << what << " m2m=gemm";
        EXPECT_LE(rel(om.grad, oc.grad), tol) << what << " m2m=gemm";
        for (const NdOutputs* o : {&og, &od}) {
          const NdErrors e = nd_errors(cpu, p, *o);
          EXPECT_LE(e.pot, eps) << what;
          EXPECT_LE(e.grad, eps) << what;
        }
      }
}

// Every W and X box through M2P and P2L; eps 1e-3 .. 1e-9; the Hessian and
// two densities in every third case; the three L2P strategies in turn.
TEST_F(CudaLaplaceAdaptive, ThroughM2PAndP2LWithinEps) {
  int i = 0;
  for (Dist d : kAdaptiveDists)
    for (double eps : {1e-3, 1e-6, 1e-9}) {
      ++i;
      const bool hess = i % 3 == 0;
      const NdProblem p = make_nd_problem(d, 20000, i % 2 ? 12000 : -1, hess ? 2 : 1, i % 3, adaptive_seed() + 100 + i);
      NdOutputs og(p, hess);
      const gpufmm_laplace_strategy_t l2p[3] = {GPUFMM_STRATEGY_TPT, GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_TPB};
      auto pg = adaptive_evaluate(*checked_context(gpu), p, eps, GPUFMM_FLOAT64, 24, 0, og, l2p[i % 3]);
      const std::string what = std::string(dist_name(d)) + " eps " + std::to_string(eps) + adaptive_seed_note();
      if (d != Dist::Uniform) EXPECT_GT(pg->alists->w.size() + pg->alists->x.size(), 0u) << what;
      const NdErrors e = nd_errors(cpu, p, og);
      EXPECT_LE(e.pot, eps) << what;
      EXPECT_LE(e.grad, eps) << what;
      if (hess) EXPECT_LE(e.hess, eps) << what;
    }
  for (Dist d : {Dist::Plummer, Dist::Clusters, Dist::Patch})
    for (double eps : {1e-3, 1e-5}) {
      const NdProblem p = make_nd_problem(d, 20000, -1, 1, kBoth, adaptive_seed() + 200 + int(d));
      NdOutputs og(p, false);
      adaptive_evaluate(*checked_context(gpu), p, eps, GPUFMM_FLOAT32, 24, 0, og);
      const NdErrors e = nd_errors(cpu, p, og);
      const std::string what = std::string(dist_name(d)) + " float eps " + std::to_string(eps) + adaptive_seed_note();
      EXPECT_LE(e.pot, eps) << what;
      EXPECT_LE(e.grad, eps) << what;
    }
}

// Every translation, W and X entry moved to the direct sum: the evaluate is
// the direct sum (the moved pairs through the GPU's near field, far boxes
// included), double and float.
TEST_F(CudaLaplaceAdaptive, EverythingDirectIsTheDirectSum) {
  int i = 0;
  for (Dist d : {Dist::Plummer, Dist::Clusters, Dist::Patch})
    for (bool single : {false, true}) {
      ++i;
      const NdProblem p = make_nd_problem(d, 8000, i % 2 ? 5000 : -1, 1, kBoth, adaptive_seed() + 600 + i);
      NdOutputs og(p, false);
      auto pg = adaptive_evaluate(*checked_context(gpu), p, single ? 1e-5 : 1e-6,
                                  single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64, 20, int64_t(1) << 40, og,
                                  GPUFMM_STRATEGY_TPT, nullptr, 1e20);
      const std::string what = std::string(dist_name(d)) + (single ? " float" : " double") + adaptive_seed_note();
      EXPECT_EQ(pg->m2l_translations, 0) << what;
      EXPECT_EQ(pg->p2p_pairs, p.ns * p.nt) << what;
      // No expansion to truncate, so no calibration (a float one measured
      // its rounding, went to p = 16, and refused eps it had met).
      EXPECT_EQ(pg->calibration_evaluates, 0) << what;
      const NdErrors e = nd_errors(cpu, p, og);
      ASSERT_EQ(e.status, GPUFMM_SUCCESS) << what;
      // Float: the rounding of its sums of 5000-8000 terms (3e-6 measured),
      // below the floor single precision accepts as eps.
      const double tol = single ? gpufmm::kLaplaceMinEpsFloat : 1e-13;
      EXPECT_LE(e.pot, tol) << what;
      EXPECT_LE(e.grad, tol) << what;
    }
}

}  // namespace
