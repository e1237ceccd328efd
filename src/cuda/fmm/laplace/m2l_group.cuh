// Grouped M2L (m2l=grp, the default): every M2L translation of every level
// in one launch, one block per group of G consecutive receiver boxes of a
// level, the group's list entries sorted by operator class at plan time.
//
// Why: in the receiver-major BpB kernel every translation reads its own
// rotation and coax tables (~85 KB at p = 22 double) through L2, which bounds
// it (docs/performance.md). Here the entries of one class ("segment") go
// through the RCR steps S at a time as one vector of S lanes (VLanes), so
// each table element is read once per S translations and the multiply-adds
// of the S lanes share it in registers. The element formulas are the shared
// ones (laplace_rotate_z_elem, laplace_rotate_y_elem, laplace_coax_elem,
// laplace_flip_negates) instantiated with a lane vector type: T * VLanes.
//
// The block owns its receivers' local expansions (no atomics, deterministic):
// per receiver the classes are added in increasing class order. Targets of
// the S lanes of a batch are distinct (one entry per class and receiver);
// one thread adds all lanes of a coefficient, so even duplicates would be
// safe.
//
// Plan-time construction (setup.cu, build_m2l_groups): per list entry
// key = group * 1024 + class, value = (src << 32) | dst; CUB radix sort
// (stable), run-length encoding of the keys into segments, exclusive scan.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/fmm/laplace/kernels.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

// S values of T that act as one: the vector type of the shared element
// functions (TB = T tables, TV = VLanes vectors).
// The 16 padding bytes make the stride of an array of VLanes an odd multiple
// of 16 bytes, so that 128-bit shared-memory loads of different elements by
// one warp fall into different banks (measured: 2-4 way conflicts without).
template <class T, int S>
struct alignas(16) VLanes {
  T v[S];
  T pad_[16 / sizeof(T)];
  VLanes() = default;
  __device__ __forceinline__ explicit VLanes(T x) {
#pragma unroll
    for (int s = 0; s < S; ++s) v[s] = x;
  }
  __device__ __forceinline__ VLanes& operator+=(const VLanes& o) {
#pragma unroll
    for (int s = 0; s < S; ++s) v[s] += o.v[s];
    return *this;
  }
};
template <class T, int S>
__device__ __forceinline__ VLanes<T, S> operator*(T a, const VLanes<T, S>& x) {
  VLanes<T, S> r;
#pragma unroll
  for (int s = 0; s < S; ++s) r.v[s] = a * x.v[s];
  return r;
}
template <class T, int S>
__device__ __forceinline__ VLanes<T, S> operator+(const VLanes<T, S>& a, const VLanes<T, S>& b) {
  VLanes<T, S> r;
#pragma unroll
  for (int s = 0; s < S; ++s) r.v[s] = a.v[s] + b.v[s];
  return r;
}
template <class T, int S>
__device__ __forceinline__ VLanes<T, S> operator-(const VLanes<T, S>& a, const VLanes<T, S>& b) {
  VLanes<T, S> r;
#pragma unroll
  for (int s = 0; s < S; ++s) r.v[s] = a.v[s] - b.v[s];
  return r;
}
template <class T, int S>
__device__ __forceinline__ VLanes<T, S> operator-(const VLanes<T, S>& a) {
  VLanes<T, S> r;
#pragma unroll
  for (int s = 0; s < S; ++s) r.v[s] = -a.v[s];
  return r;
}

// Device view of the grouped entries.
struct DevM2LGroups {
  int64_t ngroups = 0;
  const int32_t* gseg = nullptr;       // [ngroups + 1]: segments of group g
  const int32_t* seg_op = nullptr;     // [nseg]: class of the segment
  const int32_t* seg_begin = nullptr;  // [nseg + 1]: entries of the segment
  const uint64_t* ent = nullptr;       // [nent]: (src << 32) | dst, global box indices
};

// Levels of the receiver boxes for the key kernel.
constexpr int kGroupMaxLevels = 32;
struct GroupLevels {
  int64_t lo[kGroupMaxLevels + 1];     // R.level_offset
  int64_t gbase[kGroupMaxLevels + 1];  // first group of each level
  int nlev;                            // levels 0 .. nlev-1
  int gsize;                           // receivers per group
};

// Element i of a p'^2 vector in "sign-major" order: first the (n, m >= 0)
// coefficients (n(n+1)/2 + m), then the (n, m < 0) ones (n(n-1)/2 + |m| - 1),
// so that the threads of a warp take the same branch of the element formulas
// (which differ for m >= 0 and m < 0). Returns the p^2 index n^2 + n + m.
__device__ __forceinline__ int m2l_group_elem(int i, int pp, int& n, int& m) {
  const int half = pp * (pp + 1) / 2;
  if (i < half) {
    n = int((sqrtf(8.0f * float(i) + 1.0f) - 1.0f) * 0.5f);
    if ((n + 1) * (n + 2) / 2 <= i) ++n;  // rounding guards
    if (n * (n + 1) / 2 > i) --n;
    m = i - n * (n + 1) / 2;
  } else {
    const int j = i - half;
    n = int((sqrtf(8.0f * float(j) + 1.0f) + 1.0f) * 0.5f);
    if (n * (n + 1) / 2 <= j) ++n;
    if ((n - 1) * n / 2 > j) --n;
    m = -(j - (n - 1) * n / 2 + 1);
  }
  return n * n + n + m;
}

// Shared-memory bytes of k_m2l_group: the work vectors (2 p^2 lanes) and the
// cos / sin table (4 p).
template <class T, int S>
inline size_t m2l_group_smem_bytes(int p) {
  const size_t b = sizeof(VLanes<T, S>) * 2 * size_t(p) * p + sizeof(T) * 4 * size_t(p);
  return (b + 15) / 16 * 16;
}

// One block of NT threads per group (grid-stride). L (+)= S|R M for every
// entry, has_local set for every receiver with an entry. Per segment (one
// class) the rotation table B and its transpose (tab.rotT) are read through
// L1 (copies in shared memory measured slower): both rotations then read a
// table along its columns, i.e. consecutive m on consecutive threads, with
// no bank conflicts (B v = B^T-form product with the transposed table).
template <class T, int S, int NT>
__global__ void __launch_bounds__(NT, 2)
    k_m2l_group(int p, DevTables<T> tab, DevM2LGroups grp, const T* __restrict__ M, T* __restrict__ L,
                uint8_t* __restrict__ has_local) {
  using V = VLanes<T, S>;
  extern __shared__ __align__(16) unsigned char smraw[];
  const int p2 = p * p;
  V* w1 = reinterpret_cast<V*>(smraw);
  V* w2 = w1 + p2;
  T* cs = reinterpret_cast<T*>(w2 + p2);  // cos, sin of m a for A; cos, sin for A^T
  __shared__ int32_t s_src[S], s_dst[S];
  const int tid = threadIdx.x;
  for (int64_t g = blockIdx.x; g < grp.ngroups; g += gridDim.x) {
    for (int sg = grp.gseg[g]; sg < grp.gseg[g + 1]; ++sg) {
      const int op = grp.seg_op[sg];
      const int pp = tab.op_p[op];
      const int np = pp * pp;
      const bool flip = tab.op_flip[op] != 0;
      const T* B = tab.R(op);
      const T* BT = tab.RT(op);
      __syncthreads();  // the previous segment is done with cs
      // Forward B (flip: B^T), back B^T (flip: B), both in transposed form.
      const T* Bf = flip ? B : BT;
      const T* Bb = flip ? BT : B;
      const T* C = tab.C(op);
      if (tid == 0) laplace_rotate_z_cs(pp, tab.cos_a[op], tab.sin_a[op], cs, cs + p);
      if (tid == 32) laplace_rotate_z_cs(pp, tab.cos_a[op], T(-tab.sin_a[op]), cs + 2 * p, cs + 3 * p);
      const int e0 = grp.seg_begin[sg], e1 = grp.seg_begin[sg + 1];
      for (int k = e0; k < e1; k += S) {
        const int ns = e1 - k < S ? e1 - k : S;
        __syncthreads();
        if (tid < S) {
          const uint64_t v = tid < ns ? grp.ent[k + tid] : 0;
          s_src[tid] = tid < ns ? int32_t(v >> 32) : -1;
          s_dst[tid] = tid < ns ? int32_t(v & 0xffffffffu) : -1;
          if (tid < ns) has_local[s_dst[tid]] = 1;
        }
        __syncthreads();
        for (int i = tid; i < np; i += NT) {  // gather
          V x;
#pragma unroll
          for (int s = 0; s < S; ++s) x.v[s] = s_src[s] >= 0 ? M[int64_t(s_src[s]) * p2 + i] : T(0);
          w2[i] = x;
        }
        __syncthreads();
        for (int i = tid; i < np; i += NT) {  // A: w1 = F? A(a) w2
          int n, m;
          const int x = m2l_group_elem(i, pp, n, m);
          const int am = m < 0 ? -m : m;
          V v = laplace_rotate_z_elem(cs[am], cs[p + am], w2, n, m);
          if (flip && laplace_flip_negates(n, m)) v = -v;
          w1[x] = v;
        }
        __syncthreads();
        for (int i = tid; i < np; i += NT) {  // B: w2 = B(b) w1 (flip: B^T)
          int n, m;
          const int x = m2l_group_elem(i, pp, n, m);
          w2[x] = laplace_rotate_y_elem(Bf, w1, n, m, true);
        }
        __syncthreads();
        for (int i = tid; i < np; i += NT) {  // C: w1 = Coax w2
          int n, m;
          const int x = m2l_group_elem(i, pp, n, m);
          const int am = m < 0 ? -m : m;
          w1[x] = laplace_coax_elem(pp, C + laplace_coax_offset(pp, pp, am), w2, n, m);
        }
        __syncthreads();
        for (int i = tid; i < np; i += NT) {  // D: w2 = F? B^T w1 (flip: B)
          int n, m;
          const int x = m2l_group_elem(i, pp, n, m);
          V v = laplace_rotate_y_elem(Bb, w1, n, m, true);
          if (flip && laplace_flip_negates(n, m)) v = -v;
          w2[x] = v;
        }
        __syncthreads();
        for (int i = tid; i < np; i += NT) {  // E: A(a)^T w2, added to L
          int n, m;
          const int x = m2l_group_elem(i, pp, n, m);
          const int am = m < 0 ? -m : m;
          const V v = laplace_rotate_z_elem(cs[2 * p + am], cs[3 * p + am], w2, n, m);
#pragma unroll
          for (int s = 0; s < S; ++s)
            if (s < ns) L[int64_t(s_dst[s]) * p2 + x] += v.v[s];
        }
      }
    }
  }
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
