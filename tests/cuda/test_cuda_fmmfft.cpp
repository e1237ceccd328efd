// The FMM-FFT on the GPU (label gpu; skipped without a device): against
// FFTW at the default and requested accuracies, both precisions and
// directions, sizes that are not powers of two, GPU == CPU to rounding with
// the same parameters, device arrays (in place too), non-finite input, the
// stage profile, and POST in cuFFT's load callback against POST fused.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/fft_check.hpp"
#include "common/gpu_cpu_fixture.hpp"
#include "gpufmm.h"

using namespace gpufmm_test;

namespace {

struct FmmFft : GpuCpuContexts {
  gpufmm_fft_plan_t plan(gpufmm_context_t ctx, int64_t n, int dtype, double eps, int p = 0, int ml = 0, int b = 0,
                         int q = 0, int post = GPUFMM_FFT_POST_FUSED) {
    gpufmm_fft_options_t o;
    gpufmm_fft_options_init(&o);
    o.n = n, o.dtype = dtype, o.eps = eps, o.p = p, o.ml = ml, o.b = b, o.q = q, o.post = post;
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

// GPUFMM_FFT_POST_CALLBACK: the near field writes the FMM outputs unscaled
// and cuFFT's load applies POST. The same parameters as the fused plan:
// the two agree to rounding and both meet the accuracy against FFTW, in
// both directions (the callback's sign changes between transforms), from
// host memory and on device arrays in place.
TEST_F(FmmFft, PostCallbackEqualsFused) {
  for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64})
    for (int64_t n : {int64_t(1) << 12, int64_t(1) << 18, int64_t(3) << 16}) {
      const bool single = dtype == GPUFMM_COMPLEX64;
      gpufmm_fft_plan_t hf = plan(gpu, n, dtype, 0);
      ASSERT_NE(hf, nullptr);
      gpufmm_fft_info_t info;
      gpufmm_fft_plan_info(hf, &info);
      gpufmm_fft_plan_t hc = plan(gpu, n, dtype, 0, info.p, info.ml, info.base, info.q, GPUFMM_FFT_POST_CALLBACK);
      ASSERT_NE(hc, nullptr);
      const auto x = random_signal(n, seed(), single);
      for (int sign : {-1, 1, -1}) {
        const auto yf = fmmfft_host(hf, x, sign, single);
        const auto yc = fmmfft_host(hc, x, sign, single);
        const double e = rel_l2_err(yc, fftw_reference(x, sign));
        std::printf("n %lld %s %+d P %d M_L %d callback vs fused %.2e, vs FFTW %.2e\n", (long long)n,
                    single ? "c64" : "c128", sign, info.p, info.ml, rel_l2_err(yc, yf), e);
        // float: the callback rounds the FMM output to float before POST, and
        // its first FFT runs out of place (another cuFFT kernel); each result
        // is within 4e-7 of the exact transform.
        EXPECT_LE(rel_l2_err(yc, yf), single ? 6e-7 : 1e-15) << n << " sign " << sign;
        EXPECT_LE(e, single ? 4e-7 : 2e-14) << n << " sign " << sign;
      }
      if (!single) {  // device arrays, in place
        gpufmm_array_t a = nullptr;
        int64_t dims[1] = {n};
        ASSERT_EQ(gpufmm_array_create(gpu, GPUFMM_COMPLEX128, 1, dims, &a), GPUFMM_SUCCESS);
        ASSERT_EQ(gpufmm_array_upload(a, x.data(), n), GPUFMM_SUCCESS);
        ASSERT_EQ(gpufmm_fft_execute(hc, a, a, 1), GPUFMM_SUCCESS) << gpufmm_last_error_message();
        std::vector<double> y(x.size());
        ASSERT_EQ(gpufmm_array_download(a, y.data(), n), GPUFMM_SUCCESS);
        EXPECT_EQ(y, fmmfft_host(hc, x, 1, false)) << "in place";
        gpufmm_array_destroy(a);
      }
      gpufmm_fft_plan_destroy(hf);
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

// A plan over several GPUs of this process (NCCL): two contexts on one GPU
// are refused (this runs on one GPU too).
TEST_F(FmmFft, MultiGpuRefusesOneGpuTwice) {
  gpufmm_context_t c[2] = {gpu, gpu};
  gpufmm_fft_options_t o;
  gpufmm_fft_options_init(&o);
  o.n = 1 << 12;
  gpufmm_fft_plan_t h = nullptr;
  EXPECT_EQ(gpufmm_fft_plan_create_multi(c, 2, &o, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("same GPU"), std::string::npos)
      << gpufmm_last_error_message();
}

// Over G = 2 or 4 GPUs (skipped with fewer): equal to the one-GPU plan with
// the same parameters to rounding and within eps of FFTW, host and device
// arrays, and a NaN on one part failing every part with the output
// untouched and the plan usable afterwards; POST in cuFFT's load (the
// first transform runs along p there) equal to POST fused.
TEST_F(FmmFft, MultiGpuEqualsOneGpu) {
  int ndev = 0;
  gpufmm_device_count(&ndev);
  if (ndev < 2) GTEST_SKIP() << "one GPU";
  const int G = ndev >= 4 ? 4 : 2;
  std::vector<gpufmm_context_t> c(G, nullptr);
  for (int g = 0; g < G; ++g) ASSERT_EQ(gpufmm_context_create(g, &c[size_t(g)]), GPUFMM_SUCCESS);
  for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64})
    for (int64_t n : {int64_t(1) << 16, int64_t(1) << 20, int64_t(3) << 16}) {
      const bool single = dtype == GPUFMM_COMPLEX64;
      gpufmm_fft_options_t o;
      gpufmm_fft_options_init(&o);
      o.n = n, o.dtype = dtype, o.eps = single ? 0 : 1e-11;
      gpufmm_fft_plan_t h = nullptr;
      ASSERT_EQ(gpufmm_fft_plan_create_multi(c.data(), G, &o, &h), GPUFMM_SUCCESS) << gpufmm_last_error_message();
      gpufmm_fft_info_t info;
      ASSERT_EQ(gpufmm_fft_plan_info(h, &info), GPUFMM_SUCCESS);
      EXPECT_EQ(info.ranks, G);
      EXPECT_EQ(info.n_local, n / G);
      gpufmm_fft_plan_t ref = plan(c[0], n, dtype, o.eps, info.p, info.ml, info.base, info.q);
      gpufmm_fft_options_t oc = o;
      oc.p = info.p, oc.ml = info.ml, oc.b = info.base, oc.q = info.q, oc.post = GPUFMM_FFT_POST_CALLBACK;
      gpufmm_fft_plan_t hc = nullptr;
      ASSERT_EQ(gpufmm_fft_plan_create_multi(c.data(), G, &oc, &hc), GPUFMM_SUCCESS) << gpufmm_last_error_message();
      const auto x = random_signal(n, seed(), single);
      for (int sign : {-1, 1}) {
        const auto y = fmmfft_host(h, x, sign, single);
        const double same = rel_l2_err(y, fmmfft_host(ref, x, sign, single));
        const double err = rel_l2_err(y, fftw_reference(x, sign));
        std::printf("G %d n %lld %s %+d P %d M_L %d L %d B %d Q %d: vs one GPU %.1e, vs FFTW %.2e\n", G,
                    (long long)n, single ? "c64" : "c128", sign, info.p, info.ml, info.levels, info.base, info.q,
                    same, err);
        EXPECT_LE(same, single ? 2e-6 : 2e-14);
        EXPECT_LE(err, info.eps);
        EXPECT_LE(rel_l2_err(fmmfft_host(hc, x, sign, single), y), single ? 6e-7 : 1e-15) << "POST callback";
      }
      // Device arrays, one per GPU, in place.
      const int64_t nl = n / G;
      const size_t es = single ? 4 : 8;
      std::vector<gpufmm_array_t> a(G, nullptr);
      std::vector<char> xb(es * 2 * size_t(n)), yb(xb.size());
      for (int64_t i = 0; i < 2 * n; ++i) {
        if (single)
          reinterpret_cast<float*>(xb.data())[i] = float(x[size_t(i)]);
        else
          reinterpret_cast<double*>(xb.data())[i] = x[size_t(i)];
      }
      for (int g = 0; g < G; ++g) {
        int64_t dims[1] = {nl};
        ASSERT_EQ(gpufmm_array_create(c[size_t(g)], gpufmm_dtype_t(dtype), 1, dims, &a[size_t(g)]), GPUFMM_SUCCESS);
        ASSERT_EQ(gpufmm_array_upload(a[size_t(g)], xb.data() + es * 2 * size_t(nl * g), nl), GPUFMM_SUCCESS);
      }
      ASSERT_EQ(gpufmm_fft_execute_multi(h, a.data(), a.data(), -1), GPUFMM_SUCCESS) << gpufmm_last_error_message();
      for (int g = 0; g < G; ++g)
        ASSERT_EQ(gpufmm_array_download(a[size_t(g)], yb.data() + es * 2 * size_t(nl * g), nl), GPUFMM_SUCCESS);
      std::vector<double> ya(2 * size_t(n));
      for (int64_t i = 0; i < 2 * n; ++i)
        ya[size_t(i)] = single ? reinterpret_cast<float*>(yb.data())[i] : reinterpret_cast<double*>(yb.data())[i];
      EXPECT_LE(rel_l2_err(ya, fmmfft_host(h, x, -1, single)), single ? 2e-6 : 2e-14) << "device arrays";
      EXPECT_EQ(gpufmm_fft_execute(h, a[0], a[0], -1), GPUFMM_ERROR_INVALID_ARGUMENT);
      for (auto& ai : a) gpufmm_array_destroy(ai);
      // A NaN in part 1's block.
      if (!single) {
        std::vector<double> xn(x), yn(x.size(), -7.0);
        xn[2 * size_t(nl) + 3] = std::nan("");
        EXPECT_EQ(gpufmm_fft_execute_host(h, xn.data(), yn.data(), -1), GPUFMM_ERROR_INVALID_ARGUMENT);
        const std::string m = gpufmm_last_error_message();
        EXPECT_NE(m.find("GPU part 1"), std::string::npos) << m;
        EXPECT_NE(m.find("element 1"), std::string::npos) << m;
        for (double v : yn) ASSERT_EQ(v, -7.0) << "output untouched";
        EXPECT_EQ(gpufmm_fft_execute_host(h, x.data(), yn.data(), -1), GPUFMM_SUCCESS) << gpufmm_last_error_message();
      }
      gpufmm_fft_plan_destroy(ref);
      gpufmm_fft_plan_destroy(hc);
      gpufmm_fft_plan_destroy(h);
    }
  for (auto ci : c) gpufmm_context_destroy(ci);
}
