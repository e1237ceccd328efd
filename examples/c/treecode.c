/* The barycentric Lagrange treecode from C: screened Coulomb (Yukawa).
 *
 * N random sources in the unit cube carry random charges in (-1, 1). The
 * treecode (papers/001) computes the Yukawa potential exp(-kappa r)/r,
 * kappa = 0.5, and its gradient at the sources (no self term) with a
 * requested relative L2 error eps = 1e-6; the plan picks theta and the
 * interpolation degree from eps. About 200 of the points are then checked
 * against the direct sum of the same kernel, computed at those points only.
 *
 * Usage: treecode_c [N]   (or GPUFMM_EXAMPLE_N; default 100000). Runs on the
 * first GPU if any, else the CPU. Exits non-zero if the error > eps. */
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
  const double eps = 1e-6, kappa = 0.5;
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : 100000), i;
  int k, ns, idx[NSAMPLE];
  double *src, *q, *pot, *grad, ysample[3 * NSAMPLE], ref_pot[NSAMPLE], ref_grad[3 * NSAMPLE];
  double ep, eg;
  gpufmm_context_t ctx;
  gpufmm_device_info_t dev;
  gpufmm_kernel_t yukawa;
  gpufmm_treecode_options_t opt;
  gpufmm_treecode_plan_t plan;
  gpufmm_treecode_info_t info;

  if (n < 1) {
    fprintf(stderr, "usage: treecode_c [N > 0]\n");
    return 2;
  }
  src = malloc(3 * n * sizeof(double));
  q = malloc(n * sizeof(double));
  pot = malloc(n * sizeof(double));
  grad = malloc(3 * n * sizeof(double));
  if (!src || !q || !pot || !grad) return 1;
  srand(2025);
  for (i = 0; i < 3 * n; ++i) src[i] = rand() / (RAND_MAX + 1.0); /* x0 y0 z0 x1 ... */
  for (i = 0; i < n; ++i) q[i] = 2.0 * rand() / RAND_MAX - 1.0;

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx)); /* first GPU, else the CPU */
  TRY(gpufmm_context_device_info(ctx, &dev));
  printf("treecode, Yukawa kappa = %g, N = %lld points, on %s\n", kappa, (long long)n, dev.name);

  /* The kernel is data: its type and parameters, checked by gpufmm_kernel_init. */
  TRY(gpufmm_kernel_init(&yukawa, GPUFMM_KERNEL_YUKAWA, 1, &kappa));
  TRY(gpufmm_treecode_options_init(&opt)); /* particle-cluster, double, theta and degree from eps */
  opt.kernel = yukawa;
  opt.eps = eps; /* for the potential and (opt.grad = 1, the default) the gradient */

  /* Plan once (trees, lists, proxies); targets NULL = at the sources. Each
   * evaluate takes new charges; here one. */
  TRY(gpufmm_treecode_plan_create(ctx, &opt, n, src, 0, NULL, &plan));
  TRY(gpufmm_treecode_evaluate(plan, q, pot, grad));
  TRY(gpufmm_treecode_plan_info(plan, &info));
  printf("plan: theta %.2f, degree %d, leaf %d, batch %d; %lld clusters, %lld with proxies; %.3f s\n",
         info.theta, info.degree, info.leaf_size, info.batch_size, (long long)info.source_clusters,
         (long long)info.source_proxy_clusters, info.plan_seconds);
  printf("evaluate: %.4f s (modified charges %.4f, near field and approximation %.4f)\n", info.t_total,
         info.t_precompute, info.t_compute);

  /* The direct sum at the sampled points only (they are sources: no self
   * term, as in the treecode). */
  ns = n < NSAMPLE ? (int)n : NSAMPLE;
  for (k = 0; k < ns; ++k) {
    idx[k] = (int)(k * n / ns);
    for (i = 0; i < 3; ++i) ysample[3 * k + i] = src[3 * idx[k] + i];
  }
  TRY(gpufmm_direct(ctx, &yukawa, GPUFMM_FLOAT64, n, src, q, ns, ysample, ref_pot, ref_grad));
  ep = rel_l2(pot, idx, ref_pot, ns, 1);
  eg = rel_l2(grad, idx, ref_grad, ns, 3);
  printf("relative L2 error on %d targets: pot %.2e, grad %.2e (eps %.0e)\n", ns, ep, eg, eps);

  TRY(gpufmm_treecode_plan_destroy(plan)); /* plans first, then the context */
  TRY(gpufmm_context_destroy(ctx));
  free(src);
  free(q);
  free(pot);
  free(grad);
  if (!(ep <= eps && eg <= eps)) {
    fprintf(stderr, "treecode: error above eps %.0e\n", eps);
    return 1;
  }
  printf("OK\n");
  return 0;
}
