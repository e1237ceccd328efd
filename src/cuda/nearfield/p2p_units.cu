// nearfield::cuda::build_units (p2p_units.cuh): the sorted BpB work units of
// any target -> source set list (the Laplace FMM's leaves, the treecode's
// batches and proxy sets).
#include <cub/cub.cuh>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/temp_storage.cuh"
#include "cuda/nearfield/p2p_units.cuh"

namespace gpufmm {
namespace nearfield {
namespace cuda {

namespace {

// Work units of k_p2p_bpb: one per pass of 2 kP2PBlock targets of a target
// leaf, (leaf - b0) << 32 | pass, the most expensive first. Counting kernel:
// units[t] = passes of leaf b0 + t, cost[t] = its near sources (the NEIGHBORS
// row's sources).
__global__ void k_p2p_unit_count(int64_t b0, int64_t nb, DevSet R, DevSet S, DevList nbl, int32_t* __restrict__ units,
                                 int64_t* __restrict__ near) {
  for (int64_t t = gtid(); t < nb; t += gstride()) {
    const int64_t b = b0 + t;
    int64_t n = 0;
    for (int64_t e = nbl.offsets[b]; e < nbl.offsets[b + 1]; ++e) {
      const int32_t s = nbl.index[e];
      n += S.point_end[s] - S.point_begin[s];
    }
    near[t] = n;
    units[t] = (R.point_end[b] - R.point_begin[b] + kP2PPass - 1) / kP2PPass;
  }
}

// Fills the units of every leaf (first[t]: exclusive scan of the counts) and
// their sort keys: ~(targets of the pass x near sources), so that an
// ascending sort puts the most expensive first.
__global__ void k_p2p_unit_fill(int64_t b0, int64_t nb, DevSet R, const int32_t* __restrict__ first,
                                const int64_t* __restrict__ near, uint64_t* __restrict__ key,
                                uint64_t* __restrict__ unit) {
  for (int64_t t = gtid(); t < nb; t += gstride()) {
    const int64_t b = b0 + t;
    const int32_t nt = R.point_end[b] - R.point_begin[b];
    for (int32_t k = 0; k * kP2PPass < nt; ++k) {
      const int32_t m = nt - k * kP2PPass < kP2PPass ? nt - k * kP2PPass : kP2PPass;
      key[first[t] + k] = ~(uint64_t(m) * uint64_t(near[t]));
      unit[first[t] + k] = (uint64_t(t) << 32) | uint64_t(k);
    }
  }
}

}  // namespace

int64_t build_units(Context& ctx, cudaStream_t s0, int64_t b0, int64_t nb, DevSet R, DevSet S, DevList list,
                    const std::function<void*(size_t, const char*)>& alloc, uint64_t** units, const char* what) {
  using gpufmm::cuda::check_launch;
  using gpufmm::cuda::grid_for;
  *units = nullptr;
  if (nb <= 0) return 0;
  gpufmm::cuda::TempStorage count_tmp(ctx, what);
  int32_t *cnt = nullptr, *first = nullptr;
  int64_t* near = nullptr;
  count_tmp.add(cnt, nb + 1);
  count_tmp.add(first, nb + 1);
  count_tmp.add(near, nb);
  auto scan = [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, cnt, first, nb + 1, s0); };
  count_tmp.add_cub(scan, "cub::DeviceScan::ExclusiveSum (P2P units)");
  count_tmp.allocate();
  k_p2p_unit_count<<<grid_for(nb, 128), 128, 0, s0>>>(b0, nb, R, S, list, cnt, near);
  check_launch("P2P unit count kernel");
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(cnt + nb, 0, sizeof(int32_t), s0));
  count_tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum (P2P units)");
  int32_t nu = 0;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&nu, first + nb, sizeof nu, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  if (nu <= 0) return 0;
  gpufmm::cuda::TempStorage sort_tmp(ctx, what);
  uint64_t *key = nullptr, *key_s = nullptr, *unit = nullptr;
  sort_tmp.add(key, nu);
  sort_tmp.add(key_s, nu);
  sort_tmp.add(unit, nu);
  uint64_t* out = static_cast<uint64_t*>(alloc(sizeof(uint64_t) * size_t(nu), what));
  auto sort = [&](void* t, size_t& b) {
    return cub::DeviceRadixSort::SortPairs(t, b, key, key_s, unit, out, int64_t(nu), 0, 64, s0);
  };
  sort_tmp.add_cub(sort, "cub::DeviceRadixSort::SortPairs (P2P units)");
  sort_tmp.allocate();
  k_p2p_unit_fill<<<grid_for(nb, 128), 128, 0, s0>>>(b0, nb, R, first, near, key, unit);
  check_launch("P2P unit fill kernel");
  sort_tmp.run_cub(sort, "cub::DeviceRadixSort::SortPairs (P2P units)");
  *units = out;
  return nu;
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
