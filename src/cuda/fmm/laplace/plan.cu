// Plan creation of the Laplace FMM on a GPU context (issue 5): the device
// side of laplace_plan_create (src/cxx/fmm/laplace/create.cpp), so that the
// coordinates cross PCIe once and nothing large comes back (the staged
// copies, the coordinate check and the gather are cuda/common/staging.hpp and
// cuda/common/points.hpp):
//   laplace_near_field_stats   p2p_pairs, max_near_sources, max_leaf_points
//   laplace_class_counts       per-class entry counts of the M2L lists
// The statistics are integer sums and maxima: exactly what the host loops
// over downloaded lists compute.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cuda/common/cuda_check.cuh"
#include "fmm/laplace/plan.hpp"
#include "tree/stencil.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::check_launch;
using gpufmm::cuda::clear_last_error;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::grid_for;
using gpufmm::cuda::StreamBuffer;
using gpufmm::cuda::stream_of;

namespace {

constexpr int kBlock = 256;

// r[0] += sum over receiver leaves b of n(b) * (sources in b's neighbours),
// r[1] = max of the latter, r[2] = max points of a receiver leaf.
__global__ void k_near_stats(int64_t b0, int64_t nb, const int32_t* __restrict__ r_beg,
                             const int32_t* __restrict__ r_end, const int64_t* __restrict__ off,
                             const int32_t* __restrict__ idx, const int32_t* __restrict__ s_beg,
                             const int32_t* __restrict__ s_end, unsigned long long* __restrict__ r) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nb;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = b0 + i;
    unsigned long long near = 0;
    for (int64_t e = off[b]; e < off[b + 1]; ++e) {
      const int32_t s = idx[e];
      near += static_cast<unsigned long long>(s_end[s] - s_beg[s]);
    }
    const unsigned long long nt = static_cast<unsigned long long>(r_end[b] - r_beg[b]);
    if (near * nt != 0) atomicAdd(&r[0], near * nt);
    atomicMax(&r[1], near);
    atomicMax(&r[2], nt);
  }
}

// r[2] = max(r[2], points of a source leaf).
__global__ void k_leaf_max(int64_t b0, int64_t nb, const int32_t* __restrict__ beg,
                           const int32_t* __restrict__ end, unsigned long long* __restrict__ r) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nb;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    atomicMax(&r[2], static_cast<unsigned long long>(end[b0 + i] - beg[b0 + i]));
}

// hist[c] += entries of class c (c < kNumClasses), shared-memory histogram per block.
__global__ void __launch_bounds__(kBlock)
k_class_hist(const int32_t* __restrict__ cls, int64_t n, unsigned long long* __restrict__ hist) {
  __shared__ unsigned int h[tree::kNumClasses];
  for (int c = threadIdx.x; c < tree::kNumClasses; c += blockDim.x) h[c] = 0;
  __syncthreads();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t c = cls[i];
    if (c >= 0 && c < tree::kNumClasses) atomicAdd(&h[c], 1u);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < tree::kNumClasses; c += blockDim.x)
    if (h[c] != 0) atomicAdd(&hist[c], static_cast<unsigned long long>(h[c]));
}

}  // namespace

void laplace_near_field_stats(const tree::Tree& t, const lists::List& nb, int64_t& pairs, int64_t& max_near,
                              int64_t& max_leaf) {
  pairs = max_near = max_leaf = 0;
  const tree::PointSet& S = t.src;
  const tree::PointSet& R = t.receivers();
  const int L = t.l_max;
  const int64_t rb0 = R.nboxes > 0 ? R.level_offset[L] : 0, rnb = R.nboxes > 0 ? R.level_offset[L + 1] - rb0 : 0;
  const int64_t sb0 = S.nboxes > 0 ? S.level_offset[L] : 0, snb = S.nboxes > 0 ? S.level_offset[L + 1] - sb0 : 0;
  Context& ctx = t.ctx;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  StreamBuffer buf(ctx, 3 * sizeof(unsigned long long), "plan statistics");
  unsigned long long* r = static_cast<unsigned long long*>(buf.get());
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(r, 0, 3 * sizeof(unsigned long long), s));
  if (rnb > 0 && nb.built) {
    k_near_stats<<<grid_for(rnb, kBlock), kBlock, 0, s>>>(rb0, rnb, R.point_begin, R.point_end, nb.offsets,
                                                         nb.index, S.point_begin, S.point_end, r);
    check_launch("laplace near-field statistics kernel");
  }
  if (snb > 0) {
    k_leaf_max<<<grid_for(snb, kBlock), kBlock, 0, s>>>(sb0, snb, S.point_begin, S.point_end, r);
    check_launch("laplace leaf statistics kernel");
  }
  unsigned long long h[3] = {0, 0, 0};
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, r, sizeof h, cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  pairs = static_cast<int64_t>(h[0]);
  max_near = static_cast<int64_t>(h[1]);
  max_leaf = static_cast<int64_t>(h[2]);
}

void laplace_class_counts(const tree::Tree& t, const lists::Lists& ls, const int* lists, int nlists,
                          int64_t* counts) {
  std::fill(counts, counts + tree::kNumClasses, int64_t(0));
  Context& ctx = t.ctx;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  StreamBuffer buf(ctx, tree::kNumClasses * sizeof(unsigned long long), "plan class counts");
  unsigned long long* hist = static_cast<unsigned long long*>(buf.get());
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(hist, 0, tree::kNumClasses * sizeof(unsigned long long), s));
  for (int i = 0; i < nlists; ++i) {
    const lists::List& l = ls.list[lists[i]];
    if (!l.built || l.nnz == 0 || l.cls == nullptr) continue;
    const unsigned grid = std::min<unsigned>(grid_for(l.nnz, kBlock), 1024u);
    k_class_hist<<<grid, kBlock, 0, s>>>(l.cls, l.nnz, hist);
    check_launch("laplace class histogram kernel");
  }
  unsigned long long h[tree::kNumClasses];
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, hist, sizeof h, cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int c = 0; c < tree::kNumClasses; ++c) counts[c] = static_cast<int64_t>(h[c]);
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
