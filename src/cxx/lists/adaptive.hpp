// The interaction lists of an adaptive FMM (issue 19) over a tree whose
// leaves sit at different levels (tree::Kind::Adaptive; docs/tree.md 2b).
//
// The same-level lists (M2L, or type 1 and type 2 of the modified stencil,
// lists.hpp) keep their definitions: they translate between boxes of one
// level whose parents touch (V of the adaptive FMM). What leaves of
// different depths add is built here, on the host, for a source set S and a
// receiver set R that are split independently (sources != targets):
//
//   U  (P2P)  receiver leaf B <- source box D, D touching B; D is a source
//             leaf at a level >= B's, or a source leaf at a coarser level
//             than B (found from D's side, below);
//   W  (M2P)  receiver leaf B <- source box D at a finer level, D not
//             touching B, D's parent touching B: D's multipole evaluated at
//             B's targets;
//   X  (P2L)  receiver box F <- source leaf A at a coarser level, F not
//             touching A, F's parent touching A: A's sources into F's local
//             expansion.
//
// Built from two walks. From every receiver leaf B (level l): the source
// boxes of level l touching B, each descended while its children touch B
// (a source leaf that touches: U; a child that does not: W). From every
// source leaf A (level l): the receiver boxes of level l touching A that are
// not leaves, each descended likewise (a receiver leaf that touches: U; a
// child that does not: X). A source-target pair whose leaves are B and A is
// then covered exactly once: by V at the first level where their ancestors
// stop touching, else by the walk of the coarser of the two leaves (B when
// the levels are equal). tests/cxx/test_laplace_adaptive.cpp checks it by
// counting every pair.
//
// Two refinements, both exact:
//  * with the modified stencil, the children of B's colleagues that are of
//    type 2 for B are in B's type-2 row (they reach B's targets through
//    L_B), so the walk from B skips them;
//  * a W box with at most `p2p_max` sources goes to U (its sources summed
//    directly: cheaper than evaluating p^2 terms per target), and an X box
//    with at most `p2p_max` targets gives A to the U rows of every receiver
//    leaf under it.
//
// A third, after the walks (move_to_direct): a same-level translation
// between boxes that hold few points (most leaves of a clustered tree hold
// far fewer than s_max) costs more than the direct sum of its source-target
// pairs; such an entry leaves its V row and its source box joins the U rows
// of the receiver leaves under the row's box, which then sum it directly.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "lists/lists.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace lists {

// Host view of the boxes of one point set (a host tree's arrays, or host
// copies of a device tree's).
struct BoxView {
  const uint64_t* key = nullptr;
  const int32_t* child = nullptr;  // child offsets [nboxes + 1]
  const int32_t* begin = nullptr;  // point ranges
  const int32_t* end = nullptr;
  const uint8_t* leaf = nullptr;
  std::vector<int64_t> level_offset;  // [l_max + 2]
  int l_max = 0;

  int64_t nboxes() const { return level_offset.empty() ? 0 : level_offset.back(); }
  int level(int64_t b) const;
  int64_t points(int64_t b) const { return int64_t(end[b]) - begin[b]; }
  // The box of `level` at integer coordinates (x, y, z), or -1.
  int32_t find(int level, int32_t x, int32_t y, int32_t z) const;
};

struct AdaptiveListOptions {
  bool skip_type2 = true;  // the modified stencil is in use
  int64_t p2p_max = 0;     // W / X boxes with at most this many points go to U
};

// CSR rows over the receiver leaves (U, W) and over the receivers that take
// P2L entries (X). Entries are global source-box indices.
struct AdaptiveLists {
  std::vector<int32_t> leaves;        // receiver leaves, ascending (level-major)
  std::vector<int64_t> u_off, w_off;  // [leaves.size() + 1]
  std::vector<int32_t> u, w;
  std::vector<int32_t> x_box;         // receivers with X entries, ascending
  std::vector<int64_t> x_off;         // [x_box.size() + 1]
  std::vector<int32_t> x;
  // Sizes (plan_info, workspace): source-target pairs of U, the most
  // sources in one U row, the most points of a W box (M2P) or X box (P2L).
  int64_t u_pairs = 0, max_u_sources = 0;
  int64_t w_targets = 0;  // sum over W entries of the targets they are evaluated at
  int64_t x_sources = 0;  // sum over X entries of the sources they expand
  // move_to_direct: same-level entries moved to U, and the source-target
  // pairs they added to u_pairs.
  int64_t v_moved = 0, v_pairs = 0;
};

AdaptiveLists build_adaptive(const BoxView& S, const BoxView& R, const AdaptiveListOptions& opt);

// Moves the entries of the same-level lists in v (host copies; M2L, TYPE1,
// TYPE2, those built) for which direct(targets, sources, class) is true -
// targets: the points under the row's receiver box, sources: the entry's
// source box's - out of their rows and into A's U rows: the source box to
// the row of every receiver leaf under the receiver box, after the walks'
// entries (in list, row, entry order). The rows of v keep their other
// entries in order; A's U sizes, v_moved and v_pairs are counted again.
// Every source-target pair stays covered exactly once. Returns v_moved.
using DirectRule = std::function<bool(int64_t targets, int64_t sources, int32_t cls)>;
int64_t move_to_direct(const BoxView& S, const BoxView& R, HostLists& v, const DirectRule& direct, AdaptiveLists& A);

// The views of a host tree's sets.
BoxView box_view(const tree::Tree& t, const tree::PointSet& s);

}  // namespace lists
}  // namespace gpufmm
