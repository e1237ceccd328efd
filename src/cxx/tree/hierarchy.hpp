// Host+device steps of the hierarchy shared by the OpenMP and CUDA tree
// builders: tight bounds of a box's points, child ranges from the parent
// links, and the adaptive split rule.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "tree/morton.hpp"
#include "tree/stencil.hpp"

namespace gpufmm {
namespace tree {

// Axis-aligned box: the smallest one holding a box's points (exact min / max
// of their coordinates).
struct Bounds {
  double lo[3], hi[3];
};

inline bool operator==(const Bounds& a, const Bounds& b) {
  for (int k = 0; k < 3; ++k)
    if (!(a.lo[k] == b.lo[k] && a.hi[k] == b.hi[k])) return false;
  return true;
}

template <class Os>
Os& operator<<(Os& os, const Bounds& b) {
  os << "[" << b.lo[0] << "," << b.lo[1] << "," << b.lo[2] << " .. " << b.hi[0] << "," << b.hi[1]
     << "," << b.hi[2] << "]";
  return os;
}

GPUFMM_HD_INLINE Bounds bounds_of_point(const double* xyz, int32_t j) {
  Bounds b;
  for (int k = 0; k < 3; ++k) b.lo[k] = b.hi[k] = xyz[3 * static_cast<int64_t>(j) + k];
  return b;
}

GPUFMM_HD_INLINE Bounds bounds_merge(const Bounds& a, const Bounds& b) {
  Bounds r;
  for (int k = 0; k < 3; ++k) {
    r.lo[k] = b.lo[k] < a.lo[k] ? b.lo[k] : a.lo[k];
    r.hi[k] = b.hi[k] > a.hi[k] ? b.hi[k] : a.hi[k];
  }
  return r;
}

// The reduction operator of bounds (CUB and the CPU loops).
struct BoundsMerge {
  GPUFMM_HD_INLINE Bounds operator()(const Bounds& a, const Bounds& b) const { return bounds_merge(a, b); }
};

// Bounds of sorted point i (user coordinates xyz, 3 x n; perm: user index).
struct PointBounds {
  const double* xyz;
  const int32_t* perm;
  GPUFMM_HD_INLINE Bounds operator()(int64_t i) const { return bounds_of_point(xyz, perm[i]); }
};

// Children of box b at level l: the level-(l+1) boxes whose parent is b. The
// parents of level l+1 (parent[off_next .. off_next + n_next)) ascend, so the
// range is [lower_bound(b), lower_bound(b + 1)) there (empty for a leaf).
GPUFMM_HD_INLINE int32_t first_child(const int32_t* parent, int64_t off_next, int64_t n_next, int32_t b) {
  int64_t lo = 0, hi = n_next;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    if (parent[off_next + mid] < b) lo = mid + 1; else hi = mid;
  }
  return static_cast<int32_t>(off_next + lo);
}

// Adaptive trees: the level-l boxes (keys level_key[0..nl), point ranges
// begin/end) that hold more than s_max points are split. Sorted point i
// starts a level-(l+1) box when it starts a run of equal level-(l+1) keys and
// its level-l box exists and is split; returns that box (index within level
// l) or -1.
struct AdaptiveStart {
  const uint64_t* keys;       // sorted point keys
  const uint64_t* level_key;  // level-l box keys
  const int32_t* begin;       // level-l point ranges
  const int32_t* end;
  int64_t nl;
  int level;  // l
  int s_max;
  GPUFMM_HD_INLINE int32_t parent_of(int64_t i) const {
    const int sh = level_shift(level + 1);
    if (i > 0 && (keys[i] >> sh) == (keys[i - 1] >> sh)) return -1;
    const int64_t p = find_key(level_key, nl, keys[i] >> level_shift(level));
    if (p < 0 || end[p] - begin[p] <= s_max) return -1;
    return static_cast<int32_t>(p);
  }
  GPUFMM_HD_INLINE bool operator()(int64_t i) const { return parent_of(i) >= 0; }
};

}  // namespace tree
}  // namespace gpufmm
