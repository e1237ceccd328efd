#include "lists/lists.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/context.hpp"
#include "core/error.hpp"

namespace gpufmm {
namespace lists {

namespace {
double wall_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

LevelOffsets offsets_of(const tree::PointSet& ps) {
  LevelOffsets o;
  const int64_t last = ps.level_offset.empty() ? 0 : ps.level_offset.back();
  for (int i = 0; i < tree::kMaxLevel + 2; ++i)
    o.v[i] = i < static_cast<int>(ps.level_offset.size()) ? ps.level_offset[static_cast<size_t>(i)] : last;
  return o;
}
}  // namespace

std::unique_ptr<Lists> build(const tree::Tree& t, unsigned which) {
  require(which <= kAllLists, GPUFMM_ERROR_INVALID_ARGUMENT, "list mask ", which,
          " is not a mask of GPUFMM_TREE_LIST_BIT(0..3)");
  const double t0 = wall_seconds();
  auto out = std::make_unique<Lists>(t.ctx);
  detail::allocate_offsets(t, *out, which);
  if (t.ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    detail::build_cuda(t, *out);
#endif
  } else {
    allocating("the interaction lists' working arrays", 0, [&] { detail::build_cpu(t, *out); });
  }
  out->seconds = wall_seconds() - t0;
  return out;
}

namespace detail {

RowView row_view(const tree::Tree& t, unsigned want) {
  const tree::PointSet& S = t.src;
  const tree::PointSet& R = t.receivers();
  RowView v{};
  v.skey = S.box_key;
  v.schild = S.child_offset;
  v.soff = offsets_of(S);
  v.rkey = R.box_key;
  v.rparent = R.parent;
  v.roff = offsets_of(R);
  v.l_max = t.l_max;
  v.want = want;
  return v;
}

void allocate_offsets(const tree::Tree& t, Lists& out, unsigned which) {
  const int64_t rows = t.receivers().nboxes;
  tree::Slab slab;
  for (int k = 0; k < kNumLists; ++k) {
    List& l = out.list[k];
    l.built = (which >> k) & 1u;
    l.rows = l.built ? rows : 0;
    l.nnz = 0;
    if (l.built) slab.add(&l.offsets, rows + 1);
  }
  slab.allocate(out.memory, "list offsets");
}

void allocate_entries(Lists& out, const int64_t nnz[kNumLists]) {
  tree::Slab slab;
  for (int k = 0; k < kNumLists; ++k) {
    List& l = out.list[k];
    if (!l.built) continue;
    l.nnz = nnz[k];
    slab.add(&l.index, l.nnz);
    if (k != kNeighbors) slab.add(&l.cls, l.nnz);
  }
  slab.allocate(out.memory, "interaction lists");
}

}  // namespace detail

// ---------------------------------------------------------------- host copies

double class_eta(int32_t cls) {
  bool to_parent = false;
  double off[3], eta = 0;
  return tree::decode_class(cls, to_parent, off, eta) ? eta : 0.0;
}

HostLists to_host(const tree::Tree& t, const Lists& l, bool eta) {
  HostLists h;
  for (int k = 0; k < kNumLists; ++k) {
    const List& s = l.list[k];
    HostList& o = h[k];
    o.built = s.built;
    if (!s.built) continue;
    o.offsets = tree::host_copy(t, s.offsets, s.rows + 1);
    o.index = tree::host_copy(t, s.index, s.nnz);
    if (k != kNeighbors) {
      o.cls = tree::host_copy(t, s.cls, s.nnz);
      if (!eta) continue;
      o.eta.resize(o.cls.size());
      std::transform(o.cls.begin(), o.cls.end(), o.eta.begin(), class_eta);
    }
  }
  return h;
}

void overwrite(const tree::Tree& t, Lists& l, int k, const HostList& h) {
  List& o = l.list[size_t(k)];
  const int64_t nnz = int64_t(h.index.size());
  if (!o.built || int64_t(h.offsets.size()) != o.rows + 1 || nnz > o.nnz ||
      (k != kNeighbors && int64_t(h.cls.size()) != nnz))
    throw Error(GPUFMM_ERROR_INTERNAL, "lists::overwrite: rows that do not fit list " + std::to_string(k));
  backend_upload(t.ctx, o.offsets, h.offsets.data(), sizeof(int64_t) * h.offsets.size(), false);
  if (nnz > 0) {
    backend_upload(t.ctx, o.index, h.index.data(), sizeof(int32_t) * size_t(nnz), false);
    if (k != kNeighbors) backend_upload(t.ctx, o.cls, h.cls.data(), sizeof(int32_t) * size_t(nnz), false);
  }
  o.nnz = nnz;
}

// ---------------------------------------------------------------- statistics

namespace {
// Levels whose rows count in the whole-list statistics.
void list_levels(int list, int l_max, int& lo, int& hi) {
  lo = 0;
  hi = l_max;
  if (list == kM2L || list == kType1) lo = 2;
  if (list == kType2) {
    lo = 1;
    hi = l_max - 1;
  }
}
}  // namespace

TreeStats tree_stats(const tree::Tree& t, const Lists& lists) {
  TreeStats st;
  const tree::PointSet& r = t.receivers();
  st.source_leaves = tree::leaf_stats(t, t.src);
  st.receiver_leaves = tree::leaf_stats(t, r);
  for (int k = 0; k < kNumLists; ++k) {
    const List& l = lists.list[k];
    ListStats& ls = st.lists[k];
    if (!l.built) continue;
    ls.built = true;
    ls.level.resize(static_cast<size_t>(t.l_max + 1));
    std::vector<int64_t> off = tree::host_copy(t, l.offsets, l.rows + 1);
    int lo, hi;
    list_levels(k, t.l_max, lo, hi);
    for (int lev = 0; lev <= t.l_max; ++lev) {
      tree::SizeStats& at = ls.level[static_cast<size_t>(lev)];
      for (int64_t row = r.level_offset[lev]; row < r.level_offset[lev + 1]; ++row) {
        const int64_t len = off[row + 1] - off[row];
        at.add(len);
        if (lev >= lo && lev <= hi) ls.all.add(len);
      }
      at.finish();
    }
    ls.all.finish();
  }
  return st;
}

}  // namespace lists
}  // namespace gpufmm
