// Several densities on one geometry on the CUDA backend (issue 20, item 2:
// P2P, P2M and L2P take up to four densities per pass over the points,
// every density is in one CUDA graph):
//  * gpufmm_laplace_evaluate_nd on a GPU context == on a CPU context (1e-12
//    relative in double, 2e-5 in float) and == the GPU's evaluate of each
//    density alone (1e-14 in double), for nd = 2, 5 and 8 (a last group of
//    four with padding), charges / dipoles / both, potential and/or
//    gradient, uniform trees (BpB and TpT near field) and adaptive ones,
//    the P2M and L2P kernels that take four densities and some that take
//    one;
//    within eps of the double direct sum;
//  * repeated evaluates (run, capture, replay of the graph) give the same
//    bits; nd changing on one plan (5, 2, 5) gives a fresh plan's results;
//  * device arrays give the host path's bits; a NaN in density 3 of 5 is
//    named and leaves the device outputs unchanged.
// Seeds are fresh every run (printed with a failure).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_cpu_fixture.hpp"
#include "common/hessian_check.hpp"
#include "common/rel_l2.hpp"
#include "common/laplace_kernels.hpp"
#include "gpufmm.h"

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

namespace {

using namespace gpufmm_test;

class CudaLaplaceNd : public GpuCpuContexts {};

uint64_t seed() {
  static const uint64_t s = std::random_device{}();
  return s;
}

struct Case {
  Dist dist = Dist::Uniform;
  bool adaptive = false;
  int p2p = GPUFMM_STRATEGY_BPB;
  int p2m = GPUFMM_STRATEGY_BPB, l2p = GPUFMM_STRATEGY_TPT;  // the defaults: several densities per walk
  int precision = GPUFMM_FLOAT64;
  int nd = 2;
  int kind = kCharges;
  bool pot = true, grad = true;
};

gpufmm_laplace_options_t options(const Case& c) {
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.precision = c.precision;
  o.eps = c.precision == GPUFMM_FLOAT64 ? 1e-8 : 1e-4;
  o.calibrate = 0;  // the model's p: the same on both backends
  o.gpu_p2p = c.p2p;
  o.gpu_p2m = c.p2m;
  o.gpu_l2p = c.l2p;
  if (c.adaptive) {
    o.tree = GPUFMM_LAPLACE_TREE_ADAPTIVE;
    o.s_max = 48;
  } else {
    o.tree = GPUFMM_LAPLACE_TREE_UNIFORM;
    o.l_max = 3;  // the same tree on both backends (their cost models differ)
  }
  return o;
}

// Evaluates p's densities (all nd of them) on plan into out.
void evaluate(gpufmm_laplace_plan_t plan, const Case& c, const NdProblem& p, NdOutputs& out) {
  GPUFMM_OK(gpufmm_laplace_evaluate_nd(plan, p.nd, p.charges(), p.dipoles(), c.pot ? out.pot.data() : nullptr,
                                       c.grad ? out.grad.data() : nullptr, nullptr));
}

// Adaptive plans move the same translations to the direct sum on both
// backends (their cost constants and factors differ by default).
void evaluate(gpufmm_context_t ctx, const Case& c, const NdProblem& p, NdOutputs& out) {
  const gpufmm_laplace_options_t o = options(c);
  gpufmm_laplace_plan_t plan = nullptr;
  GPUFMM_OK(gpufmm_test::laplace_plan_create_kernels(ctx, &o, c.adaptive ? "cost=gpu,v_direct=0.5" : "", p.ns,
                                                     p.src.data(), p.nt, p.targets(), &plan));
  evaluate(plan, c, p, out);
  gpufmm_laplace_plan_destroy(plan);
}

// Density k of p as a problem of its own.
NdProblem density(const NdProblem& p, int k) {
  NdProblem one = p;
  one.nd = 1;
  one.q.assign(size_t(p.ns), 0.0);
  one.d.assign(size_t(3 * p.ns), 0.0);
  for (int64_t i = 0; i < p.ns; ++i) {
    one.q[size_t(i)] = p.q[size_t(k + p.nd * i)];
    for (int c = 0; c < 3; ++c) one.d[size_t(3 * i + c)] = p.d[size_t(k + p.nd * (3 * i + c))];
  }
  return one;
}

// Values of density k in an interleaved output (density fastest).
std::vector<double> of_density(const std::vector<double>& v, int nd, int k) {
  std::vector<double> o(v.size() / size_t(nd));
  for (size_t j = 0; j < o.size(); ++j) o[j] = v[size_t(k) + size_t(nd) * j];
  return o;
}

std::string name(const Case& c, uint64_t s) {
  char b[200];
  std::snprintf(b, sizeof b, "%s %s%s%s%s nd %d %s%s%s %s seed %llu", dist_name(c.dist),
                c.adaptive ? "adaptive" : "uniform", c.p2p == GPUFMM_STRATEGY_TPT ? " p2p=tpt" : "",
                c.p2m == GPUFMM_STRATEGY_WPB ? " p2m=wpb" : "", c.l2p == GPUFMM_STRATEGY_BPB ? " l2p=bpb" : "", c.nd, source_kind_name(c.kind), c.pot ? " pot" : "",
                c.grad ? " grad" : "", c.precision == GPUFMM_FLOAT64 ? "double" : "float",
                static_cast<unsigned long long>(s));
  return b;
}

TEST_F(CudaLaplaceNd, EqualsCpuAndEachDensityAloneAndMeetsEps) {
  std::vector<Case> cases;
  int i = 0;
  for (Dist d : {Dist::Uniform, Dist::Plummer})
    for (int precision : {GPUFMM_FLOAT64, GPUFMM_FLOAT32})
      for (int nd : {2, 5, 8}) {
        Case c;
        c.dist = d;
        c.adaptive = d == Dist::Plummer;
        c.p2p = !c.adaptive && nd == 5 ? GPUFMM_STRATEGY_TPT : GPUFMM_STRATEGY_BPB;
        // One density at a time where a kernel takes one (the others: the
        // default BpB P2M and TpT L2P take four per walk).
        if (nd == 8 && precision == GPUFMM_FLOAT64) c.l2p = GPUFMM_STRATEGY_BPB;
        if (nd == 2 && precision == GPUFMM_FLOAT32) c.p2m = GPUFMM_STRATEGY_WPB;
        c.precision = precision;
        c.nd = nd;
        c.kind = i % 3;
        c.pot = i % 4 != 1;
        c.grad = i % 4 != 2;
        cases.push_back(c);
        ++i;
      }
  i = 0;
  for (const Case& c : cases) {
    const uint64_t s = seed() + uint64_t(++i);
    const NdProblem p = make_nd_problem(c.dist, 20000, i % 2 ? -1 : 12000, c.nd, c.kind, s);
    const std::string what = name(c, s);
    NdOutputs g(p, false), cpu_out(p, false);
    evaluate(gpu, c, p, g);
    evaluate(cpu, c, p, cpu_out);
    const double tol = c.precision == GPUFMM_FLOAT64 ? 1e-12 : 2e-5;
    if (c.pot) EXPECT_LE(rel_l2(g.pot, cpu_out.pot), tol) << what;
    if (c.grad) EXPECT_LE(rel_l2(g.grad, cpu_out.grad), tol) << what;
    // Each density alone on the GPU (one density per pass, the nd = 1 graph).
    const gpufmm_laplace_options_t o = options(c);
    gpufmm_laplace_plan_t plan = nullptr;
    GPUFMM_OK(gpufmm_laplace_plan_create(gpu, &o, p.ns, p.src.data(), p.nt, p.targets(), &plan));
    const double tol1 = c.precision == GPUFMM_FLOAT64 ? 1e-14 : 1e-6;
    for (int k = 0; k < c.nd; ++k) {
      const NdProblem one = density(p, k);
      NdOutputs o1(one, false);
      evaluate(plan, c, one, o1);
      if (c.pot) EXPECT_LE(rel_l2(of_density(g.pot, c.nd, k), o1.pot), tol1) << what << " density " << k;
      if (c.grad) EXPECT_LE(rel_l2(of_density(g.grad, c.nd, k), o1.grad), tol1) << what << " density " << k;
    }
    gpufmm_laplace_plan_destroy(plan);
    const NdErrors e = nd_errors(cpu, p, g);
    std::printf("  %-70s pot %.2e grad %.2e\n", what.c_str(), c.pot ? e.pot : 0.0, c.grad ? e.grad : 0.0);
    if (c.pot) EXPECT_LE(e.pot, o.eps) << what;
    if (c.grad) EXPECT_LE(e.grad, o.eps) << what;
  }
}

TEST_F(CudaLaplaceNd, ReplaysChangingNdAndDeviceArrays) {
  Case c;
  c.nd = 5;
  c.kind = kBoth;
  const uint64_t s = seed() + 100;
  const std::string what = name(c, s);
  const NdProblem p5 = make_nd_problem(Dist::Uniform, 20000, -1, 5, kBoth, s);
  NdProblem p2 = make_nd_problem(Dist::Uniform, 20000, -1, 2, kBoth, s + 1);
  p2.src = p5.src;
  const gpufmm_laplace_options_t o = options(c);
  gpufmm_laplace_plan_t plan = nullptr;
  GPUFMM_OK(gpufmm_laplace_plan_create(gpu, &o, p5.ns, p5.src.data(), 0, nullptr, &plan));
  // Run, capture, replay: the same bits; nd 2 in between, then 5 again.
  NdOutputs first(p5, false);
  evaluate(plan, c, p5, first);
  for (int r = 0; r < 3; ++r) {
    NdOutputs again(p5, false);
    evaluate(plan, c, p5, again);
    EXPECT_EQ(again.pot, first.pot) << what << " repeat " << r;
    EXPECT_EQ(again.grad, first.grad) << what << " repeat " << r;
  }
  NdOutputs two(p2, false), two_fresh(p2, false);
  for (int r = 0; r < 3; ++r) evaluate(plan, c, p2, two);
  evaluate(gpu, c, p2, two_fresh);
  EXPECT_EQ(two.pot, two_fresh.pot) << what;
  EXPECT_EQ(two.grad, two_fresh.grad) << what;
  NdOutputs back5(p5, false);
  evaluate(plan, c, p5, back5);
  EXPECT_EQ(back5.pot, first.pot) << what;
  EXPECT_EQ(back5.grad, first.grad) << what;

  // Device arrays: the host path's bits (twice: run, then capture).
  const int64_t n = p5.ns;
  const int64_t dq[1] = {5 * n}, dd[1] = {15 * n};
  gpufmm_array_t aq = nullptr, ad = nullptr, ap = nullptr, ag = nullptr;
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &aq));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dd, &ad));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &ap));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dd, &ag));
  GPUFMM_OK(gpufmm_array_upload(aq, p5.q.data(), 5 * n));
  GPUFMM_OK(gpufmm_array_upload(ad, p5.d.data(), 15 * n));
  for (int r = 0; r < 2; ++r) {
    GPUFMM_OK(gpufmm_laplace_evaluate_nd_arrays(plan, 5, aq, ad, ap, ag, nullptr));
    NdOutputs dev(p5, false);
    GPUFMM_OK(gpufmm_array_download(ap, dev.pot.data(), 5 * n));
    GPUFMM_OK(gpufmm_array_download(ag, dev.grad.data(), 15 * n));
    EXPECT_EQ(dev.pot, first.pot) << what << " arrays " << r;
    EXPECT_EQ(dev.grad, first.grad) << what << " arrays " << r;
  }
  // A NaN in density 3 of source 321: named, the outputs unchanged (they
  // are written straight into the device arrays, after every check).
  std::vector<double> q = p5.q;
  q[3 + 5 * 321] = NAN;
  GPUFMM_OK(gpufmm_array_upload(aq, q.data(), 5 * n));
  const std::vector<double> sp(size_t(5 * n), 7.0), sg(size_t(15 * n), -3.0);
  GPUFMM_OK(gpufmm_array_upload(ap, sp.data(), 5 * n));
  GPUFMM_OK(gpufmm_array_upload(ag, sg.data(), 15 * n));
  EXPECT_EQ(gpufmm_laplace_evaluate_nd_arrays(plan, 5, aq, ad, ap, ag, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find("charge 321"), std::string::npos) << msg;
  EXPECT_NE(msg.find("density 3"), std::string::npos) << msg;
  std::vector<double> bp(size_t(5 * n)), bg(size_t(15 * n));
  GPUFMM_OK(gpufmm_array_download(ap, bp.data(), 5 * n));
  GPUFMM_OK(gpufmm_array_download(ag, bg.data(), 15 * n));
  EXPECT_EQ(bp, sp);
  EXPECT_EQ(bg, sg);
  // A dipole with an Inf in density 4 of source 17 (host path).
  std::vector<double> d = p5.d;
  d[4 + 5 * (3 * 17 + 2)] = INFINITY;
  NdOutputs out(p5, false);
  EXPECT_EQ(gpufmm_laplace_evaluate_nd(plan, 5, p5.q.data(), d.data(), out.pot.data(), out.grad.data(), nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  const std::string msg2 = gpufmm_last_error_message();
  EXPECT_NE(msg2.find("dipole 17"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("density 4"), std::string::npos) << msg2;
  for (gpufmm_array_t a : {aq, ad, ap, ag}) gpufmm_array_destroy(a);
  gpufmm_laplace_plan_destroy(plan);
}

}  // namespace
