/* The FMM-accelerated FFT across MPI ranks from C (gpufmm_mpi.h;
 * papers/002 secs. 3-5).
 *
 * N complex numbers are block-partitioned over the G ranks in natural
 * order: rank g holds x[g N/G .. (g+1) N/G) and gets the same block of
 *     X[k] = sum_n x[n] exp(-2 pi i n k / N),
 * in complex128 to eps = 1e-12. The plan factors N = P M_L 2^L with G | P
 * and 2^B >= G; each rank runs the P - 1 periodic FMMs on its leaves,
 * exchanging one leaf and two boxes per level with its neighbours and
 * gathering the base level, then the M x P 2D FFT runs over the ranks
 * (FFTW-MPI, one all-to-all). Each rank checks 8 of its outputs against a
 * direct DFT over the whole input (gathered for the check only), and rank 0
 * prints the parameters, the stage times and what each rank sent.
 *
 * Usage: mpirun -np G fft_mpi_c [N]   (or GPUFMM_EXAMPLE_N; default 2^20).
 * G must be a power of two. Every rank runs on the CPU. Exits non-zero if
 * the error > eps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpufmm_mpi.h"

#define TRY(call)                                                                            \
  do {                                                                                       \
    gpufmm_status_t s_ = (call);                                                             \
    if (s_ != GPUFMM_SUCCESS) {                                                              \
      fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, gpufmm_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
    }                                                                                        \
  } while (0)

enum { NSAMPLE = 8 };

/* A reproducible uniform number in [-1, 1) from a 64-bit state. */
static double next(unsigned long long* s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return 2.0 * (double)(*s >> 11) / 9007199254740992.0 - 1.0;
}

/* Output k of the forward DFT of x (N interleaved complex numbers), summed
 * in long double, with the twiddle of the exact index n k mod N. */
static void direct_dft(const double* x, int64_t n, int64_t k, double out[2]) {
  const long double two_pi = 6.283185307179586476925286766559L;
  long double re = 0, im = 0;
  int64_t j, idx = 0;
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
  const double eps = 1e-12;
  int rank = 0, size = 1, s, st;
  const char* env;
  int64_t n, nl, i;
  unsigned long long state = 20261127ULL;
  double *x, *y, *all, ref[2], sums[2] = {0, 0};
  gpufmm_context_t ctx;
  gpufmm_fft_options_t opt;
  gpufmm_fft_plan_t plan;
  gpufmm_fft_info_t info;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  env = getenv("GPUFMM_EXAMPLE_N");
  n = argc > 1 ? atoll(argv[1]) : (env ? atoll(env) : (int64_t)1 << 20);
  nl = n / size;

  /* The whole input on every rank (for the check); each rank passes its block. */
  all = malloc(sizeof(double) * 2 * (size_t)n);
  y = malloc(sizeof(double) * 2 * (size_t)nl);
  if (!all || !y) MPI_Abort(MPI_COMM_WORLD, 1);
  for (i = 0; i < 2 * n; ++i) all[i] = next(&state);
  x = all + 2 * nl * rank;

  TRY(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx));
  TRY(gpufmm_fft_options_init(&opt));
  opt.n = n; /* the global length, the same on every rank */
  opt.eps = eps;
  TRY(gpufmm_fft_plan_create_mpi(ctx, MPI_COMM_WORLD, &opt, &plan));
  TRY(gpufmm_fft_execute_host(plan, x, y, GPUFMM_FFT_FORWARD)); /* this rank's block */
  TRY(gpufmm_fft_plan_info(plan, &info));

  /* 8 sampled outputs of this rank's block against the direct DFT. */
  for (i = 0; i < NSAMPLE; ++i) {
    const int64_t k = i * (nl / NSAMPLE) + (nl / NSAMPLE) / 2;
    direct_dft(all, n, nl * rank + k, ref);
    sums[0] += (y[2 * k] - ref[0]) * (y[2 * k] - ref[0]) + (y[2 * k + 1] - ref[1]) * (y[2 * k + 1] - ref[1]);
    sums[1] += ref[0] * ref[0] + ref[1] * ref[1];
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("FMM-FFT of N = %lld over %d rank(s), %lld each: P = %d, M_L = %d, L = %d, B = %d, Q = %d\n",
           (long long)n, size, (long long)info.n_local, info.p, info.ml, info.levels, info.base, info.q);
    printf("rank 0 sent %lld (input halo) + %lld (multipole halos) + %lld (base level) reals, waited %.2e s (%s)\n",
           (long long)info.sent_input, (long long)info.sent_multipoles, (long long)info.sent_base, info.t_wait,
           info.messages == 2 ? "NCCL between the GPUs" : info.messages == 1 ? "MPI" : "one rank");
    for (s = 0; s < GPUFMM_FFT_STAGES; ++s)
      printf("  %-9s %9.3e s   model %9.3e s\n", gpufmm_fft_stage_name(s), info.time[s], info.model[s]);
    printf("relative L2 error at %d sampled outputs: %.2e (eps %.0e)\n", NSAMPLE * size, sqrt(sums[0] / sums[1]), eps);
  }
  st = sqrt(sums[0] / sums[1]) <= eps ? 0 : 1;
  TRY(gpufmm_fft_plan_destroy(plan)); /* collective, before MPI_Finalize */
  TRY(gpufmm_context_destroy(ctx));
  free(all);
  free(y);
  MPI_Finalize();
  return st;
}
