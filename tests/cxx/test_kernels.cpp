// The pair kernels of src/cxx/kernels (kernels as data): each kernel's value
// and gradient for one pair against the long-double oracle of
// tests/common/kernel_ref.hpp, on random pairs from 1e-12 (double) / 1e-5
// (float) to 1e2 apart, including coincident ones; the oracle's gradient
// against central differences; the descriptor API (gpufmm_kernel_init) and
// its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "common/distributions.hpp"
#include "common/kernel_ref.hpp"
#include "gpufmm.h"
#include "kernels/fast_math.hpp"
#include "kernels/kernel.hpp"

namespace {

using gpufmm_test::KernelCase;
using gpufmm_test::kernel_cases;
using gpufmm_test::kernel_ref;

gpufmm::kernels::KernelDesc desc_of(const KernelCase& k) {
  gpufmm::kernels::KernelDesc d;
  d.type = gpufmm::kernels::KernelType(k.type);
  if (k.type == GPUFMM_KERNEL_YUKAWA || k.type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) d.kappa = k.params[0];
  if (k.type == GPUFMM_KERNEL_REGULARIZED_LAPLACE) d.delta = k.params[0];
  if (k.type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) d.delta = k.params[1];
  return d;
}

uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

// |a - b| <= tol |b| + abs_floor
::testing::AssertionResult close(long double a, long double b, double tol, double floor_) {
  if (std::fabs(a - b) <= tol * std::fabs(b) + floor_) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << double(a) << " vs " << double(b) << " (rel " << double(std::fabs(a - b) / std::fabs(b))
                                       << ")";
}

template <class T>
void check_pairs(const KernelCase& kc, double rmin, double tol) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(kc.name + " seed " + std::to_string(seed));
  gpufmm_test::Rng rng(seed);
  const gpufmm::kernels::KernelDesc d = desc_of(kc);
  // kappa r <= 20: beyond, exp(-kappa r) leaves the range that matters (and
  // underflows in float at kappa r ~ 100), and its relative rounding grows
  // as kappa r eps.
  const double rmax = d.kappa > 0 ? std::min(1e2, 20.0 / d.kappa) : 1e2;
  for (int it = 0; it < 4000; ++it) {
    double ux, uy, uz;
    rng.direction(ux, uy, uz);
    const double r = it % 50 == 0 ? 0.0 : rmin * std::pow(rmax / rmin, rng.uniform());
    const T rx = T(r * ux), ry = T(r * uy), rz = T(r * uz);
    const T q = T(2 * rng.uniform() - 1);
    T v = 0, gx = 0, gy = 0, gz = 0;
    gpufmm::kernels::with_kernel<T>(d, [&](auto k) {
      k.template accumulate<true, false, true>(rx, ry, rz, q, T(0), T(0), T(0), v, gx, gy, gz);
    });
    long double g, gr[3];
    kernel_ref(kc, rx, ry, rz, g, gr);
    const long double gn = std::sqrt(gr[0] * gr[0] + gr[1] * gr[1] + gr[2] * gr[2]);
    ASSERT_TRUE(close(v, q * g, tol, 0)) << "potential at r = " << r;
    // Components relative to the gradient's norm (a component may cancel).
    ASSERT_TRUE(close(gx, q * gr[0], 0, tol * std::fabs(q * gn))) << "grad x at r = " << r;
    ASSERT_TRUE(close(gy, q * gr[1], 0, tol * std::fabs(q * gn))) << "grad y at r = " << r;
    ASSERT_TRUE(close(gz, q * gr[2], 0, tol * std::fabs(q * gn))) << "grad z at r = " << r;
  }
}

TEST(Kernels, OracleGradientMatchesDifferences) {
  gpufmm_test::Rng rng(fresh_seed());
  for (const auto& kc : kernel_cases())
    for (int it = 0; it < 50; ++it) {
      const long double R[3] = {rng.uniform() - 0.5L, rng.uniform() - 0.5L, rng.uniform() - 0.5L};
      // Central differences with h = 1e-5 are accurate to ~h^2 / r^2 relative:
      // below r = 0.05 that exceeds the tolerance (the check, not the oracle,
      // would fail; a fresh seed found r = 2e-3).
      if (R[0] * R[0] + R[1] * R[1] + R[2] * R[2] < 0.0025L) continue;
      long double g, gr[3];
      kernel_ref(kc, R[0], R[1], R[2], g, gr);
      for (int c = 0; c < 3; ++c) {
        const long double h = 1e-5L;
        long double Rp[3] = {R[0], R[1], R[2]}, Rm[3] = {R[0], R[1], R[2]}, gp, gm, t[3];
        Rp[c] += h;
        Rm[c] -= h;
        kernel_ref(kc, Rp[0], Rp[1], Rp[2], gp, t);
        kernel_ref(kc, Rm[0], Rm[1], Rm[2], gm, t);
        EXPECT_TRUE(close((gp - gm) / (2 * h), gr[c], 1e-7, 1e-9)) << kc.name;
      }
    }
}

TEST(Kernels, PairsDouble) {
  for (const auto& kc : kernel_cases()) check_pairs<double>(kc, 1e-12, 2e-14);
}

TEST(Kernels, PairsFloat) {
  for (const auto& kc : kernel_cases()) check_pairs<float>(kc, 1e-5, 4e-6);
}

TEST(Kernels, CoincidentPairs) {
  for (const auto& kc : kernel_cases()) {
    double v = 0, gx = 0, gy = 0, gz = 0;
    gpufmm::kernels::with_kernel<double>(desc_of(kc), [&](auto k) {
      k.template accumulate<true, false, true>(0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, v, gx, gy, gz);
      EXPECT_EQ(decltype(k)::kCoincidentZero, kc.type == GPUFMM_KERNEL_LAPLACE || kc.type == GPUFMM_KERNEL_YUKAWA);
    });
    long double g, gr[3];
    kernel_ref(kc, 0, 0, 0, g, gr);
    EXPECT_DOUBLE_EQ(v, double(3 * g)) << kc.name;
    EXPECT_EQ(gx, 0.0);
    EXPECT_EQ(gy, 0.0);
    EXPECT_EQ(gz, 0.0);
  }
  // Regularized Laplace at r = 0: q / delta.
  double v = 0, g3[3] = {0, 0, 0};
  gpufmm::kernels::KernelDesc d;
  d.type = gpufmm::kernels::KernelType::kRegularizedLaplace;
  d.delta = 0.25;
  gpufmm::kernels::with_kernel<double>(d, [&](auto k) {
    k.template accumulate<true, false, false>(0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, v, g3[0], g3[1], g3[2]);
  });
  EXPECT_DOUBLE_EQ(v, 8.0);
}

// Laplace's accumulate_mutual (the GPU's mutual near field) against two
// calls of accumulate, one per direction (the vector negated for the second),
// on random pairs, coincident ones included, from sums that are not zero:
// each of the eight sums within 2 ulps of the sums' size.
template <class T>
void check_mutual() {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  gpufmm_test::Rng rng(seed);
  const gpufmm::kernels::Laplace<T> k{};
  for (int it = 0; it < 2000; ++it) {
    double ux, uy, uz;
    rng.direction(ux, uy, uz);
    const double r = it % 50 == 0 ? 0.0 : 1e-3 * std::pow(1e5, rng.uniform());
    const T rx = T(r * ux), ry = T(r * uy), rz = T(r * uz);
    const T qa = T(2 * rng.uniform() - 1), qb = T(2 * rng.uniform() - 1);
    T m[8], o[8], init[8];
    for (int c = 0; c < 8; ++c) m[c] = o[c] = init[c] = T(2 * rng.uniform() - 1);
    k.template accumulate_mutual<true>(rx, ry, rz, qa, qb, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]);
    k.template accumulate<true, false, true>(rx, ry, rz, qb, T(0), T(0), T(0), o[0], o[1], o[2], o[3]);
    k.template accumulate<true, false, true>(-rx, -ry, -rz, qa, T(0), T(0), T(0), o[4], o[5], o[6], o[7]);
    T size = 0;
    for (int c = 0; c < 8; ++c) size = std::max(size, std::fabs(o[c]));
    for (int c = 0; c < 8; ++c)
      ASSERT_LE(std::fabs(m[c] - o[c]), 2 * std::numeric_limits<T>::epsilon() * size) << "sum " << c << " at r = " << r;
    // Potential only: the same potentials, the gradients untouched.
    T p[8];
    std::copy(init, init + 8, p);
    k.template accumulate_mutual<false>(rx, ry, rz, qa, qb, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    for (int c = 0; c < 8; ++c) ASSERT_EQ(p[c], c == 0 || c == 4 ? m[c] : init[c]) << "sum " << c;
  }
}

TEST(Kernels, LaplaceMutualIsBothDirections) {
  check_mutual<double>();
  check_mutual<float>();
}

TEST(Kernels, Traits) {
  using namespace gpufmm::kernels;
  EXPECT_TRUE(Laplace<double>::kDipoles);
  EXPECT_TRUE(Laplace<double>::kHomogeneous);
  EXPECT_EQ(Laplace<double>::kDegree, -1);
  EXPECT_FALSE(Yukawa<double>::kDipoles);
  EXPECT_FALSE(Yukawa<double>::kHomogeneous);
  EXPECT_TRUE(Yukawa<float>::kSymmetric && RegularizedLaplace<float>::kSymmetric && RegularizedYukawa<float>::kSymmetric);
  EXPECT_TRUE(kernel_has_dipoles(KernelType::kLaplace));
  EXPECT_FALSE(kernel_has_dipoles(KernelType::kYukawa));
  EXPECT_FALSE(kernel_has_dipoles(KernelType::kRegularizedLaplace));
  EXPECT_FALSE(kernel_has_dipoles(KernelType::kRegularizedYukawa));
}

TEST(Kernels, YukawaWithZeroKappaIsLaplace) {
  gpufmm_test::Rng rng(fresh_seed());
  gpufmm::kernels::Yukawa<double> y;
  gpufmm::kernels::Laplace<double> l;
  for (int it = 0; it < 100; ++it) {
    const double rx = rng.uniform() - 0.5, ry = rng.uniform() - 0.5, rz = rng.uniform() - 0.5;
    double a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
    y.accumulate<true, false, true>(rx, ry, rz, 1.5, 0, 0, 0, a[0], a[1], a[2], a[3]);
    l.accumulate<true, false, true>(rx, ry, rz, 1.5, 0, 0, 0, b[0], b[1], b[2], b[3]);
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(a[c], b[c], 1e-14 * std::fabs(b[c]) + 1e-300);
  }
}

// The CPU's exp (kernels/fast_math.hpp: host_exp, what the Yukawa kernels
// call on the host) within 1.5 ulp of e^x over the arguments the kernels
// pass (-kappa r: mostly -50..0) and every finite argument, and exactly
// exp's results at the limits; fresh seeds.
template <class T>
long double ulps_off(T got, long double ref) {
  const T r = static_cast<T>(ref);
  const long double ulp = r == T(0) || std::fpclassify(r) == FP_SUBNORMAL
                              ? static_cast<long double>(std::numeric_limits<T>::denorm_min())
                              : static_cast<long double>(std::nextafter(std::fabs(r), T(INFINITY)) - std::fabs(r));
  return std::fabs(static_cast<long double>(got) - ref) / ulp;
}

template <class T>
void check_host_exp(uint64_t seed) {
  std::mt19937_64 g(seed);
  const bool single = sizeof(T) == 4;
  const double lo = single ? -103.9 : -745.1, hi = single ? 88.7 : 709.7;
  long double worst = 0;
  T at = 0;
  for (const auto& range : {std::pair<double, double>{-50, 0}, {-1, 1}, {lo, hi}}) {
    std::uniform_real_distribution<double> u(range.first, range.second);
    for (int i = 0; i < 300000; ++i) {
      const T x = static_cast<T>(u(g));
      const long double e = ulps_off(gpufmm::kernels::host_exp(x), std::exp(static_cast<long double>(x)));
      if (e > worst) worst = e, at = x;
    }
  }
  EXPECT_LE(worst, 1.5L) << "worst at x = " << at << " (seed " << seed << ")";
  std::printf("host_exp %s: worst %.3Lf ulp at x = %.9g (seed %llu)\n", single ? "float" : "double", worst, double(at),
              (unsigned long long)seed);
  const T big = single ? T(88.73) : T(709.79), tiny = single ? T(-103.98) : T(-745.14);
  for (T x : {T(0), T(-0.0), big, T(1e6), tiny, T(-1e6), T(INFINITY), T(-INFINITY)})
    EXPECT_EQ(gpufmm::kernels::host_exp(x), std::exp(x)) << "x = " << x;
  EXPECT_TRUE(std::isnan(gpufmm::kernels::host_exp(T(NAN))));
}

TEST(Kernels, HostExp) {
  check_host_exp<double>(fresh_seed());
  check_host_exp<float>(fresh_seed());
}

TEST(KernelInit, ValidKernels) {
  for (const auto& kc : kernel_cases()) {
    gpufmm_kernel_t k;
    ASSERT_EQ(gpufmm_kernel_init(&k, kc.type, int(kc.params.size()), kc.params.data()), GPUFMM_SUCCESS)
        << gpufmm_last_error_message();
    EXPECT_EQ(k.type, kc.type);
    EXPECT_EQ(k.nparams, int(kc.params.size()));
    for (size_t i = 0; i < kc.params.size(); ++i) EXPECT_EQ(k.params[i], kc.params[i]);
    for (int i = k.nparams; i < GPUFMM_KERNEL_MAX_PARAMS; ++i) EXPECT_EQ(k.params[i], 0.0);
  }
  gpufmm_kernel_t k;
  const double zero = 0.0;
  EXPECT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_YUKAWA, 1, &zero), GPUFMM_SUCCESS);  // kappa 0 is allowed
}

void expect_init_error(int type, std::vector<double> p, int nparams, const std::string& needle) {
  gpufmm_kernel_t k;
  k.type = 77;
  EXPECT_EQ(gpufmm_kernel_init(&k, type, nparams, p.empty() ? nullptr : p.data()), GPUFMM_ERROR_INVALID_ARGUMENT);
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find("gpufmm_kernel_init"), std::string::npos) << msg;
  EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  EXPECT_EQ(k.type, 77) << "the kernel is untouched on error";
}

TEST(KernelInit, Errors) {
  EXPECT_EQ(gpufmm_kernel_init(nullptr, GPUFMM_KERNEL_LAPLACE, 0, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("'kernel'"), std::string::npos);
  expect_init_error(9, {}, 0, "not a gpufmm_kernel_type_t");
  expect_init_error(-1, {}, 0, "not a gpufmm_kernel_type_t");
  expect_init_error(GPUFMM_KERNEL_LAPLACE, {1.0}, 1, "takes 0 parameters");
  expect_init_error(GPUFMM_KERNEL_YUKAWA, {}, 0, "takes 1 parameters");
  expect_init_error(GPUFMM_KERNEL_YUKAWA, {1.0}, GPUFMM_KERNEL_MAX_PARAMS + 1, "'nparams'");
  expect_init_error(GPUFMM_KERNEL_YUKAWA, {}, 1, "'params' is NULL");
  expect_init_error(GPUFMM_KERNEL_YUKAWA, {-0.5}, 1, "'kappa'");
  expect_init_error(GPUFMM_KERNEL_YUKAWA, {NAN}, 1, "'kappa'");
  expect_init_error(GPUFMM_KERNEL_REGULARIZED_LAPLACE, {0.0}, 1, "'delta'");
  expect_init_error(GPUFMM_KERNEL_REGULARIZED_LAPLACE, {INFINITY}, 1, "'delta'");
  expect_init_error(GPUFMM_KERNEL_REGULARIZED_YUKAWA, {0.5, -1.0}, 2, "'delta'");
  expect_init_error(GPUFMM_KERNEL_REGULARIZED_YUKAWA, {-0.5, 1.0}, 2, "'kappa'");
}

}  // namespace
