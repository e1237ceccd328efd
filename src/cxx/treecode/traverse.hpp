// Host+device steps of the treecode's one traversal (plan.hpp, "Method"):
// what a pair (target box t, source box s) becomes, which set of points
// stands for each side, and whether an entry of the list is an
// approximation. The host traversal (plan.cpp, depth first, OpenMP) and the
// device traversal (src/cuda/treecode/plan.cu, level by level) call these
// same functions, so both build the same list.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "treecode/geometry.hpp"

namespace gpufmm {
namespace treecode {

// Box arrays of one side as the traversal reads them (host vectors' data or
// their device copies).
struct TreeView {
  int64_t n = 0;                          // boxes
  const Box* box = nullptr;               // the clusters' boxes
  const int32_t* child_begin = nullptr;   // children of b: [child_begin[b], child_end[b])
  const int32_t* child_end = nullptr;
  const uint8_t* leaf = nullptr;          // 1: no children
  const int32_t* prox = nullptr;          // proxy cluster of b (proxy_clusters), or -1
};

// What becomes of a pair.
enum Step : int {
  kAccept = 0,       // well separated: each side through its proxies where it has them
  kSplitTarget = 1,  // (t's children, s)
  kSplitSource = 2,  // (t, s's children)
  kDirect = 3,       // neither side may split: the points of both
};

// The MAC (eq. 13); a pair not accepted splits a side that may split (PC:
// sources only; CP: targets only; CC: the larger radius), else is direct.
// type: the values of Type (PC 0, CP 1, CC 2).
GPUFMM_HD_INLINE int pair_step(int type, double theta, const TreeView& T, int32_t t, const TreeView& S, int32_t s) {
  const Box& bt = T.box[t];
  const Box& bs = S.box[s];
  if (well_separated(bt, bs, theta)) return kAccept;
  const bool split_t = type != 0 && !T.leaf[t];
  const bool split_s = type != 1 && !S.leaf[s];
  if (split_t && (!split_s || bt.r > bs.r)) return kSplitTarget;
  if (split_s) return kSplitSource;
  return kDirect;
}

// The source set (column) of an accepted (proxies where s has them) or
// direct pair: box s's points are set s, proxy cluster p's proxies set S.n + p.
GPUFMM_HD_INLINE int32_t source_set(const TreeView& S, int32_t s, bool accepted) {
  return accepted && S.prox[s] >= 0 ? int32_t(S.n + S.prox[s]) : s;
}

// The target set (row) of an accepted pair whose target box t acts through
// its proxies, or -1: then the row is each batch below t (the points).
GPUFMM_HD_INLINE int32_t target_proxy_set(const TreeView& T, int32_t t, bool accepted, int64_t nbatch) {
  return accepted && T.prox[t] >= 0 ? int32_t(nbatch + T.prox[t]) : -1;
}

// Whether list entry (row, col) is an approximation (eq. 11): a target
// proxy row, or a column of a source cluster's proxies (local: col in
// [nsbox, nsets_s_local); another rank's: remote_proxy[col - nsets_s_local]).
GPUFMM_HD_INLINE bool is_approximation(int64_t row, int32_t col, int64_t nbatch, int64_t nsbox, int64_t nsets_s_local,
                                       const uint8_t* remote_proxy) {
  if (row >= nbatch) return true;
  return col >= nsets_s_local ? remote_proxy[col - nsets_s_local] != 0 : col >= nsbox;
}

}  // namespace treecode
}  // namespace gpufmm
