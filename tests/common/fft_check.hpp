// Shared by the FMM-FFT tests (CPU and GPU): random input, the reference
// DFT (FFTW in double, or a direct long-double DFT at small N), and one
// transform through the C API with the achieved relative L2 error.
#pragma once

#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

#include "gpufmm.h"

namespace gpufmm_test {

// 2N reals uniform in [-1, 1] (interleaved complex), rounded to float when
// `single` (so that the double reference sees the same input).
inline std::vector<double> random_signal(int64_t n, uint64_t seed, bool single) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(2 * size_t(n));
  for (auto& v : x) v = single ? double(float(u(rng))) : u(rng);
  return x;
}

// FFTW's transform of x (double), sign -1 forward, +1 inverse.
inline std::vector<double> fftw_reference(const std::vector<double>& x, int sign) {
  const int n = int(x.size() / 2);
  std::vector<double> in(x), out(x.size());
  fftw_plan p = fftw_plan_dft_1d(n, reinterpret_cast<fftw_complex*>(in.data()),
                                 reinterpret_cast<fftw_complex*>(out.data()), sign, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

// The DFT by its definition in long double (small n).
inline std::vector<double> direct_dft(const std::vector<double>& x, int sign) {
  const int64_t n = int64_t(x.size() / 2);
  std::vector<double> y(x.size());
  for (int64_t k = 0; k < n; ++k) {
    long double re = 0, im = 0;
    for (int64_t j = 0; j < n; ++j) {
      const long double a = sign * 2 * 3.141592653589793238462643383279502884L * ((j * k) % n) / n;
      const long double c = std::cos(a), s = std::sin(a);
      re += x[2 * j] * c - x[2 * j + 1] * s;
      im += x[2 * j] * s + x[2 * j + 1] * c;
    }
    y[2 * k] = double(re);
    y[2 * k + 1] = double(im);
  }
  return y;
}

inline double rel_l2_err(const std::vector<double>& a, const std::vector<double>& ref) {
  long double e = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    e += (long double)(a[i] - ref[i]) * (a[i] - ref[i]);
    r += (long double)ref[i] * ref[i];
  }
  return double(std::sqrt(e / r));
}

// One transform of x (2N reals) through gpufmm_fft_execute_host with a plan
// of `opt`; the result in double.
inline std::vector<double> fmmfft_host(gpufmm_fft_plan_t plan, const std::vector<double>& x, int sign, bool single) {
  std::vector<double> y(x.size());
  if (single) {
    std::vector<float> xf(x.begin(), x.end()), yf(x.size());
    EXPECT_EQ(gpufmm_fft_execute_host(plan, xf.data(), yf.data(), sign), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    for (size_t i = 0; i < y.size(); ++i) y[i] = yf[i];
  } else {
    EXPECT_EQ(gpufmm_fft_execute_host(plan, x.data(), y.data(), sign), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  }
  return y;
}

}  // namespace gpufmm_test
