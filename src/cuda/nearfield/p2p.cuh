// The CUDA near field over CSR target -> source lists, for every pair kernel
// (src/cxx/kernels): target boxes R, source boxes S, one list row per
// target box naming its source boxes (the FMM's neighbour list; the
// treecode's direct list). The per-pair math is the kernel struct's
// accumulate, the same function the OpenMP near field (nearfield/p2p.hpp)
// calls. Coordinates are double in memory (near_coord): with T = double
// they are used as given, so that each source-target difference is one
// rounding, as in the double direct sum and the CPU near field (exact for
// close pairs); with T = float each coordinate is taken relative to the
// target box's exact centre (tree::box_relative, DevSet::leaf) in double and
// split into a float and the float rest, and each difference is formed from
// both (near_diff): float's relative accuracy for close pairs too, as the
// CPU's double differences give, wherever the box is.
//
// Two schedules: BpB (k_p2p_bpb, the default: one block per work unit, a
// pass of up to 2 kP2PBlock targets of a target box, sources swept through
// shared memory) and TpT (k_p2p_tpt: one thread per target, sources read
// from global memory). The BpB work units come from nearfield::cuda::
// build_units (p2p_units.cuh): counted, keyed and sorted by cost.
//
// NVRTC compiles this header too, with a user kernel as Kern
// (nearfield/user_kernel.cu): it includes only host+device headers and names
// no host library (the kernel structs come from the includer).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/device_views.cuh"
#include "kernels/fast_math.hpp"

namespace gpufmm {
namespace nearfield {
namespace cuda {

using gpufmm::cuda::DevList;
using gpufmm::cuda::DevSet;
using gpufmm::cuda::NdLayout;
using gpufmm::cuda::gstride;
using gpufmm::cuda::gtid;
using gpufmm::cuda::warp_inclusive_scan;

constexpr int kP2PBlock = 128;
constexpr int kMaxNeighbors = 64;  // source boxes per shared-memory segment of a row

// The frame of target box b for near_coord: its integer coordinates in the
// leaves' frame R.leaf (or, when the frame is not set, its centre).
struct NearFrame {
  tree::LevelFrame f;
  int32_t i[3];
  double c[3];
  bool exact;
};

__device__ __forceinline__ NearFrame near_frame(const DevSet& R, int64_t b) {
  NearFrame fr;
  fr.f = R.leaf;
  fr.exact = R.leaf.half > 0;
  fr.i[0] = fr.i[1] = fr.i[2] = 0;
  if (fr.exact) tree::morton_decode(R.box_key[b], fr.i[0], fr.i[1], fr.i[2]);  // sets without keys: no frame
  for (int k = 0; k < 3; ++k) fr.c[k] = fr.exact ? 0.0 : R.center[3 * b + k];
  return fr;
}

// Coordinate x (axis k) as the near field of precision T takes it (see the
// top of this file): with T = float, the box-relative coordinate in double,
// rounded (near_coord), and what the rounding left (near_coord_lo), so that
// a difference (t - s) + (t_lo - s_lo) of two coordinates keeps the
// relative accuracy of float however close the points are (t - s of two
// near floats is exact), as the CPU near field's double differences do.
// With T = double the coordinate is x and there is no rest.
template <class T>
constexpr bool kSplit = sizeof(T) < sizeof(double);

__device__ __forceinline__ double near_rel(const NearFrame& fr, int k, double x) {
  return fr.exact ? tree::box_relative(fr.f, k, fr.i[k], x) : x - fr.c[k];
}
template <class T>
__device__ __forceinline__ T near_coord(const NearFrame& fr, int k, double x) {
  if (sizeof(T) == sizeof(double)) return T(x);
  return T(near_rel(fr, k, x));
}
template <class T>
__device__ __forceinline__ T near_coord_lo(const NearFrame& fr, int k, double x) {
  if (sizeof(T) == sizeof(double)) return T(0);
  const double r = near_rel(fr, k, x);
  return T(r - double(T(r)));
}

// The pairs of one shared-memory tile (m sources) with the first NT of a
// thread's two targets, sources in order: every target's sum runs over the
// sources in the same order whatever NT is.
// The difference (t - s) of two near_coord values, with their rests when T
// splits (see near_coord_lo).
template <class T>
__device__ __forceinline__ T near_diff(T t, T tl, T s, T sl) {
  if constexpr (kSplit<T>)
    return (t - s) + (tl - sl);
  else
    return t - s;
}

// kH: the Hessian too (the Laplace kernel's accumulate_hess), into h.
// ND densities on the same points (charges sq[kk * kP2PBlock + jj], dipoles
// likewise, accumulators v[kk][k] ...): the pair's geometry (differences,
// distance, its powers) is formed once and serves all ND (the compiler
// shares the identical subexpressions of the kernel's accumulate, which
// stays the one formula); each density's sum runs over the sources in the
// same order as with ND = 1.
template <class T, bool kC, bool kD, bool kG, int NT, bool kH, int ND, class Kern>
__device__ __forceinline__ void p2p_tile(const Kern& kern, int m, const T* sx, const T* sy, const T* sz,
                                         const T* sxl, const T* syl, const T* szl, const T* sq, const T* sdx,
                                         const T* sdy, const T* sdz, const T (&tx)[2], const T (&ty)[2],
                                         const T (&tz)[2], const T (&txl)[2], const T (&tyl)[2], const T (&tzl)[2],
                                         T (&v)[ND][2], T (&gx)[ND][2], T (&gy)[ND][2], T (&gz)[ND][2],
                                         T (&h)[kH ? 2 : 1][6]) {
  constexpr bool kL = kSplit<T>;
  constexpr int B = kP2PBlock;
#pragma unroll 8
  for (int jj = 0; jj < m; ++jj) {
    const T xs = sx[jj], ys = sy[jj], zs = sz[jj];
    const T xl = kL ? sxl[jj] : T(0), yl = kL ? syl[jj] : T(0), zl = kL ? szl[jj] : T(0);
#pragma unroll
    for (int k = 0; k < NT; ++k) {
      const T rx = near_diff(tx[k], txl[k], xs, xl), ry = near_diff(ty[k], tyl[k], ys, yl),
              rz = near_diff(tz[k], tzl[k], zs, zl);
#pragma unroll
      for (int kk = 0; kk < ND; ++kk) {
        const int j = kk * B + jj;
        const T qs = kC ? sq[j] : T(0);
        const T dxs = kD ? sdx[j] : T(0), dys = kD ? sdy[j] : T(0), dzs = kD ? sdz[j] : T(0);
        if constexpr (kH)
          kern.template accumulate_hess<kC, kD>(
              rx, ry, rz, qs, dxs, dys, dzs,
              ::gpufmm::kernels::HessRef<T>{v[kk][k], gx[kk][k], gy[kk][k], gz[kk][k], h[k][0], h[k][1], h[k][2],
                                            h[k][3], h[k][4], h[k][5]});
        else
          kern.template accumulate<kC, kD, kG>(rx, ry, rz, qs, dxs, dys, dzs, v[kk][k], gx[kk][k], gy[kk][k],
                                               gz[kk][k]);
      }
    }
  }
}

// Targets of one work unit of k_p2p_bpb (p2p_units.cuh).
constexpr int kP2PPass = 2 * kP2PBlock;

// A thread's up to two targets of a pass, t0 + slot and t0 + kP2PBlock +
// slot (active: below te): their indices i, coordinates as near_coord takes
// them (and their rests, kSplit) and sums of ND densities (v, g; kH: the
// Hessian h) zeroed.
template <class T, bool kH, int ND>
__device__ __forceinline__ void p2p_targets(const NearFrame& fr, const double* txyz, int32_t t0,
                                            int32_t te, int slot, int32_t (&i)[2], bool (&active)[2], T (&tx)[2],
                                            T (&ty)[2], T (&tz)[2], T (&txl)[2], T (&tyl)[2], T (&tzl)[2],
                                            T (&v)[ND][2], T (&gx)[ND][2], T (&gy)[ND][2], T (&gz)[ND][2],
                                            T (&h)[kH ? 2 : 1][6]) {
  constexpr bool kL = kSplit<T>;
  for (int k = 0; k < 2; ++k) {
    i[k] = t0 + k * kP2PBlock + slot;
    active[k] = i[k] < te;
    tx[k] = ty[k] = tz[k] = txl[k] = tyl[k] = tzl[k] = T(0);
    if (active[k]) {
      const double* t = txyz + 3 * int64_t(i[k]);
      tx[k] = near_coord<T>(fr, 0, t[0]);
      ty[k] = near_coord<T>(fr, 1, t[1]);
      tz[k] = near_coord<T>(fr, 2, t[2]);
      if (kL) {
        txl[k] = near_coord_lo<T>(fr, 0, t[0]);
        tyl[k] = near_coord_lo<T>(fr, 1, t[1]);
        tzl[k] = near_coord_lo<T>(fr, 2, t[2]);
      }
    }
    for (int kk = 0; kk < ND; ++kk) v[kk][k] = gx[kk][k] = gy[kk][k] = gz[kk][k] = T(0);
    if (kH)
      for (int c = 0; c < 6; ++c) h[k][c] = T(0);
  }
}

// One segment of a row (ne <= kMaxNeighbors of its source boxes from entry
// e0): the boxes' first points (sbeg) and sizes, a thread per box (their
// loads in flight together), then their prefix sums (pre) by warp 0, two
// boxes per lane. Returns the segment's records (pre[ne]).
__device__ __forceinline__ int p2p_segment(const DevSet& S, const DevList& nbl, int64_t e0, int ne,
                                           int32_t* pre, int32_t* sbeg) {
  static_assert(kMaxNeighbors <= 64 && kP2PBlock >= kMaxNeighbors, "a thread per box, two per lane of warp 0");
  __syncthreads();  // every thread is done with the previous segment's pre
  if (int(threadIdx.x) < ne) {
    const int32_t s = nbl.index[e0 + threadIdx.x];
    sbeg[threadIdx.x] = S.point_begin[s];
    pre[threadIdx.x + 1] = S.point_end[s] - S.point_begin[s];
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int l = int(threadIdx.x);
    const int a = 2 * l < ne ? pre[2 * l + 1] : 0, c = 2 * l + 1 < ne ? pre[2 * l + 2] : 0;
    const int sum = warp_inclusive_scan(a + c, l);
    if (2 * l < ne) pre[2 * l + 1] = sum - c;
    if (2 * l + 1 < ne) pre[2 * l + 2] = sum;
    if (l == 0) pre[0] = 0;
  }
  __syncthreads();
  return pre[ne];
}

// Parts (kParts, parts > 1): the parts' sums into part 0's, in part order,
// through the shared red (4 ND rows of kP2PBlock).
template <class T, int ND, int NR, int NC>
__device__ __forceinline__ void p2p_add_parts(int parts, int part, T (&red)[NR][NC], T (&v)[ND][2], T (&gx)[ND][2],
                                              T (&gy)[ND][2], T (&gz)[ND][2]) {
  constexpr int B = kP2PBlock;
  __syncthreads();
  if (part > 0)
    for (int kk = 0; kk < ND; ++kk) {
      red[4 * kk][threadIdx.x] = v[kk][0];
      red[4 * kk + 1][threadIdx.x] = gx[kk][0];
      red[4 * kk + 2][threadIdx.x] = gy[kk][0];
      red[4 * kk + 3][threadIdx.x] = gz[kk][0];
    }
  __syncthreads();
  if (part == 0)
    for (int q = 1; q < parts; ++q) {
      const int o = int(threadIdx.x) + q * (B / parts);
      for (int kk = 0; kk < ND; ++kk) {
        v[kk][0] += red[4 * kk][o];
        gx[kk][0] += red[4 * kk + 1][o];
        gy[kk][0] += red[4 * kk + 2][o];
        gz[kk][0] += red[4 * kk + 3][o];
      }
    }
}

// The sums of the active targets (part 0's) to pot, grad (kG) and hess (kH).
template <class T, bool kG, bool kH, int ND>
__device__ __forceinline__ void p2p_store(int part, const int32_t (&i)[2], const bool (&active)[2],
                                          const T (&v)[ND][2], const T (&gx)[ND][2], const T (&gy)[ND][2],
                                          const T (&gz)[ND][2], const T (&h)[kH ? 2 : 1][6], T* pot,
                                          T* grad, T* hess, const NdLayout& nl) {
  for (int k = 0; k < 2; ++k)
    if (active[k] && part == 0) {
#pragma unroll
      for (int kk = 0; kk < ND; ++kk) {
        if (ND > 1 && kk >= nl.nk) break;
        if (pot) pot[kk * nl.pot_stride + i[k]] = v[kk][k];
        if (kG) {
          T* g = grad + kk * nl.grad_stride + 3 * int64_t(i[k]);
          g[0] = gx[kk][k];
          g[1] = gy[kk][k];
          g[2] = gz[kk][k];
        }
      }
      if constexpr (kH)
        for (int c = 0; c < 6; ++c) hess[6 * int64_t(i[k]) + c] = h[k][c];
    }
}

// BpB (papers/000 sec. 4.2): one block per work unit, a pass of up to
// 2 kP2PBlock targets of a target leaf (units: build_units, the most
// expensive first, so that the crowded leaves of non-uniform data do not
// run last). The leaf's near sources (the NEIGHBORS row, concatenated) are
// swept in tiles of kP2PBlock records in shared memory, coordinates
// as near_coord takes them; each thread owns up to two
// targets, t and t + kP2PBlock (two only when the pass has more than
// kP2PBlock: one tile load and one shared-memory read serve both, and the
// two sums are independent chains); in double, a pass of at most
// kP2PBlock / 2 or / 4 targets has 2 or 4 threads per target, each over its
// part of every tile (without the Hessian; the parts' sums added in part
// order).
// Pair math: the kernel struct's accumulate (kH: accumulate_hess, the
// Hessian into hess, 6 per target; kG then too).
// The body of k_p2p_bpb and k_p2p_bpb_nd (ND densities laid out as nl says).
template <class Kern, class T, bool kC, bool kD, bool kG, bool kH, int ND>
__device__ __forceinline__ void p2p_bpb(const Kern& kern, int64_t b0, int64_t nunits, const uint64_t* __restrict__ units,
                                        const DevSet& R, const DevSet& S, const DevList& nbl,
                                        const double* __restrict__ sxyz, const double* __restrict__ txyz,
                                        const T* __restrict__ q, const T* __restrict__ d, T* __restrict__ pot,
                                        T* __restrict__ grad, T* __restrict__ hess, const NdLayout& nl) {
  static_assert(ND == 1 || !kH, "the Hessian takes one density at a time");
  constexpr int B = kP2PBlock;
  constexpr bool kL = kSplit<T>;
  constexpr bool kParts = !kH && !kSplit<T>;  // see parts below
  __shared__ T sx[B], sy[B], sz[B], sq[kC ? ND * B : 1], sdx[kD ? ND * B : 1], sdy[kD ? ND * B : 1],
      sdz[kD ? ND * B : 1];
  __shared__ T sxl[kL ? B : 1], syl[kL ? B : 1], szl[kL ? B : 1];
  __shared__ T red[kParts ? 4 * ND : 1][kParts ? B : 1];
  __shared__ int32_t pre[kMaxNeighbors + 1], sbeg[kMaxNeighbors];
  for (int64_t u = blockIdx.x; u < nunits; u += gridDim.x) {
    const uint64_t w = units[u];
    const int64_t b = b0 + int64_t(w >> 32);
    const int32_t pass = int32_t(w & 0xffffffffu);
    const NearFrame fr = near_frame(R, b);
    const int32_t te = R.point_end[b];
    const int32_t t0 = R.point_begin[b] + pass * kP2PPass;
    const bool two = te - t0 > B;  // the same for the whole block
    // Parts: a pass of at most B/4 (B/2) targets is summed by 4 (2)
    // threads per target, each over its contiguous quarter (half) of every
    // tile, and the parts' sums are added in part order at the end; so a
    // small leaf's block keeps all its warps at work (with one thread per
    // target, the Plummer points' passes of 59 targets on average left
    // half of them idle and the FP64 pipe at 71 %; with parts the P2P
    // alone is 1-15 % faster on adaptive plans, H200). kParts: double
    // without the Hessian (ND densities take the same parts, so each keeps
    // the one-density order). The float near field, bound by its issue
    // rate rather than by the FP64 pipe's latency, ran 3-7 % slower with
    // parts; it keeps one thread per target (part 0 as a constant: as a
    // value its index arithmetic made the float kernel 20 % slower).
    const int parts = kParts ? (te - t0 <= B / 4 ? 4 : te - t0 <= B / 2 ? 2 : 1) : 1;
    const int slot = kParts ? int(threadIdx.x) % (B / parts) : int(threadIdx.x);
    const int part = kParts ? int(threadIdx.x) / (B / parts) : 0;
    int32_t i[2];
    bool active[2];
    T tx[2], ty[2], tz[2], txl[2], tyl[2], tzl[2], v[ND][2], gx[ND][2], gy[ND][2], gz[ND][2], h[kH ? 2 : 1][6];
    p2p_targets<T, kH, ND>(fr, txyz, t0, te, slot, i, active, tx, ty, tz, txl, tyl, tzl, v, gx, gy, gz, h);
    // The row's source boxes in segments of up to kMaxNeighbors (one
    // segment for the FMM's neighbour rows, <= 27 boxes), concatenated.
    const int64_t row_end = nbl.offsets[b + 1];
    for (int64_t e0 = nbl.offsets[b]; e0 < row_end; e0 += kMaxNeighbors) {
      const int ne = static_cast<int>(row_end - e0 < kMaxNeighbors ? row_end - e0 : kMaxNeighbors);
      const int n = p2p_segment(S, nbl, e0, ne, pre, sbeg);
      int kb = 0;  // the box of this thread's record k: k only grows, so kb carries over
      for (int j0 = 0; j0 < n; j0 += B) {
        const int k = j0 + threadIdx.x;
        if (k < n) {  // record k into this thread's slot of the tile
          while (pre[kb + 1] <= k) ++kb;
          const int64_t si = sbeg[kb] + (k - pre[kb]);
          sx[threadIdx.x] = near_coord<T>(fr, 0, sxyz[3 * si]);
          sy[threadIdx.x] = near_coord<T>(fr, 1, sxyz[3 * si + 1]);
          sz[threadIdx.x] = near_coord<T>(fr, 2, sxyz[3 * si + 2]);
          if (kL) {
            sxl[threadIdx.x] = near_coord_lo<T>(fr, 0, sxyz[3 * si]);
            syl[threadIdx.x] = near_coord_lo<T>(fr, 1, sxyz[3 * si + 1]);
            szl[threadIdx.x] = near_coord_lo<T>(fr, 2, sxyz[3 * si + 2]);
          }
#pragma unroll
          for (int kk = 0; kk < ND; ++kk) {  // densities past nk: zeros
            const bool real = ND == 1 || kk < nl.nk;
            const int j = kk * B + threadIdx.x;
            if (kC) sq[j] = real ? q[kk * nl.q_stride + si] : T(0);
            if (kD) {
              const T* dk = d + kk * nl.d_stride + 3 * si;
              sdx[j] = real ? dk[0] : T(0);
              sdy[j] = real ? dk[1] : T(0);
              sdz[j] = real ? dk[2] : T(0);
            }
          }
        }
        __syncthreads();
        const int m = n - j0 < B ? n - j0 : B;
        if (two) {
          if (active[0])
            p2p_tile<T, kC, kD, kG, 2, kH, ND>(kern, m, sx, sy, sz, sxl, syl, szl, sq, sdx, sdy, sdz, tx, ty, tz,
                                               txl, tyl, tzl, v, gx, gy, gz, h);
        } else if (active[0]) {  // this part's records [j, j + mp) of the tile (all of it with one part)
          int j = 0, mp = m;
          if (kParts && parts > 1) {
            const int c = (m + parts - 1) / parts;
            j = min(m, part * c);
            mp = min(m, j + c) - j;
          }
          p2p_tile<T, kC, kD, kG, 1, kH, ND>(kern, mp, sx + j, sy + j, sz + j, sxl + (kL ? j : 0), syl + (kL ? j : 0),
                                             szl + (kL ? j : 0), sq + (kC ? j : 0), sdx + (kD ? j : 0),
                                             sdy + (kD ? j : 0), sdz + (kD ? j : 0), tx, ty, tz, txl, tyl,
                                             tzl, v, gx, gy, gz, h);
        }
        __syncthreads();
      }
    }
    if (kParts && parts > 1) p2p_add_parts<T, ND>(parts, part, red, v, gx, gy, gz);
    p2p_store<T, kG, kH, ND>(part, i, active, v, gx, gy, gz, h, pot, grad, hess, nl);
  }
}

template <class Kern, class T, bool kC, bool kD, bool kG, bool kH = false>
__global__ void __launch_bounds__(kP2PBlock)
    k_p2p_bpb(Kern kern, int64_t b0, int64_t nunits, const uint64_t* __restrict__ units, DevSet R, DevSet S, DevList nbl,
              const double* __restrict__ sxyz, const double* __restrict__ txyz, const T* __restrict__ q,
              const T* __restrict__ d, T* __restrict__ pot, T* __restrict__ grad, T* __restrict__ hess) {
  p2p_bpb<Kern, T, kC, kD, kG, kH, 1>(kern, b0, nunits, units, R, S, nbl, sxyz, txyz, q, d, pot, grad, hess,
                                      NdLayout{});
}

// BpB over ND densities on one geometry (nl: the first nl.nk are real):
// each source tile and each pair's geometry serve all of them.
template <class Kern, class T, bool kC, bool kD, bool kG, int ND>
__global__ void __launch_bounds__(kP2PBlock)
    k_p2p_bpb_nd(Kern kern, int64_t b0, int64_t nunits, const uint64_t* __restrict__ units, DevSet R, DevSet S,
                 DevList nbl, const double* __restrict__ sxyz, const double* __restrict__ txyz,
                 const T* __restrict__ q, const T* __restrict__ d, T* __restrict__ pot, T* __restrict__ grad,
                 NdLayout nl) {
  p2p_bpb<Kern, T, kC, kD, kG, false, ND>(kern, b0, nunits, units, R, S, nbl, sxyz, txyz, q, d, pot, grad, nullptr,
                                          nl);
}

// TpT: one thread per target, its leaf's near sources read from global memory.
// kH (the Laplace kernel's accumulate_hess; kG then too): the Hessian into
// hess (6 per target) as well.
template <class Kern, class T, bool kC, bool kD, bool kG, bool kH = false>
__global__ void k_p2p_tpt(Kern kern, int64_t n, DevSet R, DevSet S, DevList nbl, const int32_t* __restrict__ leaf_of,
                          const double* __restrict__ sxyz, const double* __restrict__ txyz,
                          const T* __restrict__ q, const T* __restrict__ d, T* __restrict__ pot,
                          T* __restrict__ grad, T* __restrict__ hess = nullptr) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t b = leaf_of[i];
    const NearFrame fr = near_frame(R, b);
    const double* t = txyz + 3 * i;
    const T tx = near_coord<T>(fr, 0, t[0]), ty = near_coord<T>(fr, 1, t[1]), tz = near_coord<T>(fr, 2, t[2]);
    const T txl = near_coord_lo<T>(fr, 0, t[0]), tyl = near_coord_lo<T>(fr, 1, t[1]),
            tzl = near_coord_lo<T>(fr, 2, t[2]);
    T o[kH ? 10 : 4];  // potential, gradient (, Hessian)
    for (T& x : o) x = T(0);
    for (int64_t e = nbl.offsets[b]; e < nbl.offsets[b + 1]; ++e) {
      const int32_t s = nbl.index[e];
      for (int64_t j = S.point_begin[s]; j < S.point_end[s]; ++j) {
        const double* x = sxyz + 3 * j;
        const T rx = near_diff(tx, txl, near_coord<T>(fr, 0, x[0]), near_coord_lo<T>(fr, 0, x[0]));
        const T ry = near_diff(ty, tyl, near_coord<T>(fr, 1, x[1]), near_coord_lo<T>(fr, 1, x[1]));
        const T rz = near_diff(tz, tzl, near_coord<T>(fr, 2, x[2]), near_coord_lo<T>(fr, 2, x[2]));
        const T qj = kC ? q[j] : T(0);
        const T dx = kD ? d[3 * j] : T(0), dy = kD ? d[3 * j + 1] : T(0), dz = kD ? d[3 * j + 2] : T(0);
        if constexpr (kH)
          kern.template accumulate_hess<kC, kD>(rx, ry, rz, qj, dx, dy, dz, ::gpufmm::kernels::hess_ref(o));
        else
          kern.template accumulate<kC, kD, kG>(rx, ry, rz, qj, dx, dy, dz, o[0], o[1], o[2], o[3]);
      }
    }
    if (pot) pot[i] = o[0];
    if (kG)
      for (int c = 0; c < 3; ++c) grad[3 * i + c] = o[1 + c];
    if constexpr (kH)
      for (int c = 0; c < 6; ++c) hess[6 * i + c] = o[4 + c];
  }
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
