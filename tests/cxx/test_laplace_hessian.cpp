// Hessians and nd densities of the Laplace FMM and direct sum on the CPU
// backend (issue 20, items 1-2):
//  * the math: the Hessian walk of the regular basis and the kernel's
//    accumulate_hess against central differences of their gradients, and
//    their traces (harmonic: zero); M2P's Hessian against the direct sum;
//  * gpufmm_laplace_direct_nd: each density equals gpufmm_laplace_direct
//    bit for bit; its Hessian against central differences of its gradient;
//  * gpufmm_laplace_evaluate_nd: potential and gradient <= eps, the Hessian
//    <= kHessFactor * eps, against the direct sum, for uniform, ellipsoid,
//    Plummer and two-cluster points, charges / dipoles / both, sources =
//    targets and distinct, nd = 1 and 3, double and float;
//  * nd = 3 equals three nd = 1 evaluates bit for bit; nd = 1 without
//    Hessian equals gpufmm_laplace_evaluate bit for bit;
//  * bad input: nd < 1, nothing wanted, a NaN named with its source and
//    density, outputs untouched.
// Seeds are fresh every run (printed); GPUFMM_TEST_SEED=<seed> replays one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/hessian_check.hpp"
#include "common/test_seed.hpp"
#include "fmm/laplace/math.hpp"
#include "gpufmm.h"
#include "kernels/laplace.hpp"

namespace {

using namespace gpufmm_test;

// The Hessian's relative L2 error is at most this times the plan's eps
// where the near field carries a share of the sums (measured: at most 0.02
// eps), and at most kFarHessFactor times the gradient's error where the far
// field carries nearly all of it. With the calibrated p (the smallest that
// meets eps for the potential and gradient) that ratio was 1.9-5.1 for
// charges at eps 1e-3 and 0.7-1.7 for the other cases, over 42 seeds (a
// second derivative of a truncated expansion loses about p times more than
// a first; at eps 1e-3 p is smallest); 5, the bound before the calibrated
// p, failed on one seed. docs/laplace_fmm.md, "Hessians and several
// densities".
constexpr double kHessFactor = 1.0;
constexpr double kFarHessFactor = 8.0;

uint64_t base_seed() {
  static const uint64_t seed = gpufmm_test::fresh_test_seed(nullptr);
  return seed;
}

std::string seed_note() { return " [rerun with GPUFMM_TEST_SEED=" + std::to_string(base_seed()) + "]"; }

struct CpuContext {
  gpufmm_context_t ctx = nullptr;
  CpuContext() { EXPECT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  ~CpuContext() { gpufmm_context_destroy(ctx); }
};

constexpr int hi[6] = {0, 1, 2, 0, 0, 1}, hj[6] = {0, 1, 2, 1, 2, 2};

// ------------------------------------------------------------------ math

struct WalkStore {
  std::vector<double> v, g, h;  // per coefficient: 1, 3, 6
  explicit WalkStore(int p) : v(p * p), g(3 * p * p), h(6 * p * p) {}
  void operator()(int n, int m, double rc, double rs, const double* gc, const double* gs, const double* hc,
                  const double* hs) {
    const int ip = n * n + n + m, in = n * n + n - m;
    v[ip] = rc;
    for (int k = 0; k < 3; ++k) g[3 * ip + k] = gc[k];
    for (int k = 0; k < 6; ++k) h[6 * ip + k] = hc[k];
    if (m > 0) {
      v[in] = rs;
      for (int k = 0; k < 3; ++k) g[3 * in + k] = gs[k];
      for (int k = 0; k < 6; ++k) h[6 * in + k] = hs[k];
    }
  }
};

TEST(LaplaceHessianMath, WalkAgainstDifferencesAndHarmonic) {
  const int p = 20;
  std::mt19937_64 rng(base_seed());
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  for (int trial = 0; trial < 20; ++trial) {
    const double x[3] = {u(rng), u(rng), u(rng)};
    WalkStore w(p);
    gpufmm::laplace_regular_walk_hess(p, x[0], x[1], x[2], w);
    // Values and gradients: those of the plain walk, bit for bit.
    std::vector<double> R(p * p), Rx(p * p), Ry(p * p), Rz(p * p);
    gpufmm::laplace_regular_basis_grad(p, x[0], x[1], x[2], R.data(), Rx.data(), Ry.data(), Rz.data());
    for (int i = 0; i < p * p; ++i) {
      ASSERT_EQ(w.v[i], R[i]) << i;
      ASSERT_EQ(w.g[3 * i], Rx[i]);
      ASSERT_EQ(w.g[3 * i + 1], Ry[i]);
      ASSERT_EQ(w.g[3 * i + 2], Rz[i]);
    }
    // Second derivatives: central differences of the gradient.
    const double h = 1e-5;
    for (int j = 0; j < 3; ++j) {
      double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
      xp[j] += h;
      xm[j] -= h;
      std::vector<double> a(p * p), b(p * p), c(p * p), A(p * p), B(p * p), C(p * p);
      gpufmm::laplace_regular_basis_grad(p, xp[0], xp[1], xp[2], a.data(), A.data(), B.data(), C.data());
      std::vector<double> a2(p * p), A2(p * p), B2(p * p), C2(p * p);
      gpufmm::laplace_regular_basis_grad(p, xm[0], xm[1], xm[2], a2.data(), A2.data(), B2.data(), C2.data());
      for (int i = 0; i < p * p; ++i) {
        const double fd[3] = {(A[i] - A2[i]) / (2 * h), (B[i] - B2[i]) / (2 * h), (C[i] - C2[i]) / (2 * h)};
        for (int k = 0; k < 6; ++k) {
          int other = -1;
          if (hj[k] == j) other = hi[k];
          else if (hi[k] == j) other = hj[k];
          if (other < 0) continue;
          const double ref = fd[other], got = w.h[6 * i + k];
          ASSERT_NEAR(got, ref, 1e-6 * (1 + std::fabs(ref))) << "coef " << i << " component " << k;
        }
      }
    }
    for (int i = 0; i < p * p; ++i) {  // Rh is harmonic
      const double tr = w.h[6 * i] + w.h[6 * i + 1] + w.h[6 * i + 2];
      const double sc = std::fabs(w.h[6 * i]) + std::fabs(w.h[6 * i + 1]) + std::fabs(w.h[6 * i + 2]);
      ASSERT_LE(std::fabs(tr), 1e-12 * (1 + sc)) << "coef " << i;
    }
  }
}

TEST(LaplaceHessianMath, KernelAgainstDifferences) {
  std::mt19937_64 rng(base_seed() + 1);
  std::uniform_real_distribution<double> u(-1, 1);
  const gpufmm::kernels::Laplace<double> k;
  for (int trial = 0; trial < 50; ++trial) {
    const double R[3] = {u(rng), u(rng), u(rng)}, q = u(rng), d[3] = {u(rng), u(rng), u(rng)};
    double o[10] = {};
    k.accumulate_hess<true, true>(R[0], R[1], R[2], q, d[0], d[1], d[2], gpufmm::kernels::hess_ref(o));
    double v = 0, g[3] = {0, 0, 0};
    k.accumulate<true, true, true>(R[0], R[1], R[2], q, d[0], d[1], d[2], v, g[0], g[1], g[2]);
    EXPECT_NEAR(o[0], v, 1e-14 * std::fabs(v));
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(o[1 + c], g[c], 1e-13 * (std::fabs(g[c]) + std::fabs(v)));
    const double h = 1e-6;
    for (int c = 0; c < 6; ++c) {
      double Rp[3] = {R[0], R[1], R[2]}, Rm[3] = {R[0], R[1], R[2]};
      Rp[hj[c]] += h;
      Rm[hj[c]] -= h;
      double vp = 0, gp[3] = {0, 0, 0}, vm = 0, gm[3] = {0, 0, 0};
      k.accumulate<true, true, true>(Rp[0], Rp[1], Rp[2], q, d[0], d[1], d[2], vp, gp[0], gp[1], gp[2]);
      k.accumulate<true, true, true>(Rm[0], Rm[1], Rm[2], q, d[0], d[1], d[2], vm, gm[0], gm[1], gm[2]);
      const double ref = (gp[hi[c]] - gm[hi[c]]) / (2 * h);
      EXPECT_NEAR(o[4 + c], ref, 1e-5 * (1 + std::fabs(ref))) << "component " << c;
    }
    EXPECT_LE(std::fabs(o[4] + o[5] + o[6]), 1e-12 * (std::fabs(o[4]) + std::fabs(o[5]) + std::fabs(o[6])));
    double z[10] = {};  // coincident: no self term
    k.accumulate_hess<true, true>(0, 0, 0, q, d[0], d[1], d[2], gpufmm::kernels::hess_ref(z));
    for (double x : z) EXPECT_EQ(x, 0.0);
  }
}

// M2P with the Hessian (issue 19's W list): a multipole of random charges
// and dipoles in a box evaluated 2.5..4 box sizes away equals the direct
// sum's potential, gradient and Hessian to the truncation error; the
// potential and gradient are those of M2P without the Hessian bit for bit.
TEST(LaplaceHessianMath, M2PAgainstDirect) {
  std::mt19937_64 rng(base_seed() + 2);
  std::uniform_real_distribution<double> u(-1, 1);
  const int p = 30, ns = 40;
  const double h = 0.5, c[3] = {0.1, -0.3, 0.2};
  std::vector<double> src(3 * ns), q(ns), d(3 * ns);
  for (int j = 0; j < ns; ++j) {
    for (int k = 0; k < 3; ++k) src[3 * j + k] = c[k] + 0.5 * h * u(rng), d[3 * j + k] = u(rng);
    q[j] = u(rng);
  }
  std::vector<double> M(p * p, 0.0);
  gpufmm::laplace_p2m<double>(p, h, c, ns, src.data(), q.data(), d.data(), M.data());
  const gpufmm::kernels::Laplace<double> k;
  for (int trial = 0; trial < 20; ++trial) {
    double dir[3] = {u(rng), u(rng), u(rng)};
    const double n = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    const double dist = h * (2.5 + 1.5 * (u(rng) + 1) / 2);
    const double y[3] = {c[0] + dir[0] / n * dist, c[1] + dir[1] / n * dist, c[2] + dir[2] / n * dist};
    double ref[10] = {};
    for (int j = 0; j < ns; ++j)
      k.accumulate_hess<true, true>(y[0] - src[3 * j], y[1] - src[3 * j + 1], y[2] - src[3 * j + 2], q[j],
                                    d[3 * j], d[3 * j + 1], d[3 * j + 2], gpufmm::kernels::hess_ref(ref));
    double pot = 0, grad[3] = {0, 0, 0}, hess[6] = {0, 0, 0, 0, 0, 0};
    const double r[3] = {y[0] - c[0], y[1] - c[1], y[2] - c[2]};
    gpufmm::laplace_m2p_point<double>(p, 1.0 / h, r, M.data(), &pot, grad, hess);
    double pot1 = 0, grad1[3] = {0, 0, 0};
    gpufmm::laplace_m2p_point<double>(p, 1.0 / h, r, M.data(), &pot1, grad1, nullptr);
    EXPECT_EQ(pot, pot1);
    double hn = 0, gn = 0;
    for (int c6 = 0; c6 < 6; ++c6) hn = std::max(hn, std::fabs(ref[4 + c6]));
    for (int c3 = 0; c3 < 3; ++c3) gn = std::max(gn, std::fabs(ref[1 + c3]));
    EXPECT_NEAR(pot, ref[0], 1e-9 * std::fabs(ref[0]) + 1e-12) << "trial " << trial << seed_note();
    for (int c3 = 0; c3 < 3; ++c3) {
      EXPECT_NEAR(grad[c3], ref[1 + c3], 1e-8 * gn) << "trial " << trial << seed_note();
      EXPECT_NEAR(grad[c3], grad1[c3], 1e-14 * gn);
    }
    for (int c6 = 0; c6 < 6; ++c6) EXPECT_NEAR(hess[c6], ref[4 + c6], 1e-7 * hn) << "component " << c6 << seed_note();
    EXPECT_LE(std::fabs(hess[0] + hess[1] + hess[2]), 1e-10 * hn);  // harmonic
  }
}

// ------------------------------------------------------------------ direct

TEST(LaplaceHessianDirect, DensitiesAndDifferences) {
  CpuContext c;
  const NdProblem p = make_nd_problem(Dist::Uniform, 300, 40, 3, kBoth, base_seed() + 2);
  NdOutputs o(p);
  ASSERT_EQ(gpufmm_laplace_direct_nd(c.ctx, GPUFMM_FLOAT64, 3, p.ns, p.src.data(), p.charges(), p.dipoles(), p.nt,
                                     p.targets(), o.pot.data(), o.grad.data(), o.h()),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  for (int k = 0; k < 3; ++k) {  // each density: gpufmm_laplace_direct, bit for bit
    std::vector<double> q(p.ns), d(3 * p.ns), pot(p.nt), grad(3 * p.nt);
    for (int64_t j = 0; j < p.ns; ++j) {
      q[j] = p.q[k + 3 * j];
      for (int cc = 0; cc < 3; ++cc) d[3 * j + cc] = p.d[k + 3 * (cc + 3 * j)];
    }
    ASSERT_EQ(gpufmm_laplace_direct(c.ctx, GPUFMM_FLOAT64, p.ns, p.src.data(), q.data(), d.data(), p.nt,
                                    p.targets(), pot.data(), grad.data()),
              GPUFMM_SUCCESS);
    // The same sums in another order of operations (the Hessian's loop):
    // equal to rounding.
    double ep = 0, np = 0, eg = 0, ng = 0;
    for (int64_t i = 0; i < p.nt; ++i) {
      ep += std::pow(o.pot[k + 3 * i] - pot[i], 2);
      np += pot[i] * pot[i];
      for (int cc = 0; cc < 3; ++cc) {
        eg += std::pow(o.grad[k + 3 * (cc + 3 * i)] - grad[3 * i + cc], 2);
        ng += grad[3 * i + cc] * grad[3 * i + cc];
      }
    }
    EXPECT_LE(std::sqrt(ep / np), 1e-14) << seed_note();
    EXPECT_LE(std::sqrt(eg / ng), 1e-14) << seed_note();
    // Hessian: central differences of the gradient at moved targets.
    const double h = 1e-6;
    for (int j = 0; j < 3; ++j) {
      std::vector<double> tp(p.trg), tm(p.trg), gp(3 * p.nt), gm(3 * p.nt);
      for (int64_t i = 0; i < p.nt; ++i) {
        tp[3 * i + j] += h;
        tm[3 * i + j] -= h;
      }
      ASSERT_EQ(gpufmm_laplace_direct(c.ctx, GPUFMM_FLOAT64, p.ns, p.src.data(), q.data(), d.data(), p.nt, tp.data(),
                                      nullptr, gp.data()),
                GPUFMM_SUCCESS);
      ASSERT_EQ(gpufmm_laplace_direct(c.ctx, GPUFMM_FLOAT64, p.ns, p.src.data(), q.data(), d.data(), p.nt, tm.data(),
                                      nullptr, gm.data()),
                GPUFMM_SUCCESS);
      double e2 = 0, n2 = 0;
      for (int64_t i = 0; i < p.nt; ++i)
        for (int cc = 0; cc < 6; ++cc) {
          int other = -1;
          if (hj[cc] == j) other = hi[cc];
          else if (hi[cc] == j) other = hj[cc];
          if (other < 0) continue;
          const double ref = (gp[3 * i + other] - gm[3 * i + other]) / (2 * h);
          const double got = o.hess[k + 3 * (cc + 6 * i)];
          e2 += (got - ref) * (got - ref);
          n2 += ref * ref;
        }
      EXPECT_LE(std::sqrt(e2 / n2), 1e-6) << "density " << k << " axis " << j << seed_note();
    }
  }
}

// ------------------------------------------------------------------ FMM

struct Case {
  Dist dist;
  bool same;
  int kind;
  int nd;
  double eps;
  int precision;
  int l_max;  // -1: the cost model's; else forced (the far field carries most pairs)
};

NdErrors run_case(const Case& cs, uint64_t seed, int64_t n = 6000) {
  CpuContext c;
  const NdProblem p = make_nd_problem(cs.dist, n, cs.same ? -1 : (2 * n) / 3, cs.nd, cs.kind, seed);
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.eps = cs.eps;
  o.precision = cs.precision;
  o.l_max = cs.l_max;
  gpufmm_laplace_plan_t plan = nullptr;
  EXPECT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, p.ns, p.src.data(), p.nt, p.targets(), &plan), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  NdOutputs out(p);
  EXPECT_EQ(gpufmm_laplace_evaluate_nd(plan, p.nd, p.charges(), p.dipoles(), out.pot.data(), out.grad.data(), out.h()),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  gpufmm_laplace_info_t info;
  gpufmm_laplace_plan_info(plan, &info);
  gpufmm_laplace_plan_destroy(plan);
  const NdErrors e = nd_errors(c.ctx, p, out);
  std::printf("  %-9s %-8s %-7s nd=%d %-6s eps=%.0e p=%2d L=%d  pot %.2e grad %.2e hess %.2e (hess/eps %.2f)\n",
              dist_name(cs.dist), cs.same ? "same" : "distinct", source_kind_name(cs.kind), cs.nd,
              cs.precision == GPUFMM_FLOAT32 ? "float" : "double", cs.eps, info.p, info.l_max, e.pot, e.grad, e.hess,
              e.hess / cs.eps);
  return e;
}

void check_case(const Case& cs, uint64_t seed) {
  const NdErrors e = run_case(cs, seed);
  const std::string what = std::string(dist_name(cs.dist)) + " " + source_kind_name(cs.kind) + " seed " +
                           std::to_string(seed) + seed_note();
  EXPECT_EQ(e.status, GPUFMM_SUCCESS);
  EXPECT_LE(e.pot, cs.eps) << what;
  EXPECT_LE(e.grad, cs.eps) << what;
  EXPECT_LE(e.hess, kHessFactor * cs.eps) << what;
  EXPECT_GT(e.hess, 0.0) << what;  // computed, not left at zero
}

const Dist kDists[4] = {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer, Dist::Clusters};

// Every distribution at eps index i (1e-3, 1e-6, 1e-9), the sources and
// densities varied with i and the distribution.
void check_double_every_distribution(int i) {
  const double eps[3] = {1e-3, 1e-6, 1e-9};
  for (int j = 0; j < 4; ++j)
    check_case({kDists[j], (i + j) % 2 == 0, (i + j) % 3, (i + j) % 2 == 0 ? 1 : 3, eps[i], GPUFMM_FLOAT64,
                j % 2 == 0 ? -1 : 3 + (i + j) % 2},
               base_seed() + 100 + 10 * i + j);
}

TEST(LaplaceHessianFmm, DoubleEveryDistribution) {
  check_double_every_distribution(0);
  check_double_every_distribution(1);
}

// eps 1e-9 apart: p up to 38, 70 % of the two tests' time (tools/run-sanitizers
// leaves it to the plain build).
TEST(LaplaceHessianFmm, DoubleEveryDistributionAt1e9) { check_double_every_distribution(2); }

// Targets in a cube beside the sources' (every pair through the far field
// but the boundary layer's): the Hessian's error is the expansions' own.
TEST(LaplaceHessianFmm, FarFieldDominated) {
  const double eps[3] = {1e-3, 1e-6, 1e-9};
  for (int i = 0; i < 3; ++i) {
    CpuContext c;
    NdProblem p = make_nd_problem(Dist::Uniform, 20000, 3000, 1, i % 3, base_seed() + 250 + i);
    for (int64_t t = 0; t < p.nt; ++t) p.trg[3 * t] += 1.02;
    gpufmm_laplace_options_t o;
    gpufmm_laplace_options_init(&o);
    o.eps = eps[i];
    gpufmm_laplace_plan_t plan = nullptr;
    ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &o, p.ns, p.src.data(), p.nt, p.trg.data(), &plan), GPUFMM_SUCCESS);
    NdOutputs out(p);
    ASSERT_EQ(gpufmm_laplace_evaluate_nd(plan, 1, p.charges(), p.dipoles(), out.pot.data(), out.grad.data(), out.h()),
              GPUFMM_SUCCESS);
    gpufmm_laplace_plan_destroy(plan);
    const NdErrors e = nd_errors(c.ctx, p, out);
    std::printf("  beside   %-7s eps=%.0e  pot %.2e grad %.2e hess %.2e (hess/eps %.2f)\n", source_kind_name(p.kind),
                eps[i], e.pot, e.grad, e.hess, e.hess / eps[i]);
    // The worst-case model's p missed eps here by up to 1.8x; the calibrated
    // p (issue 19, item 2) measures this placement. The Hessian is checked
    // against what the expansions reached: at most kFarHessFactor times the
    // gradient's error.
    EXPECT_LE(e.pot, eps[i]) << seed_note();
    EXPECT_LE(e.grad, eps[i]) << seed_note();
    EXPECT_LE(e.hess, kFarHessFactor * std::max(e.grad, 1e-14)) << seed_note();
    EXPECT_GT(e.hess, 0.0);
  }
}

TEST(LaplaceHessianFmm, Float) {
  for (int j = 0; j < 4; ++j)
    check_case({kDists[j], j % 2 == 1, j % 3, 2, 1e-4, GPUFMM_FLOAT32, j % 2 == 0 ? 3 : -1}, base_seed() + 200 + j);
}

TEST(LaplaceHessianFmm, DensitiesEqualSeparateEvaluates) {
  CpuContext c;
  const NdProblem p = make_nd_problem(Dist::Plummer, 5000, 3000, 3, kBoth, base_seed() + 300);
  gpufmm_laplace_plan_t plan = nullptr;
  ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, nullptr, p.ns, p.src.data(), p.nt, p.targets(), &plan), GPUFMM_SUCCESS);
  NdOutputs all(p);
  ASSERT_EQ(gpufmm_laplace_evaluate_nd(plan, 3, p.q.data(), p.d.data(), all.pot.data(), all.grad.data(), all.h()),
            GPUFMM_SUCCESS);
  for (int k = 0; k < 3; ++k) {
    std::vector<double> q(p.ns), d(3 * p.ns), pot(p.nt), grad(3 * p.nt), hess(6 * p.nt), pot1(p.nt), grad1(3 * p.nt);
    for (int64_t j = 0; j < p.ns; ++j) {
      q[j] = p.q[k + 3 * j];
      for (int cc = 0; cc < 3; ++cc) d[3 * j + cc] = p.d[k + 3 * (cc + 3 * j)];
    }
    ASSERT_EQ(gpufmm_laplace_evaluate_nd(plan, 1, q.data(), d.data(), pot.data(), grad.data(), hess.data()),
              GPUFMM_SUCCESS);
    for (int64_t i = 0; i < p.nt; ++i) {
      ASSERT_EQ(all.pot[k + 3 * i], pot[i]);
      for (int cc = 0; cc < 3; ++cc) ASSERT_EQ(all.grad[k + 3 * (cc + 3 * i)], grad[3 * i + cc]);
      for (int cc = 0; cc < 6; ++cc) ASSERT_EQ(all.hess[k + 3 * (cc + 6 * i)], hess[6 * i + cc]);
    }
    // nd = 1 without the Hessian: gpufmm_laplace_evaluate, bit for bit.
    ASSERT_EQ(gpufmm_laplace_evaluate_nd(plan, 1, q.data(), d.data(), pot.data(), grad.data(), nullptr), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_laplace_evaluate(plan, q.data(), d.data(), pot1.data(), grad1.data()), GPUFMM_SUCCESS);
    EXPECT_EQ(pot, pot1);
    EXPECT_EQ(grad, grad1);
  }
  gpufmm_laplace_plan_destroy(plan);
}

// gpufmm_laplace_evaluate_nd_arrays on a CPU context: the host path's
// numbers bit for bit; a wrong element count is SIZE_MISMATCH.
TEST(LaplaceHessianFmm, ArraysEqualHost) {
  CpuContext c;
  const NdProblem p = make_nd_problem(Dist::Uniform, 4000, -1, 2, kBoth, base_seed() + 350);
  gpufmm_laplace_plan_t plan = nullptr;
  ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, nullptr, p.ns, p.src.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
  NdOutputs host(p);
  ASSERT_EQ(gpufmm_laplace_evaluate_nd(plan, 2, p.q.data(), p.d.data(), host.pot.data(), host.grad.data(), host.h()),
            GPUFMM_SUCCESS);
  auto make = [&](int64_t count) {
    gpufmm_array_t a = nullptr;
    EXPECT_EQ(gpufmm_array_create(c.ctx, GPUFMM_FLOAT64, 1, &count, &a), GPUFMM_SUCCESS);
    return a;
  };
  const int64_t n = p.ns;
  gpufmm_array_t aq = make(2 * n), ad = make(6 * n), ap = make(2 * n), ag = make(6 * n), ah = make(12 * n);
  ASSERT_EQ(gpufmm_array_upload(aq, p.q.data(), 2 * n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(ad, p.d.data(), 6 * n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_laplace_evaluate_nd_arrays(plan, 2, aq, ad, ap, ag, ah), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  NdOutputs dev(p);
  ASSERT_EQ(gpufmm_array_download(ap, dev.pot.data(), 2 * n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_download(ag, dev.grad.data(), 6 * n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_download(ah, dev.hess.data(), 12 * n), GPUFMM_SUCCESS);
  EXPECT_EQ(dev.pot, host.pot);
  EXPECT_EQ(dev.grad, host.grad);
  EXPECT_EQ(dev.hess, host.hess);
  EXPECT_EQ(gpufmm_laplace_evaluate_nd_arrays(plan, 3, aq, nullptr, ap, nullptr, nullptr), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("charges"), std::string::npos);
  for (gpufmm_array_t a : {aq, ad, ap, ag, ah}) gpufmm_array_destroy(a);
  gpufmm_laplace_plan_destroy(plan);
}

TEST(LaplaceHessianFmm, BadInput) {
  CpuContext c;
  NdProblem p = make_nd_problem(Dist::Uniform, 500, -1, 2, kCharges, base_seed() + 400);
  gpufmm_laplace_plan_t plan = nullptr;
  ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, nullptr, p.ns, p.src.data(), 0, nullptr, &plan), GPUFMM_SUCCESS);
  NdOutputs o(p);
  for (auto& v : o.hess) v = 7.0;
  EXPECT_EQ(gpufmm_laplace_evaluate_nd(plan, 0, p.q.data(), nullptr, o.pot.data(), nullptr, nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("'nd'"), std::string::npos);
  EXPECT_EQ(gpufmm_laplace_evaluate_nd(plan, 2, p.q.data(), nullptr, nullptr, nullptr, nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("'hess'"), std::string::npos);
  p.q[1 + 2 * 17] = NAN;  // density 1 of source 17
  EXPECT_EQ(gpufmm_laplace_evaluate_nd(plan, 2, p.q.data(), nullptr, nullptr, nullptr, o.hess.data()),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find("charge 17"), std::string::npos) << msg;
  EXPECT_NE(msg.find("density 1"), std::string::npos) << msg;
  for (double v : o.hess) ASSERT_EQ(v, 7.0);
  EXPECT_EQ(gpufmm_laplace_direct_nd(c.ctx, GPUFMM_FLOAT64, 0, p.ns, p.src.data(), p.q.data(), nullptr, 0, nullptr,
                                     o.pot.data(), nullptr, nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_laplace_direct_nd(c.ctx, GPUFMM_FLOAT64, 2, p.ns, p.src.data(), p.q.data(), nullptr, 0, nullptr,
                                     nullptr, nullptr, o.hess.data()),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  for (double v : o.hess) ASSERT_EQ(v, 7.0);
  gpufmm_laplace_plan_destroy(plan);
}

}  // namespace
