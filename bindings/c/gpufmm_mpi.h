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
 * MPI plan. */
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

#ifdef __cplusplus
}
#endif

#endif /* GPUFMM_MPI_H */
