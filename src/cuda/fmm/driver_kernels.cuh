// The kernels of the CUDA FMM driver (cuda/fmm/eval.cuh) that no expansion
// touches: the densities into Morton order with their finite check, the
// results' finite check, and the results (far + near) into the user's
// order.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/device_views.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::gstride;
using gpufmm::cuda::gtid;

constexpr unsigned long long kNoBad = ~0ull;

// ------------------------------------------------------------ permutations

// Density kd of nd (the interleaved layout of EvalArgs: nd = 1, kd =
// 0 is the plain one): charges / dipoles (user order, type S) -> Morton
// order in T; the first non-finite user index goes to bad[0] (charges) /
// bad[1] (dipoles).
template <class T, class S>
__global__ void k_permute_in(int64_t n, const int32_t* __restrict__ perm, const S* __restrict__ q,
                             const S* __restrict__ d, T* __restrict__ qo, T* __restrict__ dout, int nd, int kd,
                             unsigned long long* bad) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t j = perm[i];
    if (q) {
      const S v = q[kd + nd * j];
      if (!isfinite(v)) atomicMin(&bad[0], static_cast<unsigned long long>(j));
      qo[i] = T(v);
    }
    if (d) {
      const S x = d[kd + nd * (3 * j)], y = d[kd + nd * (3 * j + 1)], z = d[kd + nd * (3 * j + 2)];
      if (!(isfinite(x) && isfinite(y) && isfinite(z)))
        atomicMin(&bad[1], static_cast<unsigned long long>(j));
      dout[3 * i] = T(x);
      dout[3 * i + 1] = T(y);
      dout[3 * i + 2] = T(z);
    }
  }
}

// far + near of value c of sorted target i (per values each; far may be null).
template <class T>
__device__ __forceinline__ T far_near(const T* __restrict__ f, const T* __restrict__ nr, int per, int64_t i, int c) {
  return f ? f[per * i + c] + nr[per * i + c] : nr[per * i + c];
}

// The first sorted target whose result (far + near, as k_permute_out adds
// them) is not finite goes to bad[2]: the sum overflowed T (issue 14; the
// CPU pipeline's check_results).
template <class T>
__global__ void k_check_results(int64_t n, const T* __restrict__ np, const T* __restrict__ fp,
                                const T* __restrict__ ng, const T* __restrict__ fg, const T* __restrict__ nh,
                                const T* __restrict__ fh, unsigned long long* bad) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    bool ok = true;
    if (np) ok = isfinite(far_near(fp, np, 1, i, 0));
    if (ng)
      for (int k = 0; k < 3; ++k) ok = ok && isfinite(far_near(fg, ng, 3, i, k));
    if (nh)
      for (int k = 0; k < 6; ++k) ok = ok && isfinite(far_near(fh, nh, 6, i, k));
    if (!ok) atomicMin(&bad[2], static_cast<unsigned long long>(i));
  }
}

// Results (Morton order) -> density kd of nd in the user's order: out = far +
// near (the CPU pipeline's (0 + L2P) + P2P); far may be null (no far field).
// Writes nothing when an input was found non-finite or a result is not
// finite (outputs are changed only on success).
template <class T, class S>
__global__ void k_permute_out(int64_t n, const int32_t* __restrict__ perm, const T* __restrict__ np,
                              const T* __restrict__ fp, const T* __restrict__ ng, const T* __restrict__ fg,
                              const T* __restrict__ nh, const T* __restrict__ fh, S* __restrict__ pot,
                              S* __restrict__ grad, S* __restrict__ hess, int nd, int kd,
                              const unsigned long long* bad) {
  if (bad[0] != kNoBad || bad[1] != kNoBad || bad[2] != kNoBad) return;
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t j = perm[i];
    if (pot) pot[kd + nd * j] = S(far_near(fp, np, 1, i, 0));
    if (grad)
      for (int k = 0; k < 3; ++k) grad[kd + nd * (3 * j + k)] = S(far_near(fg, ng, 3, i, k));
    if (hess)
      for (int k = 0; k < 6; ++k) hess[kd + nd * (6 * j + k)] = S(far_near(fh, nh, 6, i, k));
  }
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
