// Interaction lists over an octree, built apart from it (free functions over a
// tree): the neighbour list, the standard M2L list and the modified stencil of
// papers/000 sec. 2.2.3 (type-1 to the box, type-2 to the parent). Every list
// is CSR: one row per receiver box (global receiver index), entries are global
// source-box indices, ascending within a row; M2L lists carry a translation
// class per entry (tree/stencil.hpp; eta follows from the class through
// tree::decode_class).
//
// The lists live in the tree's context memory (device memory on a GPU
// context) and are built by the backend of that context: lists_cpu.cpp
// (OpenMP) and src/cuda/lists/lists_build.cu, the same lists bit for bit, from
// one row enumerator (lists/rows.hpp). Lists of an adaptive tree follow the
// same same-level definitions (docs/tree.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/gpufmm_types.h"
#include "lists/rows.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace lists {

struct List {
  bool built = false;
  int64_t rows = 0;
  int64_t nnz = 0;
  int64_t* offsets = nullptr;  // [rows + 1]
  int32_t* index = nullptr;    // [nnz]
  int32_t* cls = nullptr;      // [nnz] M2L lists only
};

// The lists built over one tree (memory in the tree's context).
class Lists {
 public:
  explicit Lists(Context& ctx) : memory(ctx) {}
  Lists(const Lists&) = delete;
  Lists& operator=(const Lists&) = delete;

  tree::Memory memory;
  std::array<List, kNumLists> list;
  double seconds = 0;  // build time
};

// Builds the lists whose bit is set in `which` (bit k: ListId k) over t.
std::unique_ptr<Lists> build(const tree::Tree& t, unsigned which);

// ---------------------------------------------------------------- host copies
struct HostList {
  bool built = false;
  std::vector<int64_t> offsets;
  std::vector<int32_t> index, cls;
  std::vector<double> eta;  // M2L lists: eta of each entry's class (tree::decode_class)
};
using HostLists = std::array<HostList, kNumLists>;

// eta: fill HostList::eta too (a decode per entry).
HostLists to_host(const tree::Tree& t, const Lists& l, bool eta = true);

// Writes the rows of h (list k's row count, at most its entries; an M2L
// list with its classes) over list k of l, in the tree's context memory.
void overwrite(const tree::Tree& t, Lists& l, int k, const HostList& h);

// eta of an M2L class code (0 for a code no list holds).
double class_eta(int32_t cls);

// Row lengths of a list: over the levels where it is defined (all: NEIGHBORS
// every level, M2L and TYPE1 2..l_max, TYPE2 1..l_max-1) and per receiver
// level 0..l_max (level; empty when the list was not built).
struct ListStats {
  bool built = false;
  tree::SizeStats all;
  std::vector<tree::SizeStats> level;
};

// Statistics of a tree and its lists (gpufmm_tree_stats): points per leaf of
// each set and the row lengths of every list (downloads the leaf ranges and
// the list offsets).
struct TreeStats {
  tree::SizeStats source_leaves, receiver_leaves;
  std::array<ListStats, kNumLists> lists;
};
TreeStats tree_stats(const tree::Tree& t, const Lists& l);

namespace detail {
// Backends (lists_cpu.cpp, src/cuda/lists/lists_build.cu). `which` is valid.
void build_cpu(const tree::Tree& t, Lists& out);
void build_cuda(const tree::Tree& t, Lists& out);
// Shared steps (lists.cpp).
RowView row_view(const tree::Tree& t, unsigned want);
void allocate_offsets(const tree::Tree& t, Lists& out, unsigned which);
void allocate_entries(Lists& out, const int64_t nnz[kNumLists]);
}  // namespace detail

}  // namespace lists
}  // namespace gpufmm

struct gpufmm_tree_s;  // a handle: an id (core/handles.hpp)

namespace gpufmm {
// The object behind gpufmm_tree_t: a tree and the lists asked for.
struct TreeObject {
  std::unique_ptr<tree::Tree> tree;
  std::unique_ptr<lists::Lists> lists;
  std::mutex mutex;  // guards the cached statistics
  std::unique_ptr<const lists::TreeStats> stats;  // from the first gpufmm_tree_stats
};

inline TreeObject* checked_tree(gpufmm_tree_s* t, const char* argname = "tree") {
  return checked_handle<TreeObject>(t, HandleKind::TreePlan, argname);
}
}  // namespace gpufmm
