/* The FMM-accelerated FFT from C (papers/002).
 *
 * N random complex numbers in [-1, 1]^2 are transformed forward,
 *     X[k] = sum_n x[n] exp(-2 pi i n k / N),
 * in complex128 to the default accuracy (relative L2 error eps = 2e-14).
 * The plan factors N = P M_L 2^L and picks P, M_L, the base level B and the
 * expansion order Q from eps and the roofline model of the device; the
 * transform is then P - 1 periodic 1D FMMs and an M x P 2D FFT. Sixteen
 * sampled outputs are checked against a direct DFT, and the time of each
 * stage is printed beside the model's.
 *
 * Usage: fft_c [N]   (or GPUFMM_EXAMPLE_N; default 2^20). N must be an
 * admitted size P M_L 2^L (every multiple of 4 from 8 whose odd part is at
 * most 65535 is one; the plan's message names the nearest ones otherwise).
 * Runs on the first GPU if any, else the CPU. Exits non-zero if the
 * error > eps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpufmm.h"

#define TRY(call)                                                            \
  do {                                                                       \
    gpufmm_status_t s_ = (call);                                             \
    if (s_ != GPUFMM_SUCCESS) {                                              \
      fprintf(stderr, "%s failed: %s\n", #call, gpufmm_last_error_message()); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

enum { NSAMPLE = 16 };

/* Output k of the forward DFT of x (N interleaved complex numbers), summed
 * in long double, with the twiddle of the exact index n k mod N. */
static void direct_dft(const double* x, int64_t n, int64_t k, double out[2]) {
  const long double two_pi = 6.283185307179586476925286766559L;
  long double re = 0, im = 0;
  int64_t j, idx = 0; /* idx = j k mod N */
  for (j = 0; j < n; ++j) {
    const long double t = two_pi * (long double)idx / (long double)n;
    const long double c = cosl(t), s = -sinl(t);
    re += x[2 * j] * c - x[2 * j + 1] * s;
    im += x[2 * j] * s + x[2 * j + 1] * c;
    idx = (idx + k) % n;
  }
  out[0] = (double)re;
  out[1] = (double)im;
}

int main(int argc, char** argv) {
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  const int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : (int64_t)1 << 20);
  int64_t i;
  int s;
  double *x, *y, ref[2], err = 0, norm = 0, total = 0;
  gpufmm_context_t ctx;
  gpufmm_device_info_t dev;
  gpufmm_fft_options_t opt;
  gpufmm_fft_plan_t plan;
  gpufmm_fft_info_t info;

  if (n < 1) {
    fprintf(stderr, "usage: fft_c [N > 0]\n");
    return 2;
  }
  x = malloc(2 * n * sizeof(double)); /* re0 im0 re1 im1 ... */
  y = malloc(2 * n * sizeof(double));
  if (!x || !y) return 1;
  srand(2025);
  for (i = 0; i < 2 * n; ++i) x[i] = 2.0 * rand() / RAND_MAX - 1.0;

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx)); /* first GPU, else the CPU */
  TRY(gpufmm_context_device_info(ctx, &dev));
  printf("FMM-FFT, N = %lld, complex128, on %s\n", (long long)n, dev.name);

  /* Plan once: the defaults are complex128, eps 2e-14, (P, M_L, B) from
   * the model, Q from eps, both directions. A plan serves any number of
   * transforms of length N. */
  TRY(gpufmm_fft_options_init(&opt));
  opt.n = n;
  TRY(gpufmm_fft_plan_create(ctx, &opt, &plan));

  /* Host arrays here; gpufmm_fft_execute does the same on gpufmm arrays
   * (data left on the device). Run twice: the first run warms up. */
  TRY(gpufmm_fft_execute_host(plan, x, y, GPUFMM_FFT_FORWARD));
  TRY(gpufmm_fft_execute_host(plan, x, y, GPUFMM_FFT_FORWARD));
  TRY(gpufmm_fft_plan_info(plan, &info));
  printf("parameters: P %d, M_L %d, L %d (M = %lld), B %d, Q %d; predicted error %.1e; plan %.3f s\n", info.p,
         info.ml, info.levels, (long long)info.m, info.base, info.q, info.predicted_error, info.plan_seconds);

  /* The direct DFT at NSAMPLE outputs spread over 0..N-1. */
  for (s = 0; s < NSAMPLE; ++s) {
    const int64_t k = (s * n / NSAMPLE + s) % n;
    direct_dft(x, n, k, ref);
    err += (y[2 * k] - ref[0]) * (y[2 * k] - ref[0]) + (y[2 * k + 1] - ref[1]) * (y[2 * k + 1] - ref[1]);
    norm += ref[0] * ref[0] + ref[1] * ref[1];
  }
  err = sqrt(err / norm);
  printf("relative L2 error on %d sampled outputs: %.2e (eps %.0e)\n", NSAMPLE, err, info.eps);

  /* The stage profile of the last transform against the roofline model
   * (model / time: the fraction of the roofline reached). */
  for (s = 0; s < GPUFMM_FFT_STAGES; ++s) total += info.time[s];
  printf("%-10s %10s %7s %10s\n", "stage", "ms", "%", "model ms");
  for (s = 0; s < GPUFMM_FFT_STAGES; ++s)
    printf("%-10s %10.4f %7.1f %10.4f\n", gpufmm_fft_stage_name(s), 1e3 * info.time[s],
           total > 0 ? 100 * info.time[s] / total : 0.0, 1e3 * info.model[s]);
  printf("%-10s %10.4f (with the host transfers %.4f ms)\n", "total", 1e3 * total, 1e3 * info.t_total);

  TRY(gpufmm_fft_plan_destroy(plan)); /* plans first, then the context */
  TRY(gpufmm_context_destroy(ctx));
  free(x);
  free(y);
  if (!(err <= info.eps)) {
    fprintf(stderr, "fft: error above eps\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
