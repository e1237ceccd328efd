// The accuracy check of the treecode, shared by the CPU tests
// (tests/cxx/test_treecode*.cpp) and the GPU tests (tests/cuda/): one case
// = a kernel, a compute type, a distribution, eps and a precision, sources
// = targets or not; the achieved relative L2 error of potential and gradient
// at sampled targets against gpufmm_direct in double (papers/001 eq. 16)
// must be <= eps, and the plan must have used its approximations (a case
// that is all direct sums proves nothing).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/kernel_ref.hpp"
#include "gpufmm.h"

namespace gpufmm_test {

inline uint64_t treecode_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

inline const char* treecode_type_name(int t) {
  return t == GPUFMM_TREECODE_PC ? "pc" : t == GPUFMM_TREECODE_CP ? "cp" : "cc";
}

struct TreecodeCase {
  KernelCase kernel;
  int type = GPUFMM_TREECODE_PC;
  Dist dist = Dist::Uniform;
  double eps = 1e-6;
  int precision = GPUFMM_FLOAT64;
  bool at_sources = true;
  int64_t n = 4000;       // sources (and targets when at_sources)
  int64_t sample = 400;   // targets of the error check
  int leaf = 0;           // leaf and batch size (0: the plan's)
  bool require_approx = true;  // fail when the plan used no approximation
  const gpufmm_kernel_t* user = nullptr;  // set: this kernel (a user kernel; kernel.name names it)
  bool calibrate = false;  // options.calibrate
};

struct TreecodeResult {
  double err_pot = 0, err_grad = 0;
  gpufmm_treecode_info_t info{};
  std::vector<double> pot, grad;  // at every target
};

inline std::string describe(const TreecodeCase& c, uint64_t seed) {
  char b[256];
  std::snprintf(b, sizeof b, "%s %s %s eps %.0e %s %s n %lld leaf %d%s seed %llu", c.kernel.name.c_str(),
                treecode_type_name(c.type), dist_name(c.dist), c.eps,
                c.precision == GPUFMM_FLOAT64 ? "double" : "float", c.at_sources ? "at-sources" : "separate",
                (long long)c.n, c.leaf, c.calibrate ? " calibrated" : "", (unsigned long long)seed);
  return b;
}

// Runs one case on ctx and checks it (gtest expectations); seed 0: fresh.
inline TreecodeResult check_treecode(gpufmm_context_t ctx, const TreecodeCase& c, uint64_t seed = 0) {
  if (seed == 0) seed = treecode_seed();
  SCOPED_TRACE(describe(c, seed));
  TreecodeResult r;
  const std::vector<double> src = make_points(c.dist, c.n, seed);
  const int64_t nt = c.at_sources ? c.n : c.n * 3 / 4;
  const std::vector<double> trg = c.at_sources ? std::vector<double>() : make_points(c.dist, nt, seed + 1);
  const std::vector<double>& tx = c.at_sources ? src : trg;
  Rng rng(seed + 2);
  std::vector<double> q(static_cast<size_t>(c.n));
  for (auto& v : q) v = 2 * rng.uniform() - 1;
  gpufmm_kernel_t k;
  if (c.user != nullptr)
    k = *c.user;
  else
    EXPECT_EQ(gpufmm_kernel_init(&k, c.kernel.type, int(c.kernel.params.size()), c.kernel.params.data()),
              GPUFMM_SUCCESS);
  gpufmm_treecode_options_t o;
  EXPECT_EQ(gpufmm_treecode_options_init(&o), GPUFMM_SUCCESS);
  o.kernel = k;
  o.eps = c.eps;
  o.type = c.type;
  o.precision = c.precision;
  o.leaf_size = o.batch_size = c.leaf;
  o.calibrate = c.calibrate ? 1 : 0;
  gpufmm_treecode_plan_t plan = nullptr;
  const gpufmm_status_t st = gpufmm_treecode_plan_create(ctx, &o, c.n, src.data(), nt,
                                                         c.at_sources ? nullptr : trg.data(), &plan);
  EXPECT_EQ(st, GPUFMM_SUCCESS) << gpufmm_last_error_message();
  if (st != GPUFMM_SUCCESS) return r;
  r.pot.assign(static_cast<size_t>(nt), 0.0);
  r.grad.assign(static_cast<size_t>(3 * nt), 0.0);
  EXPECT_EQ(gpufmm_treecode_evaluate(plan, q.data(), r.pot.data(), r.grad.data()), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  EXPECT_EQ(gpufmm_treecode_plan_info(plan, &r.info), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_treecode_plan_destroy(plan), GPUFMM_SUCCESS);

  // Reference at sampled targets: the direct sum in double (a sampled target
  // that is a source is left out by the singular kernels, as at the sources).
  const int64_t m = std::min(c.sample, nt);
  std::vector<int64_t> idx(static_cast<size_t>(m));
  std::vector<double> sx(static_cast<size_t>(3 * m));
  for (int64_t i = 0; i < m; ++i) {
    idx[i] = int64_t(rng.uniform() * double(nt)) % nt;
    for (int d = 0; d < 3; ++d) sx[3 * i + d] = tx[3 * idx[i] + d];
  }
  std::vector<double> rp(static_cast<size_t>(m)), rg(static_cast<size_t>(3 * m));
  EXPECT_EQ(gpufmm_direct(ctx, &k, GPUFMM_FLOAT64, c.n, src.data(), q.data(), m, sx.data(), rp.data(), rg.data()),
            GPUFMM_SUCCESS);
  double ep = 0, np = 0, eg = 0, ng = 0;
  for (int64_t i = 0; i < m; ++i) {
    ep += (r.pot[idx[i]] - rp[i]) * (r.pot[idx[i]] - rp[i]);
    np += rp[i] * rp[i];
    for (int d = 0; d < 3; ++d) {
      const double e = r.grad[3 * idx[i] + d] - rg[3 * i + d];
      eg += e * e;
      ng += rg[3 * i + d] * rg[3 * i + d];
    }
  }
  r.err_pot = std::sqrt(ep / np);
  r.err_grad = std::sqrt(eg / ng);
  EXPECT_LE(r.err_pot, c.eps) << "potential; theta " << r.info.theta << " degree " << r.info.degree;
  EXPECT_LE(r.err_grad, c.eps) << "gradient; theta " << r.info.theta << " degree " << r.info.degree;
  if (c.require_approx)
    EXPECT_GT(r.info.approx_interactions, 0) << "no approximation was used: the case tests nothing";
  std::printf("%-60s theta %.2f n %2d: pot %.2e grad %.2e (approx %.2e direct %.2e)\n", describe(c, seed).c_str(),
              r.info.theta, r.info.degree, r.err_pot, r.err_grad, double(r.info.approx_interactions),
              double(r.info.direct_interactions));
  return r;
}

// The work per target of a plan's parameters, as the library's choose_params
// compares them: (n+1)^3 proxies of ~ 1/theta^3 clusters.
inline double treecode_work(const gpufmm_treecode_info_t& i) {
  return std::pow(i.degree + 1.0, 3) / std::pow(i.theta, 3);
}

// The kernels of the treecode tests (kernel_ref.hpp's, without the strong
// screening case, which the near field alone tests).
inline std::vector<KernelCase> treecode_kernels() {
  std::vector<KernelCase> out;
  for (const KernelCase& k : kernel_cases())
    if (k.name != "yukawa_strong") out.push_back(k);
  return out;
}

// Empty and tiny inputs on a context (the CPU test and the GPU test):
// no sources (zeros at the targets), two points (the direct sum, to 1e-15),
// all points coincident (finite: the singular kernels leave the pairs out),
// and two sources with one target.
inline void empty_and_tiny_inputs(gpufmm_context_t ctx) {
  auto ok = [](gpufmm_status_t st) { return st == GPUFMM_SUCCESS ? std::string() : gpufmm_last_error_message(); };
  const std::vector<double> x = {0.1, 0.2, 0.3, 0.5, 0.5, 0.5}, q = {1.0, -2.0};
  std::vector<double> pot(2, 7.0), grad(6, 7.0);
  gpufmm_treecode_plan_t p;
  ASSERT_EQ(ok(gpufmm_treecode_plan_create(ctx, nullptr, 0, nullptr, 2, x.data(), &p)), "");
  ASSERT_EQ(ok(gpufmm_treecode_evaluate(p, q.data(), pot.data(), grad.data())), "");
  EXPECT_EQ(pot, std::vector<double>(2, 0.0));
  EXPECT_EQ(grad, std::vector<double>(6, 0.0));
  ASSERT_EQ(ok(gpufmm_treecode_plan_destroy(p)), "");
  // Two points: the direct sum.
  const double r = std::sqrt(0.16 + 0.09 + 0.04);
  ASSERT_EQ(ok(gpufmm_treecode_plan_create(ctx, nullptr, 2, x.data(), 0, nullptr, &p)), "");
  ASSERT_EQ(ok(gpufmm_treecode_evaluate(p, q.data(), pot.data(), grad.data())), "");
  EXPECT_NEAR(pot[0], -2.0 / r, 1e-15);
  EXPECT_NEAR(pot[1], 1.0 / r, 1e-15);
  ASSERT_EQ(ok(gpufmm_treecode_plan_destroy(p)), "");
  // Two sources, one target at the first source's place: the second's term.
  const std::vector<double> t1 = {0.1, 0.2, 0.3};
  std::vector<double> p1(1, 7.0);
  ASSERT_EQ(ok(gpufmm_treecode_plan_create(ctx, nullptr, 2, x.data(), 1, t1.data(), &p)), "");
  ASSERT_EQ(ok(gpufmm_treecode_evaluate(p, q.data(), p1.data(), nullptr)), "");
  EXPECT_NEAR(p1[0], -2.0 / r, 1e-15);
  ASSERT_EQ(ok(gpufmm_treecode_plan_destroy(p)), "");
  // All points coincident: finite, the singular kernels leave the pairs out.
  std::vector<double> same(3 * 500, 0.25), qs(500, 1.0), ps(500, 1.0);
  ASSERT_EQ(ok(gpufmm_treecode_plan_create(ctx, nullptr, 500, same.data(), 0, nullptr, &p)), "");
  ASSERT_EQ(ok(gpufmm_treecode_evaluate(p, qs.data(), ps.data(), nullptr)), "");
  EXPECT_EQ(ps, std::vector<double>(500, 0.0));
  ASSERT_EQ(ok(gpufmm_treecode_plan_destroy(p)), "");
}

}  // namespace gpufmm_test
