/* Several densities and Hessians from C (gpufmm_laplace_evaluate_nd and
 * gpufmm_laplace_direct_nd), in FMM3D's layouts.
 *
 * N random sources in the unit cube carry ND = 3 densities of charges,
 * interleaved as FMM3D stores charge(nd, n): density k of source j is
 * q[k + ND * j]. One plan, one evaluate gives, at every source (no self
 * term) and for every density, the potential pot[k + ND * i], the gradient
 * grad[k + ND * (c + 3 i)] and the Hessian hess[k + ND * (c + 6 i)] (c in
 * xx, yy, zz, xy, xz, yz). About 1000 points are checked against the direct
 * sum in the same layout; the potential and gradient are accurate to eps,
 * the Hessian to a few eps (docs/laplace_fmm.md, "Hessians and several
 * densities").
 *
 * Usage: laplace_hessian_c [N]   (or GPUFMM_EXAMPLE_N; default 100000).
 * Runs on the first GPU if any, else the CPU. Exits non-zero if an error is
 * above its bound. */
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

enum { ND = 3, NSAMPLE = 1000 };

/* Relative L2 error of the w values of sampled point idx[i] in a against
 * the w values of point i in ref (w = ND x components per point). */
static double rel_l2(const double* a, const int* idx, const double* ref, int n, int w) {
  double e = 0, r = 0;
  int i, k;
  for (i = 0; i < n; ++i)
    for (k = 0; k < w; ++k) {
      const double d = a[(int64_t)w * idx[i] + k] - ref[w * i + k];
      e += d * d;
      r += ref[w * i + k] * ref[w * i + k];
    }
  return sqrt(e / r);
}

int main(int argc, char** argv) {
  const double eps = 1e-6;
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : 100000), i;
  int k, ns, idx[NSAMPLE];
  double *src, *q, *pot, *grad, *hess, y[3 * NSAMPLE];
  double rp[ND * NSAMPLE], rg[3 * ND * NSAMPLE], rh[6 * ND * NSAMPLE], ep, eg, eh;
  gpufmm_context_t ctx;
  gpufmm_device_info_t dev;
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_plan_t plan;
  gpufmm_laplace_info_t info;

  if (n < 2) {
    fprintf(stderr, "usage: laplace_hessian_c [N > 1]\n");
    return 2;
  }
  src = malloc(3 * n * sizeof(double));
  q = malloc(ND * n * sizeof(double));
  pot = malloc(ND * n * sizeof(double));
  grad = malloc(3 * ND * n * sizeof(double));
  hess = malloc(6 * ND * n * sizeof(double));
  if (!src || !q || !pot || !grad || !hess) return 1;
  srand(2026);
  for (i = 0; i < 3 * n; ++i) src[i] = rand() / (RAND_MAX + 1.0);
  for (i = 0; i < ND * n; ++i) q[i] = 2.0 * rand() / RAND_MAX - 1.0; /* q[k + ND * j] */

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx));
  TRY(gpufmm_context_device_info(ctx, &dev));
  printf("Laplace FMM with Hessians, N = %lld points, %d densities, eps %.0e, on %s\n", (long long)n, ND, eps,
         dev.name);
  TRY(gpufmm_laplace_options_init(&opt));
  opt.eps = eps;
  TRY(gpufmm_laplace_plan_create(ctx, &opt, n, src, 0, NULL, &plan));
  TRY(gpufmm_laplace_evaluate_nd(plan, ND, q, NULL, pot, grad, hess)); /* no dipoles */
  TRY(gpufmm_laplace_plan_info(plan, &info));
  printf("plan: p = %d, l_max = %d; evaluate (all %d densities): %.4f s\n", info.p, info.l_max, ND, info.t_total);

  ns = n < NSAMPLE ? (int)n : NSAMPLE;
  for (k = 0; k < ns; ++k) {
    idx[k] = (int)(k * n / ns);
    for (i = 0; i < 3; ++i) y[3 * k + i] = src[3 * idx[k] + i];
  }
  TRY(gpufmm_laplace_direct_nd(ctx, GPUFMM_FLOAT64, ND, n, src, q, NULL, ns, y, rp, rg, rh));
  ep = rel_l2(pot, idx, rp, ns, ND);
  eg = rel_l2(grad, idx, rg, ns, 3 * ND);
  eh = rel_l2(hess, idx, rh, ns, 6 * ND);
  printf("relative L2 error at %d points: pot %.2e, grad %.2e, hess %.2e\n", ns, ep, eg, eh);
  printf("hess of density 0 at point 0: xx %.6g yy %.6g zz %.6g (trace %.2e: harmonic)\n", hess[0], hess[ND],
         hess[2 * ND], hess[0] + hess[ND] + hess[2 * ND]);

  TRY(gpufmm_laplace_plan_destroy(plan));
  TRY(gpufmm_context_destroy(ctx));
  free(src);
  free(q);
  free(pot);
  free(grad);
  free(hess);
  if (!(ep <= eps && eg <= eps && eh <= 5 * eps)) {
    fprintf(stderr, "laplace_hessian: an error is above its bound\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
