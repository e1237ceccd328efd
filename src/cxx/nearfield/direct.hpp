// Direct summation, O(nsrc * ntrg), for every pair kernel (kernels/kernel.hpp):
// gpufmm_direct and gpufmm_laplace_direct (see gpufmm.h), the accuracy
// reference of the fast methods and the baseline of the benchmarks. Both
// backends call the kernel structs of src/cxx/kernels:
//   - CPU (direct_cpu.cpp): OpenMP over blocks of targets, sources in
//     structure-of-arrays tiles of the working precision, the vectorised
//     source loop of nearfield/p2p.hpp;
//   - GPU (src/cuda/nearfield/direct.cu): the classic tiled N-body kernel of
//     papers/000 sec. 4.1 - one target per thread in registers, sources
//     staged through shared memory one tile (= one thread block) at a time.
//
// Arguments are validated by the C thunks (bindings/c/direct.cpp) before
// these are called: counts >= 0, non-NULL pointers where counts are
// positive, finite values, at least one input and one output, dipoles only
// for kernels that take them.
#pragma once

#include <cstdint>

#include "core/context.hpp"
#include "kernels/kernel.hpp"

namespace gpufmm {
namespace nearfield {

// Data of one direct sum, in double, in host memory or (on a GPU context,
// on_context true) in the context's device memory. Coordinates, dipoles and
// gradients are 3 x n (x0 y0 z0 x1 ...), charges and potentials n. targets
// may equal sources (the "at the sources" case, ntrg = nsrc). charges /
// dipoles: NULL when absent; pot / grad: NULL when not wanted. Outputs are
// overwritten.
//
// origin: subtracted from every coordinate (in double) before the conversion
// to the working precision. The sums depend on differences only, so this
// changes nothing mathematically; direct() sets it, in float, to the centre
// of the bounding box of all points, which halves (or better) the rounding
// of float coordinates, the dominant float error for close pairs; in double
// to 0 (a shift would round the coordinates).
struct DirectArgs {
  int64_t nsrc = 0;
  const double* sources = nullptr;
  const double* charges = nullptr;
  const double* dipoles = nullptr;
  int64_t ntrg = 0;
  const double* targets = nullptr;
  double* pot = nullptr;
  double* grad = nullptr;
  double* hess = nullptr;  // 6 x ntrg (xx yy zz xy xz yz); the Laplace kernel only, with grad
  double origin[3] = {0, 0, 0};
  bool on_context = false;  // the pointers are device memory of a GPU context
};

// Optional timing of one call (seconds). kernel: the summation alone (on a
// GPU: CUDA events around the kernels, no transfers); total: the whole call.
struct DirectTiming {
  double kernel_seconds = 0;
  double total_seconds = 0;
};

// Runs the direct sum of kernel k on ctx's backend in `precision`
// (GPUFMM_FLOAT32 or GPUFMM_FLOAT64): inputs are converted to it (float:
// coordinates relative to the centre of the points' bounding box;
// args.origin is ignored), results converted back to double. On failure
// (OUT_OF_MEMORY, DEVICE) the outputs are unchanged.
void direct(Context& ctx, const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
            DirectTiming* timing = nullptr);

// The centre of the bounding box of sources and targets (0 when empty);
// host data only.
void direct_origin(const DirectArgs& args, double origin[3]);

namespace cpu {
// OpenMP backend of direct (host data; uses args.origin as given).
void direct(const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
            DirectTiming* timing = nullptr);
}  // namespace cpu

#ifdef GPUFMM_HAVE_CUDA
namespace cuda {
// CUDA backend of direct (src/cuda/nearfield/direct.cu; uses args.origin as
// given). Host data are uploaded in double, device data (on_context) read in
// place; the conversion to `precision`, the tiled kernel and the conversion
// back run on ctx's stream; returns when the results are in args.pot /
// args.grad.
void direct(Context& ctx, const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
            DirectTiming* timing = nullptr);
}  // namespace cuda
#endif

}  // namespace nearfield
}  // namespace gpufmm
