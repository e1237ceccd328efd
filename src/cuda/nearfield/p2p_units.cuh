// The work units of the block-per-unit P2P (k_p2p_bpb, p2p.cuh): one per
// pass of kP2PPass targets of a target set, the most expensive first
// (p2p_units.cu counts them, fills them with their sort keys and sorts).
#pragma once

#include <functional>

#include "core/context.hpp"
#include "cuda/nearfield/p2p.cuh"

namespace gpufmm {
namespace nearfield {
namespace cuda {

// The work units of target sets [b0, b0 + nb) of R with rows `list` over
// source sets S, sorted by modelled cost (targets of the pass x sources of
// the row), the most expensive first (stable: ties in set order); a block
// per leaf made the crowded leaves of non-uniform data the tail of the
// launch. *units is allocated with `alloc` (bytes, what) and filled on
// `stream`; returns their number (0: nothing allocated). Synchronizes the
// stream once (the count).
int64_t build_units(Context& ctx, cudaStream_t stream, int64_t b0, int64_t nb, DevSet R, DevSet S, DevList list,
                    const std::function<void*(size_t, const char*)>& alloc, uint64_t** units, const char* what);

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
