/* Device arrays from C: keep data on the GPU (or the CPU backend) across
 * calls, compute there, bring back only results.
 *
 *   y <- 2 x + y ;  d = x . y ;  C = A B   (all on the device)
 *
 * Exits non-zero if a result differs from the host computation. */
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

enum { N = 1000, M = 64, K = 48, P = 32 };

int main(void) {
  static double x[N], y[N], y_ref[N], A[M * K], B[K * P], C[M * P];
  const double two = 2.0, one = 1.0, zero = 0.0;
  double dot = 0, dot_ref = 0, err = 0;
  int i, j, l;
  gpufmm_context_t ctx;
  gpufmm_device_info_t info;
  gpufmm_array_t dx, dy, dA, dB, dC;
  int64_t n1[1] = {N}, a2[2] = {M, K}, b2[2] = {K, P}, c2[2] = {M, P};

  srand(12345);
  for (i = 0; i < N; ++i) {
    x[i] = rand() / (double)RAND_MAX;
    y[i] = rand() / (double)RAND_MAX;
  }
  for (i = 0; i < M * K; ++i) A[i] = rand() / (double)RAND_MAX - 0.5;
  for (i = 0; i < K * P; ++i) B[i] = rand() / (double)RAND_MAX - 0.5;

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx)); /* GPU if any */
  TRY(gpufmm_context_device_info(ctx, &info));
  printf("gpufmm %s on %s\n", gpufmm_version(NULL, NULL, NULL), info.name);

  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n1, &dx));
  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, n1, &dy));
  TRY(gpufmm_array_upload(dx, x, N));
  TRY(gpufmm_array_upload(dy, y, N));
  TRY(gpufmm_array_axpy(&two, dx, dy));      /* y <- 2x + y on the device */
  TRY(gpufmm_array_dot(dx, dy, &dot));       /* x . y                     */
  TRY(gpufmm_array_download(dy, y_ref, N));  /* reuse y_ref as the result */

  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, a2, &dA));
  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, b2, &dB));
  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, c2, &dC));
  TRY(gpufmm_array_upload(dA, A, M * K));
  TRY(gpufmm_array_upload(dB, B, K * P));
  TRY(gpufmm_array_gemm(GPUFMM_OP_N, GPUFMM_OP_N, &one, dA, dB, &zero, dC));
  TRY(gpufmm_array_download(dC, C, M * P));

  for (i = 0; i < N; ++i) {
    double yi = 2 * x[i] + y[i];
    err = fmax(err, fabs(y_ref[i] - yi));
    dot_ref += x[i] * yi;
  }
  err = fmax(err, fabs(dot - dot_ref) / fabs(dot_ref));
  for (i = 0; i < M; ++i)
    for (j = 0; j < P; ++j) {
      double s = 0;
      for (l = 0; l < K; ++l) s += A[i + l * M] * B[l + j * K];
      err = fmax(err, fabs(C[i + j * M] - s));
    }
  printf("axpy, dot and gemm on the device: max error %.2e\n", err);

  gpufmm_array_destroy(dx);
  gpufmm_array_destroy(dy);
  gpufmm_array_destroy(dA);
  gpufmm_array_destroy(dB);
  gpufmm_array_destroy(dC);
  gpufmm_context_destroy(ctx);
  return err < 1e-12 ? 0 : 1;
}
