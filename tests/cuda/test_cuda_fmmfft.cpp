// The FMM-FFT on the GPU (label gpu; skipped without a device): against
// FFTW at the default and requested accuracies, both precisions and
// directions, sizes that are not powers of two, GPU == CPU to rounding with
// the same parameters, device arrays (in place too), non-finite input, and
// the stage profile.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/fft_check.hpp"
#include "common/gpu_cpu_fixture.hpp"
#include "gpufmm.h"

using namespace gpufmm_test;

namespace {

struct FmmFft : GpuCpuContexts {
  gpufmm_fft_plan_t plan(gpufmm_context_t ctx, int64_t n, int dtype, double eps, int p = 0, int ml = 0, int b = 0,
                         int q = 0) {
    gpufmm_fft_options_t o;
    gpufmm_fft_options_init(&o);
    o.n = n, o.dtype = dtype, o.eps = eps, o.p = p, o.ml = ml, o.b = b, o.q = q;
    gpufmm_fft_plan_t h = nullptr;
    EXPECT_EQ(gpufmm_fft_plan_create(ctx, &o, &h), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    return h;
  }
};

uint64_t seed() { return std::random_device{}(); }

}  // namespace

TEST_F(FmmFft, AccuracyAgainstFftw) {
  for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64})
    for (int64_t n : {int64_t(1) << 10, int64_t(1) << 16, int64_t(1) << 20, int64_t(3) << 16, int64_t(5) << 15})
      for (int sign : {-1, 1}) {
        const bool single = dtype == GPUFMM_COMPLEX64;
        gpufmm_fft_plan_t h = plan(gpu, n, dtype, 0);
        ASSERT_NE(h, nullptr);
        const auto x = random_signal(n, seed(), single);
        const double e = rel_l2_err(fmmfft_host(h, x, sign, single), fftw_reference(x, sign));
        gpufmm_fft_info_t info;
        gpufmm_fft_plan_info(h, &info);
        std::printf("n %lld %s %+d P %d M_L %d L %d B %d Q %d error %.2e\n", (long long)n, single ? "c64" : "c128",
                    sign, info.p, info.ml, info.levels, info.base, info.q, e);
        EXPECT_LE(e, single ? 4e-7 : 2e-14) << n;
        gpufmm_fft_plan_destroy(h);
      }
}

TEST_F(FmmFft, ErrorAtMostEps) {
  for (double eps : {1e-3, 1e-6, 1e-9, 1e-12}) {
    gpufmm_fft_plan_t h = plan(gpu, 1 << 18, GPUFMM_COMPLEX128, eps);
    const auto x = random_signal(1 << 18, seed(), false);
    EXPECT_LE(rel_l2_err(fmmfft_host(h, x, -1, false), fftw_reference(x, -1)), eps) << eps;
    gpufmm_fft_plan_destroy(h);
  }
}

TEST_F(FmmFft, GpuEqualsCpu) {
  struct Case {
    int64_t n;
    int p, ml, b, q;
  };
  for (const Case c : {Case{1 << 14, 8, 16, 3, 10}, Case{1 << 16, 64, 64, 2, 17}, Case{3 << 14, 24, 32, 4, 12},
                       Case{1 << 18, 256, 8, 3, 17}, Case{1 << 18, 16, 128, 2, 17}})
    for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64}) {
      const bool single = dtype == GPUFMM_COMPLEX64;
      gpufmm_fft_plan_t hg = plan(gpu, c.n, dtype, 0, c.p, c.ml, c.b, c.q);
      gpufmm_fft_plan_t hc = plan(cpu, c.n, dtype, 0, c.p, c.ml, c.b, c.q);
      const auto x = random_signal(c.n, seed(), single);
      for (int sign : {-1, 1}) {
        const auto yg = fmmfft_host(hg, x, sign, single);
        const auto yc = fmmfft_host(hc, x, sign, single);
        // float: the two backends round differently (cuBLAS / OpenBLAS, cuFFT /
        // FFTW sum in other orders); each is within 4e-7 of the exact transform.
        EXPECT_LE(rel_l2_err(yg, yc), single ? 6e-7 : 1e-15) << c.n << " P " << c.p << " M_L " << c.ml;
      }
      gpufmm_fft_plan_destroy(hg);
      gpufmm_fft_plan_destroy(hc);
    }
}

TEST_F(FmmFft, DeviceArraysInPlaceAndNonFinite) {
  const int64_t n = 1 << 16;
  gpufmm_fft_plan_t h = plan(gpu, n, GPUFMM_COMPLEX128, 0);
  auto x = random_signal(n, seed(), false);
  const auto ref = fmmfft_host(h, x, -1, false);
  gpufmm_array_t a = nullptr, b = nullptr;
  int64_t dims[1] = {n};
  ASSERT_EQ(gpufmm_array_create(gpu, GPUFMM_COMPLEX128, 1, dims, &a), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(gpu, GPUFMM_COMPLEX128, 1, dims, &b), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(a, x.data(), n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_fft_execute(h, a, b, -1), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  std::vector<double> y(x.size());
  ASSERT_EQ(gpufmm_array_download(b, y.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(y, ref);
  ASSERT_EQ(gpufmm_fft_execute(h, a, a, -1), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_download(a, y.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(y, ref) << "in place";
  // A NaN input: named, the output untouched.
  x[2 * 4321] = INFINITY;
  ASSERT_EQ(gpufmm_array_upload(a, x.data(), n), GPUFMM_SUCCESS);
  const std::vector<double> sentinel(x.size(), 3.0);
  ASSERT_EQ(gpufmm_array_upload(b, sentinel.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_fft_execute(h, a, b, -1), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("element 4321"), std::string::npos)
      << gpufmm_last_error_message();
  ASSERT_EQ(gpufmm_array_download(b, y.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(y, sentinel);
  // A plan of the CPU context refuses GPU arrays.
  gpufmm_fft_plan_t hc = plan(cpu, n, GPUFMM_COMPLEX128, 0);
  EXPECT_EQ(gpufmm_fft_execute(hc, a, b, -1), GPUFMM_ERROR_INVALID_ARGUMENT);
  gpufmm_fft_plan_destroy(hc);
  // The stage profile of the last successful execute.
  ASSERT_EQ(gpufmm_array_upload(a, ref.data(), n), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_fft_execute(h, a, b, 1), GPUFMM_SUCCESS);
  gpufmm_fft_info_t info;
  ASSERT_EQ(gpufmm_fft_plan_info(h, &info), GPUFMM_SUCCESS);
  EXPECT_EQ(info.backend, GPUFMM_BACKEND_CUDA);
  double sum = 0;
  for (int s = 0; s < GPUFMM_FFT_STAGES; ++s) {
    EXPECT_GE(info.time[s], 0.0);
    sum += info.time[s];
  }
  EXPECT_GT(sum, 0.0);
  EXPECT_GT(info.gamma, 0.0);
  EXPECT_GT(info.beta, 0.0);
  gpufmm_array_destroy(a);
  gpufmm_array_destroy(b);
  gpufmm_fft_plan_destroy(h);
}
