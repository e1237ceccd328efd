// The octree of gpufmm (issue 3): Morton-ordered points and the hierarchy of
// non-empty source and receiver boxes on levels 0..l_max. The interaction
// lists over a tree are built apart from it (lists/lists.hpp).
//
// A Tree's arrays live in its context's memory: host memory for a CPU
// context, device memory for a GPU context. Counts and level offsets are
// always on the host. to_host() copies a tree of either backend into plain
// std::vectors (for comparison, statistics and the C accessors).
//
// Layout and conventions are documented in docs/tree.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/context.hpp"
#include "core/gpufmm_types.h"
#include "tree/hierarchy.hpp"
#include "tree/morton.hpp"

namespace gpufmm {
namespace tree {

enum class Kind { Uniform = 0, Adaptive = 1 };

struct Options {
  Kind kind = Kind::Uniform;  // Adaptive: split boxes with more than s_max points
  int l_max = -1;          // >= 0: this depth; -1: derived from s_max
  int s_max = 64;          // points per finest box (when l_max == -1)
  int max_level = kMaxLevel;  // cap on the derived depth
  bool cube_given = false;
  double cube_center[3] = {0, 0, 0};
  double cube_side = 0;
};

// Throws INVALID_ARGUMENT naming the field (as gpufmm_tree_options_t names it).
void validate_options(const Options& o);

// One point set (sources or receivers): points in Morton order and the boxes
// of every level, level-major (boxes of level l are [level_offset[l],
// level_offset[l+1]) and sorted by key within the level).
// The level of global box b of a set whose level-l boxes are
// [level_offset[l], level_offset[l + 1]).
inline int level_of_box(const std::vector<int64_t>& level_offset, int64_t b) {
  return int(std::upper_bound(level_offset.begin(), level_offset.end(), b) - level_offset.begin()) - 1;
}

struct PointSet {
  int64_t n = 0;                    // points
  uint64_t* keys = nullptr;         // [n] 63-bit keys, ascending
  int32_t* perm = nullptr;          // [n] user index of sorted point i
  int32_t* iperm = nullptr;         // [n] sorted position of user point j
  int64_t nboxes = 0;
  std::vector<int64_t> level_offset;  // [l_max + 2] (host)
  uint64_t* box_key = nullptr;      // [nboxes] key of the box at its level
  int32_t* parent = nullptr;        // [nboxes] global index of the parent (-1 for the root)
  int32_t* child_offset = nullptr;  // [nboxes + 1] children of b: [child_offset[b], child_offset[b+1])
  int32_t* point_begin = nullptr;   // [nboxes] sorted points of b: [point_begin[b], point_end[b])
  int32_t* point_end = nullptr;     // [nboxes]
  double* center = nullptr;         // [3 * nboxes] box centres, xyz of box b at 3b
  Bounds* bounds = nullptr;         // [nboxes] tight bounding box of the box's points
  uint8_t* leaf = nullptr;          // [nboxes] 1: the box has no children

  int64_t boxes_at(int level) const {
    return level_offset[level + 1] - level_offset[level];
  }
};

struct Timings {
  double upload = 0, keys = 0, sort = 0, hierarchy = 0, total = 0;  // seconds
};

// Memory in a context (host memory for a CPU context, device memory for a
// GPU one), freed with its owner. It holds the context: a context with live
// memory refuses destruction.
class Memory : public ContextChild {
 public:
  explicit Memory(Context& c) : ContextChild(c) {}
  ~Memory();
  void* allocate(size_t bytes, const char* what);

 private:
  std::vector<void*> blocks_;
};

class Tree {
 public:
  explicit Tree(Context& c) : ctx(c), memory(c) {}
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  Context& ctx;
  Memory memory;
  bool same_sets = false;  // receivers are the sources (recv aliases src)
  int l_max = 0;
  Cube cube{};
  Options options;
  PointSet src;
  PointSet recv_own;       // used only when !same_sets
  Timings timings;

  const PointSet& receivers() const { return same_sets ? src : recv_own; }
  PointSet& receivers() { return same_sets ? src : recv_own; }
  const PointSet& set(int which) const { return which == 0 ? src : receivers(); }
};

// Carves many arrays out of one allocation (fewer cudaMalloc calls).
class Slab {
 public:
  template <class T>
  void add(T** p, int64_t count) {
    items_.push_back({reinterpret_cast<void**>(p), bytes_});
    bytes_ += round_up(static_cast<size_t>(count > 0 ? count : 0) * sizeof(T));
  }
  // Allocates (in `memory`) and assigns every registered pointer.
  void allocate(Memory& memory, const char* what);
  size_t bytes() const { return bytes_; }

 private:
  static size_t round_up(size_t b) { return (b + 255) / 256 * 256; }
  struct Item { void** p; size_t offset; };
  std::vector<Item> items_;
  size_t bytes_ = 0;
};

// Builds a tree. src/recv: 3 x n coordinates (Fortran order) in host memory,
// or in the context's memory when `on_context` is true (device memory on a
// GPU context). recv == nullptr: receivers are the sources (nrecv ignored).
std::unique_ptr<Tree> build(Context& ctx, const Options& opt, const double* src, int64_t nsrc,
                            const double* recv, int64_t nrecv, bool on_context);

namespace detail {
// Backend implementations (tree_cpu.cpp, src/cuda/tree/tree_build.cu). Inputs
// are validated by build().
void build_cpu(Tree& t, const double* src, const double* recv);
void build_cuda(Tree& t, const double* src, const double* recv, bool on_device);
// First index of a non-finite coordinate (or of a point outside the given
// cube) -> INVALID_ARGUMENT. kind: 0 non-finite, 1 outside.
[[noreturn]] void fail_bad_point(int kind, bool receivers, int64_t index);
// Throws when the sizes exceed what the int32 indices can hold.
void check_box_counts(const Tree& t);

// Per point set, from the sorted keys: hist[c] = number of adjacent pairs
// (i-1, i) with common_levels == c; cmax = max common_levels(key[i],
// key[i+s_max]) over i (-1 when n <= s_max or not in s_max mode).
struct LevelScan {
  int64_t hist[kMaxLevel + 1];
  int32_t cmax;
};

// Steps shared by both backends (tree.cpp).
void allocate_points(Tree& t);  // keys, perm, iperm of both sets
// Sets l_max (derived when options.l_max == -1), level offsets and box counts.
void finish_levels(Tree& t, const LevelScan scans[2]);
// Box arrays of both sets.
void allocate_boxes(Tree& t);
// Adaptive trees: sets l_max from the sets' level offsets (already filled).
void finish_adaptive_levels(Tree& t);
}  // namespace detail

// ---------------------------------------------------------------- host copies
struct HostPointSet {
  int64_t n = 0;
  std::vector<uint64_t> keys;
  std::vector<int32_t> perm, iperm;
  std::vector<int64_t> level_offset;
  std::vector<uint64_t> box_key;
  std::vector<int32_t> parent, child_offset, point_begin, point_end;
  std::vector<double> center;
  std::vector<Bounds> bounds;
  std::vector<uint8_t> leaf;
  int64_t nboxes() const { return static_cast<int64_t>(box_key.size()); }
};

struct HostTree {
  bool same_sets = false;
  int l_max = 0;
  Cube cube{};
  HostPointSet src, recv;  // recv is a copy of src when same_sets
};

HostTree to_host(const Tree& t);

// Copies `bytes` of an array in the tree's context memory (a tree array, or
// one of its lists) to host memory.
void download(const Tree& t, void* host, const void* src, size_t bytes);

// Copies n elements of an array in the tree's context memory to a host vector.
template <class T>
std::vector<T> host_copy(const Tree& t, const T* p, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n > 0 ? n : 0));
  if (n > 0) download(t, v.data(), p, sizeof(T) * static_cast<size_t>(n));
  return v;
}

// Count, sum, smallest, largest and mean of a sequence of sizes (points per
// leaf, entries per list row); all 0 for an empty sequence.
struct SizeStats {
  int64_t count = 0, total = 0, min = 0, max = 0;
  double mean = 0;
  void add(int64_t size) {
    min = count == 0 ? size : std::min(min, size);
    max = count == 0 ? size : std::max(max, size);
    total += size;
    ++count;
  }
  void finish() { mean = count > 0 ? static_cast<double>(total) / static_cast<double>(count) : 0.0; }
};

// Points per leaf of a set (downloads the leaf ranges).
SizeStats leaf_stats(const Tree& t, const PointSet& s);

}  // namespace tree
}  // namespace gpufmm
