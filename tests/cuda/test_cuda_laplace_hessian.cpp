// Hessians and nd densities on the CUDA backend (issue 20 items 1-2),
// against the CPU backend and the double direct sum:
//  * gpufmm_laplace_evaluate_nd on a GPU context == on a CPU context (1e-12
//    relative in double, 2e-5 in float) for potential, gradient and
//    Hessian, nd = 1 and 3, charges / dipoles / both, sources = targets and
//    distinct, uniform and Plummer, every L2P strategy, both P2P
//    schedules, the same depth on both; errors against the
//    direct sum <= eps (Hessian <= eps, as on the CPU);
//  * gpufmm_laplace_direct_nd on the GPU == on the CPU (Hessian included);
//  * gpufmm_laplace_evaluate_nd_arrays == the host path bit for bit; a NaN
//    in density 1 on the device is named and leaves the outputs unchanged.
// Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_cpu_fixture.hpp"
#include "common/hessian_check.hpp"
#include "common/rel_l2.hpp"
#include "gpufmm.h"

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

namespace {

using namespace gpufmm_test;

class CudaLaplaceHessian : public GpuCpuContexts {};

uint64_t seed() {
  static const uint64_t s = std::random_device{}();
  return s;
}

void evaluate(gpufmm_context_t ctx, const gpufmm_laplace_options_t& o, const NdProblem& p, NdOutputs& out) {
  gpufmm_laplace_plan_t plan = nullptr;
  GPUFMM_OK(gpufmm_laplace_plan_create(ctx, &o, p.ns, p.src.data(), p.nt, p.targets(), &plan));
  GPUFMM_OK(gpufmm_laplace_evaluate_nd(plan, p.nd, p.charges(), p.dipoles(), out.pot.data(), out.grad.data(), out.h()));
  gpufmm_laplace_plan_destroy(plan);
}

TEST_F(CudaLaplaceHessian, GpuEqualsCpuAndMeetsEps) {
  int i = 0;
  for (Dist dist : {Dist::Uniform, Dist::Plummer})
    for (int precision : {GPUFMM_FLOAT64, GPUFMM_FLOAT32})
      for (int l2p : {GPUFMM_STRATEGY_TPT, GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_TPB}) {
        ++i;
        const int nd = i % 2 ? 3 : 1, kind = i % 3;
        const NdProblem p = make_nd_problem(dist, 20000, i % 2 ? -1 : 12000, nd, kind, seed() + i);
        gpufmm_laplace_options_t o;
        gpufmm_laplace_options_init(&o);
        o.l_max = dist == Dist::Uniform ? 3 : 5;  // the same tree on both backends (their cost models differ)
        o.precision = precision;
        o.eps = precision == GPUFMM_FLOAT64 ? 1e-8 : 1e-4;
        o.gpu_l2p = l2p;
        o.gpu_p2p = i % 2 ? GPUFMM_STRATEGY_BPB : GPUFMM_STRATEGY_TPT;
        NdOutputs g(p), c(p);
        evaluate(gpu, o, p, g);
        evaluate(cpu, o, p, c);
        const double tol = precision == GPUFMM_FLOAT64 ? 1e-12 : 2e-5;
        const std::string what = std::string(dist_name(dist)) + " nd " + std::to_string(nd) + " " +
                                 source_kind_name(kind) + (precision == GPUFMM_FLOAT64 ? " double" : " float") +
                                 " l2p " + std::to_string(l2p) + " p2p " + std::to_string(o.gpu_p2p) + " seed " + std::to_string(seed() + i);
        EXPECT_LE(rel_l2(g.pot, c.pot), tol) << what;
        EXPECT_LE(rel_l2(g.grad, c.grad), tol) << what;
        EXPECT_LE(rel_l2(g.hess, c.hess), tol) << what;
        const NdErrors e = nd_errors(cpu, p, g);
        std::printf("  %-60s pot %.2e grad %.2e hess %.2e\n", what.c_str(), e.pot, e.grad, e.hess);
        EXPECT_LE(e.pot, o.eps) << what;
        EXPECT_LE(e.grad, o.eps) << what;
        EXPECT_LE(e.hess, o.eps) << what;
      }
}

TEST_F(CudaLaplaceHessian, DirectGpuEqualsCpu) {
  for (int precision : {GPUFMM_FLOAT64, GPUFMM_FLOAT32}) {
    const NdProblem p = make_nd_problem(Dist::Plummer, 3000, 2000, 2, kBoth, seed() + 50);
    NdOutputs g(p), c(p);
    GPUFMM_OK(gpufmm_laplace_direct_nd(gpu, precision, 2, p.ns, p.src.data(), p.charges(), p.dipoles(), p.nt,
                                       p.targets(), g.pot.data(), g.grad.data(), g.h()));
    GPUFMM_OK(gpufmm_laplace_direct_nd(cpu, precision, 2, p.ns, p.src.data(), p.charges(), p.dipoles(), p.nt,
                                       p.targets(), c.pot.data(), c.grad.data(), c.h()));
    const double tol = precision == GPUFMM_FLOAT64 ? 1e-13 : 1e-5;
    EXPECT_LE(rel_l2(g.pot, c.pot), tol);
    EXPECT_LE(rel_l2(g.grad, c.grad), tol);
    EXPECT_LE(rel_l2(g.hess, c.hess), tol);
  }
}

TEST_F(CudaLaplaceHessian, ArraysEqualHostAndBadInput) {
  const NdProblem p = make_nd_problem(Dist::Uniform, 20000, -1, 3, kCharges, seed() + 60);
  gpufmm_laplace_plan_t plan = nullptr;
  GPUFMM_OK(gpufmm_laplace_plan_create(gpu, nullptr, p.ns, p.src.data(), 0, nullptr, &plan));
  NdOutputs host(p);
  GPUFMM_OK(gpufmm_laplace_evaluate_nd(plan, 3, p.q.data(), nullptr, host.pot.data(), host.grad.data(), host.h()));
  const int64_t n = p.ns;
  const int64_t dq[1] = {3 * n}, dh[1] = {18 * n}, dg[1] = {9 * n};
  gpufmm_array_t aq = nullptr, ap = nullptr, ag = nullptr, ah = nullptr;
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &aq));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &ap));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dg, &ag));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dh, &ah));
  GPUFMM_OK(gpufmm_array_upload(aq, p.q.data(), 3 * n));
  GPUFMM_OK(gpufmm_laplace_evaluate_nd_arrays(plan, 3, aq, nullptr, ap, ag, ah));
  NdOutputs dev(p);
  GPUFMM_OK(gpufmm_array_download(ap, dev.pot.data(), 3 * n));
  GPUFMM_OK(gpufmm_array_download(ag, dev.grad.data(), 9 * n));
  GPUFMM_OK(gpufmm_array_download(ah, dev.hess.data(), 18 * n));
  EXPECT_EQ(dev.pot, host.pot);
  EXPECT_EQ(dev.grad, host.grad);
  EXPECT_EQ(dev.hess, host.hess);
  // A NaN in density 1 of source 123, on the device: named, nothing written.
  std::vector<double> q = p.q;
  q[1 + 3 * 123] = NAN;
  GPUFMM_OK(gpufmm_array_upload(aq, q.data(), 3 * n));
  std::vector<double> sentinel(18 * n, 7.0);
  GPUFMM_OK(gpufmm_array_upload(ah, sentinel.data(), 18 * n));
  EXPECT_EQ(gpufmm_laplace_evaluate_nd_arrays(plan, 3, aq, nullptr, nullptr, nullptr, ah), GPUFMM_ERROR_INVALID_ARGUMENT);
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find("charge 123"), std::string::npos) << msg;
  EXPECT_NE(msg.find("density 1"), std::string::npos) << msg;
  std::vector<double> back(18 * n);
  GPUFMM_OK(gpufmm_array_download(ah, back.data(), 18 * n));
  EXPECT_EQ(back, sentinel);
  for (gpufmm_array_t a : {aq, ap, ag, ah}) gpufmm_array_destroy(a);
  gpufmm_laplace_plan_destroy(plan);
}

}  // namespace
