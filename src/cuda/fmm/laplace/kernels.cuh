// Kernels of the CUDA Laplace FMM driver (issue 5). Every kernel calls the
// shared host+device math of fmm/laplace*.hpp (the same functions, with the
// same arguments, as the OpenMP pipeline in fmm/pipeline_impl.hpp);
// nothing here re-derives a formula. Data layout: fmm/laplace/plan.hpp.
// Strategies and their selection: fmm/laplace/gpu.hpp, docs/laplace_gpu.md.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fmm/laplace/math.hpp"
#include "fmm/laplace/plan.hpp"
#include "cuda/common/device_views.cuh"
#include "cuda/fmm/driver_kernels.cuh"
#include "lists/rows.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::DevList;
using gpufmm::cuda::DevSet;
using gpufmm::cuda::NdLayout;
using gpufmm::cuda::gstride;
using gpufmm::cuda::gtid;

// Device views (plain pointers, passed by value).
template <class T>
struct DevTables {
  int p = 0;
  int rot_stride = 0;
  const T* rot = nullptr;
  const T* rotT = nullptr;  // the same tables with every block transposed
  const int32_t* op_p = nullptr;
  const int32_t* op_rot = nullptr;
  const int32_t* op_coax = nullptr;
  const int8_t* op_flip = nullptr;
  const LaplaceWalkCoef<T>* walk = nullptr;  // P2M / L2P: the basis walk's coefficients
  const T* cos_a = nullptr;
  const T* sin_a = nullptr;
  const int64_t* coax_offset = nullptr;
  const T* coax = nullptr;
  __device__ __forceinline__ const T* R(int op) const {
    return rot + static_cast<size_t>(op_rot[op]) * rot_stride;
  }
  __device__ __forceinline__ const T* RT(int op) const {
    return rotT + static_cast<size_t>(op_rot[op]) * rot_stride;
  }
  __device__ __forceinline__ const T* C(int op) const { return coax + coax_offset[op_coax[op]]; }
};


// ------------------------------------------------------------ P2M

// The t-th box of a launch: boxes[t] when a box list is given (an adaptive
// plan's leaves of one level), else b0 + t (a level's range).
__device__ __forceinline__ int64_t box_at(int64_t b0, const int32_t* __restrict__ boxes, int64_t t) {
  return boxes ? int64_t(boxes[t]) : b0 + t;
}

// Coordinates of point i relative to the exact centre of the leaf with key
// `key` (tree::box_relative3 in the frame f of the leaves, as the CPU
// pipeline), formed in double, rounded to T.
template <class T>
__device__ __forceinline__ void rel_point(const double* __restrict__ xyz, int64_t i, const tree::LevelFrame& f,
                                          uint64_t key, T* r) {
  double d[3];
  tree::box_relative3(f, key, xyz + 3 * i, d);
  r[0] = T(d[0]);
  r[1] = T(d[1]);
  r[2] = T(d[2]);
}

// The level of a P2M's source leaves, hence their size and frame: one level
// for the launch (level >= 0: uniform trees), or each box's own from its
// index (level < 0: an adaptive tree's leaves of every level in one launch).
struct LeafLevel {
  tree::Cube cube;
  lists::LevelOffsets off;
  int l_max = 0;
  int level = 0;
  __device__ __forceinline__ int of(int64_t b) const { return level >= 0 ? level : lists::level_of(off, l_max, b); }
  template <class T>
  __device__ __forceinline__ T size(int l) const {
    return T(tree::box_size(cube, l));
  }
  __device__ __forceinline__ tree::LevelFrame frame(int l) const { return tree::level_frame(cube, l); }
};

// TpB: one thread per source leaf, M_b = sum over its sources (in order,
// exactly as the CPU pipeline).
template <class T>
__global__ void k_p2m_tpb(int64_t b0, int64_t nb, const int32_t* __restrict__ boxes, int p, LeafLevel lev, DevSet S,
                          const double* __restrict__ xyz, const T* __restrict__ q, const T* __restrict__ d,
                          T* __restrict__ M, const LaplaceWalkCoef<T>* __restrict__ walk) {
  const int p2 = p * p;
  const T zero[3] = {T(0), T(0), T(0)};
  for (int64_t t = gtid(); t < nb; t += gstride()) {
    const int64_t b = box_at(b0, boxes, t);
    T* Mb = M + b * p2;
    for (int c = 0; c < p2; ++c) Mb[c] = T(0);
    const uint64_t key = S.box_key[b];
    const int l = lev.of(b);
    const T h = lev.size<T>(l);
    const tree::LevelFrame f = lev.frame(l);
    for (int64_t i = S.point_begin[b]; i < S.point_end[b]; ++i) {
      T r[3];
      rel_point(xyz, i, f, key, r);
      laplace_p2m<T>(p, h, zero, 1, r, q ? q + i : nullptr, d ? d + 3 * i : nullptr, Mb, walk);
    }
  }
}

// Adds a value to coefficient k after summing it over the warp: every lane
// walks the coefficients in the same order (same p), so lane 0 adds the
// warp's total. Lanes without a source pass zeros.
struct WarpSumAdd {
  template <class T>
  __device__ __forceinline__ void operator()(T* out, int k, T v) const {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) out[k] += v;
  }
};

// WpB: one warp per source leaf; lane l takes sources l, l+32, ... and the
// warp sums each coefficient's contributions with shuffles before lane 0
// adds it to M_b (no scratch: one global update per coefficient per 32
// sources). The shared P2M math (laplace_p2m_point) does the walk.
template <class T>
__global__ void k_p2m_wpb(int64_t b0, int64_t nb, const int32_t* __restrict__ boxes, int p, LeafLevel lev, DevSet S,
                          const double* __restrict__ xyz, const T* __restrict__ q, const T* __restrict__ d,
                          T* __restrict__ M, const LaplaceWalkCoef<T>* __restrict__ walk) {
  const int p2 = p * p;
  const int lane = threadIdx.x & 31;
  for (int64_t t = gtid() / 32; t < nb; t += gstride() / 32) {
    const int64_t b = box_at(b0, boxes, t);
    T* Mb = M + b * p2;
    for (int c = lane; c < p2; c += 32) Mb[c] = T(0);
    __syncwarp();
    const uint64_t key = S.box_key[b];
    const int l = lev.of(b);
    const T inv_h = T(1) / lev.size<T>(l);
    const tree::LevelFrame f = lev.frame(l);
    const int64_t i0 = S.point_begin[b], i1 = S.point_end[b];
    for (int64_t base = i0; base < i1; base += 32) {
      const int64_t i = base + lane;
      T r[3] = {T(0), T(0), T(0)};
      T qi = T(0), di[3] = {T(0), T(0), T(0)};
      if (i < i1) {
        rel_point(xyz, i, f, key, r);
        if (q) qi = q[i];
        if (d) {
          di[0] = d[3 * i];
          di[1] = d[3 * i + 1];
          di[2] = d[3 * i + 2];
        }
      }
      laplace_p2m_point<T, WarpSumAdd>(p, inv_h, r, qi, d ? di : nullptr, Mb, WarpSumAdd(), walk);
      __syncwarp();
    }
  }
}

// BpB (p2m=bpb): the leaf's sources in tiles of kP2MTile (one per lane of a
// warp). Each lane walks its source with the shared per-source P2M math
// (laplace_p2m_point); its Add functor (P2MTileAdd) stores the lane's w-th
// contribution (walk order: the same coefficient k on every lane) into row
// w % 32, column lane, of the warp's shared-memory tile. After every 32
// contributions (and at the end of the walk) lane r adds row r, sources in
// order, to coefficient k of the warp's accumulator (shared memory, p^2).
// One warp per leaf (wpl = 1): every coefficient is summed over the leaf's
// sources in source order starting from 0, i.e. the CPU pipeline's sum
// (laplace_p2m), bitwise up to FMA contraction. wpl = 2 or 4 warps per leaf
// (too few leaves to fill the GPU): warp u takes the tiles u, u + wpl, ...
// and the wpl accumulators are added in warp order. M_b is written once.
// Shared memory per warp: 32 x 33 + p^2 values (p2m_bpb_warp_bytes), i.e.
// independent of p but for the accumulator; blocks of up to kP2MMaxWarps.
constexpr int kP2MTile = 32;              // sources per tile (one per lane)
constexpr int kP2MTileLd = kP2MTile + 1;  // padded rows: conflict-free by row and by column
constexpr int kP2MMaxWarps = 4;           // warps per block

// Shared-memory bytes of one warp of k_p2m_bpb: tile [32][33] + accumulator
// [nd x p^2] (nd densities).
template <class T>
__host__ __device__ inline size_t p2m_bpb_warp_bytes(int p, int nd = 1) {
  return (sizeof(T) * (size_t(kP2MTile) * kP2MTileLd + size_t(nd) * p * p) + 15) / 16 * 16;
}

template <class T>
struct P2MTileState {
  T* tile;   // the warp's [kP2MTile][kP2MTileLd]
  T* acc;    // the warp's accumulator (nd x p^2)
  int lane;
  int npts;  // sources in the tile (columns 0 .. npts-1 are summed)
  int w;     // contributions stored so far by this walk
  int k;     // accumulator index of row `lane` in the current group of 32
  // acc[k] += row `lane` (sources in order) for the rows 0 .. rows-1.
  __device__ __forceinline__ void flush(int rows) {
    __syncwarp();
    if (lane < rows) {
      const T* row = tile + lane * kP2MTileLd;
      T a = acc[k];
      for (int j = 0; j < npts; ++j) a += row[j];
      acc[k] = a;
    }
    __syncwarp();
  }
};

// Add functor of laplace_p2m_point(_nd) for k_p2m_bpb (see above): out is
// the accumulator of one density (st->acc + density x p^2). All lanes walk
// the same coefficients in the same order (same p), so the functor is
// called in step on the whole warp.
template <class T>
struct P2MTileAdd {
  P2MTileState<T>* st;
  __device__ __forceinline__ void operator()(T* out, int k, T v) const {
    P2MTileState<T>& s = *st;
    const int row = s.w & (kP2MTile - 1);
    s.tile[row * kP2MTileLd + s.lane] = v;
    if (s.lane == row) s.k = int(out - s.acc) + k;
    if (((++s.w) & (kP2MTile - 1)) == 0) s.flush(kP2MTile);
  }
};

// kD: dipoles present (the gradient walk); blockDim = 32 x (1, 2 or 4) warps,
// a multiple of wpl; dynamic shared memory = warps x p2m_bpb_warp_bytes<T>(p,
// ND). ND densities (nl.nk of them real; ND = 1: one, strides unused):
// density k's charges at q + k nl.q_stride, dipoles d + k nl.d_stride, its
// multipoles at M + k nl.pot_stride; one walk per source serves all.
template <class T, bool kD, int ND = 1>
__global__ void __launch_bounds__(32 * kP2MMaxWarps, 1)
    k_p2m_bpb(int64_t b0, int64_t nb, const int32_t* __restrict__ boxes, int p, LeafLevel lev, int wpl, DevSet S,
              const double* __restrict__ xyz,
              const T* __restrict__ q, const T* __restrict__ d, T* __restrict__ M,
              const LaplaceWalkCoef<T>* __restrict__ walk, NdLayout nl = {}) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int p2 = p * p;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const size_t wb = p2m_bpb_warp_bytes<T>(p, ND);
  T* tile = reinterpret_cast<T*>(smraw + warp * wb);
  T* acc = tile + kP2MTile * kP2MTileLd;
  const int per_block = nw / wpl;  // leaves per block and round
  const int slot = warp / wpl, sub = warp - slot * wpl;
  for (int64_t base = int64_t(blockIdx.x) * per_block; base < nb; base += int64_t(gridDim.x) * per_block) {
    const int64_t t = base + slot;
    for (int c = lane; c < ND * p2; c += 32) acc[c] = T(0);
    __syncwarp();
    if (t < nb) {
      const int64_t b = box_at(b0, boxes, t);
      const uint64_t key = S.box_key[b];
      const int l = lev.of(b);
      const T inv_h = T(1) / lev.size<T>(l);
      const tree::LevelFrame f = lev.frame(l);
      const int64_t i1 = S.point_end[b];
      for (int64_t i0 = S.point_begin[b] + int64_t(sub) * kP2MTile; i0 < i1; i0 += int64_t(wpl) * kP2MTile) {
        const int64_t i = i0 + lane;
        T r[3] = {T(0), T(0), T(0)};
        T qi[ND], di[3 * ND];
        for (int k = 0; k < ND; ++k) qi[k] = di[3 * k] = di[3 * k + 1] = di[3 * k + 2] = T(0);
        if (i < i1) {  // lanes without a source walk zeros (their column is not summed)
          rel_point(xyz, i, f, key, r);
          for (int k = 0; k < ND && (ND == 1 || k < nl.nk); ++k) {
            if (q) qi[k] = q[k * nl.q_stride + i];
            if (kD)
              for (int c = 0; c < 3; ++c) di[3 * k + c] = d[k * nl.d_stride + 3 * i + c];
          }
        }
        P2MTileState<T> st{tile, acc, lane, int(i1 - i0 < kP2MTile ? i1 - i0 : kP2MTile), 0, 0};
        if constexpr (ND == 1)
          laplace_p2m_point<T, P2MTileAdd<T>>(p, inv_h, r, qi[0], kD ? di : nullptr, acc, P2MTileAdd<T>{&st}, walk);
        else
          laplace_p2m_point_nd<T, ND, P2MTileAdd<T>>(p, inv_h, r, qi, kD ? di : nullptr, acc, p2,
                                                     P2MTileAdd<T>{&st}, walk);
        if (st.w & (kP2MTile - 1)) st.flush(st.w & (kP2MTile - 1));
      }
    }
    if (wpl > 1)
      __syncthreads();
    else
      __syncwarp();
    if (t < nb) {  // M_b = acc of the leaf's warp 0 (+ warps 1 .. wpl-1, in order)
      const int64_t b = box_at(b0, boxes, t);
      const T* a0 = reinterpret_cast<const T*>(smraw + size_t(slot) * wpl * wb) + kP2MTile * kP2MTileLd;
      for (int k = 0; k < ND && (ND == 1 || k < nl.nk); ++k) {
        T* Mb = M + k * nl.pot_stride + b * p2;
        for (int c = sub * 32 + lane; c < p2; c += wpl * 32) {
          T s = a0[k * p2 + c];
          for (int u = 1; u < wpl; ++u) s += a0[u * (wb / sizeof(T)) + k * p2 + c];
          Mb[c] = s;
        }
      }
    }
    if (wpl > 1)
      __syncthreads();
    else
      __syncwarp();
  }
}

// ------------------------------------------------------------ translations

enum TranslateKind { kKindM2M = 0, kKindM2L = 1 };

// One translation of item e into `out` (accumulating).
template <class T, int KIND>
__device__ __forceinline__ void translate_item(int64_t e, int p, const DevTables<T>& tab,
                                               const uint64_t* __restrict__ box_key,
                                               const int32_t* __restrict__ lidx,
                                               const int32_t* __restrict__ lcls, const T* __restrict__ Min,
                                               T* out, T* work) {
  const int64_t p2 = int64_t(p) * p;
  if (KIND == kKindM2M) {
    const int op = kOpM2M + int(box_key[e] & 7u);
    laplace_m2m_apply<T>(p, tab.cos_a[op], tab.sin_a[op], tab.R(op), tab.op_flip[op] != 0, tab.C(op),
                         Min + e * p2, out, work);
  } else {
    const int32_t s = lidx[e];
    const int op = lcls[e];
    const int pp = tab.op_p[op];
    laplace_m2l_apply<T>(pp, pp, tab.cos_a[op], tab.sin_a[op], tab.R(op), tab.op_flip[op] != 0,
                         tab.C(op), Min + int64_t(s) * p2, out, work);
  }
}

// G threads per receiving box b in [b0, b0 + nb):
//   M2M (KIND 0): Out_b = sum over children c of S|S(M_c)   (rows: child_offset;
//                 a box without children, an adaptive tree's leaf, keeps its P2M)
//   M2L (KIND 1): Out_b += sum over row entries of S|R(M_s) (rows: CSR list);
//                 has_local[b] = 1 when the row is not empty.
// G == 1 (TpB): the thread accumulates straight into Out_b, in row order (the
// CPU pipeline's order). G > 1 (8 = group per box, 32 = warp per box): lane
// l takes entries l, l+G, ... into a private accumulator (global scratch),
// then the group adds the G accumulators to Out_b in lane order.
// Work vectors (2 p^2): shared memory (use_smem, dynamic, per thread) or the
// thread's global scratch slot (3 p^2: work, then the accumulator).
template <class T, int KIND, int G>
__global__ void k_translate(int64_t b0, int64_t nb, int p, DevTables<T> tab, const int32_t* __restrict__ rows32,
                            const int64_t* __restrict__ rows64, const uint64_t* __restrict__ box_key,
                            const int32_t* __restrict__ lidx, const int32_t* __restrict__ lcls,
                            const T* __restrict__ Min, T* __restrict__ Out, uint8_t* __restrict__ has_local,
                            T* __restrict__ scratch, int use_smem) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int p2 = p * p;
  const int64_t tid = gtid();
  T* slot = scratch + tid * (3 * p2);
  T* work = use_smem ? reinterpret_cast<T*>(smraw) + threadIdx.x * (2 * p2) : slot;
  auto row = [&](int64_t b, int64_t& e0, int64_t& e1) {
    if (KIND == kKindM2M) {
      e0 = rows32[b];
      e1 = rows32[b + 1];
    } else {
      e0 = rows64[b];
      e1 = rows64[b + 1];
    }
  };
  if (G == 1) {
    for (int64_t t = tid; t < nb; t += gstride()) {
      const int64_t b = b0 + t;
      T* out = Out + b * p2;
      int64_t e0, e1;
      row(b, e0, e1);
      if (KIND == kKindM2M && e1 == e0) continue;
      if (KIND == kKindM2M)
        for (int c = 0; c < p2; ++c) out[c] = T(0);
      for (int64_t e = e0; e < e1; ++e) translate_item<T, KIND>(e, p, tab, box_key, lidx, lcls, Min, out, work);
      if (KIND == kKindM2L && e1 > e0) has_local[b] = 1;
    }
    return;
  }
  constexpr int kPerWarp = 32 / G;
  const int wl = threadIdx.x & 31;
  const int lane = wl % G;
  const int64_t group_slot0 = tid - lane;
  T* acc = slot + 2 * p2;
  for (int64_t base = (tid / 32) * kPerWarp; base < nb; base += (gstride() / 32) * kPerWarp) {
    const int64_t t = base + wl / G;
    const bool active = t < nb;
    const int64_t b = b0 + t;
    int64_t e0 = 0, e1 = 0;
    if (active) {
      row(b, e0, e1);
      for (int c = 0; c < p2; ++c) acc[c] = T(0);
      for (int64_t e = e0 + lane; e < e1; e += G)
        translate_item<T, KIND>(e, p, tab, box_key, lidx, lcls, Min, acc, work);
    }
    __syncwarp();
    if (active && (KIND == kKindM2L || e1 > e0)) {
      T* out = Out + b * p2;
      for (int c = lane; c < p2; c += G) {
        T s = KIND == kKindM2M ? T(0) : out[c];
        for (int l = 0; l < G; ++l) s += scratch[(group_slot0 + l) * (3 * p2) + 2 * p2 + c];
        out[c] = s;
      }
      if (KIND == kKindM2L && lane == 0 && e1 > e0) has_local[b] = 1;
    }
    __syncwarp();
  }
}

// LevelDown3: L_b += R|R(L_parent) for the boxes b of one level whose parent
// holds a local expansion (L was zeroed); one thread per child box.
template <class T>
__global__ void k_l2l(int64_t b0, int64_t nb, int p, DevTables<T> tab, DevSet R, T* __restrict__ L,
                      uint8_t* __restrict__ has_local, T* __restrict__ scratch, int use_smem) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int p2 = p * p;
  const int64_t tid = gtid();
  T* work = use_smem ? reinterpret_cast<T*>(smraw) + threadIdx.x * (2 * p2) : scratch + tid * (3 * p2);
  for (int64_t t = tid; t < nb; t += gstride()) {
    const int64_t b = b0 + t;
    const int32_t par = R.parent[b];
    if (!has_local[par]) continue;
    const int op = kOpL2L + int(R.box_key[b] & 7u);
    laplace_l2l_apply<T>(p, tab.cos_a[op], tab.sin_a[op], tab.R(op), tab.op_flip[op] != 0, tab.C(op),
                         L + int64_t(par) * p2, L + b * p2, work);
    has_local[b] = 1;
  }
}

// ------------------------------------------------------------ BpB translations
//
// Cooperative RCR (m2l=bpb, m2m=bpb, L2L by default): a block of kBpbThreads
// threads runs `S` translations ("slots") at once, every step of eq. (33)
// parallel over the coefficients (slot, n, m) of the batch, with the work
// vectors in shared memory and __syncthreads between the steps:
//   A  w1 = F? A(a) in          laplace_rotate_z_elem (+ laplace_flip_negates)
//   B  w2 = B(b) w1 (B^T: flip) laplace_rotate_y_elem, one dot over m per output
//   C  w1 = Coax w2             laplace_coax_elem, one dot over n' per output
//   D  w2 = F? B^T w1 (B: flip) laplace_rotate_y_elem
//   E  w1 = A(a)^T w2           laplace_rotate_z_elem
// i.e. the element formulas of laplace_rcr_apply / laplace_m2l_apply, in the
// same summation order. Rotation and coax tables are read from global memory
// through L1/L2 (one table per op class, shared by all receivers).
//   M2M / M2L: one receiver box per block (grid-stride); slots = consecutive
//     entries of its row; the receiver's expansion is accumulated in shared
//     memory, the slots' results added in row order (the serial pipeline's
//     order), and written once.
//   L2L: S child boxes per block, one slot each (parent -> child).
constexpr int kBpbThreads = 256;
enum BpbKind { kBpbM2M = 0, kBpbM2L = 1, kBpbL2L = 2 };

template <class T>
struct BpbSlot {
  const T* in;  // input vector (global)
  const T* B;   // rotation table
  const T* C;   // coax matrix
  int64_t target;  // L2L: receiving box
  T cos_a, sin_a;
  int p;     // truncation number (p_in = p_out); 0: empty slot
  int flip;
};

// Shared-memory bytes of k_translate_bpb for S slots and truncation p.
template <class T>
inline size_t bpb_smem_bytes(int p, int S) {
  const size_t p2 = size_t(p) * p;
  size_t b = (sizeof(BpbSlot<T>) * S + 15) / 16 * 16;
  b += sizeof(T) * (4 * size_t(S) * p + 2 * size_t(S) * p2 + p2);
  return b;
}

template <class T, int KIND>
__global__ void __launch_bounds__(kBpbThreads)
    k_translate_bpb(int64_t b0, int64_t nb, int p, int S, DevTables<T> tab, const int32_t* __restrict__ rows32,
                    const int64_t* __restrict__ rows64, const uint64_t* __restrict__ box_key,
                    const int32_t* __restrict__ lidx, const int32_t* __restrict__ lcls,
                    const int32_t* __restrict__ parent, const T* __restrict__ Min, T* __restrict__ Out,
                    uint8_t* __restrict__ has_local) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int p2 = p * p;
  BpbSlot<T>* slot = reinterpret_cast<BpbSlot<T>*>(smraw);
  T* cs = reinterpret_cast<T*>(smraw + (sizeof(BpbSlot<T>) * S + 15) / 16 * 16);  // [S][4][p]
  T* w1 = cs + 4 * S * p;                                                         // [S][p2]
  T* w2 = w1 + S * p2;                                                            // [S][p2]
  T* acc = w2 + S * p2;                                                           // [p2]
  const int tid = threadIdx.x;
  const int nel = S * p2;
  // Element e of the batch -> slot s, index idx, degree n, order m; false when
  // the slot is empty or idx is beyond the slot's p^2.
  auto decode = [&](int e, int& s, int& idx, int& n, int& m) {
    s = e / p2;
    idx = e - s * p2;
    const int ps = slot[s].p;
    if (idx >= ps * ps) return false;
    n = int(sqrtf(float(idx) + 0.5f));
    m = idx - n * n - n;
    return true;
  };
  // One batch: slots filled; result of slot s in w1 + s * p2.
  auto batch = [&]() {
    __syncthreads();
    for (int e = tid; e < nel; e += kBpbThreads) {  // A
      int s, idx, n, m;
      if (!decode(e, s, idx, n, m)) continue;
      const int am = m < 0 ? -m : m;
      const T* c = cs + 4 * s * p;
      T v = laplace_rotate_z_elem(c[am], c[p + am], slot[s].in, n, m);
      if (slot[s].flip && laplace_flip_negates(n, m)) v = -v;
      w1[e] = v;
    }
    __syncthreads();
    for (int e = tid; e < nel; e += kBpbThreads) {  // B
      int s, idx, n, m;
      if (!decode(e, s, idx, n, m)) continue;
      w2[e] = laplace_rotate_y_elem(slot[s].B, w1 + s * p2, n, m, slot[s].flip != 0);
    }
    __syncthreads();
    for (int e = tid; e < nel; e += kBpbThreads) {  // C
      int s, idx, n, m;
      if (!decode(e, s, idx, n, m)) continue;
      const int ps = slot[s].p;
      const int am = m < 0 ? -m : m;
      w1[e] = laplace_coax_elem(ps, slot[s].C + laplace_coax_offset(ps, ps, am), w2 + s * p2, n, m);
    }
    __syncthreads();
    for (int e = tid; e < nel; e += kBpbThreads) {  // D
      int s, idx, n, m;
      if (!decode(e, s, idx, n, m)) continue;
      T v = laplace_rotate_y_elem(slot[s].B, w1 + s * p2, n, m, slot[s].flip == 0);
      if (slot[s].flip && laplace_flip_negates(n, m)) v = -v;
      w2[e] = v;
    }
    __syncthreads();
    for (int e = tid; e < nel; e += kBpbThreads) {  // E
      int s, idx, n, m;
      if (!decode(e, s, idx, n, m)) continue;
      const int am = m < 0 ? -m : m;
      const T* c = cs + 4 * s * p;
      w1[e] = laplace_rotate_z_elem(c[2 * p + am], c[3 * p + am], w2 + s * p2, n, m);
    }
    __syncthreads();
  };
  // Slot s <- op (thread s): tables and cos/sin(m a) of A and A^T.
  auto fill = [&](int s, const T* in, int op, int64_t target) {
    BpbSlot<T>& sl = slot[s];
    sl.in = in;
    sl.B = tab.R(op);
    sl.C = tab.C(op);
    sl.target = target;
    sl.p = KIND == kBpbM2L ? tab.op_p[op] : p;
    sl.flip = tab.op_flip[op] != 0;
    const T ca = tab.cos_a[op], sa = tab.sin_a[op];
    T* c = cs + 4 * s * p;
    laplace_rotate_z_cs(sl.p, ca, sa, c, c + p);
    laplace_rotate_z_cs(sl.p, ca, T(-sa), c + 2 * p, c + 3 * p);
  };

  if (KIND == kBpbL2L) {
    for (int64_t base = int64_t(blockIdx.x) * S; base < nb; base += int64_t(gridDim.x) * S) {
      __syncthreads();
      if (tid < S) {
        slot[tid].p = 0;
        const int64_t t = base + tid;
        if (t < nb) {
          const int64_t b = b0 + t;
          const int32_t par = parent[b];
          if (has_local[par]) {
            fill(tid, Min + int64_t(par) * p2, kOpL2L + int(box_key[b] & 7u), b);
            has_local[b] = 1;
          }
        }
      }
      batch();
      for (int e = tid; e < nel; e += kBpbThreads) {
        int s, idx, n, m;
        if (!decode(e, s, idx, n, m)) continue;
        T* o = Out + slot[s].target * p2 + idx;
        *o += w1[e];
      }
    }
  } else {
  for (int64_t t = blockIdx.x; t < nb; t += gridDim.x) {
    const int64_t b = b0 + t;
    const int64_t e0 = KIND == kBpbM2M ? int64_t(rows32[b]) : rows64[b];
    const int64_t e1 = KIND == kBpbM2M ? int64_t(rows32[b + 1]) : rows64[b + 1];
    if (KIND == kBpbM2M && e1 == e0) continue;  // a leaf: its P2M stays
    T* out = Out + b * p2;
    __syncthreads();
    for (int i = tid; i < p2; i += kBpbThreads) acc[i] = KIND == kBpbM2M ? T(0) : out[i];
    for (int64_t k = e0; k < e1; k += S) {
      __syncthreads();
      if (tid < S) {
        slot[tid].p = 0;
        const int64_t e = k + tid;
        if (e < e1) {
          if (KIND == kBpbM2M)
            fill(tid, Min + e * p2, kOpM2M + int(box_key[e] & 7u), 0);
          else
            fill(tid, Min + int64_t(lidx[e]) * p2, lcls[e], 0);
        }
      }
      batch();
      // Row order: acc += result of slot 0, 1, ... (the serial order).
      for (int i = tid; i < p2; i += kBpbThreads) {
        T a = acc[i];
        for (int s = 0; s < S; ++s) {
          const int ps = slot[s].p;
          if (i < ps * ps) a += w1[s * p2 + i];
        }
        acc[i] = a;
      }
    }
    __syncthreads();
    for (int i = tid; i < p2; i += kBpbThreads) out[i] = acc[i];
    if (KIND == kBpbM2L && tid == 0 && e1 > e0) has_local[b] = 1;
  }
  }
}

// ------------------------------------------------------------ L2P

// kHess: the Hessian too, at fh (non-null, with fg). The kernels below are
// instantiated with and without it: the Hessian's walk takes twice the
// registers of the gradient's, so without kHess the L2P keeps four times
// the warps per SM (evaluate.cu: with_hess picks the instantiation).
template <class T, bool kHess>
__device__ __forceinline__ void l2p_point(int p, T h, const T* Lb, bool has, const double* __restrict__ xyz,
                                          int64_t i, const tree::LevelFrame& f, uint64_t key, T* fp, T* fg, T* fh,
                                          const LaplaceWalkCoef<T>* walk) {
  T v = T(0), g[3] = {T(0), T(0), T(0)}, hs[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};
  if (has) {
    const T zero[3] = {T(0), T(0), T(0)};
    T r[3];
    rel_point(xyz, i, f, key, r);
    laplace_l2p<T>(p, h, zero, Lb, 1, r, fp ? &v : nullptr, fg ? g : nullptr, walk, kHess ? hs : nullptr);
  }
  if (fp) fp[i] = v;
  if (fg)
    for (int k = 0; k < 3; ++k) fg[3 * i + k] = g[k];
  if constexpr (kHess)
    for (int k = 0; k < 6; ++k) fh[6 * i + k] = hs[k];
}

// l2p_point of ND local expansions (Lb + k stride) without the Hessian:
// density k's results at fp + k nl.pot_stride, fg + k nl.grad_stride (the
// first nl.nk are written).
template <class T, int ND>
__device__ __forceinline__ void l2p_point_nd(int p, T h, const T* Lb, int64_t stride, bool has,
                                             const double* __restrict__ xyz, int64_t i, const tree::LevelFrame& f,
                                             uint64_t key, T* fp, T* fg, const NdLayout& nl,
                                             const LaplaceWalkCoef<T>* walk) {
  T v[ND], g[3 * ND];
  for (int k = 0; k < ND; ++k) v[k] = g[3 * k] = g[3 * k + 1] = g[3 * k + 2] = T(0);
  if (has) {
    T r[3];
    rel_point(xyz, i, f, key, r);
    laplace_l2p_point_nd<T, ND>(p, T(1) / h, r, Lb, stride, fp ? v : nullptr, fg ? g : nullptr, walk);
  }
  for (int k = 0; k < ND && k < nl.nk; ++k) {
    if (fp) fp[k * nl.pot_stride + i] = v[k];
    if (fg)
      for (int c = 0; c < 3; ++c) fg[k * nl.grad_stride + 3 * i + c] = g[3 * k + c];
  }
}

// TpT over ND densities: k_l2p_tpt with l2p_point_nd (L of density k at
// L + k stride).
template <class T, int ND>
__global__ void k_l2p_tpt_nd(int64_t n, int p, T h, DevSet R, const int32_t* __restrict__ leaf_of,
                             const double* __restrict__ xyz, const T* __restrict__ L, int64_t stride,
                             const uint8_t* __restrict__ has_local, T* fp, T* fg, NdLayout nl,
                             const LaplaceWalkCoef<T>* __restrict__ walk) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t b = leaf_of[i];
    l2p_point_nd<T, ND>(p, h, L + b * int64_t(p) * p, stride, has_local[b] != 0, xyz, i, R.leaf, R.box_key[b], fp,
                        fg, nl, walk);
  }
}

// TpB: one thread per target leaf.
template <class T, bool kHess>
__global__ void k_l2p_tpb(int64_t b0, int64_t nb, const int32_t* __restrict__ boxes, int p, T h, DevSet R,
                          const double* __restrict__ xyz, const T* __restrict__ L,
                          const uint8_t* __restrict__ has_local, T* fp, T* fg, T* fh,
                          const LaplaceWalkCoef<T>* __restrict__ walk) {
  for (int64_t t = gtid(); t < nb; t += gstride()) {
    const int64_t b = box_at(b0, boxes, t);
    const bool has = has_local[b] != 0;
    const uint64_t key = R.box_key[b];
    for (int64_t i = R.point_begin[b]; i < R.point_end[b]; ++i)
      l2p_point<T, kHess>(p, h, L + b * int64_t(p) * p, has, xyz, i, R.leaf, key, fp, fg, fh, walk);
  }
}

// TpT: one thread per target.
template <class T, bool kHess>
__global__ void k_l2p_tpt(int64_t n, int p, T h, DevSet R, const int32_t* __restrict__ leaf_of,
                          const double* __restrict__ xyz, const T* __restrict__ L,
                          const uint8_t* __restrict__ has_local, T* fp, T* fg, T* fh,
                          const LaplaceWalkCoef<T>* __restrict__ walk) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t b = leaf_of[i];
    l2p_point<T, kHess>(p, h, L + b * int64_t(p) * p, has_local[b] != 0, xyz, i, R.leaf, R.box_key[b], fp, fg, fh,
                        walk);
  }
}

// BpB (l2p=bpb): one block per target leaf (blockDim 32 .. 128); L_b is read
// once into shared memory (dynamic, p^2 values) and the block's threads take
// the leaf's targets (l2p_point: the shared laplace_l2p, reading L from
// shared memory). has_local[b] == 0: zeros, as the other L2P kernels.
template <class T, bool kHess>
__global__ void __launch_bounds__(128)
    k_l2p_bpb(int64_t b0, int64_t nb, const int32_t* __restrict__ boxes, int p, T h, DevSet R,
              const double* __restrict__ xyz, const T* __restrict__ L, const uint8_t* __restrict__ has_local, T* fp,
              T* fg, T* fh, const LaplaceWalkCoef<T>* __restrict__ walk) {
  extern __shared__ __align__(16) unsigned char smraw[];
  T* Ls = reinterpret_cast<T*>(smraw);
  const int p2 = p * p;
  for (int64_t t = blockIdx.x; t < nb; t += gridDim.x) {
    const int64_t b = box_at(b0, boxes, t);
    const bool has = has_local[b] != 0;
    __syncthreads();  // the previous leaf's targets are done with Ls
    if (has)
      for (int c = threadIdx.x; c < p2; c += blockDim.x) Ls[c] = L[b * p2 + c];
    __syncthreads();
    const uint64_t key = R.box_key[b];
    for (int64_t i = R.point_begin[b] + threadIdx.x; i < R.point_end[b]; i += blockDim.x)
      l2p_point<T, kHess>(p, h, Ls, has, xyz, i, R.leaf, key, fp, fg, fh, walk);
  }
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
