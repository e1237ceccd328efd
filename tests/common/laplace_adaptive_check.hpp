// Shared by the adaptive Laplace FMM tests (issue 19) of both backends:
// tests/cxx/test_laplace_adaptive.cpp and tests/cuda/test_cuda_laplace_adaptive.cpp.
// A fresh seed per run (printed; GPUFMM_TEST_SEED=<seed> replays one), the
// distributions, and one adaptive plan + evaluate through the internal API
// (LaplaceOptions::adaptive_direct_max is not in the C API).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "common/hessian_check.hpp"
#include "common/test_seed.hpp"
#include "core/context.hpp"
#include "fmm/laplace/plan.hpp"

namespace gpufmm_test {

inline uint64_t adaptive_seed() {
  static const uint64_t seed = fresh_test_seed("adaptive FMM tests");
  return seed;
}

inline std::string adaptive_seed_note() {
  return " [rerun with GPUFMM_TEST_SEED=" + std::to_string(adaptive_seed()) + "]";
}

constexpr Dist kAdaptiveDists[] = {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer, Dist::Clusters, Dist::Patch};

// Plans p on c with an adaptive tree (s_max; direct_max: the options'
// adaptive_direct_max, 0 sends every W and X box through M2P and P2L and
// every same-level translation through M2L: adaptive_v_direct 0) and
// evaluates it into out (nd densities; the Hessian when out has room).
// l2p: the GPU's L2P strategy (TPT by leaf level, BPB, TPB level by level);
// cost: the cost constants (which same-level translations go to the direct
// sum) instead of the backend's; v_direct >= 0: adaptive_v_direct.
inline std::unique_ptr<gpufmm::fmm::LaplacePlan> adaptive_evaluate(
    gpufmm::Context& c, const NdProblem& p, double eps, gpufmm_dtype_t precision, int s_max, int64_t direct_max,
    NdOutputs& out, gpufmm_laplace_strategy_t l2p = GPUFMM_STRATEGY_TPT,
    const gpufmm::fmm::LaplaceCostConstants* cost = nullptr, double v_direct = -1,
    gpufmm_laplace_strategy_t m2m = GPUFMM_STRATEGY_BPB) {
  gpufmm::fmm::LaplaceOptions o;
  o.gpu.l2p = l2p;
  o.gpu.m2m = m2m;
  o.eps = eps;
  o.precision = precision;
  o.tree = GPUFMM_LAPLACE_TREE_ADAPTIVE;
  o.s_max = s_max;
  o.adaptive_direct_max = direct_max;
  if (direct_max == 0) o.adaptive_v_direct = 0;
  if (v_direct >= 0) o.adaptive_v_direct = v_direct;
  if (cost) o.cost = *cost;
  auto plan = gpufmm::fmm::laplace_plan_create(c, o, p.ns, p.src.data(), p.nt, p.targets());
  gpufmm::fmm::LaplaceEvalArgs a;
  a.nd = p.nd;
  a.nd_api = true;
  a.charges = p.charges();
  a.dipoles = p.dipoles();
  a.pot = out.pot.data();
  a.grad = out.grad.data();
  a.hess = out.h();
  gpufmm::fmm::laplace_evaluate(*plan, a);
  return plan;
}

// Errors of one adaptive evaluate (CPU backend) against the direct sum on
// ref (nd_errors); direct_max: LaplaceOptions::adaptive_direct_max (0: every
// W and X box through M2P and P2L); sizes: the plan's depth and W, X sizes.
struct Sizes {
  int l_max = 0;
  int64_t w = 0, x = 0;
};

inline NdErrors adaptive_errors(gpufmm_context_t ref, const NdProblem& p, double eps, gpufmm_dtype_t precision,
                                int s_max, bool hess, int64_t direct_max = -1, Sizes* sizes = nullptr) {
  gpufmm::Context ctx;
  NdOutputs out(p, hess);
  auto plan = adaptive_evaluate(ctx, p, eps, precision, s_max, direct_max, out);
  if (sizes) {
    sizes->l_max = plan->l_max;
    sizes->w = int64_t(plan->alists->w.size());
    sizes->x = int64_t(plan->alists->x.size());
  }
  return nd_errors(ref, p, out);
}

// One case of LaplaceAdaptiveFmm.ThroughM2PAndP2L (every W and X box
// through M2P and P2L, none summed directly) on the CPU backend: case i of
// distribution d at eps, 6000 sources (3000 distinct targets for odd i),
// the Hessian and two densities when hess; within eps, and W and X lists
// present except on uniform points. CI runs eps 1e-3 and 1e-6
// (tests/cxx/test_laplace_adaptive.cpp), tools/gpu-check eps 1e-9 (label
// long: tests/cxx/test_laplace_adaptive_long.cpp; 45-70 s on 2 cores, p
// above the CPU's batched M2L).
inline void check_through_m2p_p2l(Dist d, double eps, int i, bool hess) {
  gpufmm_context_t ref = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ref), GPUFMM_SUCCESS);
  const NdProblem p = make_nd_problem(d, 6000, i % 2 ? 3000 : -1, hess ? 2 : 1, i % 3, adaptive_seed() + 300 + i);
  Sizes z;
  const NdErrors e = adaptive_errors(ref, p, eps, GPUFMM_FLOAT64, 20, hess, 0, &z);
  gpufmm_context_destroy(ref);
  const std::string what = std::string(dist_name(d)) + " eps " + std::to_string(eps) + adaptive_seed_note();
  ASSERT_EQ(e.status, GPUFMM_SUCCESS) << what;
  if (d != Dist::Uniform) EXPECT_GT(z.w, 0) << what;
  if (d != Dist::Uniform) EXPECT_GT(z.x, 0) << what;
  EXPECT_LE(e.pot, eps) << what;
  EXPECT_LE(e.grad, eps) << what;
  if (hess) EXPECT_LE(e.hess, eps) << what;
}

}  // namespace gpufmm_test
