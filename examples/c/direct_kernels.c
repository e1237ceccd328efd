/* Direct sums of every pair kernel from C: screened Coulomb (Yukawa) and
 * regularized kernels through one call, gpufmm_direct, on the GPU if there
 * is one. Also the same sum with the data already on the device
 * (gpufmm_direct_arrays).
 *
 * Exits non-zero if a check fails: the Yukawa potential with kappa = 0
 * equals the Laplace one, the regularized Laplace potential tends to the
 * Laplace one as delta -> 0, and the arrays variant gives the host-pointer
 * values. */
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

static double rel_diff(const double* a, const double* b, int64_t n) {
  double e = 0, r = 0;
  int64_t i;
  for (i = 0; i < n; ++i) {
    e += (a[i] - b[i]) * (a[i] - b[i]);
    r += b[i] * b[i];
  }
  return sqrt(e / r);
}

int main(void) {
  const int64_t n = 4000;
  double *xyz = malloc(sizeof(double) * 3 * n), *q = malloc(sizeof(double) * n);
  double *lap = malloc(sizeof(double) * n), *pot = malloc(sizeof(double) * n);
  double *grad = malloc(sizeof(double) * 3 * n), *pot2 = malloc(sizeof(double) * n);
  double params[2];
  gpufmm_context_t ctx;
  gpufmm_kernel_t laplace, yukawa, reg;
  gpufmm_array_t d_xyz, d_q, d_pot;
  int64_t i, dims[1];
  double e;
  int failed = 0;

  srand(11);
  for (i = 0; i < 3 * n; ++i) xyz[i] = rand() / (double)RAND_MAX;
  for (i = 0; i < n; ++i) q[i] = 2.0 * rand() / (double)RAND_MAX - 1.0;

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx));
  TRY(gpufmm_kernel_init(&laplace, GPUFMM_KERNEL_LAPLACE, 0, NULL));
  /* targets NULL: potentials at the sources, each point's own term left out */
  TRY(gpufmm_direct(ctx, &laplace, GPUFMM_FLOAT64, n, xyz, q, 0, NULL, lap, NULL));

  params[0] = 0.0; /* kappa = 0: the Laplace kernel */
  TRY(gpufmm_kernel_init(&yukawa, GPUFMM_KERNEL_YUKAWA, 1, params));
  TRY(gpufmm_direct(ctx, &yukawa, GPUFMM_FLOAT64, n, xyz, q, 0, NULL, pot, NULL));
  e = rel_diff(pot, lap, n);
  printf("Yukawa kappa = 0 vs Laplace:            %.2e\n", e);
  failed |= e > 1e-13;

  params[0] = 2.0; /* screened: potential and gradient */
  TRY(gpufmm_kernel_init(&yukawa, GPUFMM_KERNEL_YUKAWA, 1, params));
  TRY(gpufmm_direct(ctx, &yukawa, GPUFMM_FLOAT64, n, xyz, q, 0, NULL, pot, grad));
  printf("Yukawa kappa = 2: pot[0] = %.6f, grad[0] = (%.4f, %.4f, %.4f)\n", pot[0], grad[0], grad[1], grad[2]);

  params[0] = 1e-7; /* regularized with a tiny delta: close to Laplace */
  TRY(gpufmm_kernel_init(&reg, GPUFMM_KERNEL_REGULARIZED_LAPLACE, 1, params));
  TRY(gpufmm_direct(ctx, &reg, GPUFMM_FLOAT64, n, xyz, q, n, xyz, pot, NULL)); /* self terms q/delta included */
  for (i = 0; i < n; ++i) pot[i] -= q[i] / params[0];                          /* remove them */
  e = rel_diff(pot, lap, n);
  printf("regularized Laplace delta = 1e-7 vs Laplace: %.2e\n", e);
  failed |= e > 1e-6;

  /* The same sum on device arrays: the data stay on the device. */
  dims[0] = 3 * n;
  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, dims, &d_xyz));
  dims[0] = n;
  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, dims, &d_q));
  TRY(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, dims, &d_pot));
  TRY(gpufmm_array_upload(d_xyz, xyz, 3 * n));
  TRY(gpufmm_array_upload(d_q, q, n));
  TRY(gpufmm_direct(ctx, &yukawa, GPUFMM_FLOAT32, n, xyz, q, 0, NULL, pot, NULL));
  TRY(gpufmm_direct_arrays(&yukawa, GPUFMM_FLOAT32, d_xyz, d_q, NULL, d_pot, NULL));
  TRY(gpufmm_array_download(d_pot, pot2, n));
  e = rel_diff(pot2, pot, n);
  printf("arrays vs host pointers (float):        %.2e\n", e);
  failed |= e != 0.0;

  gpufmm_array_destroy(d_xyz);
  gpufmm_array_destroy(d_q);
  gpufmm_array_destroy(d_pot);
  gpufmm_context_destroy(ctx);
  free(xyz), free(q), free(lap), free(pot), free(grad), free(pot2);
  printf(failed ? "FAILED\n" : "ok\n");
  return failed;
}
