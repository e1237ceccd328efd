// Direct summation of the Laplace sums of gpufmm_laplace_direct (see
// gpufmm.h): O(nsrc * ntrg), the accuracy reference of the FMM and the
// baseline of the benchmarks. Both backends call the per-pair formula of
// fmm/laplace_p2p.hpp (laplace_p2p_accumulate):
//   - CPU (direct_cpu.cpp): OpenMP over blocks of targets, sources in
//     structure-of-arrays tiles of the working precision, vectorised inner
//     loop;
//   - GPU (src/cuda/fmm/direct.cu): the classic tiled N-body kernel of
//     papers/000 sec. 4.1 - one target per thread in registers, sources
//     staged through shared memory one tile (= one thread block) at a time.
//
// Arguments are validated by the C thunk (bindings/c/laplace_direct.cpp)
// before these are called: counts >= 0, non-NULL pointers where counts are
// positive, finite values, at least one input and one output.
#pragma once

#include <cstdint>

#include "core/context.hpp"
#include "gpufmm.h"

namespace gpufmm {

// Host data of one direct sum. Coordinates, dipoles and gradients are 3 x n
// (x0 y0 z0 x1 ...), charges and potentials n. targets may equal sources (the
// "at the sources" case, ntrg = nsrc). charges / dipoles: NULL when absent;
// pot / grad: NULL when not wanted. Outputs are overwritten.
//
// origin: subtracted from every coordinate (in double) before the conversion
// to the working precision. The sums depend on differences only, so this
// changes nothing mathematically; gpufmm::laplace_direct sets it, in float,
// to the centre of the bounding box of all points, which halves (or better)
// the rounding of float coordinates, the dominant float error for close
// pairs; in double to 0 (a shift would round the coordinates).
struct LaplaceDirectArgs {
  int64_t nsrc = 0;
  const double* sources = nullptr;
  const double* charges = nullptr;
  const double* dipoles = nullptr;
  int64_t ntrg = 0;
  const double* targets = nullptr;
  double* pot = nullptr;
  double* grad = nullptr;
  double origin[3] = {0, 0, 0};
};

// Optional timing of one call (seconds). kernel: the summation alone (on a
// GPU: CUDA events around the kernels, no transfers); total: the whole call.
struct LaplaceDirectTiming {
  double kernel_seconds = 0;
  double total_seconds = 0;
};

// Runs the direct sum on ctx's backend in `precision` (GPUFMM_FLOAT32 or
// GPUFMM_FLOAT64): inputs are converted to it (float: coordinates relative
// to the centre of the points' bounding box; args.origin is ignored), results
// converted back to double. On failure (OUT_OF_MEMORY, DEVICE) the outputs
// are unchanged.
void laplace_direct(Context& ctx, gpufmm_dtype_t precision, const LaplaceDirectArgs& args,
                    LaplaceDirectTiming* timing = nullptr);

// The centre of the bounding box of sources and targets (0 when empty).
void laplace_direct_origin(const LaplaceDirectArgs& args, double origin[3]);

namespace cpu {
// OpenMP backend of laplace_direct (uses args.origin as given).
void laplace_direct(gpufmm_dtype_t precision, const LaplaceDirectArgs& args,
                    LaplaceDirectTiming* timing = nullptr);
}  // namespace cpu

#ifdef GPUFMM_HAVE_CUDA
namespace cuda {
// CUDA backend of laplace_direct (src/cuda/fmm/direct.cu; uses args.origin
// as given): uploads sources
// and targets in `precision`, runs the tiled kernel on ctx's stream, downloads
// and converts the results; returns when they are in args.pot / args.grad.
void laplace_direct(Context& ctx, gpufmm_dtype_t precision, const LaplaceDirectArgs& args,
                    LaplaceDirectTiming* timing = nullptr);
}  // namespace cuda
#endif

}  // namespace gpufmm
