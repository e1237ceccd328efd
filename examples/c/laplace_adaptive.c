/* The Laplace FMM on clustered points: the uniform and the adaptive octree.
 *
 * N sources in a Plummer-like cluster (density falling as r^-5 around the
 * centre of the unit cube, a galaxy model) carry random charges. The same
 * points are planned three times, with options.tree = UNIFORM (one depth
 * for every leaf), ADAPTIVE (boxes split while they hold more than s_max
 * points) and AUTO (the default: adaptive where the points cluster), and
 * each plan is evaluated once; about 200 points are checked against the
 * direct sum.
 *
 * Usage: laplace_adaptive_c [N]   (or GPUFMM_EXAMPLE_N; default 200000).
 * Runs on the first GPU if any, else the CPU. Exits non-zero if an error >
 * eps. */
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

static double uniform01(void) { return (rand() + 0.5) / (RAND_MAX + 1.0); }

int main(int argc, char** argv) {
  const double eps = 1e-6;
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  const int trees[3] = {GPUFMM_LAPLACE_TREE_UNIFORM, GPUFMM_LAPLACE_TREE_ADAPTIVE, GPUFMM_LAPLACE_TREE_AUTO};
  const char* names[3] = {"uniform ", "adaptive", "auto    "};
  int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : 200000), i;
  int t, k, ns, idx[NSAMPLE];
  double *src, *q, *pot, *grad, ysample[3 * NSAMPLE], ref_pot[NSAMPLE], ref_grad[3 * NSAMPLE];
  double worst = 0;
  gpufmm_context_t ctx;
  gpufmm_device_info_t dev;

  if (n < 1) {
    fprintf(stderr, "usage: laplace_adaptive_c [N > 0]\n");
    return 2;
  }
  src = malloc(3 * n * sizeof(double));
  q = malloc(n * sizeof(double));
  pot = malloc(n * sizeof(double));
  grad = malloc(3 * n * sizeof(double));
  if (!src || !q || !pot || !grad) return 1;
  srand(2026);
  for (i = 0; i < n; ++i) { /* Plummer radii (scale 0.02, cut at 20 scale radii), random directions */
    double r, z, phi;
    do r = 1.0 / sqrt(pow(uniform01(), -2.0 / 3.0) - 1.0); while (r > 20.0);
    z = 2.0 * uniform01() - 1.0;
    phi = 6.283185307179586 * uniform01();
    src[3 * i] = 0.5 + 0.02 * r * sqrt(1.0 - z * z) * cos(phi);
    src[3 * i + 1] = 0.5 + 0.02 * r * sqrt(1.0 - z * z) * sin(phi);
    src[3 * i + 2] = 0.5 + 0.02 * r * z;
    q[i] = 2.0 * uniform01() - 1.0;
  }
  ns = n < NSAMPLE ? (int)n : NSAMPLE;
  for (k = 0; k < ns; ++k) {
    idx[k] = (int)(k * n / ns);
    for (i = 0; i < 3; ++i) ysample[3 * k + i] = src[3 * idx[k] + i];
  }

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx));
  TRY(gpufmm_context_device_info(ctx, &dev));
  printf("Laplace FMM on a Plummer cluster, N = %lld points, eps %.0e, on %s\n", (long long)n, eps, dev.name);
  TRY(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, n, src, q, NULL, ns, ysample, ref_pot, ref_grad));

  for (t = 0; t < 3; ++t) {
    gpufmm_laplace_options_t opt;
    gpufmm_laplace_plan_t plan;
    gpufmm_laplace_info_t info;
    double e = 0, r = 0, eg = 0, rg = 0;
    TRY(gpufmm_laplace_options_init(&opt));
    opt.eps = eps;
    opt.tree = trees[t]; /* s_max stays -1: the library's default */
    TRY(gpufmm_laplace_plan_create(ctx, &opt, n, src, 0, NULL, &plan));
    TRY(gpufmm_laplace_evaluate(plan, q, NULL, pot, grad)); /* the first evaluate warms up */
    TRY(gpufmm_laplace_evaluate(plan, q, NULL, pot, grad));
    TRY(gpufmm_laplace_plan_info(plan, &info));
    for (k = 0; k < ns; ++k) {
      e += (pot[idx[k]] - ref_pot[k]) * (pot[idx[k]] - ref_pot[k]);
      r += ref_pot[k] * ref_pot[k];
      for (i = 0; i < 3; ++i) {
        const double d = grad[3 * idx[k] + i] - ref_grad[3 * k + i];
        eg += d * d;
        rg += ref_grad[3 * k + i] * ref_grad[3 * k + i];
      }
    }
    e = sqrt(e / r);
    eg = sqrt(eg / rg);
    worst = fmax(worst, fmax(e, eg));
    printf("tree %s: %s tree, l_max %2d, %7lld boxes, P2P pairs %.2e; plan %.3f s, evaluate %.4f s; "
           "error pot %.1e grad %.1e\n",
           names[t], info.adaptive ? "adaptive" : "uniform ", info.l_max, (long long)info.source_boxes,
           (double)info.p2p_pairs, info.plan_seconds, info.t_total, e, eg);
    TRY(gpufmm_laplace_plan_destroy(plan));
  }
  TRY(gpufmm_context_destroy(ctx));
  free(src);
  free(q);
  free(pot);
  free(grad);
  if (!(worst <= eps)) {
    fprintf(stderr, "laplace_adaptive: error %.2e above eps %.0e\n", worst, eps);
    return 1;
  }
  printf("OK\n");
  return 0;
}
