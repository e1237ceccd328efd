// The row enumerator of the list builders, host+device: which source boxes a
// receiver box's row holds in each list, in ascending order. The CPU builder
// (lists_cpu.cpp) and the CUDA count and fill passes (src/cuda/lists/) call
// these functions; nothing else walks the stencil.
//
// A row is built from 27 slots. Neighbour slot k is the same-level source box
// at stencil offset k (stencil27), if present. Far slot j holds the entries
// that come from the children of the j-th neighbour (ascending) of the
// receiver's parent (standard M2L and type-1 entries: children not adjacent to
// the receiver) and from the children of the receiver's own j-th neighbour
// (type-2 entries: children far enough from the receiver itself, eq. 23). The
// neighbours of a row are ascending and the children of a box contiguous and
// ascending, so slots taken in order give every list's row sorted.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "tree/morton.hpp"
#include "tree/stencil.hpp"

namespace gpufmm {
namespace lists {

enum ListId { kNeighbors = 0, kM2L = 1, kType1 = 2, kType2 = 3, kNumLists = 4 };
constexpr unsigned kAllLists = (1u << kNumLists) - 1;
constexpr int kSlots = 27;

// Level offsets by value (device kernels take them as an argument).
struct LevelOffsets {
  int64_t v[tree::kMaxLevel + 2];
};

GPUFMM_HD_INLINE int level_of(const LevelOffsets& off, int l_max, int64_t box) {
  int level = 0;
  while (level < l_max && box >= off.v[level + 1]) ++level;
  return level;
}

// What the enumerator reads: the box arrays of the source and receiver sets
// (host or device pointers) and, for the far slots, the neighbour table.
struct RowView {
  const uint64_t* skey;    // source box keys
  const int32_t* schild;   // source child offsets
  LevelOffsets soff;
  const uint64_t* rkey;    // receiver box keys
  const int32_t* rparent;  // receiver parents
  LevelOffsets roff;
  int l_max;
  unsigned want;           // bit k: list k is built
  const int32_t* nb;       // [rows * kSlots] neighbours of every receiver box, ascending
  const uint8_t* nn;       // [rows] their number
};

// One receiver box: global index, level, integer coordinates.
struct Row {
  int64_t r;
  int level;
  int32_t x, y, z;
};

GPUFMM_HD_INLINE Row make_row(const RowView& v, int64_t r) {
  Row row;
  row.r = r;
  row.level = level_of(v.roff, v.l_max, r);
  tree::morton_decode(v.rkey[r], row.x, row.y, row.z);
  return row;
}

// Neighbour slot k: global index of the same-level source box at stencil
// offset k of the row's box, or -1.
GPUFMM_HD_INLINE int32_t neighbour_slot(const RowView& v, const Row& row, int k) {
  const int64_t o = v.soff.v[row.level], n = v.soff.v[row.level + 1] - o;
  if (n <= 0) return -1;
  int dx, dy, dz;
  tree::stencil27(k, dx, dy, dz);
  return tree::find_box(v.skey, o, n, row.level, row.x + dx, row.y + dy, row.z + dz);
}

// Coordinates of the child `ch` of a source box with coordinates (qx, qy, qz).
GPUFMM_HD_INLINE void child_coords(const RowView& v, int32_t ch, int32_t qx, int32_t qy, int32_t qz,
                                   int32_t& cx, int32_t& cy, int32_t& cz) {
  const uint32_t o = static_cast<uint32_t>(v.skey[ch] & 7u);  // octant within the parent
  cx = 2 * qx + static_cast<int32_t>(o & 1u);
  cy = 2 * qy + static_cast<int32_t>((o >> 1) & 1u);
  cz = 2 * qz + static_cast<int32_t>((o >> 2) & 1u);
}

// Far slot j of a row: emit(list, source box, class) for every M2L, type-1
// and type-2 entry it holds, ascending per list.
template <class Emit>
GPUFMM_HD_INLINE void far_slot(const RowView& v, const Row& row, int j, Emit&& emit) {
  const bool want_m = (v.want >> kM2L) & 1u, want_1 = (v.want >> kType1) & 1u,
             want_2 = (v.want >> kType2) & 1u;
  if ((want_m || want_1) && row.level >= 1) {
    const int32_t P = v.rparent[row.r];
    if (j < v.nn[P]) {
      const int32_t q = v.nb[static_cast<int64_t>(P) * kSlots + j];
      int32_t qx, qy, qz;
      tree::morton_decode(v.skey[q], qx, qy, qz);
      const int32_t px = row.x >> 1, py = row.y >> 1, pz = row.z >> 1;
      for (int32_t ch = v.schild[q]; ch < v.schild[q + 1]; ++ch) {
        int32_t cx, cy, cz;
        child_coords(v, ch, qx, qy, qz, cx, cy, cz);
        const int dx = cx - row.x, dy = cy - row.y, dz = cz - row.z;
        if (tree::adjacent(dx, dy, dz)) continue;
        const int32_t cls = tree::same_level_class(dx, dy, dz);
        if (want_m) emit(kM2L, ch, cls);
        if (want_1 && !tree::is_type2(tree::parent_offset2(cx, px), tree::parent_offset2(cy, py),
                                      tree::parent_offset2(cz, pz)))
          emit(kType1, ch, cls);
      }
    }
  }
  if (want_2 && row.level < v.l_max && j < v.nn[row.r]) {
    const int32_t q = v.nb[row.r * kSlots + j];
    int32_t qx, qy, qz;
    tree::morton_decode(v.skey[q], qx, qy, qz);
    for (int32_t ch = v.schild[q]; ch < v.schild[q + 1]; ++ch) {
      int32_t cx, cy, cz;
      child_coords(v, ch, qx, qy, qz, cx, cy, cz);
      const int ex = tree::parent_offset2(cx, row.x), ey = tree::parent_offset2(cy, row.y),
                ez = tree::parent_offset2(cz, row.z);
      if (tree::is_type2(ex, ey, ez)) emit(kType2, ch, tree::parent_class(ex, ey, ez));
    }
  }
}

// The far entries of a whole row, ascending per list (slots in order).
template <class Emit>
GPUFMM_HD_INLINE void far_row(const RowView& v, const Row& row, Emit&& emit) {
  for (int j = 0; j < kSlots; ++j) far_slot(v, row, j, emit);
}

}  // namespace lists
}  // namespace gpufmm
