/* The FMM-accelerated FFT over the GPUs of one process (papers/002 secs.
 * 3-5; docs/fmmfft_mpi.md).
 *
 * One context per GPU (the largest power of two of the GPUs, at most 8; on
 * a machine with one GPU, or none, one context: then the plan is the plain
 * one-device plan). gpufmm_fft_plan_create_multi splits N into G blocks of
 * whole leaves, part g on GPU g; the parts exchange halos, the base level
 * and the 2D FFT's transposition through NCCL. gpufmm_fft_execute_host
 * takes all N elements; gpufmm_fft_execute_multi would take one device
 * array per GPU. The result is compared with the one-GPU plan of the same
 * parameters, and each part's stage times are printed.
 *
 * Usage: fft_multi_c [N]   (or GPUFMM_EXAMPLE_N; default 2^22). Exits
 * non-zero if the transforms differ by more than eps. */
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

int main(int argc, char** argv) {
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  const int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : (int64_t)1 << 22);
  int ndev = 0, G = 1, g;
  int64_t i;
  double *x, *y, *z, err = 0, norm = 0;
  gpufmm_context_t ctx[8];
  gpufmm_fft_options_t opt;
  gpufmm_fft_plan_t plan, one;
  gpufmm_fft_info_t info;

  if (n < 1) {
    fprintf(stderr, "usage: fft_multi_c [N > 0]\n");
    return 2;
  }
  TRY(gpufmm_device_count(&ndev));
  while (2 * G <= ndev && 2 * G <= 8) G *= 2;
  if (ndev == 0) {
    TRY(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx[0]));
  } else {
    for (g = 0; g < G; ++g) TRY(gpufmm_context_create(g, &ctx[g]));
  }
  printf("FMM-FFT, N = %lld, complex128, over %d %s\n", (long long)n, G, ndev ? "GPU(s)" : "CPU context");

  x = malloc(2 * n * sizeof(double)); /* re0 im0 re1 im1 ... */
  y = malloc(2 * n * sizeof(double));
  z = malloc(2 * n * sizeof(double));
  if (!x || !y || !z) return 1;
  srand(2026);
  for (i = 0; i < 2 * n; ++i) x[i] = 2.0 * rand() / RAND_MAX - 1.0;

  /* The options are those of a one-device plan; n is the global length. */
  TRY(gpufmm_fft_options_init(&opt));
  opt.n = n;
  opt.eps = 1e-12;
  TRY(gpufmm_fft_plan_create_multi(ctx, G, &opt, &plan));
  TRY(gpufmm_fft_execute_host(plan, x, y, GPUFMM_FFT_FORWARD)); /* warm-up */
  TRY(gpufmm_fft_execute_host(plan, x, y, GPUFMM_FFT_FORWARD));
  TRY(gpufmm_fft_plan_info(plan, &info));
  printf("parts %d of %lld elements: P %d, M_L %d, L %d, B %d, Q %d; %.4f s per transform (host copies included)\n",
         info.parts, (long long)info.n_local, info.p, info.ml, info.levels, info.base, info.q, info.t_total);
  printf("part 0: FMM stages %.4f s, 2D FFT %.4f s; values sent: input %lld, multipoles %lld, base %lld\n",
         info.time[GPUFMM_FFT_STAGE_S2M] + info.time[GPUFMM_FFT_STAGE_M2M] + info.time[GPUFMM_FFT_STAGE_M2L] +
             info.time[GPUFMM_FFT_STAGE_M2L_B] + info.time[GPUFMM_FFT_STAGE_REDUCE] +
             info.time[GPUFMM_FFT_STAGE_L2L] + info.time[GPUFMM_FFT_STAGE_L2T] + info.time[GPUFMM_FFT_STAGE_S2T],
         info.time[GPUFMM_FFT_STAGE_FFT_P] + info.time[GPUFMM_FFT_STAGE_FFT_M], (long long)info.sent_input,
         (long long)info.sent_multipoles, (long long)info.sent_base);

  /* The one-device plan with the same parameters. */
  opt.p = info.p;
  opt.ml = info.ml;
  opt.b = info.base;
  opt.q = info.q;
  TRY(gpufmm_fft_plan_create(ctx[0], &opt, &one));
  TRY(gpufmm_fft_execute_host(one, x, z, GPUFMM_FFT_FORWARD));
  for (i = 0; i < 2 * n; ++i) {
    err += (y[i] - z[i]) * (y[i] - z[i]);
    norm += z[i] * z[i];
  }
  err = sqrt(err / norm);
  printf("relative L2 difference from one device: %.2e (eps %.0e)\n", err, info.eps);

  TRY(gpufmm_fft_plan_destroy(one));
  TRY(gpufmm_fft_plan_destroy(plan)); /* plans first, then the contexts */
  for (g = 0; g < G; ++g) TRY(gpufmm_context_destroy(ctx[g]));
  free(x);
  free(y);
  free(z);
  if (!(err <= info.eps)) {
    fprintf(stderr, "fft_multi: the transforms differ by more than eps\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
