// The tiled N-body kernel of the CUDA direct sum (direct.cu), apart so that
// NVRTC compiles the same template for user kernels
// (nearfield/user_kernel.cu): like every header NVRTC compiles, it includes
// only host+device headers and names no host library.
#pragma once

#include <cstdint>

#include "kernels/fast_math.hpp"

namespace gpufmm {
namespace nearfield {
namespace cuda {

constexpr int kDirectBlock = 256;  // threads per block = sources per tile

// Targets per thread: each source record read from shared memory serves K
// targets (fewer shared-memory loads per pair, more independent work per
// thread). Measured on an H100 (Laplace): +3% in float with K = 4; in
// double, K > 1 gains nothing (the pair is bound by FP64 throughput) and
// K = 4 loses.
template <class T>
struct TargetsPerThread {
  static constexpr int value = sizeof(T) == 4 ? 4 : 1;
};

template <bool kDipole>
struct Stride {
  static constexpr int value = kDipole ? 8 : 4;
};

// Grid: x over blocks of K * kDirectBlock targets (thread t of block b owns targets
// b * K * kDirectBlock + k * kDirectBlock + t, k < K), y over source chunks of `chunk`
// sources (a multiple of kDirectBlock). Part p = blockIdx.y writes
// pot[p * ntrg + i] and grad[p * 3 * ntrg + 3 i + c]; pot or grad may be NULL
// (not wanted). kHess (the Laplace kernel's accumulate_hess; kGrad too):
// hess[p * 6 * ntrg + 6 i + c] as well.
template <class Kern, class T, bool kCharge, bool kDipole, bool kGrad, bool kHess = false>
__global__ void __launch_bounds__(kDirectBlock)
    direct_kernel(Kern kern, int64_t ntrg, const T* __restrict__ trg, int64_t nsrc, int64_t chunk,
                  const T* __restrict__ src, T* __restrict__ pot, T* __restrict__ grad, T* __restrict__ hess) {
  constexpr int S = Stride<kDipole>::value;
  constexpr int K = TargetsPerThread<T>::value;
  __shared__ __align__(16) T tile[kDirectBlock * S];

  const int64_t first = int64_t(blockIdx.x) * (K * kDirectBlock) + threadIdx.x;
  T y[K][3], v[K], gx[K], gy[K], gz[K], h[kHess ? K : 1][6];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = first + int64_t(k) * kDirectBlock;
    const bool active = i < ntrg;
#pragma unroll
    for (int c = 0; c < 3; ++c) y[k][c] = active ? trg[3 * i + c] : T(0);
    v[k] = gx[k] = gy[k] = gz[k] = T(0);
    if (kHess)
      for (int c = 0; c < 6; ++c) h[k][c] = T(0);
  }

  const int64_t j_begin = int64_t(blockIdx.y) * chunk;
  const int64_t j_end = j_begin + chunk < nsrc ? j_begin + chunk : nsrc;
  for (int64_t j0 = j_begin; j0 < j_end; j0 += kDirectBlock) {
    const int n = static_cast<int>(j_end - j0 < kDirectBlock ? j_end - j0 : kDirectBlock);
    const T* __restrict__ s = src + j0 * S;
    for (int e = threadIdx.x; e < n * S; e += kDirectBlock) tile[e] = s[e];
    __syncthreads();
    // One source record (a shared-memory broadcast) against the K targets.
    auto pair = [&](int j) {
      const T* t = tile + j * S;
      const T sx = t[0], sy = t[1], sz = t[2];
      const T q = kCharge ? t[3] : T(0);
      const T dx = kDipole ? t[4] : T(0), dy = kDipole ? t[5] : T(0), dz = kDipole ? t[6] : T(0);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if constexpr (kHess) {
          T o[10] = {v[k], gx[k], gy[k], gz[k], h[k][0], h[k][1], h[k][2], h[k][3], h[k][4], h[k][5]};
          kern.template accumulate_hess<kCharge, kDipole>(y[k][0] - sx, y[k][1] - sy, y[k][2] - sz, q, dx, dy, dz,
                                                          ::gpufmm::kernels::hess_ref(o));
          v[k] = o[0];
          gx[k] = o[1];
          gy[k] = o[2];
          gz[k] = o[3];
          for (int c = 0; c < 6; ++c) h[k][c] = o[4 + c];
        } else {
          kern.template accumulate<kCharge, kDipole, kGrad>(y[k][0] - sx, y[k][1] - sy, y[k][2] - sz, q, dx, dy, dz,
                                                            v[k], gx[k], gy[k], gz[k]);
        }
      }
    };
    if (n == kDirectBlock) {
#pragma unroll 16
      for (int j = 0; j < kDirectBlock; ++j) pair(j);
    } else {
      for (int j = 0; j < n; ++j) pair(j);
    }
    __syncthreads();
  }

  const int64_t part = blockIdx.y;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = first + int64_t(k) * kDirectBlock;
    if (i < ntrg) {
      if (pot) pot[part * ntrg + i] = v[k];
      if (kGrad) {
        T* g = grad + part * 3 * ntrg + 3 * i;
        g[0] = gx[k];
        g[1] = gy[k];
        g[2] = gz[k];
      }
      if constexpr (kHess)
        for (int c = 0; c < 6; ++c) hess[part * 6 * ntrg + 6 * i + c] = h[k][c];
    }
  }
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
