/* gpufmm_mpi.h: the parts of gpufmm that run across MPI ranks (library
 * gpufmm_mpi; link it and gpufmm, and MPI). Programs that do not use MPI
 * include gpufmm.h only and link nothing of MPI.
 *
 * The treecode across ranks (papers/001 sec. 3.1; docs/treecode_mpi.md):
 * each rank passes its own points, in any distribution; the library
 * partitions all points by recursive coordinate bisection, builds each
 * rank's trees over the points it owns, fetches from the other ranks by
 * MPI one-sided communication (passive target) exactly the box arrays,
 * points and modified charges its lists need (locally essential trees),
 * evaluates on the rank's context (CPU or GPU), and returns every rank the
 * potentials of its own targets in its own order.
 *
 * Collective calls: gpufmm_treecode_plan_create_mpi, and on the plan it
 * makes gpufmm_treecode_evaluate and gpufmm_treecode_plan_destroy (before
 * MPI_Finalize). Every rank of the communicator calls them, in the same
 * order. An error on any rank is returned on every rank: the status of the
 * rank where it happened and the message "rank r: ..." (no rank hangs
 * waiting for a failed one). gpufmm_treecode_plan_info is local.
 * gpufmm_treecode_evaluate_arrays returns GPUFMM_ERROR_NOT_SUPPORTED for an
 * MPI plan.
 *
 * The FMM-FFT across ranks (papers/002 secs. 3-5; docs/fmmfft_mpi.md): the
 * 1D DFT of N complex numbers block-partitioned over G ranks in natural
 * order (rank g holds elements [g N/G, (g+1) N/G) of the input and gets the
 * same block of the output), computed as the P - 1 periodic FMMs with halo
 * exchanges (one leaf and two boxes per level from each neighbour) and an
 * all-gather of the base level, then a 2D FFT with one all-to-all (FFTW's
 * MPI transform on CPU ranks; cuFFT around MPI_Alltoall on GPU ranks, the
 * messages staged through host memory).
 * Collective calls: gpufmm_fft_plan_create_mpi, and on its plan
 * gpufmm_fft_execute_host, gpufmm_fft_execute and gpufmm_fft_plan_destroy
 * (before MPI_Finalize); gpufmm_fft_plan_info is local. */
#ifndef GPUFMM_MPI_H
#define GPUFMM_MPI_H

#include <mpi.h>

#include "gpufmm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds a treecode plan over the ranks of comm (a duplicate of it is kept
 * until the plan is destroyed). nlocal_src sources and nlocal_trg targets of
 * this rank: 3 x n doubles in host memory (a rank may have none: NULL with a
 * count of 0); targets NULL on every rank: at the sources (nlocal_trg
 * ignored). opt NULL = defaults; every rank passes the same options, and
 * the parameters chosen from eps are rank 0's. ctx: the rank's context
 * (ranks may share a GPU).
 * Errors (on every rank): INVALID_HANDLE (ctx); INVALID_ARGUMENT (as
 * gpufmm_treecode_plan_create, naming the rank; comm MPI_COMM_NULL or an
 * intercommunicator; MPI not initialized or finalized; an options field
 * that differs from rank 0's, named; targets NULL on some ranks only);
 * OUT_OF_MEMORY; DEVICE; COMMUNICATION (an MPI call failed, named). */
gpufmm_status_t gpufmm_treecode_plan_create_mpi(gpufmm_context_t ctx, MPI_Comm comm,
                                                const gpufmm_treecode_options_t* opt, int64_t nlocal_src,
                                                const double* sources, int64_t nlocal_trg, const double* targets,
                                                gpufmm_treecode_plan_t* plan);

/* The same with a Fortran communicator handle (MPI_Fint: the integer of
 * `use mpi`, or the MPI_VAL component of mpi_f08's type(MPI_Comm)); the
 * Fortran module gpufmm_mpi calls it. */
gpufmm_status_t gpufmm_treecode_plan_create_mpi_f(gpufmm_context_t ctx, MPI_Fint comm,
                                                  const gpufmm_treecode_options_t* opt, int64_t nlocal_src,
                                                  const double* sources, int64_t nlocal_trg, const double* targets,
                                                  gpufmm_treecode_plan_t* plan);

/* Builds an FMM-FFT plan over the ranks of comm: G ranks, a power of two,
 * all with CPU contexts or all with GPU contexts (ranks may share a GPU).
 * opt carries the global N and is the same on every rank; the
 * parameters also satisfy G | P and 2^B >= G (so N needs a factorization
 * with 2^L >= G). Transforms then take this rank's N / G elements
 * (gpufmm_fft_plan_info's n_local).
 * Errors (on every rank): those of gpufmm_fft_plan_create (n not admitted
 * over G ranks: the message names the nearest sizes that are);
 * INVALID_ARGUMENT (an options field that differs from rank 0's, named;
 * CPU and GPU contexts mixed ("backend"); comm MPI_COMM_NULL or an
 * intercommunicator; MPI not initialized or finalized); NOT_SUPPORTED (G
 * not a power of two);
 * COMMUNICATION (an MPI call failed, named). */
gpufmm_status_t gpufmm_fft_plan_create_mpi(gpufmm_context_t ctx, MPI_Comm comm, const gpufmm_fft_options_t* opt,
                                           gpufmm_fft_plan_t* plan);

/* The same with a Fortran communicator handle (MPI_Fint). */
gpufmm_status_t gpufmm_fft_plan_create_mpi_f(gpufmm_context_t ctx, MPI_Fint comm, const gpufmm_fft_options_t* opt,
                                             gpufmm_fft_plan_t* plan);

#ifdef __cplusplus
}
#endif

#endif /* GPUFMM_MPI_H */
