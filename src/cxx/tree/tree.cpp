#include "tree/tree.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>


namespace gpufmm {
namespace tree {

namespace {
constexpr int64_t kMaxPoints = std::numeric_limits<int32_t>::max() - 1;

double wall_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}
}  // namespace

// ---------------------------------------------------------------- options

void validate_options(const Options& o) {
  require(o.l_max >= -1 && o.l_max <= kMaxLevel, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'l_max' = ", o.l_max, " is not -1 (derive from s_max) or in 0..",
          kMaxLevel, " (GPUFMM_TREE_MAX_LEVEL)");
  require(o.kind == Kind::Uniform || o.kind == Kind::Adaptive, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'kind' = ", static_cast<int>(o.kind),
          " is not GPUFMM_TREE_UNIFORM or GPUFMM_TREE_ADAPTIVE");
  require(o.kind == Kind::Uniform || o.l_max == -1, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'l_max' = ", o.l_max, " must be -1 for an adaptive tree (kind = "
          "GPUFMM_TREE_ADAPTIVE): its depth follows from s_max and max_level");
  if (o.l_max == -1) {
    require(o.s_max >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 's_max' = ", o.s_max,
            " must be >= 1 when l_max = -1");
    require(o.max_level >= 0 && o.max_level <= kMaxLevel, GPUFMM_ERROR_INVALID_ARGUMENT,
            "options field 'max_level' = ", o.max_level, " is not in 0..", kMaxLevel);
  }
  if (o.cube_given) {
    for (int k = 0; k < 3; ++k)
      require(std::isfinite(o.cube_center[k]), GPUFMM_ERROR_INVALID_ARGUMENT,
              "options field 'cube_center[", k, "]' = ", o.cube_center[k], " is not finite");
    require(std::isfinite(o.cube_side) && o.cube_side >= kMinCubeSide,
            GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'cube_side' = ", o.cube_side,
            " must be positive and finite (>= 1e-290)");
  }
}

// ---------------------------------------------------------------- Memory, Slab

Memory::~Memory() {
  for (void* p : blocks_) backend_free(ctx, p);
}

void* Memory::allocate(size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  blocks_.reserve(blocks_.size() + 1);  // so that push_back cannot throw after the allocation
  void* p = backend_alloc(ctx, bytes, what);
  blocks_.push_back(p);
  return p;
}

void Slab::allocate(Memory& memory, const char* what) {
  char* base = static_cast<char*>(memory.allocate(bytes_, what));
  for (const Item& it : items_) *it.p = base ? base + it.offset : nullptr;
}

// ---------------------------------------------------------------- helpers

namespace detail {

void fail_bad_point(int kind, bool receivers, int64_t index) {
  const char* set = receivers ? "receiver" : "source";
  if (kind == 0)
    fail(GPUFMM_ERROR_INVALID_ARGUMENT, set, " point ", index,
         " (0-based) has a non-finite coordinate (NaN or Inf); it is the first such ", set);
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, set, " point ", index,
       " (0-based) lies outside the given cube; it is the first such ", set);
}

void check_box_counts(const Tree& t) {
  for (int s = 0; s < 2; ++s) {
    const PointSet& ps = t.set(s);
    require(ps.nboxes <= kMaxPoints, GPUFMM_ERROR_NOT_SUPPORTED, "the tree would have ", ps.nboxes,
            " boxes, more than int32 indices hold; lower l_max or max_level");
  }
}

void allocate_points(Tree& t) {
  Slab slab;
  for (int s = 0; s < (t.same_sets ? 1 : 2); ++s) {
    PointSet& ps = s == 0 ? t.src : t.recv_own;
    slab.add(&ps.keys, ps.n);
    slab.add(&ps.perm, ps.n);
    slab.add(&ps.iperm, ps.n);
  }
  slab.allocate(t.memory, "tree point arrays (keys, permutations)");
}

void finish_levels(Tree& t, const LevelScan scans[2]) {
  const int nsets = t.same_sets ? 1 : 2;
  if (t.options.l_max >= 0) {
    t.l_max = t.options.l_max;
  } else {
    int l = 0;
    for (int s = 0; s < nsets; ++s)
      if (scans[s].cmax >= 0) l = std::max(l, scans[s].cmax + 1);
    t.l_max = std::min(l, t.options.max_level);
  }
  for (int s = 0; s < 2; ++s) {
    PointSet& ps = s == 0 ? t.src : t.recv_own;
    ps.level_offset.assign(static_cast<size_t>(t.l_max) + 2, 0);
    if (s == 1 && t.same_sets) continue;
    int64_t cum = 0, below = 0;  // below = pairs that differ at a level < lev
    for (int lev = 0; lev <= t.l_max; ++lev) {
      if (lev >= 1) below += scans[s].hist[lev - 1];
      const int64_t count = ps.n == 0 ? 0 : 1 + below;
      ps.level_offset[static_cast<size_t>(lev) + 1] = cum + count;
      cum += count;
    }
    ps.nboxes = cum;
  }
  if (t.same_sets) {
    t.recv_own.level_offset.clear();
    t.recv_own.nboxes = 0;
  }
  check_box_counts(t);
}

void allocate_boxes(Tree& t) {
  Slab slab;
  for (int s = 0; s < (t.same_sets ? 1 : 2); ++s) {
    PointSet& ps = s == 0 ? t.src : t.recv_own;
    const int64_t nb = ps.nboxes;
    slab.add(&ps.box_key, nb);
    slab.add(&ps.center, 3 * nb);
    slab.add(&ps.parent, nb);
    slab.add(&ps.child_offset, nb + 1);
    slab.add(&ps.point_begin, nb);
    slab.add(&ps.point_end, nb);
    slab.add(&ps.bounds, nb);
    slab.add(&ps.leaf, nb);
  }
  slab.allocate(t.memory, "tree boxes");
}

void finish_adaptive_levels(Tree& t) {
  int deepest = 0;
  for (int s = 0; s < (t.same_sets ? 1 : 2); ++s) {
    const PointSet& ps = s == 0 ? t.src : t.recv_own;
    deepest = std::max(deepest, static_cast<int>(ps.level_offset.size()) - 2);
  }
  t.l_max = deepest;
  for (int s = 0; s < 2; ++s) {
    PointSet& ps = s == 0 ? t.src : t.recv_own;
    if (s == 1 && t.same_sets) {
      ps.level_offset.clear();
      ps.nboxes = 0;
      continue;
    }
    const int64_t last = ps.level_offset.empty() ? 0 : ps.level_offset.back();
    ps.level_offset.resize(static_cast<size_t>(t.l_max) + 2, last);
    ps.nboxes = last;
  }
  check_box_counts(t);
}

}  // namespace detail

std::unique_ptr<Tree> build(Context& ctx, const Options& opt, const double* src, int64_t nsrc,
                            const double* recv, int64_t nrecv, bool on_context) {
  validate_options(opt);
  const bool same = (recv == nullptr);
  require(nsrc >= 0 && nsrc <= kMaxPoints, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nsrc' = ",
          nsrc, " is not in 0..", kMaxPoints);
  require(src != nullptr || nsrc == 0, GPUFMM_ERROR_INVALID_ARGUMENT,
          "argument 'src' is NULL but nsrc = ", nsrc);
  if (same) {
    nrecv = nsrc;
  } else {
    require(nrecv >= 0 && nrecv <= kMaxPoints, GPUFMM_ERROR_INVALID_ARGUMENT,
            "argument 'nrecv' = ", nrecv, " is not in 0..", kMaxPoints);
  }
#ifndef GPUFMM_HAVE_CUDA
  (void)on_context;
  require(!ctx.on_gpu(), GPUFMM_ERROR_NOT_SUPPORTED, "gpufmm was built without CUDA");
#endif

  const double t0 = wall_seconds();
  auto t = std::make_unique<Tree>(ctx);
  t->options = opt;
  t->same_sets = same;
  t->src.n = nsrc;
  t->recv_own.n = same ? 0 : nrecv;
  t->l_max = opt.l_max;  // -1 until derived
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    detail::build_cuda(*t, src, same ? nullptr : recv, on_context);
#endif
  } else {
    allocating("the octree's working arrays (keys, sort buffers, levels)", 24.0 * double(nsrc + nrecv),
               [&] { detail::build_cpu(*t, src, same ? nullptr : recv); });
  }
  t->timings.total = wall_seconds() - t0;
  return t;
}

// ---------------------------------------------------------------- host copies

void download(const Tree& t, void* host, const void* src, size_t bytes) {
  if (bytes == 0) return;
  backend_download(t.ctx, host, src, bytes, false);
}

namespace {
HostPointSet host_set(const Tree& t, const PointSet& s) {
  HostPointSet h;
  h.n = s.n;
  h.keys = host_copy(t, s.keys, s.n);
  h.perm = host_copy(t, s.perm, s.n);
  h.iperm = host_copy(t, s.iperm, s.n);
  h.level_offset = s.level_offset;
  h.box_key = host_copy(t, s.box_key, s.nboxes);
  h.parent = host_copy(t, s.parent, s.nboxes);
  h.child_offset = host_copy(t, s.child_offset, s.nboxes + 1);
  h.point_begin = host_copy(t, s.point_begin, s.nboxes);
  h.point_end = host_copy(t, s.point_end, s.nboxes);
  h.center = host_copy(t, s.center, 3 * s.nboxes);
  h.bounds = host_copy(t, s.bounds, s.nboxes);
  h.leaf = host_copy(t, s.leaf, s.nboxes);
  return h;
}
}  // namespace

HostTree to_host(const Tree& t) {
  HostTree h;
  h.same_sets = t.same_sets;
  h.l_max = t.l_max;
  h.cube = t.cube;
  h.src = host_set(t, t.src);
  h.recv = t.same_sets ? h.src : host_set(t, t.recv_own);
  return h;
}

// ---------------------------------------------------------------- statistics

SizeStats leaf_stats(const Tree& t, const PointSet& s) {
  SizeStats st;
  if (s.n == 0 || s.nboxes == 0) return st;
  const std::vector<int32_t> b = host_copy(t, s.point_begin, s.nboxes), e = host_copy(t, s.point_end, s.nboxes);
  const std::vector<uint8_t> leaf = host_copy(t, s.leaf, s.nboxes);
  for (int64_t i = 0; i < s.nboxes; ++i)
    if (leaf[i]) st.add(e[i] - b[i]);
  st.finish();
  return st;
}

}  // namespace tree
}  // namespace gpufmm
