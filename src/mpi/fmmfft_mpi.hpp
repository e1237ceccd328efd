// The FMM-FFT across MPI ranks (issue 18; papers/002 secs. 3-5), library
// gpufmm_mpi, behind gpufmm_fft_plan_create_mpi (gpufmm_mpi.h; user guide
// docs/fmmfft_mpi.md).
//
// The plan is the single-process plan (src/cxx/fmmfft/plan.hpp) made with a
// Cluster over the communicator's G ranks: each rank runs the stages of
// Algorithm 1 on its N / G inputs (its leaves, and its boxes of every level
// down from the base level B, 2^B >= G) and the Distributed this file
// implements moves what they need:
//   - the input halo, one leaf of the rank before and one of the rank after
//     (the rows of the P - 1 FMMs: 2 C (P - 1) M_L reals sent), posted
//     before S2M and waited for before S2T;
//   - the multipole halos, two boxes from each side at every level below B
//     (4 C (L - B) (P - 1) Q reals sent), posted after M2M, each waited for
//     before its level's M2L;
//   - the base level gathered by every rank (MPI_Iallgather of 2^B C (P - 1)
//     Q reals in all), posted after M2M, waited for before M2L-B;
//   - the M x P 2D FFT: on CPU ranks FFTW's MPI transform with transposed
//     output (one all-to-all), whose output is this rank's block of X in
//     natural order; on GPU ranks one MPI_Alltoall (alltoall()) between
//     cuFFT's two passes (src/cuda/fmmfft/fmmfft.cu).
// GPU ranks pass host memory (pinned buffers they stage through), so any
// MPI serves.
// Halos are nonblocking point-to-point messages (MPI_Isend / MPI_Irecv of a
// vector datatype over the travelling rows), so they overlap the stages
// between post and wait. Every step that can fail on one rank ends in an
// error agreement (collective.hpp).
#pragma once

#include <mpi.h>

#include <exception>
#include <memory>

#include "core/context.hpp"
#include "fmmfft/plan.hpp"

namespace gpufmm {
namespace mpi {

// Builds the plan (collective over comm). `early`, when set, is this rank's
// error in its arguments before the call (ctx may then be null): every rank
// fails with it. The options and the kind of context (CPU or GPU) must be
// equal on every rank; the communicator's size must be a power of two.
std::unique_ptr<fmmfft::PlanObject> fft_plan_create(Context* ctx, MPI_Comm comm, const fmmfft::Options& o,
                                                    std::exception_ptr early);

}  // namespace mpi
}  // namespace gpufmm
