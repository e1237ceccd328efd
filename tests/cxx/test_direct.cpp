// gpufmm_direct and gpufmm_direct_arrays on the CPU backend, for every
// kernel: against the long-double direct sum of tests/common/kernel_ref.hpp
// (relative L2, papers/001 eq. 16) on uniform and strongly clustered
// (Plummer) points with fresh seeds, separate targets and at the sources,
// float and double; gpufmm_laplace_direct agrees with gpufmm_direct's
// Laplace kernel; bad arguments give the documented status naming the
// argument, with the outputs untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/kernel_ref.hpp"
#include "common/rel_l2.hpp"
#include "gpufmm.h"

namespace {

using gpufmm_test::KernelCase;
using gpufmm_test::kernel_cases;
using gpufmm_test::rel_l2;

uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

gpufmm_kernel_t c_kernel(const KernelCase& k) {
  gpufmm_kernel_t c;
  EXPECT_EQ(gpufmm_kernel_init(&c, k.type, int(k.params.size()), k.params.data()), GPUFMM_SUCCESS);
  return c;
}

struct Problem {
  int64_t ns = 0, nt = 0;
  std::vector<double> src, q, trg;
};

Problem make(gpufmm_test::Dist dist, int64_t ns, int64_t nt, uint64_t seed) {
  Problem p;
  p.ns = ns;
  p.src = gpufmm_test::make_points(dist, ns, seed);
  gpufmm_test::Rng rng(seed + 1);
  p.q.resize(ns);
  for (auto& v : p.q) v = 2 * rng.uniform() - 1;
  if (nt >= 0) {
    p.nt = nt;
    p.trg = gpufmm_test::make_points(dist, nt, seed + 2);
  }
  return p;
}

// Coordinates as the float direct sum sees them: origin + float(x - origin),
// origin the centre of the bounding box of sources and targets.
void round_like_float(std::vector<double>& src, std::vector<double>& trg, bool at_src) {
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (const auto* v : {&src, &trg})
    for (size_t i = 0; i < v->size(); ++i) {
      lo[i % 3] = std::min(lo[i % 3], (*v)[i]);
      hi[i % 3] = std::max(hi[i % 3], (*v)[i]);
    }
  for (auto* v : {&src, &trg})
    for (size_t i = 0; i < v->size(); ++i) {
      const double o = 0.5 * lo[i % 3] + 0.5 * hi[i % 3];
      (*v)[i] = o + double(float((*v)[i] - o));
    }
  if (at_src) trg = src;
}

class Direct : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  void TearDown() override { gpufmm_context_destroy(ctx); }

  // Every kernel on one problem (nt < 0: at the sources) within tol.
  void check(gpufmm_test::Dist dist, int64_t ns, int64_t nt, int precision, double tol) {
    const uint64_t seed = fresh_seed();
    const Problem p = make(dist, ns, nt, seed);
    const bool at_src = nt < 0;
    const int64_t m = at_src ? ns : nt;
    const double* trg = at_src ? p.src.data() : p.trg.data();
    // Float: the library rounds the coordinates, relative to the centre of
    // their bounding box, to float before any arithmetic; the reference sums
    // exactly those points, so that the test measures the float arithmetic
    // (the rounding of the inputs alone moves close pairs by eps |x| / r,
    // which is a property of the data, not of the code).
    std::vector<double> rs = p.src, rt = at_src ? p.src : p.trg;
    if (precision == GPUFMM_FLOAT32) round_like_float(rs, rt, at_src);
    for (const auto& kc : kernel_cases()) {
      SCOPED_TRACE(kc.name + " " + gpufmm_test::dist_name(dist) + " seed " + std::to_string(seed));
      std::vector<double> pe, ge, pot(m), grad(3 * m);
      gpufmm_test::direct_ref(kc, ns, rs.data(), p.q.data(), m, rt.data(), pe, ge);
      const gpufmm_kernel_t k = c_kernel(kc);
      ASSERT_EQ(gpufmm_direct(ctx, &k, precision, ns, p.src.data(), p.q.data(), m, at_src ? nullptr : trg,
                              pot.data(), grad.data()),
                GPUFMM_SUCCESS)
          << gpufmm_last_error_message();
      EXPECT_LT(rel_l2(pot, pe), tol);
      EXPECT_LT(rel_l2(grad, ge), tol);
      // Potential only and gradient only give the same values.
      std::vector<double> pot2(m), grad2(3 * m);
      ASSERT_EQ(gpufmm_direct(ctx, &k, precision, ns, p.src.data(), p.q.data(), m, at_src ? nullptr : trg,
                              pot2.data(), nullptr),
                GPUFMM_SUCCESS);
      ASSERT_EQ(gpufmm_direct(ctx, &k, precision, ns, p.src.data(), p.q.data(), m, at_src ? nullptr : trg, nullptr,
                              grad2.data()),
                GPUFMM_SUCCESS);
      EXPECT_EQ(pot2, pot);
      EXPECT_EQ(grad2, grad);
    }
  }

  gpufmm_context_t ctx = nullptr;
};

using gpufmm_test::Dist;

TEST_F(Direct, UniformDouble) { check(Dist::Uniform, 1500, 1100, GPUFMM_FLOAT64, 1e-13); }
TEST_F(Direct, UniformAtSourcesDouble) { check(Dist::Uniform, 1700, -1, GPUFMM_FLOAT64, 1e-13); }
TEST_F(Direct, PlummerDouble) { check(Dist::Plummer, 1600, 900, GPUFMM_FLOAT64, 1e-12); }
TEST_F(Direct, PlummerAtSourcesDouble) { check(Dist::Plummer, 1300, -1, GPUFMM_FLOAT64, 1e-12); }
TEST_F(Direct, UniformFloat) { check(Dist::Uniform, 1200, 1000, GPUFMM_FLOAT32, 1e-5); }
TEST_F(Direct, UniformAtSourcesFloat) { check(Dist::Uniform, 1100, -1, GPUFMM_FLOAT32, 1e-5); }
TEST_F(Direct, PlummerFloat) { check(Dist::Plummer, 1000, 700, GPUFMM_FLOAT32, 1e-5); }

// gpufmm_laplace_direct is gpufmm_direct with the Laplace kernel.
TEST_F(Direct, LaplaceEntryPointsAgree) {
  const Problem p = make(Dist::Uniform, 900, 500, fresh_seed());
  gpufmm_kernel_t k;
  ASSERT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_LAPLACE, 0, nullptr), GPUFMM_SUCCESS);
  for (int precision : {int(GPUFMM_FLOAT32), int(GPUFMM_FLOAT64)}) {
    std::vector<double> a(500), ga(1500), b(500), gb(1500);
    ASSERT_EQ(gpufmm_direct(ctx, &k, precision, 900, p.src.data(), p.q.data(), 500, p.trg.data(), a.data(), ga.data()),
              GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_laplace_direct(ctx, precision, 900, p.src.data(), p.q.data(), nullptr, 500, p.trg.data(),
                                    b.data(), gb.data()),
              GPUFMM_SUCCESS);
    EXPECT_EQ(a, b);
    EXPECT_EQ(ga, gb);
  }
}

// The arrays variant on the CPU backend gives the host variant's values.
TEST_F(Direct, ArraysMatchHostPointers) {
  const Problem p = make(Dist::Clusters, 800, 600, fresh_seed());
  for (const auto& kc : kernel_cases()) {
    const gpufmm_kernel_t k = c_kernel(kc);
    std::vector<double> pot(600), grad(1800), pa(600), ga(1800);
    ASSERT_EQ(gpufmm_direct(ctx, &k, GPUFMM_FLOAT64, 800, p.src.data(), p.q.data(), 600, p.trg.data(), pot.data(),
                            grad.data()),
              GPUFMM_SUCCESS);
    gpufmm_array_t s, q, t, po, gr;
    const int64_t d3[2] = {3, 800}, d1[1] = {800}, t3[2] = {3, 600}, t1[1] = {600};
    ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, d3, &s), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, d1, &q), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, t3, &t), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, t1, &po), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, t3, &gr), GPUFMM_SUCCESS);
    gpufmm_array_upload(s, p.src.data(), 2400);
    gpufmm_array_upload(q, p.q.data(), 800);
    gpufmm_array_upload(t, p.trg.data(), 1800);
    ASSERT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, q, t, po, gr), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    gpufmm_array_download(po, pa.data(), 600);
    gpufmm_array_download(gr, ga.data(), 1800);
    EXPECT_EQ(pa, pot) << kc.name;
    EXPECT_EQ(ga, grad) << kc.name;
    // At the sources (targets NULL), potential only.
    std::vector<double> ps(800), pas(800);
    gpufmm_array_t ps_arr;
    ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, d1, &ps_arr), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_direct(ctx, &k, GPUFMM_FLOAT32, 800, p.src.data(), p.q.data(), 0, nullptr, ps.data(), nullptr),
              GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT32, s, q, nullptr, ps_arr, nullptr), GPUFMM_SUCCESS);
    gpufmm_array_download(ps_arr, pas.data(), 800);
    EXPECT_EQ(pas, ps) << kc.name;
    for (gpufmm_array_t a : {s, q, t, po, gr, ps_arr}) gpufmm_array_destroy(a);
  }
}

TEST_F(Direct, EmptySets) {
  gpufmm_kernel_t k;
  const double kappa = 1.0;
  ASSERT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_YUKAWA, 1, &kappa), GPUFMM_SUCCESS);
  const double src[3] = {0, 0, 0}, q[1] = {1}, trg[6] = {1, 0, 0, 0, 2, 0};
  double pot[2] = {5, 5}, grad[6] = {5, 5, 5, 5, 5, 5};
  ASSERT_EQ(gpufmm_direct(ctx, &k, GPUFMM_FLOAT64, 0, src, q, 2, trg, pot, grad), GPUFMM_SUCCESS);
  for (double v : pot) EXPECT_EQ(v, 0.0);
  for (double v : grad) EXPECT_EQ(v, 0.0);
  ASSERT_EQ(gpufmm_direct(ctx, &k, GPUFMM_FLOAT64, 1, src, q, 0, trg, pot, grad), GPUFMM_SUCCESS);
  // One pair, exactly: exp(-1) / 1 at distance 1.
  ASSERT_EQ(gpufmm_direct(ctx, &k, GPUFMM_FLOAT64, 1, src, q, 1, trg, pot, grad), GPUFMM_SUCCESS);
  EXPECT_NEAR(pot[0], std::exp(-1.0), 1e-15);
  EXPECT_NEAR(grad[0], -2 * std::exp(-1.0), 1e-15);
}

// Errors: status and a message naming the argument; outputs untouched.
class DirectErrors : public Direct {
 protected:
  void expect(gpufmm_status_t want, const std::string& needle, const gpufmm_kernel_t* k, int precision, int64_t ns,
              const double* s, const double* qq, int64_t nt, const double* t) {
    std::vector<double> pot(4, 7.0), grad(12, 7.0);
    EXPECT_EQ(gpufmm_direct(ctx, k, precision, ns, s, qq, nt, t, pot.data(), grad.data()), want);
    const std::string msg = gpufmm_last_error_message();
    EXPECT_NE(msg.find("gpufmm_direct"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    for (double v : pot) EXPECT_EQ(v, 7.0);
    for (double v : grad) EXPECT_EQ(v, 7.0);
  }
  double src[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  double q[4] = {1, 2, 3, 4};
  double trg[12] = {0.5, 0.5, 0.5, 2, 0, 0, 0, 2, 0, 0, 0, 2};
};

TEST_F(DirectErrors, Arguments) {
  gpufmm_kernel_t k;
  ASSERT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_LAPLACE, 0, nullptr), GPUFMM_SUCCESS);
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'kernel' is NULL", nullptr, GPUFMM_FLOAT64, 4, src, q, 4, trg);
  gpufmm_kernel_t bad = k;
  bad.type = 42;
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'kernel'", &bad, GPUFMM_FLOAT64, 4, src, q, 4, trg);
  bad = k;
  bad.type = GPUFMM_KERNEL_REGULARIZED_LAPLACE;  // hand-made: nparams 0
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "takes 1 parameters", &bad, GPUFMM_FLOAT64, 4, src, q, 4, trg);
  bad.nparams = 1;
  bad.params[0] = -1;
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'delta'", &bad, GPUFMM_FLOAT64, 4, src, q, 4, trg);
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'precision'", &k, 99, 4, src, q, 4, trg);
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'nsrc'", &k, GPUFMM_FLOAT64, -1, src, q, 4, trg);
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'ntrg'", &k, GPUFMM_FLOAT64, 4, src, q, -2, trg);
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'sources' is NULL", &k, GPUFMM_FLOAT64, 4, nullptr, q, 4, trg);
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'charges'", &k, GPUFMM_FLOAT64, 4, src, nullptr, 4, trg);
  std::vector<double> pot(4, 7.0);
  EXPECT_EQ(gpufmm_direct(nullptr, &k, GPUFMM_FLOAT64, 4, src, q, 4, trg, pot.data(), nullptr),
            GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(pot, std::vector<double>(4, 7.0));
}

TEST_F(DirectErrors, NonFiniteNamedWithIndex) {
  gpufmm_kernel_t k;
  const double kappa = 0.5;
  ASSERT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_YUKAWA, 1, &kappa), GPUFMM_SUCCESS);
  src[7] = NAN;
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'sources': point 2", &k, GPUFMM_FLOAT64, 4, src, q, 4, trg);
  src[7] = 1;
  q[3] = INFINITY;
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'charges': charge 3", &k, GPUFMM_FLOAT32, 4, src, q, 4, trg);
  q[3] = 4;
  trg[3] = -INFINITY;
  expect(GPUFMM_ERROR_INVALID_ARGUMENT, "'targets': point 1", &k, GPUFMM_FLOAT64, 4, src, q, 4, trg);
}

TEST_F(DirectErrors, Arrays) {
  gpufmm_kernel_t k;
  ASSERT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_LAPLACE, 0, nullptr), GPUFMM_SUCCESS);
  gpufmm_array_t s, s4, q, qf, p, p3, g;
  const int64_t n12[1] = {12}, n10[1] = {10}, n4[1] = {4}, n3[1] = {3};
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n12, &s), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n10, &s4), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n4, &q), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT32, 1, n4, &qf), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n4, &p), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n3, &p3), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n12, &g), GPUFMM_SUCCESS);
  gpufmm_array_upload(s, src, 12);
  auto msg = [] { return std::string(gpufmm_last_error_message()); };
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, nullptr, q, nullptr, p, nullptr), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_NE(msg().find("'sources'"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, nullptr, nullptr, p, nullptr), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_NE(msg().find("'charges'"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s4, q, nullptr, p, nullptr), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_NE(msg().find("multiple of 3"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, qf, nullptr, p, nullptr), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_NE(msg().find("'charges'"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, q, nullptr, p3, nullptr), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_NE(msg().find("'pot'"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, q, nullptr, nullptr, p), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_NE(msg().find("'grad'"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, q, nullptr, nullptr, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_direct_arrays(nullptr, GPUFMM_FLOAT64, s, q, nullptr, p, g), GPUFMM_ERROR_INVALID_ARGUMENT);
  // Another context's array.
  gpufmm_context_t other;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &other), GPUFMM_SUCCESS);
  gpufmm_array_t po;
  ASSERT_EQ(gpufmm_array_create(other, GPUFMM_FLOAT64, 1, n4, &po), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, q, nullptr, po, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("another context"), std::string::npos) << msg();
  gpufmm_array_destroy(po);
  gpufmm_context_destroy(other);
  for (gpufmm_array_t a : {s, s4, q, qf, p, p3, g}) gpufmm_array_destroy(a);
}

}  // namespace
