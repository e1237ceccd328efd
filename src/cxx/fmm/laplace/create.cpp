// Laplace plan creation: p and the depth (cost model), the tree, sorted
// coordinates, the near-field and translation statistics, the CUDA driver's
// set-up; the C handle and plan_info. Options: options.cpp; tables:
// tables.cpp; evaluate: evaluate.cpp. Layout and conventions: plan.hpp.
#include "fmm/laplace/plan.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "core/handles.hpp"
#include "fmm/laplace/math.hpp"
#include "fmm/laplace/gpu.hpp"
#include "plan/checks.hpp"
#if defined(GPUFMM_HAVE_CUDA)
#include "cuda/common/points.hpp"
#include "cuda/common/staging.hpp"
#endif

namespace gpufmm {
namespace fmm {

namespace {

double now() { return omp_get_wtime(); }

// Host access to a tree array: the array itself for a host tree, a
// downloaded copy for a device tree (not zero-filled first).
template <class V>
struct HostView {
  const V* p = nullptr;
  std::unique_ptr<V[]> own;
  const V& operator[](int64_t i) const { return p[i]; }
  const V* begin() const { return p; }
  const V* end() const { return p + own_n; }
  const V* data() const { return p; }
  int64_t own_n = 0;
};

template <class V>
HostView<V> fetch(const tree::Tree& t, const V* src, int64_t n) {
  HostView<V> h;
  h.own_n = n > 0 ? n : 0;
  if (!t.ctx.on_gpu()) {
    h.p = src;
    return h;
  }
  h.own.reset(new V[static_cast<size_t>(std::max<int64_t>(h.own_n, 1))]);
#if defined(GPUFMM_HAVE_CUDA)
  if (n > 0) gpufmm::cuda::staged_download(t.ctx, h.own.get(), src, sizeof(V) * static_cast<size_t>(n), plan::parallel_copy);
#else
  if (n > 0) tree::download(t, h.own.get(), src, sizeof(V) * static_cast<size_t>(n));
#endif
  h.p = h.own.get();
  return h;
}

// Host copies of the box arrays of one set (views into a host tree).
struct HostBoxes {
  HostView<uint64_t> key;
  HostView<int32_t> child, begin, end;
  HostView<uint8_t> leaf;
  lists::BoxView view(const tree::Tree& t, const tree::PointSet& s) const {
    lists::BoxView v = lists::box_view(t, s);
    v.key = key.data();
    v.child = child.data();
    v.begin = begin.data();
    v.end = end.data();
    v.leaf = leaf.data();
    return v;
  }
};

HostBoxes host_boxes(const tree::Tree& t, const tree::PointSet& s) {
  HostBoxes h;
  h.key = fetch(t, s.box_key, s.nboxes);
  h.child = fetch(t, s.child_offset, s.nboxes + 1);
  h.begin = fetch(t, s.point_begin, s.nboxes);
  h.end = fetch(t, s.point_end, s.nboxes);
  h.leaf = fetch(t, s.leaf, s.nboxes);
  return h;
}

// Issue 19: the U, W and X lists of an adaptive plan and its near-field
// sizes. W and X boxes whose other side is at most f p^2 points go to the
// direct sum (lists/adaptive.hpp): P2P costs one kernel evaluation per pair,
// M2P and P2L about p^2 basis terms per point. f = 1 on the CPU; 16 on the
// GPU, whose P2P ran 25x the pairs per second of its P2L's terms (H100,
// N = 1e6: 4e11 pairs/s against 1.6e10 terms/s), which there removes 90-100%
// of the W and X entries for 2-9% more pairs.
constexpr int64_t kAdaptiveDirectCpu = 1, kAdaptiveDirectGpu = 16;
// The factor of adaptive_v_direct by backend: the CPU's constants as fitted;
// on the GPU a translation of the dense-product M2L costs ~10 ns at p' = 19
// and an adaptive tree's P2P ~2 ps per pair (small leaves fill fewer lanes),
// against the model's 17 ns and 1.45 ps, and 0.5 measured fastest of
// 0.25 .. 2 (H200, N = 1e6 Plummer and two clusters: docs/laplace_gpu.md).
constexpr double kAdaptiveVDirectCpu = 1.0, kAdaptiveVDirectGpu = 0.5;

LaplaceCostConstants cost_constants(const LaplacePlan& plan);

// The translation truncation number of M2L class cls in the plan's tables.
int class_p(const LaplacePlan& P, int32_t cls) {
  return P.single() ? P.tables_f->op_p[size_t(cls)] : P.tables_d->op_p[size_t(cls)];
}

void adaptive_lists(LaplacePlan& P) {
  const tree::Tree& t = *P.tree;
  const HostBoxes hs = host_boxes(t, t.src);
  HostBoxes hr_own;
  if (!t.same_sets) hr_own = host_boxes(t, t.recv_own);
  const HostBoxes& hr = t.same_sets ? hs : hr_own;
  const lists::BoxView S = hs.view(t, t.src), R = hr.view(t, t.receivers());
  lists::AdaptiveListOptions o;
  o.skip_type2 = P.modified;
  o.p2p_max = P.options.adaptive_direct_max >= 0
                  ? P.options.adaptive_direct_max
                  : (P.cpu_pipeline() ? kAdaptiveDirectCpu : kAdaptiveDirectGpu) * int64_t(P.p) * P.p;
  P.alists = std::make_unique<lists::AdaptiveLists>(lists::build_adaptive(S, R, o));
  // Same-level translations of few points to the direct sum, by the cost
  // model: n_t n_s pairs against one translation at the class's p'.
  const double f = P.options.adaptive_v_direct >= 0 ? P.options.adaptive_v_direct
                   : P.cpu_pipeline()                ? kAdaptiveVDirectCpu
                                                     : kAdaptiveVDirectGpu;
  if (f > 0) {
    const LaplaceCostConstants c = cost_constants(P);
    lists::HostLists v = lists::to_host(t, *P.lists, false);
    const int64_t moved = lists::move_to_direct(
        S, R, v,
        [&](int64_t nt, int64_t ns, int32_t cls) {
          return double(nt) * double(ns) * c.c_pair < f * laplace_translation_seconds(c, P.p, class_p(P, cls));
        },
        *P.alists);
    if (moved > 0)
      for (int k : {int(lists::kM2L), int(lists::kType1), int(lists::kType2)})
        if (v[size_t(k)].built) lists::overwrite(t, *P.lists, k, v[size_t(k)]);
  }
  int64_t max_leaf = 0;
  for (const lists::BoxView* v : {&S, &R})
    for (int64_t b = 0; b < v->nboxes(); ++b)
      if (v->leaf[b]) max_leaf = std::max(max_leaf, v->points(b));
  P.p2p_pairs = P.alists->u_pairs;
  P.max_near_sources = P.alists->max_u_sources;
  P.max_leaf_points = max_leaf;
}

// Sizes for plan_info and the workspace: near-field pairs and the largest
// near-field source count of a target leaf. A device tree: reduced on the
// device (integer sums and maxima, the same numbers).
void near_field_stats(LaplacePlan& plan) {
  const tree::Tree& t = *plan.tree;
  int64_t pairs = 0, max_near = 0, max_leaf = 0;
  if (plan.adaptive) {
    if (!plan.alists) adaptive_lists(plan);
    return;
  }
  if (t.ctx.on_gpu()) {
#if defined(GPUFMM_HAVE_CUDA)
    cuda::laplace_near_field_stats(t, plan.lists->list[lists::kNeighbors], pairs, max_near, max_leaf);
#endif
  } else {
    const tree::PointSet& S = t.src;
    const tree::PointSet& R = t.receivers();
    const lists::List& nb = plan.lists->list[lists::kNeighbors];
    const int32_t *s_beg = S.point_begin, *s_end = S.point_end, *r_beg = R.point_begin, *r_end = R.point_end;
    const int64_t* off = nb.offsets;
    const int32_t* idx = nb.index;
    const int L = t.l_max;
    if (R.nboxes > 0) {
      const int64_t b0 = R.level_offset[L], b1 = R.level_offset[L + 1];
#pragma omp parallel for schedule(static) reduction(+ : pairs) reduction(max : max_near, max_leaf) if (b1 - b0 > 4096)
      for (int64_t b = b0; b < b1; ++b) {
        int64_t near = 0;
        for (int64_t e = off[b]; e < off[b + 1]; ++e) near += s_end[idx[e]] - s_beg[idx[e]];
        const int64_t nt = r_end[b] - r_beg[b];
        pairs += near * nt;
        max_near = std::max(max_near, near);
        max_leaf = std::max(max_leaf, nt);
      }
    }
    if (S.nboxes > 0)
      for (int64_t b = S.level_offset[L]; b < S.level_offset[L + 1]; ++b)
        max_leaf = std::max<int64_t>(max_leaf, s_end[b] - s_beg[b]);
  }
  plan.p2p_pairs = pairs;
  plan.max_near_sources = max_near;
  plan.max_leaf_points = max_leaf;
}

// Entries per class code over the M2L lists of the plan's tree (a histogram
// on the device for a device tree, per-thread histograms on the host).
std::vector<int64_t> class_counts(const tree::Tree& t, const lists::Lists& ls) {
  std::vector<int64_t> counts(tree::kNumClasses, 0);
  const int lists[3] = {int(lists::kM2L), int(lists::kType1), int(lists::kType2)};
  if (t.ctx.on_gpu()) {
#if defined(GPUFMM_HAVE_CUDA)
    cuda::laplace_class_counts(t, ls, lists, 3, counts.data());
#endif
    return counts;
  }
  for (int k : lists) {
    const lists::List& l = ls.list[k];
    if (!l.built || l.nnz == 0) continue;
    const int32_t* cls = l.cls;
    const int64_t n = l.nnz;
#pragma omp parallel if (n > (int64_t(1) << 16))
    {
      std::vector<int64_t> mine(tree::kNumClasses, 0);
#pragma omp for schedule(static) nowait
      for (int64_t e = 0; e < n; ++e) ++mine[static_cast<size_t>(cls[e])];
#pragma omp critical(gpufmm_laplace_class_counts)
      for (int c = 0; c < tree::kNumClasses; ++c) counts[static_cast<size_t>(c)] += mine[static_cast<size_t>(c)];
    }
  }
  return counts;
}

// Sums of p_op^3 and p_op^2 over the translations of one evaluate. Every
// term is an integer below 2^53, so the sums are exact in any order.
template <class T>
void translation_work(LaplacePlan& plan, const LaplaceTables<T>& tab) {
  const tree::Tree& t = *plan.tree;
  double p3 = 0, p2 = 0;
  auto add = [&](int q, double count) {
    p3 += count * q * q * q;
    p2 += count * q * q;
  };
  const std::vector<int64_t> per_class = class_counts(t, *plan.lists);
  for (int op = 0; op < tree::kNumClasses; ++op)
    if (per_class[static_cast<size_t>(op)] > 0) add(tab.op_p[op], double(per_class[static_cast<size_t>(op)]));
  const int L = t.l_max;
  const tree::PointSet& S = t.src;
  const tree::PointSet& R = t.receivers();
  if (L >= 2 && S.nboxes > 0 && R.nboxes > 0) {
    add(plan.p, double(S.level_offset[L + 1] - S.level_offset[3 <= L ? 3 : L + 1]));  // M2M
    const int first = plan.modified ? 2 : 3;
    if (first <= L) add(plan.p, double(R.level_offset[L + 1] - R.level_offset[first]));  // L2L
  }
  plan.rcr_p3 = p3;
  plan.rcr_p2 = p2;
}


// The cost model's constants of the plan's backend (or the options').
LaplaceCostConstants cost_constants(const LaplacePlan& plan) {
  return plan.options.cost     ? *plan.options.cost
         : plan.cpu_pipeline() ? laplace_cost_constants_cpu(plan.single())
                               : laplace_cost_constants_gpu(plan.single());
}

// Issue 19: the modelled seconds of one evaluate of an adaptive plan (its
// tree, same-level lists and U, W, X lists built), in the terms of the depth
// scan's model (cost.hpp): the U pairs, every M2L of its lists by class,
// M2M and L2L into every box that takes one, P2M and L2P at every point and
// M2P / P2L at the points of the W and X entries.
template <class T>
double adaptive_model_seconds(const LaplacePlan& P, const LaplaceTables<T>& tab) {
  const LaplaceCostConstants c = cost_constants(P);
  const tree::Tree& t = *P.tree;
  const tree::PointSet& S = t.src;
  const tree::PointSet& R = t.receivers();
  const int L = t.l_max;
  auto t_rcr = [&](int q) { return laplace_translation_seconds(c, P.p, q); };
  const std::vector<int64_t> per_class = class_counts(t, *P.lists);
  double far = 0;
  for (int cls = 0; cls < tree::kNumClasses; ++cls)
    if (per_class[size_t(cls)] > 0) far += double(per_class[size_t(cls)]) * t_rcr(tab.op_p[cls]);
  if (L >= 3) far += double(S.nboxes - S.level_offset[3]) * t_rcr(P.p);  // M2M into levels >= 2
  const int l2l_from = P.modified ? 2 : 3;
  if (L >= l2l_from) far += double(R.nboxes - R.level_offset[size_t(l2l_from)]) * t_rcr(P.p);
  const lists::AdaptiveLists& A = *P.alists;
  const double point = laplace_point_seconds(c, P.p, P.nsrc + A.x_sources, P.ntrg + A.w_targets);
  return laplace_evaluate_seconds(c, L, double(A.u_pairs), far, point);
}

// The side of the tree's cube against what the plan's precision holds
// (issue 14). Double: pair distances and their squares (plan::kMaxSpanDouble;
// GPUFMM_ERROR_ACCURACY). Float: the relative coordinates, squared distances
// and the box scalings 1/h, 1/h^2 of the finest level (h >= side 2^-21) in
// float with room for the charges: a side in [2^-32, 2^60] (INVALID_ARGUMENT,
// a value that does not fit float).
constexpr double kMinSpanFloat = 0x1p-32, kMaxSpanFloat = 0x1p60;

// Issue 19 (N = 1e7 uniform): leaves between two depths. A uniform tree's
// cube may be f times the points' cube, sharing its lower corner: at depth
// l + 1 its occupied leaves then hold ~f^3 / 8 of the points of depth l's,
// for fewer near-field pairs and more translations. The depth scan scores
// f = 2^(k / kCubePaddingSteps), k = 0 .. kCubePaddingSteps - 1, each on the
// keys of its own cube, and keeps the cheapest (f = 2 is the next depth of
// f = 1). Measured on 1 x H200 (docs/laplace_gpu.md "Leaves between two
// depths"): 1e7 uniform points take f = 2^(5/6), depth 6, 121.7 ms against
// 131.1 at f = 1, depth 5; 2e6 24.9 against 31.3; 1e6 keeps f = 1.
constexpr int kCubePaddingSteps = 6;

// Options of a tree whose cube is f times `base` (the points' cube), with
// base's lower corner.
void pad_cube(const tree::Cube& base, double f, tree::Options& o) {
  if (f == 1) return;
  o.cube_given = true;
  o.cube_side = f * base.side;
  for (int k = 0; k < 3; ++k) o.cube_center[k] = base.corner[k] + 0.5 * o.cube_side;
}

// The depth scan on the sorted keys of a keys-only tree.
template <class T>
DepthChoice scan_keys(const LaplacePlan& plan, const tree::Tree& scan, const LaplaceTables<T>& tab,
                             const LaplaceCostConstants& c) {
#if defined(GPUFMM_HAVE_CUDA)
  if (scan.ctx.on_gpu())  // the keys stay on the device, and so does the scan
    return cuda::laplace_choose_depth_device<T>(scan.ctx, scan.src.keys, plan.nsrc,
                                                plan.same_sets ? nullptr : scan.recv_own.keys, plan.ntrg,
                                                plan.modified, tab, c);
#endif
  const auto sk = fetch(scan, scan.src.keys, scan.src.n);  // views into `scan` on the CPU
  HostView<uint64_t> rk;
  if (!plan.same_sets) rk = fetch(scan, scan.recv_own.keys, scan.recv_own.n);
  return laplace_choose_depth<T>(sk.data(), plan.nsrc, plan.same_sets ? nullptr : rk.data(), plan.ntrg,
                                 plan.modified, tab, c);
}

// The points' cube (a keys-only tree's), for a given cube_padding where no
// depth is scanned.
tree::Cube points_cube(const LaplacePlan& plan, const double* sources, const double* targets, bool on_context) {
  tree::Options so;
  so.l_max = 0;
  return tree::build(plan.ctx, so, sources, plan.nsrc, targets, plan.ntrg, on_context)->cube;
}

// The depth and the cube (options.cube_padding: given, or each candidate)
// of the cheapest uniform tree. base: the points' cube.
// sources / targets: host memory, or the context's when on_context.
template <class T>
void choose_depth_with(LaplacePlan& plan, const LaplaceTables<T>& tab, const double* sources,
                       const double* targets, bool on_context, tree::Cube& base) {
  // A keys-only tree (depth 0, no lists) gives the sorted Morton keys of
  // both sets in a candidate's cube; the model scans depths on them.
  const LaplaceCostConstants c = cost_constants(plan);
  const double given = plan.options.cube_padding;
  // Float plans with distinct targets keep the points' cube unless given: in
  // a larger one, targets far from their sources (dipoles, eps 1e-5) took
  // the dense path, their error at p = 16 fell too little over two terms to
  // be told from float's rounding floor, and the plans passed with errors
  // of 1.3e-5 .. 1.7e-5 (in the points' cube: refused, calibrate.cpp).
  const int candidates = given > 0 || (plan.single() && !plan.same_sets) ? 1 : kCubePaddingSteps;
  tree::Options so;
  so.l_max = 0;
  for (int k = 0; k < candidates; ++k) {
    const double f = given > 0 ? given : std::exp2(double(k) / kCubePaddingSteps);
    // Candidates whose cube would pass the precision's largest side
    // (check_span) are left out: the points' cube alone is checked.
    if (k > 0 && 2 * base.side > (plan.single() ? kMaxSpanFloat : plan::kMaxSpanDouble)) break;
    double t = now();
    if (k == 0 && f != 1) base = points_cube(plan, sources, targets, on_context);
    tree::Options po = so;
    if (k > 0 || f != 1) pad_cube(base, f, po);
    const auto scan = tree::build(plan.ctx, po, sources, plan.nsrc, targets, plan.ntrg, on_context);
    if (k == 0 && f == 1) base = scan->cube;
    plan.plan_times.depth_keys += now() - t;
    t = now();
    DepthChoice d = scan_keys<T>(plan, *scan, tab, c);
    plan.plan_times.depth_scan += now() - t;
    if (d.cost.empty()) {  // no sources or no targets: nothing to choose
      plan.depth = std::move(d);
      plan.cube_padding = 1;
      return;
    }
    if (k == 0 || d.cost[size_t(d.l_max)] < plan.depth.cost[size_t(plan.depth.l_max)]) {
      plan.depth = std::move(d);
      plan.cube_padding = f;
    }
  }
}

// s_max of an adaptive tree when the options leave it to the library: the
// leaf size that balances a leaf's near field (~ s^2 pairs) against its
// translations (~ p^3 each) grows as p^1.5; 2 p^1.5 (206 at p = 22) is
// near the best measured on both backends (docs/laplace_fmm.md "Adaptive
// trees": 128..256 on the H100 and 128..256 on the CPU at p = 22).
int adaptive_s_max(int p) { return std::max(8, int(std::lround(2.0 * std::pow(double(p), 1.5)))); }

// How many levels the leaves span where most points are: the points of
// both sets by the level of their leaf, the levels from the 5th to the 95th
// percentile of points apart. Measured (N = 2e4 .. 1e6): uniform 0,
// ellipsoid surface 1-2, two Gaussian clusters 1-2, Plummer 4, refined
// patch 5-6. At 0 AUTO takes the uniform tree without modelling both.

int leaf_levels_spread(const tree::Tree& t) {
  std::vector<int64_t> per_level(size_t(t.l_max) + 1, 0);
  int64_t total = 0;
  auto scan = [&](const tree::PointSet& X) {
    if (X.n == 0) return;
    const auto leaf = fetch(t, X.leaf, X.nboxes);
    const auto beg = fetch(t, X.point_begin, X.nboxes);
    const auto end = fetch(t, X.point_end, X.nboxes);
    for (int l = 0; l <= t.l_max; ++l)
      for (int64_t b = X.level_offset[size_t(l)]; b < X.level_offset[size_t(l) + 1]; ++b)
        if (leaf[b]) per_level[size_t(l)] += end[b] - beg[b];
    total += X.n;
  };
  scan(t.src);
  if (!t.same_sets) scan(t.recv_own);
  if (total == 0) return 0;
  int lo = -1, hi = 0;
  int64_t seen = 0;
  for (int l = 0; l <= t.l_max; ++l) {
    seen += per_level[size_t(l)];
    if (lo < 0 && seen * 20 > total) lo = l;       // past the 5th percentile
    if (seen * 20 < 19 * total) hi = l + 1;        // the 95th percentile lies beyond l
  }
  return std::max(0, std::min(hi, t.l_max) - std::max(lo, 0));
}

void check_span(const LaplacePlan& P) {
  const double side = P.tree->cube.side;
  const char* which = P.same_sets ? "argument 'sources'" : "arguments 'sources' and 'targets'";
  const std::string cube = P.cube_padding == 1 ? std::string(" (the side of their bounding cube)")
                                                 : " (the side of the tree's cube, options.cube_padding = " +
                                                       std::to_string(P.cube_padding) + " times their bounding cube's)";
  require(side <= plan::kMaxSpanDouble, GPUFMM_ERROR_ACCURACY, which, ": the points span ", side, cube,
          ", beyond ", plan::kMaxSpanDouble,
          " (2^500): squared distances of such points can overflow double, so no accuracy can be promised; "
          "scale the coordinates");
  if (P.single())
    require(side >= kMinSpanFloat && side <= kMaxSpanFloat, GPUFMM_ERROR_INVALID_ARGUMENT, which,
            ": the points span ", side, cube, "; a single-precision plan needs a side "
            "in [", kMinSpanFloat, ", ", kMaxSpanFloat, "] (2^-32 .. 2^60), so that its distances, their squares "
            "and box scalings fit float: scale the coordinates, or use precision GPUFMM_FLOAT64");
}

// ---------------------------------------------------------------- the steps of laplace_plan_create

// Wall seconds since the last lap, added to a field of PlanTimes.
struct PhaseClock {
  double mark;
  void lap(double& field) {
    const double t = now();
    field += t - mark;
    mark = t;
  }
};

// Finite coordinates: checked here on the host, or by the CUDA driver on
// the device copy it uploads anyway (one pass over the data fewer).
void check_coordinates(const LaplacePlan& P, int64_t nsrc, const double* sources, int64_t ntrg,
                       const double* targets) {
  if (P.cpu_pipeline()) {
    plan::check_points(sources, nsrc, "sources");
    if (targets != nullptr) plan::check_points(targets, ntrg, "targets");
    plan::check_points_resolvable(sources, nsrc, "sources");
    if (targets != nullptr) plan::check_points_resolvable(targets, ntrg, "targets");
  } else {
    plan::check_points_pointer(sources, nsrc, "sources");
    if (targets != nullptr) plan::check_points_pointer(targets, ntrg, "targets");
  }
}

// p from eps (or the caller's), and what it implies for the options.
void choose_p(LaplacePlan& P, const LaplaceOptions& opt) {
  // Issue 19, item 3: single precision promises no eps below what it was
  // measured to reach (kLaplaceMinEpsFloat); a forced p is the caller's.
  require(!P.single() || opt.p > 0 || opt.eps >= kLaplaceMinEpsFloat, GPUFMM_ERROR_ACCURACY,
          "options field 'eps' = ", opt.eps, " is below what single precision reaches (", kLaplaceMinEpsFloat,
          ": at eps = 1e-6 float gives gradient errors of 1.2e-6 on uniform points and 1.5e-5 on an ellipsoid "
          "surface); use precision GPUFMM_FLOAT64, or eps >= ", kLaplaceMinEpsFloat);
  P.p = opt.p > 0 ? opt.p : laplace_p_from_eps(opt.eps, P.single());
  // When p had to be capped (eps beyond what the error model certifies at
  // kMaxP in double / kLaplaceMaxPFloat in float), the reduced truncation
  // numbers of eq. (24) cost more accuracy than there is to spare (measured:
  // 6-10x at p = 44-50); every translation then keeps the full p. In double
  // the plan also takes the standard stencil there: its worst source-target
  // geometry converges faster than the type-2 boxes' (docs/laplace_fmm.md
  // section 3; measured at eps = 1e-12, p = 50: the modified stencil reached
  // 1.1e-12 with charges, uniform points, l_max = 2).
  if (opt.p == 0 && !laplace_p_certifies(P.p, opt.eps)) {
    P.options.variable_truncation = false;
    if (!P.single()) P.options.stencil = GPUFMM_STENCIL_STANDARD;
  }
  P.modified = P.options.stencil == GPUFMM_STENCIL_MODIFIED;
}

// The operator tables for P.p.
void get_tables(LaplacePlan& P) {
  allocating("the translation tables", 0, [&P] {
    if (P.single())
      P.tables_f = laplace_tables_get<float>(P.p, P.options.variable_truncation, P.options.table_cache);
    else
      P.tables_d = laplace_tables_get<double>(P.p, P.options.variable_truncation, P.options.table_cache);
  });
}

// The lists of the V kinds: the uniform plan's near field is the neighbour
// list, an adaptive plan's its U list (adaptive_lists).
void build_lists(LaplacePlan& P) {
  P.lists = lists::build(*P.tree, (P.adaptive ? 0u : 1u << lists::kNeighbors) |
                                      (P.modified ? (1u << lists::kType1) | (1u << lists::kType2)
                                                  : (1u << lists::kM2L)));
}

// Where the plan's coordinates are: the user's host arrays, or (CUDA driver)
// one device copy of them from which both trees are built and the sorted
// coordinates gathered.
struct PlanPoints {
  const double* src;
  const double* trg;
  bool on_context = false;
};

// Issue 19: tree = ADAPTIVE, or AUTO with neither l_max nor s_max given,
// builds the adaptive tree. AUTO keeps it when its leaves spread over
// levels (leaf_levels_spread > 0) and the cost model puts its evaluate
// below the uniform depth's (adaptive_model_seconds against the depth
// scan's best); else it builds the uniform tree of that depth.
void build_tree(Context& ctx, LaplacePlan& P, const LaplaceOptions& opt, const PlanPoints& x, PhaseClock& clock) {
  PlanTimes& tp = P.plan_times;
  tree::Cube base{};  // the points' cube (the depth scan's, when it ran)
  auto depth_scan = [&] {
    if (P.single())
      choose_depth_with(P, *P.tables_f, x.src, x.trg, x.on_context, base);
    else
      choose_depth_with(P, *P.tables_d, x.src, x.trg, x.on_context, base);
  };
  const bool auto_tree = opt.tree == GPUFMM_LAPLACE_TREE_AUTO && opt.l_max < 0 && opt.s_max < 1;
  bool scanned = false;
  if (opt.tree == GPUFMM_LAPLACE_TREE_ADAPTIVE || auto_tree) {
    tree::Options to;
    to.kind = tree::Kind::Adaptive;
    to.l_max = -1;
    to.s_max = opt.s_max >= 1 ? opt.s_max : adaptive_s_max(P.p);
    clock.mark = now();
    P.tree = tree::build(ctx, to, x.src, P.nsrc, x.trg, P.ntrg, x.on_context);
    P.adaptive = true;
    if (auto_tree && leaf_levels_spread(*P.tree) == 0) P.adaptive = false;  // leaves on one level: uniform
    if (auto_tree && P.adaptive && P.nsrc > 0 && P.ntrg > 0) {
      build_lists(P);
      adaptive_lists(P);
      const double t_adaptive =
          P.single() ? adaptive_model_seconds(P, *P.tables_f) : adaptive_model_seconds(P, *P.tables_d);
      depth_scan();
      scanned = true;
      P.adaptive = !P.depth.cost.empty() && t_adaptive < P.depth.cost[size_t(P.depth.l_max)];
      if (P.adaptive) P.cube_padding = 1;
    }
    if (!P.adaptive) {
      P.alists.reset();
      P.lists.reset();
      P.tree.reset();
    }
    clock.lap(tp.tree);
  }
  if (!P.adaptive) {
    tree::Options to;
    if (opt.l_max >= 0 || opt.s_max >= 1) {  // the caller's depth, and cube_padding 0 -> 1
      to.l_max = opt.l_max;
      if (opt.l_max < 0) to.s_max = opt.s_max;
      P.cube_padding = opt.cube_padding > 0 ? opt.cube_padding : 1;
      if (P.cube_padding != 1) base = points_cube(P, x.src, x.trg, x.on_context);
    } else {
      if (!scanned) depth_scan();
      to.l_max = P.depth.l_max;
    }
    pad_cube(base, P.cube_padding, to);
    clock.mark = now();
    P.tree = tree::build(ctx, to, x.src, P.nsrc, x.trg, P.ntrg, x.on_context);
  }
  if (!P.lists) build_lists(P);
  P.l_max = P.tree->l_max;
  check_span(P);
  P.src_boxes = P.tree->src.nboxes;
  P.trg_boxes = P.tree->receivers().nboxes;
  clock.lap(tp.tree);
}

// Sorted coordinates (double): on the host for the CPU pipeline; for the
// CUDA driver laplace_plan_setup gathers them on the device.
void sorted_coordinates(LaplacePlan& P, const double* sources, const double* targets, const PlanPoints& x) {
  if (x.on_context) {
    P.dev_sources = x.src;
    P.dev_targets = x.trg;
    return;
  }
  const int64_t nsrc = P.nsrc;
  const auto perm = fetch(*P.tree, P.tree->src.perm, nsrc);
  allocating("the sorted coordinates", 24.0 * double(nsrc + (P.same_sets ? 0 : P.ntrg)), [&] {
    P.src_xyz.resize(static_cast<size_t>(3 * nsrc));
    P.trg_xyz.resize(P.same_sets ? 0 : static_cast<size_t>(3 * P.ntrg));
  });
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nsrc; ++i)
    for (int k = 0; k < 3; ++k) P.src_xyz[3 * i + k] = sources[3 * int64_t(perm[i]) + k];
  if (!P.same_sets) {
    const auto rperm = fetch(*P.tree, P.tree->recv_own.perm, P.ntrg);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < P.ntrg; ++i)
      for (int k = 0; k < 3; ++k) P.trg_xyz[3 * i + k] = targets[3 * int64_t(rperm[i]) + k];
  }
}

// The near field's pairs between touching boxes (the sparse-tree rules
// below), without the translations an adaptive plan sums directly.
double adjacent_pairs(const LaplacePlan& P) { return double(P.p2p_pairs - (P.alists ? P.alists->v_pairs : 0)); }

// p from eps assumes a near field that holds each target's closest sources;
// a nearly empty one (laplace_p_sparse) needs more terms, and every
// translation keeps the full p: the reduced truncation numbers of eq. (24)
// split an error budget fitted to dense near fields (the C-API fuzzer
// found 6 points, eps 1e-10, l_max 4: gradient 7.0e-10 with them, 5.5e-15
// without; regression test LaplaceFmmAccuracy.SparseTreesKeepTheFullP).
// The depth stays, unless in double the extra terms would pass the
// largest p: then nothing certifies eps at this depth (measured: 6-25
// points at forced depths 4-5, about one per leaf, p = 50 for eps 1e-10
// and 1e-12 gave gradient errors up to 126 eps), and a forced depth gives
// way to the cost model's, which plan_info reports
// (LaplaceFmmAccuracy.SparseTreesKeepTheFullP). In float the largest p is
// the roundoff floor (1500 points at depths 5-6, p = 16: errors <= 2.6e-6
// at eps 1e-5), so float keeps the depth.
// Returns true when the plan must be built again with the options `again`.
bool sparse_tree_rules(LaplacePlan& P, const LaplaceOptions& opt, LaplaceOptions& again) {
  const double adjacent = adjacent_pairs(P);
  if (!(opt.p == 0 && P.l_max >= 2 && P.ntrg > 0 && adjacent < kLaplaceSparseNearPerTarget * double(P.ntrg)))
    return false;
  if (opt.l_max >= 0 && !P.single() && P.p + kLaplaceSparseExtraP > kMaxP) {
    again = opt;
    again.l_max = -1;
    return true;
  }
  // In double a sparse tree also takes the standard stencil: the closest
  // pairs then go through type-2 translations, the modified stencil's
  // worst geometry (27 points at depth 5, dipoles, eps 1e-8, p = 38 + 2:
  // gradient 8.7e-8 with it, 7.8e-13 with the standard stencil). The
  // lists differ, so the plan is built again.
  if (!P.single() && P.modified) {
    again = opt;
    again.stencil = GPUFMM_STENCIL_STANDARD;
    return true;
  }
  const int ps = laplace_p_sparse(P.p, adjacent / double(P.ntrg), P.single());
  if (ps != P.p || P.options.variable_truncation) {
    P.p = ps;
    P.options.variable_truncation = false;
    get_tables(P);
  }
  return false;
}

void plan_work(LaplacePlan& P) {
  if (P.single())
    translation_work(P, *P.tables_f);
  else
    translation_work(P, *P.tables_d);
}

void plan_setup(LaplacePlan& P) {
#if defined(GPUFMM_HAVE_CUDA)
  if (!P.cpu_pipeline()) cuda::laplace_plan_setup(P);  // tables etc. to the device
#else
  (void)P;
#endif
}

// Issue 19, item 2: p from the error this plan reaches (calibrate.cpp),
// where there is a far field to truncate. A sparse near field at the cost
// model's depth (targets far from every source: all of their field comes
// through the far field, where the model's p + 8 is not enough; measured:
// 20000 Plummer sources, 12000 targets on a sphere of radius 3 around
// them, dipoles, eps 1e-6: 8.0e-6 at p = 30) is calibrated from the sparse
// p upwards only: there the error comes from a few pairs, and the error of
// one set of densities says little about another's (2x between two sets of
// random charges on the sparse trees above), so a lower p is not trusted.
// A sparse tree with more S|R translations than points, deeper than its
// points need (forced depths: 1500 points at depth 5-6 make hundreds per
// point), keeps the sparse p, as measured above: one evaluate of its
// full-p far field there costs more than the direct sum (~3 s on 2 cores
// at p = 30), and its test evaluates would cost minutes. Every pair summed
// directly (an adaptive plan's direct-sum bound can take all): no
// expansion to truncate, and the error is the rounding.
bool wants_calibration(const LaplacePlan& P, const LaplaceOptions& opt, bool sparse) {
  const bool too_deep = double(P.m2l_translations) > double(P.nsrc + P.ntrg);
  const bool all_direct = double(P.p2p_pairs) >= double(P.nsrc) * double(P.ntrg);
  return opt.p == 0 && opt.calibrate && P.l_max >= 2 && P.nsrc > 0 && P.ntrg > 0 && !(sparse && too_deep) &&
         !all_direct;
}

// The device set-up and, where wanted, the calibration. The test evaluates
// run without the CUDA graph (each would capture one for arguments never
// seen again).
void setup_and_calibrate(LaplacePlan& P, const LaplaceOptions& opt, const double* sources, const double* targets,
                         bool sparse, PhaseClock& clock) {
  PlanTimes& tp = P.plan_times;
  const bool calibrate = wants_calibration(P, opt, sparse);
  const bool graph = P.options.gpu.graph;
  if (calibrate) P.options.gpu.graph = false;
  P.calibrating = calibrate;
  plan_setup(P);
  clock.lap(tp.setup);
  if (!calibrate) return;
  laplace_calibrate(P, sources, targets, [&](int q) {
    P.p = q;
    get_tables(P);
    P.ws_d = LaplaceWorkspace<double>();
    P.ws_f = LaplaceWorkspace<float>();
    plan_work(P);
    plan_setup(P);
  }, sparse);
  P.options.gpu.graph = graph;
  P.calibrating = false;
#if defined(GPUFMM_HAVE_CUDA)
  if (!P.cpu_pipeline()) {
    cuda::laplace_gpu_kernels(P).graph = graph;
    cuda::laplace_plan_strategies(P);
  }
#endif
  P.last = StageTimes();
  clock.lap(tp.calibrate);
  // Issue 19, item 3, for this input: where even the largest float p
  // measures more than eps and more terms would help (targets far from
  // every source, dipoles, eps 1e-5: 9.6e-4 measured, 2.7e-3 reached at
  // p = 16), single precision cannot keep the promise, and the plan says
  // so instead of returning less than was asked. Float's rounding floor
  // (the error flat in p) is reported in measured_eps instead.
  require(!P.float_truncation_miss, GPUFMM_ERROR_ACCURACY, "options field 'eps' = ", opt.eps,
          " is below what single precision reaches on these points: the test evaluates measured ", P.measured_eps,
          " at p = ", kLaplaceMaxPFloat, ", the largest in float, and the error still falls with p; use precision "
          "GPUFMM_FLOAT64");
}

}  // namespace

std::unique_ptr<LaplacePlan> laplace_plan_create(Context& ctx, const LaplaceOptions& opt,
                                                 int64_t nsrc, const double* sources,
                                                 int64_t ntrg, const double* targets) {
  const double t0 = now();
  validate_options(opt);
  plan::check_count(nsrc, "nsrc");
  if (targets != nullptr) plan::check_count(ntrg, "ntrg");
#ifndef GPUFMM_HAVE_CUDA
  require(!ctx.on_gpu(), GPUFMM_ERROR_NOT_SUPPORTED, "gpufmm was built without CUDA");
#endif
  auto plan = std::make_unique<LaplacePlan>(ctx);
  LaplacePlan& P = *plan;
  check_coordinates(P, nsrc, sources, ntrg, targets);
  PlanTimes& tp = P.plan_times;
  PhaseClock clock{now()};
  tp.check = clock.mark - t0;
  P.options = opt;
  P.same_sets = targets == nullptr;
  P.nsrc = nsrc;
  P.ntrg = P.same_sets ? nsrc : ntrg;
  choose_p(P, opt);

  // CUDA driver: the coordinates go to the device once; both trees are built
  // from that copy and the sorted coordinates are gathered there.
  PlanPoints x{sources, targets, false};
#if defined(GPUFMM_HAVE_CUDA)
  gpufmm::cuda::DevicePoints dev_points;
#endif
  if (!P.cpu_pipeline()) {
    // The tree stays on the device (the CUDA driver evaluates).
#if defined(GPUFMM_HAVE_CUDA)
    dev_points = gpufmm::cuda::upload_points(ctx, sources, nsrc, targets, P.ntrg, plan::parallel_copy);
    plan::fail_if_bad_point(sources, gpufmm::cuda::first_nonfinite_point(ctx, dev_points.src, nsrc), nsrc, "sources");
    if (!P.same_sets)
      plan::fail_if_bad_point(targets, gpufmm::cuda::first_nonfinite_point(ctx, dev_points.trg, P.ntrg), P.ntrg, "targets");
    plan::fail_if_tiny_point(sources, gpufmm::cuda::first_tiny_point(ctx, dev_points.src, nsrc), nsrc, "sources");
    if (!P.same_sets)
      plan::fail_if_tiny_point(targets, gpufmm::cuda::first_tiny_point(ctx, dev_points.trg, P.ntrg), P.ntrg, "targets");
    x = PlanPoints{dev_points.src, dev_points.trg, true};
#endif
    clock.lap(tp.upload);
  }

  get_tables(P);
  clock.lap(tp.tables);
  build_tree(ctx, P, opt, x, clock);
  sorted_coordinates(P, sources, targets, x);
  clock.lap(tp.coords);
  near_field_stats(P);  // and the U, W, X lists of an adaptive plan
  P.m2l_translations = P.modified
                           ? P.lists->list[lists::kType1].nnz + P.lists->list[lists::kType2].nnz
                           : P.lists->list[lists::kM2L].nnz;
  if (P.cpu_pipeline()) allocating("the far field's schedule", 0, [&P] { far_schedule(P); });
  LaplaceOptions again;
  if (sparse_tree_rules(P, opt, again)) return laplace_plan_create(ctx, again, nsrc, sources, ntrg, targets);
  plan_work(P);
  clock.lap(tp.stats);
  setup_and_calibrate(P, opt, sources, targets, adjacent_pairs(P) < kLaplaceSparseNearPerTarget * double(P.ntrg),
                      clock);
  P.dev_sources = P.dev_targets = nullptr;  // freed with dev_points
  P.plan_seconds = now() - t0;
  return plan;
}

gpufmm_laplace_plan_s* laplace_plan_handle(std::unique_ptr<LaplacePlan> plan) {
  auto h = std::make_unique<PlanObject>();
  h->plan = std::move(plan);
  auto* handle = static_cast<gpufmm_laplace_plan_s*>(register_handle(h.get(), HandleKind::LaplacePlan));
  h.release();
  return handle;
}

}  // namespace fmm
}  // namespace gpufmm
