/* A user kernel from C: a Gaussian g(r) = exp(-r^2 / sigma^2), sigma = p[0],
 * in the treecode and the direct sum, on either backend.
 *
 * One gpufmm_kernel_t carries the kernel twice: as C expressions in r and
 * p[0..7] (value and d/dr), which a GPU compiles with NVRTC on first use,
 * and as C functions, which the CPU backend calls. The Gaussian is finite
 * at r = 0, so a point's own term is included (GPUFMM_KERNEL_R0_INCLUDED).
 * N random sources in the unit cube carry random charges in (-1, 1); the
 * one-shot treecode computes the potential and gradient at the sources with
 * eps = 1e-6, and 200 of the points are checked against the direct sum of
 * the same kernel.
 *
 * Usage: user_kernel_c [N]   (or GPUFMM_EXAMPLE_N; default 100000). Runs on
 * the first GPU if any, else the CPU. Exits non-zero if the error > eps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpufmm.h"

enum { NSAMPLE = 200 };

/* The CPU form: g(r) and dg/dr, p = the kernel's parameters. Pure
 * functions: the library calls them from several threads. */
static double gaussian(double r, const double* p) { return exp(-(r * r) / (p[0] * p[0])); }
static double gaussian_dr(double r, const double* p) { return -2.0 * r / (p[0] * p[0]) * gaussian(r, p); }

/* 1 when the call succeeded; else prints the library's message. */
static int ok(gpufmm_status_t status, const char* call) {
  if (status == GPUFMM_SUCCESS) return 1;
  fprintf(stderr, "%s failed: %s\n", call, gpufmm_last_error_message());
  return 0;
}

/* Relative L2 difference of x[stride * i + k] (every n / NSAMPLE-th point)
 * and ref[width * i + k]. */
static double sampled_error(const double* x, const double* ref, int64_t n, int width) {
  double e = 0, r = 0;
  int i, k;
  for (i = 0; i < NSAMPLE; ++i)
    for (k = 0; k < width; ++k) {
      const double d = x[width * (i * n / NSAMPLE) + k] - ref[width * i + k];
      e += d * d;
      r += ref[width * i + k] * ref[width * i + k];
    }
  return sqrt(e / r);
}

/* The treecode at the sources, then the check: 0 when within eps. */
static int run(gpufmm_context_t ctx, int64_t n, double* buf) {
  const double eps = 1e-6, sigma = 0.3;
  double *src = buf, *q = src + 3 * n, *pot = q + n, *grad = pot + n;
  double y[3 * NSAMPLE], ref_pot[NSAMPLE], ref_grad[3 * NSAMPLE], ep, eg;
  gpufmm_kernel_t kernel;
  int64_t i;

  for (i = 0; i < 3 * n; ++i) src[i] = rand() / (RAND_MAX + 1.0);
  for (i = 0; i < n; ++i) q[i] = 2.0 * rand() / RAND_MAX - 1.0;
  /* Both forms in one description: the expressions for a GPU, the functions
   * for the CPU. An expression that does not compile is reported, with the
   * compiler's log, by the first call that needs it on a GPU. */
  if (!ok(gpufmm_kernel_init_user(&kernel, 1, &sigma, "exp(-(r * r) / (p[0] * p[0]))",
                                  "-2 * r / (p[0] * p[0]) * exp(-(r * r) / (p[0] * p[0]))", gaussian,
                                  gaussian_dr, GPUFMM_KERNEL_R0_INCLUDED),
          "gpufmm_kernel_init_user"))
    return 1;
  if (!ok(gpufmm_treecode(ctx, &kernel, eps, n, src, q, 0, NULL, pot, grad), "gpufmm_treecode")) return 1;

  /* The direct sum of the same kernel at the sampled sources (their own
   * term included, as in the treecode). */
  for (i = 0; i < 3 * NSAMPLE; ++i) y[i] = src[3 * (i / 3 * n / NSAMPLE) + i % 3];
  if (!ok(gpufmm_direct(ctx, &kernel, GPUFMM_FLOAT64, n, src, q, NSAMPLE, y, ref_pot, ref_grad), "gpufmm_direct"))
    return 1;
  ep = sampled_error(pot, ref_pot, n, 1);
  eg = sampled_error(grad, ref_grad, n, 3);
  printf("relative L2 error on %d targets: pot %.2e, grad %.2e (eps %.0e)\n", NSAMPLE, ep, eg, eps);
  if (!(ep <= eps && eg <= eps)) {
    fprintf(stderr, "user_kernel: error above eps %.0e\n", eps);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* env = getenv("GPUFMM_EXAMPLE_N");
  const int64_t n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : 100000);
  gpufmm_context_t ctx;
  gpufmm_device_info_t dev;
  double* buf;
  int rc;

  if (n < NSAMPLE) {
    fprintf(stderr, "usage: user_kernel_c [N >= %d]\n", NSAMPLE);
    return 2;
  }
  buf = malloc(8 * n * sizeof(double)); /* sources, charges, potentials, gradients */
  if (buf == NULL || !ok(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx), "gpufmm_context_create")) return 1;
  if (!ok(gpufmm_context_device_info(ctx, &dev), "gpufmm_context_device_info")) return 1;
  printf("treecode, user kernel exp(-r^2/sigma^2), N = %lld points, on %s\n", (long long)n, dev.name);
  srand(2025);
  rc = run(ctx, n, buf);
  if (!ok(gpufmm_context_destroy(ctx), "gpufmm_context_destroy")) rc = 1;
  free(buf);
  if (rc == 0) printf("OK\n");
  return rc;
}
