// C thunks of the Octree section of gpufmm.h: argument checks, status codes
// and the conversions between the public structs (options, statistics) and
// the core's; the work is in src/cxx/tree (the tree) and src/cxx/lists (its
// lists).
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "array/array.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/handles.hpp"
#include "gpufmm.h"
#include "lists/lists.hpp"
#include "tree/stencil.hpp"
#include "tree/tree.hpp"

using namespace gpufmm;

namespace {

// set and list: the ints the caller passed (enum_arg), checked before use.
const tree::PointSet& checked_set(const tree::Tree& t, int set) {
  require(set == GPUFMM_TREE_SOURCES || set == GPUFMM_TREE_RECEIVERS, GPUFMM_ERROR_INVALID_ARGUMENT,
          "argument 'set' = ", set, " is not GPUFMM_TREE_SOURCES or GPUFMM_TREE_RECEIVERS");
  return t.set(set == GPUFMM_TREE_SOURCES ? 0 : 1);
}

const lists::List& checked_list(const lists::Lists& l, int k) {
  require(k >= 0 && k < lists::kNumLists, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'list' = ", k,
          " is not a gpufmm_tree_list_t");
  require(l.list[k].built, GPUFMM_ERROR_INVALID_ARGUMENT, "list ", k,
          " was not built (see gpufmm_tree_options_t.lists)");
  return l.list[k];
}

// The core's options of the C options (NULL = defaults); tree::build
// validates them.
tree::Options options_from_c(const gpufmm_tree_options_t* opt) {
  tree::Options o;
  if (opt != nullptr) {
    o.l_max = opt->l_max;
    o.s_max = opt->s_max;
    o.max_level = opt->max_level;
    require_flag(opt->cube_given, "cube_given");
    o.cube_given = opt->cube_given != 0;
    for (int k = 0; k < 3; ++k) o.cube_center[k] = opt->cube_center[k];
    o.cube_side = opt->cube_side;
    o.kind = static_cast<tree::Kind>(opt->kind);
  }
  return o;
}

static_assert(int(tree::Kind::Uniform) == GPUFMM_TREE_UNIFORM && int(tree::Kind::Adaptive) == GPUFMM_TREE_ADAPTIVE,
              "tree::Kind mirrors GPUFMM_TREE_UNIFORM / GPUFMM_TREE_ADAPTIVE");

void put_leaves(const tree::SizeStats& s, int64_t& min, int64_t& max, double& mean) {
  min = s.min;
  max = s.max;
  mean = s.mean;
}

void put_rows(const tree::SizeStats& s, gpufmm_tree_list_stats_t& out) {
  out.built = 1;
  out.rows = s.count;
  out.entries = s.total;
  out.min = s.min;
  out.max = s.max;
  out.mean = s.mean;
}

// The public statistics of a tree, its lists and their statistics.
gpufmm_tree_stats_t stats_to_c(const tree::Tree& t, const lists::Lists& l, const lists::TreeStats& s) {
  gpufmm_tree_stats_t st;
  std::memset(&st, 0, sizeof st);
  const tree::PointSet& r = t.receivers();
  st.l_max = t.l_max;
  st.same_sets = t.same_sets ? 1 : 0;
  st.backend = t.ctx.backend;
  st.num_sources = t.src.n;
  st.num_receivers = r.n;
  for (int k = 0; k < 3; ++k) st.cube_center[k] = t.cube.center[k];
  st.cube_side = t.cube.side;
  for (int lev = 0; lev <= t.l_max; ++lev) {
    st.source_boxes[lev] = t.src.boxes_at(lev);
    st.receiver_boxes[lev] = r.boxes_at(lev);
  }
  st.total_source_boxes = t.src.nboxes;
  st.total_receiver_boxes = r.nboxes;
  put_leaves(s.source_leaves, st.source_leaf_min, st.source_leaf_max, st.source_leaf_mean);
  put_leaves(s.receiver_leaves, st.receiver_leaf_min, st.receiver_leaf_max, st.receiver_leaf_mean);
  for (int k = 0; k < lists::kNumLists; ++k) {
    const lists::ListStats& ls = s.lists[k];
    if (!ls.built) continue;
    put_rows(ls.all, st.lists[k]);
    for (size_t lev = 0; lev < ls.level.size(); ++lev) put_rows(ls.level[lev], st.list_levels[k][lev]);
  }
  st.time_upload = t.timings.upload;
  st.time_keys = t.timings.keys;
  st.time_sort = t.timings.sort;
  st.time_hierarchy = t.timings.hierarchy;
  st.time_lists = l.seconds;
  st.time_total = t.timings.total + l.seconds;
  return st;
}

// The list mask of the options (NULL = every list).
unsigned list_mask(const gpufmm_tree_options_t* opt) {
  if (opt == nullptr) return lists::kAllLists;
  require(opt->lists >= 0 && opt->lists <= GPUFMM_TREE_LISTS_ALL, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'lists' = ", opt->lists, " is not a mask of GPUFMM_TREE_LIST_BIT(0..3)");
  return static_cast<unsigned>(opt->lists);
}

template <class T>
void copy_out(const tree::Tree& t, T* host, const T* src, int64_t n) {
  if (host != nullptr && n > 0) tree::download(t, host, src, sizeof(T) * static_cast<size_t>(n));
}

// Builds the lists of a built tree, registers both and hands them out.
void hand_out(std::unique_ptr<tree::Tree> built, unsigned which, gpufmm_tree_t* out) {
  auto h = std::make_unique<TreeObject>();
  h->lists = lists::build(*built, which);
  h->tree = std::move(built);
  *out = static_cast<gpufmm_tree_t>(register_handle(h.get(), HandleKind::TreePlan));
  h.release();
}

// Validates an input coordinate array: float64, rank 2, dims (3, n).
const Array* checked_coords(Context& ctx, gpufmm_array_t a, const char* name) {
  Array* arr = checked_array(a, name);
  require(arr->ctx == &ctx, GPUFMM_ERROR_INVALID_ARGUMENT, "array '", name,
          "' belongs to another context than 'ctx'");
  require(arr->dtype == GPUFMM_FLOAT64, GPUFMM_ERROR_TYPE_MISMATCH, "array '", name,
          "' must be float64");
  require(arr->rank == 2 && arr->dims[0] == 3, GPUFMM_ERROR_SIZE_MISMATCH, "array '", name,
          "' must have rank 2 and dims (3, n)");
  return arr;
}

}  // namespace

extern "C" {

gpufmm_status_t gpufmm_tree_options_init(gpufmm_tree_options_t* opt) {
  return guard("gpufmm_tree_options_init", [&] {
    require_out(opt, "opt");
    std::memset(opt, 0, sizeof *opt);
    const tree::Options d;
    opt->l_max = d.l_max;
    opt->s_max = d.s_max;
    opt->max_level = d.max_level;
    opt->cube_given = 0;
    opt->cube_side = 0.0;
    opt->lists = GPUFMM_TREE_LISTS_ALL;
    opt->kind = GPUFMM_TREE_UNIFORM;
  });
}

gpufmm_status_t gpufmm_tree_build(gpufmm_context_t ctx, const gpufmm_tree_options_t* opt,
                                  int64_t nsrc, const double* src, int64_t nrecv,
                                  const double* recv, gpufmm_tree_t* out) {
  return guard("gpufmm_tree_build", [&] {
    Context* c = checked_context(ctx);
    require_out(out, "tree");
    const tree::Options o = options_from_c(opt);
    const unsigned which = list_mask(opt);
    if (recv == nullptr)
      require(nrecv == nsrc, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'recv' is NULL (receivers = ",
              "sources) but nrecv = ", nrecv, " differs from nsrc = ", nsrc);
    hand_out(tree::build(*c, o, src, nsrc, recv, nrecv, false), which, out);
  });
}

gpufmm_status_t gpufmm_tree_build_arrays(gpufmm_context_t ctx, const gpufmm_tree_options_t* opt,
                                         gpufmm_array_t src, gpufmm_array_t recv,
                                         gpufmm_tree_t* out) {
  return guard("gpufmm_tree_build_arrays", [&] {
    Context* c = checked_context(ctx);
    require_out(out, "tree");
    const tree::Options o = options_from_c(opt);
    const unsigned which = list_mask(opt);
    const Array* s = checked_coords(*c, src, "src");
    const int64_t nsrc = s->dims[1];
    int64_t nrecv = nsrc;
    const double* rp = nullptr;
    if (recv != nullptr) {
      const Array* r = checked_coords(*c, recv, "recv");
      nrecv = r->dims[1];
      // A non-NULL pointer marks "distinct receivers", even for an empty set.
      static const double kEmpty = 0.0;
      rp = r->data ? static_cast<const double*>(r->data) : &kEmpty;
    }
    hand_out(tree::build(*c, o, static_cast<const double*>(s->data), nsrc, rp, nrecv, true), which,
             out);
  });
}

gpufmm_status_t gpufmm_tree_destroy(gpufmm_tree_t t) {
  return guard("gpufmm_tree_destroy", [&] {
    if (t == nullptr) return;
    delete retired_handle<TreeObject>(t, HandleKind::TreePlan, "tree");
  });
}

gpufmm_status_t gpufmm_tree_stats(gpufmm_tree_t t, gpufmm_tree_stats_t* stats) {
  return guard("gpufmm_tree_stats", [&] {
    TreeObject* h = checked_tree(t);
    require_out(stats, "stats");
    std::lock_guard<std::mutex> lock(h->mutex);
    if (!h->stats) h->stats = std::make_unique<const lists::TreeStats>(lists::tree_stats(*h->tree, *h->lists));
    *stats = stats_to_c(*h->tree, *h->lists, *h->stats);
  });
}

gpufmm_status_t gpufmm_tree_level_offsets(gpufmm_tree_t t, gpufmm_tree_set_t set, int64_t count,
                                          int64_t* offsets) {
  return guard("gpufmm_tree_level_offsets", [&] {
    const tree::Tree& tr = *checked_tree(t)->tree;
    const tree::PointSet& ps = checked_set(tr, enum_arg(set));
    require_out(offsets, "offsets");
    require(count == tr.l_max + 2, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'count' = ", count,
            " must be l_max + 2 = ", tr.l_max + 2);
    for (int64_t i = 0; i < count; ++i) offsets[i] = ps.level_offset[static_cast<size_t>(i)];
  });
}

gpufmm_status_t gpufmm_tree_get_points(gpufmm_tree_t t, gpufmm_tree_set_t set, int64_t n,
                                       uint64_t* keys, int32_t* perm, int32_t* iperm) {
  return guard("gpufmm_tree_get_points", [&] {
    const tree::Tree& tr = *checked_tree(t)->tree;
    const tree::PointSet& ps = checked_set(tr, enum_arg(set));
    require(n == ps.n, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'n' = ", n, " differs from the ",
            ps.n, " points of the set");
    copy_out(tr, keys, ps.keys, n);
    copy_out(tr, perm, ps.perm, n);
    copy_out(tr, iperm, ps.iperm, n);
  });
}

gpufmm_status_t gpufmm_tree_get_boxes(gpufmm_tree_t t, gpufmm_tree_set_t set, int64_t nboxes,
                                      uint64_t* keys, int32_t* parent, int32_t* child_offsets,
                                      int32_t* point_begin, int32_t* point_end, double* centers) {
  return guard("gpufmm_tree_get_boxes", [&] {
    const tree::Tree& tr = *checked_tree(t)->tree;
    const tree::PointSet& ps = checked_set(tr, enum_arg(set));
    require(nboxes == ps.nboxes, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'nboxes' = ", nboxes,
            " differs from the ", ps.nboxes, " boxes of the set");
    copy_out(tr, keys, ps.box_key, nboxes);
    copy_out(tr, parent, ps.parent, nboxes);
    copy_out(tr, child_offsets, ps.child_offset, nboxes + 1);
    copy_out(tr, point_begin, ps.point_begin, nboxes);
    copy_out(tr, point_end, ps.point_end, nboxes);
    copy_out(tr, centers, ps.center, 3 * nboxes);
  });
}

gpufmm_status_t gpufmm_tree_list_size(gpufmm_tree_t t, gpufmm_tree_list_t list, int64_t* rows,
                                      int64_t* entries) {
  return guard("gpufmm_tree_list_size", [&] {
    const lists::List& l = checked_list(*checked_tree(t)->lists, enum_arg(list));
    require_out(rows, "rows");
    require_out(entries, "entries");
    *rows = l.rows;
    *entries = l.nnz;
  });
}

gpufmm_status_t gpufmm_tree_get_list(gpufmm_tree_t t, gpufmm_tree_list_t list, int64_t rows,
                                     int64_t entries, int64_t* offsets, int32_t* index,
                                     int32_t* cls, double* eta) {
  return guard("gpufmm_tree_get_list", [&] {
    const TreeObject* h = checked_tree(t);
    const tree::Tree& tr = *h->tree;
    const lists::List& l = checked_list(*h->lists, enum_arg(list));
    require(rows == l.rows, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'rows' = ", rows,
            " differs from the list's ", l.rows, " rows");
    require(entries == l.nnz, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'entries' = ", entries,
            " differs from the list's ", l.nnz, " entries");
    if (list == GPUFMM_TREE_NEIGHBORS)
      require(cls == nullptr && eta == nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
              "the neighbour list has no classes or ratios: 'cls' and 'eta' must be NULL");
    copy_out(tr, offsets, l.offsets, rows + 1);
    copy_out(tr, index, l.index, entries);
    if (list != GPUFMM_TREE_NEIGHBORS) {
      if (cls != nullptr || eta != nullptr) {
        const std::vector<int32_t> c = tree::host_copy(tr, l.cls, entries);
        if (cls != nullptr) std::copy(c.begin(), c.end(), cls);
        if (eta != nullptr) std::transform(c.begin(), c.end(), eta, lists::class_eta);
      }
    }
  });
}

gpufmm_status_t gpufmm_tree_m2l_class_info(int32_t cls, int* to_parent, double offset[3],
                                           double* eta) {
  return guard("gpufmm_tree_m2l_class_info", [&] {
    bool tp = false;
    double off[3] = {0, 0, 0}, e = 0;
    require(tree::decode_class(cls, tp, off, e), GPUFMM_ERROR_INVALID_ARGUMENT,
            "argument 'cls' = ", cls, " is not an M2L class code that a list holds");
    if (to_parent) *to_parent = tp ? 1 : 0;
    if (offset)
      for (int k = 0; k < 3; ++k) offset[k] = off[k];
    if (eta) *eta = e;
  });
}

}  // extern "C"
