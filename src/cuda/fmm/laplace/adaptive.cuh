// Kernels of the adaptive Laplace FMM (issue 19) on the CUDA driver: M2P of
// the W lists and P2L of the X lists (the compact set of the receiver
// leaves that the P2P of the U lists runs over: setup.cu). The math is the shared
// laplace_m2p_point / laplace_p2l_point of fmm/laplace/expansion.hpp, as on
// the CPU (fmm/pipeline_impl.hpp: m2p, p2l_level); the lists are those of
// lists/adaptive.hpp, uploaded by laplace_plan_setup.
#pragma once

#include "cuda/fmm/laplace/kernels.cuh"
#include "lists/rows.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

// L2P, thread per target (gpu_l2p = TPT, the default) over leaves of every
// level: the target's leaf (leaf_of) gives the level, hence the box size and
// the frame of its exact centre (l2p_point, as the other L2P kernels).
template <class T, bool kHess>
__global__ void k_l2p_tpt_levels(int64_t n, int p, tree::Cube cube, lists::LevelOffsets roff, int l_max, DevSet R,
                                 const int32_t* __restrict__ leaf_of, const double* __restrict__ xyz,
                                 const T* __restrict__ L, const uint8_t* __restrict__ has_local, T* fp, T* fg, T* fh,
                                 const LaplaceWalkCoef<T>* __restrict__ walk) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t b = leaf_of[i];
    const int l = lists::level_of(roff, l_max, b);
    l2p_point<T, kHess>(p, T(tree::box_size(cube, l)), L + b * int64_t(p) * p, has_local[b] != 0, xyz, i,
                        tree::level_frame(cube, l), R.box_key[b], fp, fg, fh, walk);
  }
}

// k_l2p_tpt_levels over ND densities (l2p_point_nd; L of density k at L +
// k stride).
template <class T, int ND>
__global__ void k_l2p_tpt_levels_nd(int64_t n, int p, tree::Cube cube, lists::LevelOffsets roff, int l_max, DevSet R,
                                    const int32_t* __restrict__ leaf_of, const double* __restrict__ xyz,
                                    const T* __restrict__ L, int64_t stride, const uint8_t* __restrict__ has_local,
                                    T* fp, T* fg, NdLayout nl,
                                    const LaplaceWalkCoef<T>* __restrict__ walk) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const int64_t b = leaf_of[i];
    const int l = lists::level_of(roff, l_max, b);
    l2p_point_nd<T, ND>(p, T(tree::box_size(cube, l)), L + b * int64_t(p) * p, stride, has_local[b] != 0, xyz, i,
                        tree::level_frame(cube, l), R.box_key[b], fp, fg, nl, walk);
  }
}

// M2P, block per receiver leaf (row r of the W list; blockDim 32 .. 256,
// the launch takes enough for a leaf's targets in one pass): each W box's
// multipole is read into shared memory (p^2 values) and the
// block's threads add its potential, gradient (and Hessian) at the leaf's
// targets to the far-field outputs (after L2P, which wrote them). The box's
// level follows from its index (soff); coordinates relative to its exact
// centre, in double, rounded to T. kHess: the Hessian too (fh non-null), as
// l2p_point's: without it, half the registers.
template <class T, bool kHess>
__global__ void __launch_bounds__(256)
    k_m2p_bpb(int64_t nrows, const int32_t* __restrict__ leaves, const int64_t* __restrict__ w_off,
              const int32_t* __restrict__ w, int p, tree::Cube cube, lists::LevelOffsets soff, int l_max, DevSet S,
              DevSet R, const double* __restrict__ xyz, const T* __restrict__ M, T* fp, T* fg, T* fh,
              const LaplaceWalkCoef<T>* __restrict__ walk) {
  extern __shared__ __align__(16) unsigned char smraw[];
  T* Ms = reinterpret_cast<T*>(smraw);
  const int p2 = p * p;
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const int32_t b = leaves[r];
    for (int64_t e = w_off[r]; e < w_off[r + 1]; ++e) {
      const int32_t c = w[e];
      __syncthreads();  // the previous box's targets are done with Ms
      for (int k = threadIdx.x; k < p2; k += blockDim.x) Ms[k] = M[int64_t(c) * p2 + k];
      __syncthreads();
      const int lc = lists::level_of(soff, l_max, c);
      const tree::LevelFrame f = tree::level_frame(cube, lc);
      const T inv_h = T(1) / T(tree::box_size(cube, lc));
      const uint64_t key = S.box_key[c];
      for (int64_t i = R.point_begin[b] + threadIdx.x; i < R.point_end[b]; i += blockDim.x) {
        T rel[3];
        rel_point(xyz, i, f, key, rel);
        laplace_m2p_point<T>(p, inv_h, rel, Ms, fp ? fp + i : nullptr, fg ? fg + 3 * i : nullptr,
                             kHess ? fh + 6 * i : nullptr, walk);
      }
    }
  }
}

// P2L, block per receiver box (the rows of the X list, of any level: each
// row's box size and frame follow from its level, roff). The row's sources
// go in chunks of 32, entry by entry, chunk c to warp c mod W (W = the
// block's warps): lane l takes the chunk's l-th source, and the warp sums
// each coefficient over its lanes (laplace_p2l_point through WarpSumAdd, as
// the WpB P2M) into its own p^2 accumulator in shared memory. Then the
// block adds the W accumulators, in warp order, to L_F: the order of every
// sum is fixed by W, which the launch takes from p alone. Lanes without a
// source walk a zero charge at a distant point (a zero contribution). Marks
// has_local[F]. Every level at once: the L2L kernels add the parent's local
// to the child's, so the X rows may be added before the downward pass.
// A warp per row, as before, left the GPU nearly empty: the X rows are few
// boxes of many points (the GPU plan sends X boxes of at most 16 p^2 points
// to the direct sum), e.g. 22 rows of up to 1571 sources for 1e5 Plummer
// points, and each warp reduced 50 chunks one after another.
// k_p2l_bpb's launch: at most kP2lWarps warps per block, and as many as
// their accumulators fit in kP2lSmem bytes of shared memory (the default
// limit: a block that opts in to more sets its SM's carveout, which kept
// the near field's blocks off that SM; at p = 34, 7 warps in 64 KB made
// the Plummer 1e5 evaluate 0.8 ms slower, where the X rows are short).
constexpr int kP2lWarps = 8;
constexpr size_t kP2lSmem = 48u << 10;

template <class T>
__global__ void k_p2l_bpb(int64_t nr, const int32_t* __restrict__ x_box, const int64_t* __restrict__ x_off,
                          const int32_t* __restrict__ x, int p, tree::Cube cube, lists::LevelOffsets roff, int l_max,
                          DevSet S, DevSet R, const double* __restrict__ xyz, const T* __restrict__ q,
                          const T* __restrict__ d, T* __restrict__ L, uint8_t* __restrict__ has_local,
                          const LaplaceWalkCoef<T>* __restrict__ walk) {
  extern __shared__ __align__(16) unsigned char smraw[];
  T* acc = reinterpret_cast<T*>(smraw);
  const int p2 = p * p;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  T* mine = acc + warp * p2;
  for (int64_t row = blockIdx.x; row < nr; row += gridDim.x) {
    const int32_t fb = x_box[row];
    const int lf = lists::level_of(roff, l_max, fb);
    const tree::LevelFrame f = tree::level_frame(cube, lf);
    const T h = T(tree::box_size(cube, lf));
    const T inv_h = T(1) / h;
    const uint64_t key = R.box_key[fb];
    for (int k = threadIdx.x; k < nw * p2; k += blockDim.x) acc[k] = T(0);
    __syncthreads();
    int chunk = 0;  // the row's chunk index, mod nw
    for (int64_t e = x_off[row]; e < x_off[row + 1]; ++e) {
      const int32_t a = x[e];
      const int64_t i1 = S.point_end[a];
      for (int64_t base = S.point_begin[a]; base < i1; base += 32, chunk = chunk + 1 == nw ? 0 : chunk + 1) {
        if (chunk != warp) continue;
        const int64_t i = base + lane;
        T r[3] = {T(4) * h, T(0), T(0)};
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
        laplace_p2l_point<T, WarpSumAdd>(p, inv_h, r, qi, d ? di : nullptr, mine, WarpSumAdd(), walk);
        __syncwarp();
      }
    }
    __syncthreads();
    T* LF = L + int64_t(fb) * p2;
    for (int k = threadIdx.x; k < p2; k += blockDim.x) {
      T sum = acc[k];
      for (int w = 1; w < nw; ++w) sum += acc[w * p2 + k];
      LF[k] += sum;
    }
    if (threadIdx.x == 0) has_local[fb] = 1;
    __syncthreads();  // the accumulators are the next row's
  }
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
