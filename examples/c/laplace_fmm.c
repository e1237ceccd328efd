/* The Laplace FMM from C: plan once, evaluate many times.
 *
 * N random sources in the unit cube carry random charges; the FMM computes
 * the potential and its gradient at the sources (no self term) with a
 * requested relative L2 error eps = 1e-6. The plan is built once and
 * evaluated twice with new charges; about 200 of the points are checked
 * against the direct sum, computed at those points only.
 *
 * Usage: laplace_fmm_c [N]   (or GPUFMM_EXAMPLE_N; default 100000). Runs on
 * the first GPU if any, else the CPU. Exits non-zero if the error > eps. */
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

enum { NSAMPLE = 200 };

/* Relative L2 error of a[width * idx[i] + k] against ref[width * i + k],
 * i < n, k < width. */
static double rel_l2(const double* a, const int* idx, const double* ref, int n, int width) {
  double e = 0, r = 0;
  int i, k;
  for (i = 0; i < n; ++i)
    for (k = 0; k < width; ++k) {
      const double d = a[(int64_t)width * idx[i] + k] - ref[width * i + k];
      e += d * d;
      r += ref[width * i + k] * ref[width * i + k];
    }
  return sqrt(e / r);
}

int main(int argc, char** argv) {
  const double eps = 1e-6;
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : 100000), i;
  int round, k, ns, idx[NSAMPLE];
  double *src, *q, *pot, *grad, ysample[3 * NSAMPLE], ref_pot[NSAMPLE], ref_grad[3 * NSAMPLE];
  double worst = 0;
  gpufmm_context_t ctx;
  gpufmm_device_info_t dev;
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_plan_t plan;
  gpufmm_laplace_info_t info;

  if (n < 1) {
    fprintf(stderr, "usage: laplace_fmm_c [N > 0]\n");
    return 2;
  }
  src = malloc(3 * n * sizeof(double));
  q = malloc(n * sizeof(double));
  pot = malloc(n * sizeof(double));
  grad = malloc(3 * n * sizeof(double));
  if (!src || !q || !pot || !grad) return 1;
  srand(2025);
  for (i = 0; i < 3 * n; ++i) src[i] = rand() / (RAND_MAX + 1.0); /* x0 y0 z0 x1 ... */

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx)); /* first GPU, else the CPU */
  TRY(gpufmm_context_device_info(ctx, &dev));
  printf("Laplace FMM, N = %lld points, on %s\n", (long long)n, dev.name);

  /* Plan once: octree, lists, translation data. targets NULL = at the sources.
   * The evaluates pass charges only: the plan's p is then calibrated on
   * charges (test evaluates at plan creation, the smallest p whose measured
   * error is within eps with a margin; opt.calibrate = 0 takes the
   * worst-case model's p instead). */
  TRY(gpufmm_laplace_options_init(&opt));
  opt.eps = eps;
  opt.densities = GPUFMM_LAPLACE_DENSITIES_CHARGES;
  TRY(gpufmm_laplace_plan_create(ctx, &opt, n, src, 0, NULL, &plan));
  TRY(gpufmm_laplace_plan_info(plan, &info));
  printf("plan: p = %d, l_max = %d, %lld boxes, built in %.3f s (%d test evaluates measured %.2e)\n", info.p,
         info.l_max, (long long)info.source_boxes, info.plan_seconds, info.calibration_evaluates,
         info.measured_eps);

  /* The sample of targets checked against the direct sum. */
  ns = n < NSAMPLE ? (int)n : NSAMPLE;
  for (k = 0; k < ns; ++k) {
    idx[k] = (int)(k * n / ns);
    for (i = 0; i < 3; ++i) ysample[3 * k + i] = src[3 * idx[k] + i];
  }

  for (round = 1; round <= 2; ++round) {
    double ep, eg;
    for (i = 0; i < n; ++i) q[i] = 2.0 * rand() / RAND_MAX - 1.0; /* new charges, same plan */
    TRY(gpufmm_laplace_evaluate(plan, q, NULL, pot, grad));      /* no dipoles */
    TRY(gpufmm_laplace_plan_info(plan, &info));
    /* Direct sum at the sampled points only (they are sources: no self term). */
    TRY(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, n, src, q, NULL, ns, ysample, ref_pot, ref_grad));
    ep = rel_l2(pot, idx, ref_pot, ns, 1);
    eg = rel_l2(grad, idx, ref_grad, ns, 3);
    worst = fmax(worst, fmax(ep, eg));
    printf("evaluate %d: %.4f s; relative L2 error pot %.2e, grad %.2e (%d targets)\n", round,
           info.t_total, ep, eg, ns);
  }
  printf("last evaluate, seconds: S exp %.4f, up trans %.4f, down trans %.4f, R eval %.4f, "
         "sparse %.4f, total %.4f\n",
         info.t_p2m, info.t_upward, info.t_downward, info.t_l2p, info.t_p2p, info.t_total);

  TRY(gpufmm_laplace_plan_destroy(plan)); /* plans first, then the context */
  TRY(gpufmm_context_destroy(ctx));
  free(src);
  free(q);
  free(pot);
  free(grad);
  if (!(worst <= eps)) {
    fprintf(stderr, "laplace_fmm: error %.2e above eps %.0e\n", worst, eps);
    return 1;
  }
  printf("OK\n");
  return 0;
}
