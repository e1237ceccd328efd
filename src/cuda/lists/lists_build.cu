// The CUDA list builder, on the context's stream; the host waits once (for
// the list sizes). Produces exactly what the OpenMP builder produces
// (src/cxx/lists/lists_cpu.cpp), from the same row enumerator
// (lists/rows.hpp):
//   nbr_kernel     one warp per receiver box: lane k takes neighbour slot k,
//                  the hits are ranked and stored ascending
//   lists_kernel   one warp per receiver box, lane j takes far slot j; count
//                  pass: warp sums of the per-lane counts; fill pass: warp
//                  scans give every lane its write positions, so every row
//                  comes out ascending
//   between them   cub::DeviceScan of the counts, sync for the totals
#include <cuda_runtime.h>

#include <cub/cub.cuh>

#include <algorithm>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/device_views.cuh"
#include "cuda/common/temp_storage.cuh"
#include "lists/lists.hpp"

namespace gpufmm {
namespace lists {
namespace detail {

namespace {

using cuda::check;
using cuda::check_launch;

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;
constexpr unsigned kFull = 0xffffffffu;

struct Out {
  int64_t* off[kNumLists];
  int32_t* idx[kNumLists];
  int32_t* cls[kNumLists];
};

__device__ __forceinline__ int warp_sum(int v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

__global__ void __launch_bounds__(kBlock) nbr_kernel(RowView v, int64_t rows, int32_t* nb, uint8_t* nn) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (r >= rows) return;  // uniform per warp
  const Row row = make_row(v, r);
  const int32_t g = lane < kSlots ? neighbour_slot(v, row, lane) : -1;
  int rank = 0;
  for (int j = 0; j < kSlots; ++j) {
    const int32_t o = __shfl_sync(kFull, g, j);
    rank += (o >= 0 && o < g) ? 1 : 0;
  }
  const unsigned hits = __ballot_sync(kFull, g >= 0);
  if (g >= 0) nb[r * kSlots + rank] = g;
  if (lane == 0) nn[r] = static_cast<uint8_t>(__popc(hits));
}

template <bool kFill>
__global__ void __launch_bounds__(kBlock) lists_kernel(RowView v, int64_t rows, Out o) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (r >= rows) return;  // uniform per warp
  const Row row = make_row(v, r);
  const int n_own = v.nn[r];
  if ((v.want >> kNeighbors) & 1u) {
    if (kFill) {
      if (lane < n_own) o.idx[kNeighbors][o.off[kNeighbors][r] + lane] = v.nb[r * kSlots + lane];
    } else if (lane == 0) {
      o.off[kNeighbors][r] = n_own;
    }
  }
  int cnt[kNumLists] = {0, 0, 0, 0};
  if (lane < kSlots) far_slot(v, row, lane, [&](int k, int32_t, int32_t) { ++cnt[k]; });
  if (!kFill) {
    for (int k = kM2L; k < kNumLists; ++k) {
      const int total = warp_sum(cnt[k]);
      if (lane == 0 && ((v.want >> k) & 1u)) o.off[k][r] = total;
    }
    return;
  }
  int64_t pos[kNumLists] = {0, 0, 0, 0};
  for (int k = kM2L; k < kNumLists; ++k) {
    const int before = gpufmm::cuda::warp_inclusive_scan(cnt[k], lane) - cnt[k];
    if ((v.want >> k) & 1u) pos[k] = o.off[k][r] + before;
  }
  if (lane < kSlots)
    far_slot(v, row, lane, [&](int k, int32_t s, int32_t c) {
      const int64_t p = pos[k]++;
      o.idx[k][p] = s;
      o.cls[k][p] = c;
    });
}

__global__ void totals_kernel(Out o, unsigned want, int64_t rows, long long* nnz) {
  const int k = threadIdx.x;
  if (k < kNumLists) nnz[k] = ((want >> k) & 1u) ? o.off[k][rows] : 0;
}

}  // namespace

void build_cuda(const tree::Tree& t, Lists& out) {
  Context& ctx = t.ctx;
  cuda::DeviceGuard guard(ctx);
  cudaStream_t stream = cuda::stream_of(ctx);
  cuda::clear_last_error();
  const int64_t rows = t.receivers().nboxes;
  unsigned want = 0;
  Out o{};
  for (int k = 0; k < kNumLists; ++k) {
    if (!out.list[k].built) continue;
    want |= 1u << k;
    o.off[k] = out.list[k].offsets;
  }
  RowView v = row_view(t, want);
  const bool any_rows = want != 0 && rows > 0 && t.src.nboxes > 0;
  const unsigned grid = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);

  // Neighbour table (27 int32 and one uint8 per receiver box), list totals,
  // CUB temporaries (the scan of one list's offsets, k).
  int k_scan = 0;
  auto scan = [&](void* t, size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, o.off[k_scan], o.off[k_scan], rows + 1, stream);
  };
  cuda::TempStorage tmp(ctx, "list build scratch");
  int32_t* nb = nullptr;
  uint8_t* nn = nullptr;
  long long* nnz_dev = nullptr;
  tmp.add(nb, rows * kSlots);
  tmp.add(nn, rows);
  tmp.add(nnz_dev, kNumLists);
  tmp.add_cub(scan, "cub::DeviceScan::ExclusiveSum (list offsets)");
  tmp.allocate();
  v.nb = nb;
  v.nn = nn;

  for (int k = 0; k < kNumLists; ++k) {
    if (!((want >> k) & 1u)) continue;
    check(cudaMemsetAsync(o.off[k], 0, sizeof(int64_t) * static_cast<size_t>(rows + 1), stream),
          "cudaMemsetAsync (list offsets)");
  }
  if (any_rows) {
    nbr_kernel<<<grid, kBlock, 0, stream>>>(v, rows, nb, nn);
    check_launch("nbr_kernel");
    lists_kernel<false><<<grid, kBlock, 0, stream>>>(v, rows, o);
    check_launch("lists_kernel<count>");
  }
  for (int k = 0; k < kNumLists; ++k) {
    if (!((want >> k) & 1u) || rows == 0) continue;
    k_scan = k;
    tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum (list offsets)");
  }
  long long h[kNumLists] = {0, 0, 0, 0};
  if (want != 0) {
    totals_kernel<<<1, 32, 0, stream>>>(o, want, rows, nnz_dev);
    check_launch("totals_kernel");
    check(cudaMemcpyAsync(h, nnz_dev, sizeof h, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (list sizes, device to host)");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  int64_t nnz[kNumLists];
  for (int k = 0; k < kNumLists; ++k) nnz[k] = h[k];
  allocate_entries(out, nnz);
  for (int k = 0; k < kNumLists; ++k) {
    if (!out.list[k].built) continue;
    o.idx[k] = out.list[k].index;
    o.cls[k] = out.list[k].cls;
  }
  if (any_rows) {
    lists_kernel<true><<<grid, kBlock, 0, stream>>>(v, rows, o);
    check_launch("lists_kernel<fill>");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

}  // namespace detail
}  // namespace lists
}  // namespace gpufmm
