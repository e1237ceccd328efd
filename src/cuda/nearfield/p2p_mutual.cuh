// The mutual near field: sources = targets, charges, the leaves of one
// uniform level (the Laplace FMM's P2P where its plan allows it and its
// passes fill the GPU, LaplaceGpuKernels::p2p_mutual; measured in
// docs/laplace_gpu.md "Mutual P2P": latency bound, alone 2 % faster than the
// one-sided kernel at 1e6 points and 17 % at 1e7, the evaluate 13-18 %
// faster, as it also runs beside the far field). Each unordered pair of
// neighbouring leaves is visited once and each of its point pairs once: the distance and
// its reciprocal square root serve both directions (the kernel struct's
// accumulate_mutual; 23 FP64 instructions per pair with the gradient against
// 2 x 18 for the two directions of the one-sided near field, p2p.cuh; 24
// and 19 before the r == 0 test left the FP64 pipe, rsqrt_or_zero).
//
// Passes, so that the sums are deterministic without atomics. Pass 0 sums
// every leaf with itself (one-sided: the kernel's accumulate). Each of the
// other 26 takes one of the 13 offsets o with o's first non-zero component
// +1, and the pairs (A, A + o) whose A has the parity pi along that axis:
// the A of a pass have coordinate pi there and the A + o have pi + 1, so no
// leaf is written by two blocks of a pass. The passes run one after another
// on one stream and add into the results (zeroed first), so every target's
// sum has the same order in every run.
//
// In a block (NW warps), each lane holds up to NA points of A (a chunk of
// up to 32 NW NA; mutual_max_na). A tile of 32 points of B sits in shared
// memory; at step s lane l takes point (l + s) mod 32, whose four sums
// travel one lane down per step by shuffles, so that after 32 steps every
// lane holds its own point's sums over the warp's points of A; the warps'
// sums are added in warp order. The flow schedule (k_p2p_mutual_flow) runs
// the same pairs in one launch without the passes' barriers: each leaf pair
// waits only until its two leaves have finished their earlier passes, so
// every target's sum keeps the passes' order and bits. Float: coordinates
// relative to A's box, split as p2p.cuh's near_coord / near_coord_lo (the
// difference of a point of B and a point of A is the same vector negated).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "core/context.hpp"
#include "cuda/nearfield/p2p.cuh"

namespace gpufmm {
namespace nearfield {
namespace cuda {

// Points of A per lane at most: NW warps hold a chunk of up to 32 NW NA
// points of A and sweep B once per chunk. In float, two-warp blocks take
// up to 5 (320 points): the leaves of uniform points average 244 at
// N = 1e6 (L = 4) and 305 at 1e7 (L = 5), and a chunk of 256 left a rest
// of a few dozen points, whose second sweep over B had one point per lane
// to spread the tile's loads and the shuffles over (the float P2P alone
// 4.88 -> 4.71 ms at 1e6, 62.5 -> 58.2 ms at 1e7; H200). In double the
// FP64 pipe bounds the rest's sweep as well: 5 gained nothing at 1e7 and
// lost 1.5 % at 1e6, so it stays at 4 (docs/laplace_gpu.md "Mutual P2P").
template <class T, int NW>
constexpr int mutual_max_na() {
  return sizeof(T) == 4 && NW == 2 ? 5 : 8 / NW;
}

// Resident warps per SM that the register budget must allow: 12 (at most
// 168 registers per thread). Left alone, two-warp blocks took 184 and ran
// 4-8 % slower; a cap of 128 was slower too (docs/laplace_gpu.md "Mutual P2P").
constexpr int kMutualMinWarpsPerSm = 12;
constexpr int kMutualPasses = 27;

// The leaf pairs of the passes: device pairs (A, B), pass after pass,
// pass k at [offset[k], offset[k + 1]) (host offsets). pairs == nullptr:
// none built (the level is not a grid of neighbours, or nothing to pair).
// A block sums one pair, |A| |B| point pairs (|A|^2 for pass 0); work is
// their sum over all blocks, tail the sum over the passes of each pass's
// largest. Every pass waits for its largest block, so leaves of very
// different sizes (clustered points at a uniform depth) leave the device
// idle behind one block per pass (mutual_is_balanced).
//
// The flow schedule: within each pass the pairs are sorted by when their
// leaves become free (the later of the two leaves' last positions in the
// passes before), and need[u] holds, for pair u = (A, B), how many pairs
// of earlier passes hold A and B. counters: nb leaves' counts of finished
// pairs, then the launch's ticket (zeroed before each launch).
struct MutualPasses {
  int2* pairs = nullptr;
  int2* need = nullptr;
  unsigned* counters = nullptr;
  int64_t b0 = 0, nb = 0;
  int64_t offset[kMutualPasses + 1] = {};
  double work = 0;
  double tail = 0;
};

// Whether the passes keep a device of `sms` multiprocessors busy: the
// passes' largest blocks, each given a multiprocessor's share of the
// device's rate, take at most kMutualMaxTail of the time of all the work
// spread over the device (tail sms <= kMutualMaxTail work). Estimated from
// the leaves' counts at N = 1e6 (docs/laplace_gpu.md "Mutual P2P"):
// uniform points at L = 4 have tail sms / work = 0.10 (132 SMs; the mutual
// P2P alone as fast as BpB, the evaluate 13-18 % faster beside the far
// field), at 1e7 and L = 5 0.01; two clusters at a uniform L = 8 have
// 0.97 and L = 7 6.2, where the mutual P2P ran 2.5x and 10.7x slower
// than BpB (NVIDIA H200).
constexpr double kMutualMaxTail = 0.25;
inline bool mutual_is_balanced(const MutualPasses& mp, int sms) {
  return mp.tail * double(sms) <= kMutualMaxTail * mp.work;
}

// Whether the flow schedule (k_p2p_mutual_flow) is worth its cost: it
// removes the passes' waits for their largest blocks, but as one launch
// that always has a pair to give it also keeps the far field's kernels,
// on the other stream, from the gaps the passes leave. Measured on the
// H200 (N uniform points, eps 1e-6, pot + grad; docs/laplace_gpu.md
// "Mutual P2P"): N = 1e6, L = 4, tail sms / work = 0.10: the evaluate
// 12.08 -> 11.58 ms in double, 8.04 -> 7.45 ms in float; N = 1e7, L = 5,
// 0.01: 141.2 -> 153-157 ms. The ratio is set by the number of leaf
// pairs per pass against the SMs, so the rule splits the depths.
constexpr double kMutualFlowTail = 0.05;
inline bool mutual_flow_pays(const MutualPasses& mp, int sms) {
  return mp.tail * double(sms) > kMutualFlowTail * mp.work;
}

// The passes of leaves [b0, b0 + nb) of R (keys: Morton codes of one level),
// from their neighbour rows `list` (symmetric, each row holding the leaf
// itself). pairs is allocated with `alloc` and filled on `stream`, which is
// synchronised once (the counts). A row naming a leaf that is not adjacent
// gives no passes. The pairs of a pass are in the order of the flow
// schedule (the passes do not depend on it), so the plan is the same in
// every run.
MutualPasses build_mutual_passes(Context& ctx, cudaStream_t stream, int64_t b0, int64_t nb, DevSet R, DevList list,
                                 const std::function<void*(size_t, const char*)>& alloc, const char* what);

// A block's shared memory: two buffers (by tile parity) of the tile of B
// (x, y, z, their float rests, charge) and of the warps' sums of its points.
template <class T, int NW>
struct MutualShared {
  T tile[2][32][7];
  T red[2][NW][32][4];
};

// A result to add to: from L2 (kL2: the flow schedule, where a block on
// another SM wrote it; 3-5 % slower in the passes, which do not need it).
template <bool kL2, class T>
__device__ __forceinline__ T result_load(const T* p) {
  if constexpr (kL2)
    return __ldcg(p);
  else
    return *p;
}

// The points [a0, min(a0 + NA 32 NW, ae)) of A (this thread's:
// a0 + k 32 NW + threadIdx.x) against all of B = [bb, be):
// A's sums, and when !kSelf B's, added to pot (if set) and grad (kG).
// Slots past the end take the first point's coordinates and no charge.
template <class Kern, class T, bool kG, bool kSelf, bool kL2, int NW, int NA>
__device__ __forceinline__ void mutual_chunk(const Kern& kern, const NearFrame& fr, int32_t a0, int32_t ae,
                                             int32_t bb, int32_t be, const double* __restrict__ xyz,
                                             const T* __restrict__ q, T* __restrict__ pot, T* __restrict__ grad,
                                             MutualShared<T, NW>& sh) {
  constexpr bool kL = kSplit<T>;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  T ax[NA], ay[NA], az[NA], axl[NA], ayl[NA], azl[NA], aq[NA], av[NA], agx[NA], agy[NA], agz[NA];
#pragma unroll
  for (int k = 0; k < NA; ++k) {
    const int32_t i = a0 + k * 32 * NW + threadIdx.x;
    const double* x = xyz + 3 * int64_t(i < ae ? i : a0);
    ax[k] = near_coord<T>(fr, 0, x[0]);
    ay[k] = near_coord<T>(fr, 1, x[1]);
    az[k] = near_coord<T>(fr, 2, x[2]);
    axl[k] = near_coord_lo<T>(fr, 0, x[0]);
    ayl[k] = near_coord_lo<T>(fr, 1, x[1]);
    azl[k] = near_coord_lo<T>(fr, 2, x[2]);
    aq[k] = i < ae ? q[i] : T(0);
    av[k] = agx[k] = agy[k] = agz[k] = T(0);
  }
  int buf = 0;
  for (int32_t t0 = bb; t0 < be; t0 += 32, buf ^= 1) {
    const int32_t j = t0 + lane;
    // The tile of B in shared memory (tile buf: the other buffer may still
    // be read by a warp that has not left the previous tile); warp 0
    // fetches what B's results hold now, to add to at the end.
    if (w == 0) {
      const double* x = xyz + 3 * int64_t(j < be ? j : bb);
      T* t = sh.tile[buf][lane];
      t[0] = near_coord<T>(fr, 0, x[0]);
      t[1] = near_coord<T>(fr, 1, x[1]);
      t[2] = near_coord<T>(fr, 2, x[2]);
      t[3] = near_coord_lo<T>(fr, 0, x[0]);
      t[4] = near_coord_lo<T>(fr, 1, x[1]);
      t[5] = near_coord_lo<T>(fr, 2, x[2]);
      t[6] = j < be ? q[j] : T(0);
    }
    T old[4] = {T(0), T(0), T(0), T(0)};
    if (!kSelf && w == 0 && j < be) {
      if (pot) old[0] = result_load<kL2>(pot + j);
      if (kG)
        for (int c = 0; c < 3; ++c) old[1 + c] = result_load<kL2>(grad + 3 * int64_t(j) + c);
    }
    __syncthreads();
    T bv = T(0), bgx = T(0), bgy = T(0), bgz = T(0);
    const int next = (lane + 1) & 31;
#pragma unroll 4
    for (int step = 0; step < 32; ++step) {
      // Step s: lane l with point (l + s) mod 32 of the tile, whose sums it
      // took from lane l + 1 (its holder at step s - 1).
      const T* t = sh.tile[buf][(lane + step) & 31];
      const T bx = t[0], by = t[1], bz = t[2], bxl = kL ? t[3] : T(0), byl = kL ? t[4] : T(0),
              bzl = kL ? t[5] : T(0), bq = t[6];
#pragma unroll
      for (int k = 0; k < NA; ++k) {
        const T rx = near_diff(ax[k], axl[k], bx, bxl), ry = near_diff(ay[k], ayl[k], by, byl),
                rz = near_diff(az[k], azl[k], bz, bzl);
        if constexpr (kSelf)
          kern.template accumulate<true, false, kG>(rx, ry, rz, bq, T(0), T(0), T(0), av[k], agx[k], agy[k], agz[k]);
        else
          kern.template accumulate_mutual<kG>(rx, ry, rz, aq[k], bq, av[k], agx[k], agy[k], agz[k], bv, bgx, bgy,
                                              bgz);
      }
      if (!kSelf) {
        bv = __shfl_sync(0xffffffffu, bv, next);
        if (kG) {
          bgx = __shfl_sync(0xffffffffu, bgx, next);
          bgy = __shfl_sync(0xffffffffu, bgy, next);
          bgz = __shfl_sync(0xffffffffu, bgz, next);
        }
      }
    }
    if (!kSelf) {  // after 32 steps lane l holds the sums of point j: the warps' sums, in warp order
      T (*red)[4] = sh.red[buf][w];
      red[lane][0] = bv;
      red[lane][1] = bgx;
      red[lane][2] = bgy;
      red[lane][3] = bgz;
      __syncthreads();
      if (w == 0 && j < be) {
        T s[4] = {sh.red[buf][0][lane][0], sh.red[buf][0][lane][1], sh.red[buf][0][lane][2], sh.red[buf][0][lane][3]};
#pragma unroll
        for (int v = 1; v < NW; ++v)
          for (int c = 0; c < 4; ++c) s[c] += sh.red[buf][v][lane][c];
        if (pot) pot[j] = old[0] + s[0];
        if (kG)
          for (int c = 0; c < 3; ++c) grad[3 * int64_t(j) + c] = old[1 + c] + s[1 + c];
      }
    }
  }
  __syncthreads();  // the tiles are free for the next chunk or pair
#pragma unroll
  for (int k = 0; k < NA; ++k) {
    const int32_t i = a0 + k * 32 * NW + threadIdx.x;
    if (i < ae) {
      if (pot) pot[i] = result_load<kL2>(pot + i) + av[k];
      if (kG) {
        T* g = grad + 3 * int64_t(i);
        g[0] = result_load<kL2>(g) + agx[k];
        g[1] = result_load<kL2>(g + 1) + agy[k];
        g[2] = result_load<kL2>(g + 2) + agz[k];
      }
    }
  }
}

// mutual_chunk with NA = na points per lane (1 <= na <= NA): the fewest
// that hold the chunk.
template <class Kern, class T, bool kG, bool kSelf, bool kL2, int NW, int NA>
__device__ __forceinline__ void mutual_chunk_na(int na, const Kern& kern, const NearFrame& fr, int32_t a0, int32_t ae,
                                                int32_t bb, int32_t be, const double* __restrict__ xyz,
                                                const T* __restrict__ q, T* __restrict__ pot, T* __restrict__ grad,
                                                MutualShared<T, NW>& sh) {
  if constexpr (NA > 1)
    if (na < NA) {
      mutual_chunk_na<Kern, T, kG, kSelf, kL2, NW, NA - 1>(na, kern, fr, a0, ae, bb, be, xyz, q, pot, grad, sh);
      return;
    }
  mutual_chunk<Kern, T, kG, kSelf, kL2, NW, NA>(kern, fr, a0, ae, bb, be, xyz, q, pot, grad, sh);
}

// The leaf pair pr = (A, B) of R (kSelf: A == B) by one block of NW warps,
// in chunks of A of up to 32 NW mutual_max_na points.
template <class Kern, class T, bool kG, bool kSelf, bool kL2, int NW>
__device__ __forceinline__ void mutual_pair(const Kern& kern, int2 pr, const DevSet& R, const double* __restrict__ xyz,
                                            const T* __restrict__ q, T* __restrict__ pot, T* __restrict__ grad,
                                            MutualShared<T, NW>& sh) {
  constexpr int B = 32 * NW, kNa = mutual_max_na<T, NW>();
  const NearFrame fr = near_frame(R, pr.x);
  const int32_t ab = R.point_begin[pr.x], ae = R.point_end[pr.x];
  const int32_t bb = R.point_begin[pr.y], be = R.point_end[pr.y];
  for (int32_t a0 = ab; a0 < ae; a0 += kNa * B) {
    const int32_t ce = ae - a0 > kNa * B ? a0 + kNa * B : ae;  // the chunk [a0, ce), the same for the whole block
    mutual_chunk_na<Kern, T, kG, kSelf, kL2, NW, kNa>((ce - a0 + B - 1) / B, kern, fr, a0, ce, bb, be, xyz, q, pot,
                                                      grad, sh);
  }
}

// One pass (npairs pairs (A, B) of leaves of R; kSelf: pass 0, A == B):
// one block of NW warps per pair. Results in sorted order, added to.
template <class Kern, class T, bool kG, bool kSelf, int NW>
__global__ void __launch_bounds__(32 * NW, kMutualMinWarpsPerSm / NW)
    k_p2p_mutual(Kern kern, const int2* __restrict__ pairs, int64_t npairs, DevSet R, const double* __restrict__ xyz,
                 const T* __restrict__ q, T* __restrict__ pot, T* __restrict__ grad) {
  static_assert(NW == 2 || NW == 4 || NW == 8, "mutual_max_na points of A per lane");
  __shared__ MutualShared<T, NW> sh;
  for (int64_t u = blockIdx.x; u < npairs; u += gridDim.x)
    mutual_pair<Kern, T, kG, kSelf, false, NW>(kern, pairs[u], R, xyz, q, pot, grad, sh);
}

// Every pass in one launch (mp.counters zeroed; any number of blocks): a
// block takes the next pair in order by a ticket, waits until its leaves
// have finished the pairs of earlier passes (mp.need), sums it, counts it
// finished for both leaves, and takes the next ticket. A block waits only
// on pairs of lower tickets, held by blocks that are running or done, so
// the launch always progresses; the release (fence, then the counts) and
// the acquire (the counts, then a fence; results read from L2) order the
// results.
template <class Kern, class T, bool kG, int NW>
__global__ void __launch_bounds__(32 * NW, kMutualMinWarpsPerSm / NW)
    k_p2p_mutual_flow(Kern kern, MutualPasses mp, DevSet R, const double* __restrict__ xyz, const T* __restrict__ q,
                      T* __restrict__ pot, T* __restrict__ grad) {
  static_assert(NW == 2 || NW == 4 || NW == 8, "mutual_max_na points of A per lane");
  __shared__ MutualShared<T, NW> sh;
  __shared__ unsigned ticket;
  unsigned* done = mp.counters;
  for (;;) {
    if (threadIdx.x == 0) ticket = atomicAdd(&done[mp.nb], 1u);
    __syncthreads();
    const int64_t u = ticket;
    if (u >= mp.offset[kMutualPasses]) return;
    const int2 pr = mp.pairs[u];
    const bool self = pr.x == pr.y;
    if (threadIdx.x == 0) {
      const int2 need = mp.need[u];
      const volatile unsigned* d = done;
      while (d[pr.x - mp.b0] < unsigned(need.x)) __nanosleep(256);
      if (!self)
        while (d[pr.y - mp.b0] < unsigned(need.y)) __nanosleep(256);
      __threadfence();
    }
    __syncthreads();
    if (self)
      mutual_pair<Kern, T, kG, true, true, NW>(kern, pr, R, xyz, q, pot, grad, sh);
    else
      mutual_pair<Kern, T, kG, false, true, NW>(kern, pr, R, xyz, q, pot, grad, sh);
    __syncthreads();  // (also: ticket is read by every thread before it is taken again)
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(&done[pr.x - mp.b0], 1u);
      if (!self) atomicAdd(&done[pr.y - mp.b0], 1u);
    }
  }
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
