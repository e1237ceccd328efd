// Bounding boxes of device points, shared by every algorithm that needs one
// (the tree's cube, the direct sum's float origin): a per-block partial box
// that also finds the first non-finite point, and the block reduction of
// boxes (6 values: min x, y, z, then max x, y, z).
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

namespace gpufmm {
namespace cuda {

constexpr int kBoxBlock = 256;  // threads per block of the box kernels

// Reduces the boxes v of the block's threads: on return sh[k][0] holds the
// block's box. sh is the block's shared scratch.
__device__ __forceinline__ void block_box_reduce(const double (&v)[6], double (*sh)[kBoxBlock]) {
  for (int k = 0; k < 6; ++k) sh[k][threadIdx.x] = v[k];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      for (int k = 0; k < 3; ++k) sh[k][threadIdx.x] = fmin(sh[k][threadIdx.x], sh[k][threadIdx.x + s]);
      for (int k = 3; k < 6; ++k) sh[k][threadIdx.x] = fmax(sh[k][threadIdx.x], sh[k][threadIdx.x + s]);
    }
    __syncthreads();
  }
}

// Per block (kBoxBlock threads): the box of its points of p (3 x n) into
// part[6 b .. 6 b + 5], and atomicMin(bad, the first point with a non-finite
// coordinate) (*bad initialised to ULLONG_MAX). Non-finite points are left
// out of the box.
__global__ void __launch_bounds__(kBoxBlock)
    box_partial_kernel(const double* __restrict__ p, int64_t n, double* __restrict__ part,
                       unsigned long long* __restrict__ bad);

}  // namespace cuda
}  // namespace gpufmm
