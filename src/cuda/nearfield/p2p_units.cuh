// The work units of the block-per-unit P2P (k_p2p_bpb, p2p.cuh): counted,
// then filled with their sort keys; the plan set-up sorts them by the key.
#pragma once

#include "cuda/nearfield/p2p.cuh"

namespace gpufmm {
namespace nearfield {
namespace cuda {

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

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
