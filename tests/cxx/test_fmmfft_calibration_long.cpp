// Prints the error table of src/cxx/fmmfft/params.cpp: for each expansion
// order Q, the largest relative L2 error of the whole transform against
// FFTW over several N and parameter sets (M_L >= 8, P up to 4096) and fresh seeds,
// complex128 and complex64. Label long (tools/gpu-check runs it); the
// numbers go into kErrDouble / kErrFloat by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "common/fft_check.hpp"
#include "gpufmm.h"

using namespace gpufmm_test;

TEST(FmmFftCalibration, ErrorPerOrder) {
  gpufmm_context_t ctx;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS);
  struct Case {
    int64_t n;
    int p, ml, b;
  };
  const Case cases[] = {{1 << 12, 32, 32, 2}, {1 << 14, 64, 8, 3}, {1 << 16, 16, 64, 4}, {1 << 18, 256, 16, 2},
                        {1 << 18, 8, 128, 3}, {3 << 15, 96, 16, 3}, {1 << 20, 1024, 8, 2},
                        {1 << 20, 4096, 16, 3}, {3 << 20, 3072, 32, 4}};
  std::printf("Q    complex128   complex64\n");
  for (int q = 2; q <= GPUFMM_FFT_MAX_Q; ++q) {
    double worst[2] = {0, 0};
    for (int d = 0; d < 2; ++d)
      for (const Case& c : cases) {
        gpufmm_fft_options_t o;
        gpufmm_fft_options_init(&o);
        o.n = c.n;
        o.dtype = d == 0 ? GPUFMM_COMPLEX128 : GPUFMM_COMPLEX64;
        o.p = c.p;
        o.ml = c.ml;
        o.b = c.b;
        o.q = q;
        gpufmm_fft_plan_t h;
        ASSERT_EQ(gpufmm_fft_plan_create(ctx, &o, &h), GPUFMM_SUCCESS) << gpufmm_last_error_message();
        for (int sign : {-1, 1}) {
          const auto x = random_signal(c.n, std::random_device{}(), d == 1);
          const auto y = fmmfft_host(h, x, sign, d == 1);
          worst[d] = std::max(worst[d], rel_l2_err(y, fftw_reference(x, sign)));
        }
        gpufmm_fft_plan_destroy(h);
      }
    std::printf("%2d   %.1e      %.1e\n", q, worst[0], worst[1]);
  }
  gpufmm_context_destroy(ctx);
}
