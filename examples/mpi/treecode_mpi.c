/* The treecode across MPI ranks from C (gpufmm_mpi.h): Coulomb potential and
 * gradient of N random charges in the unit cube, each rank holding its own
 * share of the points, in any distribution (here every rank's points are
 * spread over the whole cube, so that the library's redistribution has work
 * to do).
 *
 * Every rank passes its points; the plan partitions them by recursive
 * coordinate bisection, builds each rank's trees over the points it owns
 * and fetches the other ranks' clusters and points it needs (one-sided
 * MPI); every rank gets its own targets' results in its own order. Each
 * rank then checks 50 of its targets against the direct sum over all
 * sources (gathered for the check only) and rank 0 prints the per-phase
 * times and the locally essential tree sizes.
 *
 * Usage: mpirun -np P treecode_mpi_c [N]   (or GPUFMM_EXAMPLE_N; default
 * 200000 over all ranks). Each rank runs on GPU (rank mod GPUs) when there
 * are GPUs, else the CPU. Exits non-zero if the error > eps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpufmm_mpi.h"

#define TRY(call)                                                                         \
  do {                                                                                    \
    gpufmm_status_t s_ = (call);                                                          \
    if (s_ != GPUFMM_SUCCESS) {                                                           \
      fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, gpufmm_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

enum { NSAMPLE = 50 };

/* A reproducible uniform number in [0, 1) from a 64-bit state. */
static double next(unsigned long long* s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

int main(int argc, char** argv) {
  const double eps = 1e-6;
  int rank, size, ndev = 0, i, k, r;
  const char* env;
  long long ntotal;
  int64_t n, nall;
  unsigned long long state;
  double *src, *q, *pot, *grad, *all_src, *all_q;
  double err_pot = 0, nrm_pot = 0, err_grad = 0, nrm_grad = 0, sums[4];
  int *counts, *displs;
  gpufmm_context_t ctx;
  gpufmm_treecode_options_t opt;
  gpufmm_treecode_plan_t plan;
  gpufmm_treecode_info_t info;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  env = getenv("GPUFMM_EXAMPLE_N");
  ntotal = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : 200000);
  if (ntotal < size) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np P treecode_mpi_c [N >= P]\n");
    MPI_Finalize();
    return 2;
  }
  n = ntotal / size + (rank < ntotal % size ? 1 : 0);

  /* This rank's points and charges. */
  src = malloc(sizeof(double) * 3 * (size_t)n);
  q = malloc(sizeof(double) * (size_t)n);
  pot = malloc(sizeof(double) * (size_t)n);
  grad = malloc(sizeof(double) * 3 * (size_t)n);
  state = 12345ULL + 977ULL * (unsigned long long)rank;
  for (i = 0; i < n; ++i) {
    for (k = 0; k < 3; ++k) src[3 * i + k] = next(&state);
    q[i] = 2 * next(&state) - 1;
  }

  gpufmm_device_count(&ndev);
  TRY(gpufmm_context_create(ndev > 0 ? rank % ndev : GPUFMM_DEVICE_CPU, &ctx));
  TRY(gpufmm_treecode_options_init(&opt));
  opt.eps = eps; /* the default kernel: Laplace (Coulomb 1/r) */
  TRY(gpufmm_treecode_plan_create_mpi(ctx, MPI_COMM_WORLD, &opt, n, src, 0, NULL, &plan));
  TRY(gpufmm_treecode_evaluate(plan, q, pot, grad));
  TRY(gpufmm_treecode_plan_info(plan, &info));

  /* The check: every source gathered (for the check only), the direct sum
   * at NSAMPLE of this rank's points, one point's own term left out. */
  counts = malloc(sizeof(int) * (size_t)size);
  displs = malloc(sizeof(int) * (size_t)size);
  k = (int)n;
  MPI_Allgather(&k, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
  for (r = 0, nall = 0; r < size; ++r) {
    displs[r] = (int)nall;
    nall += counts[r];
  }
  all_q = malloc(sizeof(double) * (size_t)nall);
  all_src = malloc(sizeof(double) * 3 * (size_t)nall);
  MPI_Allgatherv(q, (int)n, MPI_DOUBLE, all_q, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  for (r = 0; r < size; ++r) {
    counts[r] *= 3;
    displs[r] *= 3;
  }
  MPI_Allgatherv(src, 3 * (int)n, MPI_DOUBLE, all_src, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  for (i = 0; i < NSAMPLE && i < n; ++i) {
    const int64_t t = i * (n / NSAMPLE > 0 ? n / NSAMPLE : 1);
    double ref = 0, rg[3] = {0, 0, 0};
    int64_t j;
    for (j = 0; j < nall; ++j) {
      const double dx = src[3 * t] - all_src[3 * j], dy = src[3 * t + 1] - all_src[3 * j + 1],
                   dz = src[3 * t + 2] - all_src[3 * j + 2];
      const double r2 = dx * dx + dy * dy + dz * dz, ri = r2 > 0 ? 1 / sqrt(r2) : 0;
      ref += all_q[j] * ri;
      rg[0] -= all_q[j] * dx * ri * ri * ri;
      rg[1] -= all_q[j] * dy * ri * ri * ri;
      rg[2] -= all_q[j] * dz * ri * ri * ri;
    }
    err_pot += (pot[t] - ref) * (pot[t] - ref);
    nrm_pot += ref * ref;
    for (k = 0; k < 3; ++k) {
      err_grad += (grad[3 * t + k] - rg[k]) * (grad[3 * t + k] - rg[k]);
      nrm_grad += rg[k] * rg[k];
    }
  }
  sums[0] = err_pot;
  sums[1] = nrm_pot;
  sums[2] = err_grad;
  sums[3] = nrm_grad;
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  err_pot = sqrt(sums[0] / sums[1]);
  err_grad = sqrt(sums[2] / sums[3]);

  if (rank == 0) {
    printf("treecode over %d rank(s) (%s), N = %lld, eps = %.0e: theta %.2f, degree %d, leaf %d\n", size,
           info.backend == GPUFMM_BACKEND_CUDA ? "GPU" : "CPU", ntotal, eps, info.theta, info.degree,
           info.leaf_size);
    printf("rank 0 owns %lld sources; from other ranks: %lld box arrays, %lld clusters, %lld points\n",
           (long long)info.nsrc_owned, (long long)info.let_boxes, (long long)info.let_clusters,
           (long long)info.let_points);
    printf("create %.3f s (RCB %.3f, redistribution %.3f, LET tree %.3f, LET data %.3f); "
           "evaluate %.3f s (routes %.3f, exchange %.3f, near field %.3f)\n",
           info.plan_seconds, info.t_rcb, info.t_redistribute, info.t_let_tree, info.t_let_data, info.t_total,
           info.t_route, info.t_exchange, info.t_compute);
    printf("relative L2 error at %d sampled targets per rank: potential %.2e, gradient %.2e\n", NSAMPLE, err_pot,
           err_grad);
  }
  TRY(gpufmm_treecode_plan_destroy(plan));
  TRY(gpufmm_context_destroy(ctx));
  free(src);
  free(q);
  free(pot);
  free(grad);
  free(all_src);
  free(all_q);
  free(counts);
  free(displs);
  MPI_Finalize();
  return err_pot <= eps && err_grad <= eps ? 0 : 1;
}
