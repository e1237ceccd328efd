// Device views of trees and lists (plain pointers, passed to kernels by
// value), the grid-stride helpers every kernel family uses, and a warp's
// prefix sum.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tree/morton.hpp"

namespace gpufmm {
namespace cuda {

// One point set of a tree (tree::PointSet) on the device.
struct DevSet {
  const int32_t* parent = nullptr;
  const int32_t* child_offset = nullptr;
  const int32_t* point_begin = nullptr;
  const int32_t* point_end = nullptr;
  const uint64_t* box_key = nullptr;
  const double* center = nullptr;
  const int32_t* perm = nullptr;
  // The frame of the finest level's boxes (tree::level_frame): where the
  // kernels take coordinates relative to exact box centres (the FMM's P2M,
  // L2P and float P2P). half == 0: not set (centres from `center`).
  tree::LevelFrame leaf{};
};

// A CSR list (tree::List) on the device.
struct DevList {
  const int64_t* offsets = nullptr;
  const int32_t* index = nullptr;
  const int32_t* cls = nullptr;
};

__device__ __forceinline__ int64_t gtid() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t gstride() { return int64_t(gridDim.x) * blockDim.x; }

// The inclusive prefix sum of v over the 32 lanes of a warp, all active
// (lane: this thread's lane).
template <class V>
__device__ __forceinline__ V warp_inclusive_scan(V v, int lane) {
  for (int o = 1; o < 32; o <<= 1) {
    const V t = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += t;
  }
  return v;
}

// Several densities on one geometry (nearfield k_p2p_bpb_nd, the Laplace
// FMM's P2M and L2P): the first nk of a kernel's ND are real; density k's
// charges at q + k * q_stride (dipoles d + k * d_stride; 3 per source), its
// results at pot + k * pot_stride (grad + k * grad_stride; 3 per target).
// ND = 1: one density, strides unused.
struct NdLayout {
  int nk = 1;
  int64_t q_stride = 0, d_stride = 0, pot_stride = 0, grad_stride = 0;
};

}  // namespace cuda
}  // namespace gpufmm
