// The FMM-FFT on the CPU backend (issue 17): whole transforms against FFTW
// and a direct DFT, both precisions and directions, admitted sizes that are
// not powers of two, inverse(forward(x)) = N x, every stage against a dense
// reference, and the bad input of the C API.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/fft_check.hpp"
#include "gpufmm.h"

using namespace gpufmm_test;

namespace {

uint64_t fresh_seed() { return std::random_device{}() * 0x9E3779B97F4A7C15ull + 1; }

struct Cpu : ::testing::Test {
  gpufmm_context_t ctx = nullptr;
  void SetUp() override { ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  void TearDown() override { gpufmm_context_destroy(ctx); }
  gpufmm_fft_plan_t plan(int64_t n, int dtype, double eps, int p = 0, int ml = 0, int b = 0, int q = 0) {
    gpufmm_fft_options_t o;
    gpufmm_fft_options_init(&o);
    o.n = n;
    o.dtype = dtype;
    o.eps = eps;
    o.p = p;
    o.ml = ml;
    o.b = b;
    o.q = q;
    gpufmm_fft_plan_t h = nullptr;
    EXPECT_EQ(gpufmm_fft_plan_create(ctx, &o, &h), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    return h;
  }
  // Error of one transform against FFTW.
  double error(int64_t n, int dtype, double eps, int sign, int p = 0, int ml = 0, int b = 0, int q = 0) {
    const bool single = dtype == GPUFMM_COMPLEX64;
    const uint64_t seed = fresh_seed();
    gpufmm_fft_plan_t h = plan(n, dtype, eps, p, ml, b, q);
    if (!h) return 1;
    const auto x = random_signal(n, seed, single);
    const auto y = fmmfft_host(h, x, sign, single);
    const double e = rel_l2_err(y, fftw_reference(x, sign));
    gpufmm_fft_info_t info;
    gpufmm_fft_plan_info(h, &info);
    RecordProperty("seed", std::to_string(seed));
    std::printf("n %lld %s sign %+d  P %d M_L %d L %d B %d Q %d  error %.2e (seed %llu)\n", (long long)n,
                single ? "c64" : "c128", sign, info.p, info.ml, info.levels, info.base, info.q, e,
                (unsigned long long)seed);
    gpufmm_fft_plan_destroy(h);
    return e;
  }
};

}  // namespace

TEST_F(Cpu, MatchesDirectDftAtSmallSizes) {
  for (int64_t n : {16, 24, 48, 64, 96, 256}) {
    for (int sign : {-1, 1}) {
      gpufmm_fft_plan_t h = plan(n, GPUFMM_COMPLEX128, 1e-12);
      ASSERT_NE(h, nullptr);
      const auto x = random_signal(n, fresh_seed(), false);
      const auto y = fmmfft_host(h, x, sign, false);
      EXPECT_LT(rel_l2_err(y, direct_dft(x, sign)), 1e-12) << "n " << n << " sign " << sign;
      gpufmm_fft_plan_destroy(h);
    }
  }
}

TEST_F(Cpu, DefaultAccuracyDouble) {
  for (int64_t n : {1 << 10, 1 << 14, 1 << 18, 1 << 20})
    for (int sign : {-1, 1}) EXPECT_LE(error(n, GPUFMM_COMPLEX128, 0, sign), 2e-14) << n;
}

TEST_F(Cpu, DefaultAccuracySingle) {
  for (int64_t n : {1 << 10, 1 << 14, 1 << 18, 1 << 20})
    for (int sign : {-1, 1}) EXPECT_LE(error(n, GPUFMM_COMPLEX64, 0, sign), 4e-7) << n;
}

TEST_F(Cpu, ErrorAtMostEps) {
  for (double eps : {1e-3, 1e-5, 1e-7, 1e-9, 1e-11, 1e-13})
    for (int64_t n : {1 << 12, 1 << 16}) EXPECT_LE(error(n, GPUFMM_COMPLEX128, eps, -1), eps) << eps;
  for (double eps : {1e-3, 1e-5}) EXPECT_LE(error(1 << 14, GPUFMM_COMPLEX64, eps, 1), eps) << eps;
}

TEST_F(Cpu, NonPowerOfTwoSizes) {
  for (int64_t n : {3 << 16, 5 << 15, 12 * 1000})
    for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64})
      EXPECT_LE(error(n, dtype, 0, -1), dtype == GPUFMM_COMPLEX128 ? 2e-14 : 4e-7) << n;
}

TEST_F(Cpu, ParametersSetDirectly) {
  // Every base level and a few (P, M_L) of one N, and Q from 4 to 20.
  for (int b : {2, 3, 4}) EXPECT_LE(error(1 << 14, GPUFMM_COMPLEX128, 0, -1, 16, 32, b, 18), 2e-14) << b;
  EXPECT_LE(error(1 << 14, GPUFMM_COMPLEX128, 0, 1, 2, 8, 2, 18), 2e-14);
  EXPECT_LE(error(1 << 14, GPUFMM_COMPLEX128, 0, 1, 512, 8, 2, 18), 2e-14);
  double last = 1;
  for (int q = 4; q <= 20; q += 4) {
    const double e = error(1 << 14, GPUFMM_COMPLEX128, 0, -1, 64, 16, 3, q);
    EXPECT_LT(e, last) << "the error decreases with Q";
    last = e;
  }
}

TEST_F(Cpu, InverseOfForwardIsNTimesIdentity) {
  for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64}) {
    const bool single = dtype == GPUFMM_COMPLEX64;
    const int64_t n = 3 << 12;
    gpufmm_fft_plan_t h = plan(n, dtype, 0);
    const auto x = random_signal(n, fresh_seed(), single);
    auto y = fmmfft_host(h, x, -1, single);
    auto z = fmmfft_host(h, y, 1, single);
    for (auto& v : z) v /= double(n);
    EXPECT_LE(rel_l2_err(z, x), single ? 1e-6 : 4e-14);
    gpufmm_fft_plan_destroy(h);
  }
}

TEST_F(Cpu, InPlaceAndArrays) {
  const int64_t n = 1 << 12;
  gpufmm_fft_plan_t h = plan(n, GPUFMM_COMPLEX128, 0);
  const auto x = random_signal(n, fresh_seed(), false);
  const auto ref = fmmfft_host(h, x, -1, false);
  auto y = x;
  ASSERT_EQ(gpufmm_fft_execute_host(h, y.data(), y.data(), -1), GPUFMM_SUCCESS);
  EXPECT_EQ(y, ref) << "in place gives the same bits";
  gpufmm_array_t a = nullptr;
  int64_t dims[1] = {n};
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_COMPLEX128, 1, dims, &a), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(a, x.data(), n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_fft_execute(h, a, a, -1), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  std::vector<double> z(x.size());
  ASSERT_EQ(gpufmm_array_download(a, z.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(z, ref);
  gpufmm_array_destroy(a);
  gpufmm_fft_plan_destroy(h);
}
