// Treecode plan (plan.hpp): options, trees, cluster geometry, the sets (on
// the host, over host copies of the trees' box arrays: a few thousand boxes
// at the default leaf sizes). The CPU plan then runs the traversal of the
// three compute types, builds the CSR list and the combined coordinate
// arrays here; a GPU plan builds them on the device with the same steps
// (traverse.hpp; src/cuda/treecode/plan.cu).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "plan/checks.hpp"
#include "treecode/plan.hpp"
#include "treecode/traverse.hpp"
#ifdef GPUFMM_HAVE_CUDA
#include "cuda/common/staging.hpp"
#endif

namespace gpufmm {
namespace treecode {

namespace {

// The tree's cube with its lowest corner just below the points' lowest
// corner, instead of centred on their bounding box (the tree's default).
// The clusters are the minimal boxes of the points in each octree box: a
// point set thinner along an axis than the cube (a rank's slab after RCB,
// papers/001 sec. 3.1) that sits centred in the cube is cut off-centre at
// every level, into clusters of aspect up to cube side / thickness; from
// the corner, boxes are whole cubes below the level of the thickness.
// A thickness just above side / 2^j (an RCB slab is half its cube plus the
// median's offset) would still leave a sliver of points in cells of their
// own at level j, as wide as the cube and a few points thick: a batch there
// passes the MAC with almost no cluster, and on 2 ranks its rank took
// nearly every point of the other into its LET. The cube then grows by up
// to 1/8, upwards, until the thickness fits in one cell of level j.
tree::Options cornered(tree::Options to, const double* xyz, int64_t n) {
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k) lo[k] = hi[k] = xyz[k];
#pragma omp parallel for reduction(min : lo[:3]) reduction(max : hi[:3]) schedule(static)
  for (int64_t i = 1; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], xyz[3 * i + k]);
      hi[k] = std::max(hi[k], xyz[3 * i + k]);
    }
  const tree::Cube q = tree::cube_from_bbox(lo, hi);
  double ext = 0;
  for (int k = 0; k < 3; ++k) ext = std::max(ext, hi[k] - lo[k]);
  const double margin = 0.25 * (q.side - ext);  // below the lowest corner, and as much above the highest
  if (!(margin > 0) || !std::isfinite(q.side)) return to;  // one point, or extents near overflow: centred
  double side = q.side;
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < 3; ++k) {
      const double span = (hi[k] - lo[k] + margin) * tree::kCubeEnlarge;  // from the corner
      double cell = side;
      while (cell * 0.5 >= span) cell *= 0.5;  // the smallest cell of a level that holds the span
      if (cell * 0.5 * 1.125 >= span) side *= span / (cell * 0.5);  // just over half of it: grow
    }
  double c[3];
  for (int k = 0; k < 3; ++k) c[k] = lo[k] - margin + 0.5 * side;
  // Far from the origin the rounding of the corner can exceed the margin:
  // then the centred cube (which the tree grows until it holds the points).
  const tree::Cube at = tree::cube_from_center(c, side);
  for (int k = 0; k < 3; ++k)
    if (!tree::cells_inside(tree::cube_cells(at, k, lo[k])) || !tree::cells_inside(tree::cube_cells(at, k, hi[k])))
      return to;
  to.cube_given = true;
  to.cube_side = side;
  for (int k = 0; k < 3; ++k) to.cube_center[k] = c[k];
  return to;
}
double now() { return omp_get_wtime(); }
}  // namespace

void validate(const Options& o) {
  kernels::validate(o.kernel);
  require(int(o.type) >= 0 && int(o.type) <= 2, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'type' = ",
          int(o.type), " is not GPUFMM_TREECODE_PC, _CP or _CC");
  require(o.precision == GPUFMM_FLOAT32 || o.precision == GPUFMM_FLOAT64, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'precision' = ", int(o.precision), " is not GPUFMM_FLOAT32 or GPUFMM_FLOAT64");
  require(o.theta == 0 || (o.theta > 0 && o.theta < 1), GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'theta' = ", o.theta, " is not in (0, 1) (or 0: from eps)");
  require(o.degree >= -1 && o.degree <= approx::kMaxDegree, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'degree' = ", o.degree, " is not in 0..", approx::kMaxDegree, " (or -1: from eps)");
  require(o.leaf_size >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'leaf_size' = ", o.leaf_size,
          " is negative (0: from the cost model)");
  require(o.batch_size >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'batch_size' = ", o.batch_size,
          " is negative (0: from the cost model)");
  const bool need_eps = o.theta == 0 || o.degree < 0;
  require(!need_eps || (o.eps > 0 && o.eps < 1), GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'eps' = ", o.eps,
          " is not in (0, 1)");
  // The float near field stops near 1e-5 relative (N = 1e6, docs/treecode.md).
  require(!need_eps || o.precision == GPUFMM_FLOAT64 || o.eps >= kMinFloatEps, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'eps' = ", o.eps, " is below what single precision reaches (", kMinFloatEps,
          "): use precision GPUFMM_FLOAT64");
}

Plan::~Plan() {
  gpu.reset();
  stree.reset();
  ttree.reset();
}

#ifndef GPUFMM_HAVE_CUDA
void CudaPlanDeleter::operator()(CudaPlan*) const {}
#endif

namespace {

Boxes host_boxes(const tree::Tree& t, const tree::PointSet& s) {
  Boxes b;
  b.n = s.nboxes;
  const std::vector<tree::Bounds> bounds = tree::host_copy(t, s.bounds, s.nboxes);
  const std::vector<int32_t> child = tree::host_copy(t, s.child_offset, s.nboxes + 1);
  b.parent = tree::host_copy(t, s.parent, s.nboxes);
  b.point_begin = tree::host_copy(t, s.point_begin, s.nboxes);
  b.point_end = tree::host_copy(t, s.point_end, s.nboxes);
  b.leaf = tree::host_copy(t, s.leaf, s.nboxes);
  b.box.resize(size_t(s.nboxes));
  b.child_begin.resize(size_t(s.nboxes));
  b.child_end.resize(size_t(s.nboxes));
  for (int64_t i = 0; i < s.nboxes; ++i) {
    b.box[i] = make_box(bounds[i]);
    b.child_begin[i] = child[i];
    b.child_end[i] = child[i + 1];
  }
  return b;
}

TreeView view(const Boxes& b, const std::vector<int32_t>& prox) {
  TreeView v;
  v.n = b.n;
  v.box = b.box.data();
  v.child_begin = b.child_begin.data();
  v.child_end = b.child_end.data();
  v.leaf = b.leaf.data();
  v.prox = prox.data();
  return v;
}

// One pair of the traversal: target box t, source box s.
struct Pair {
  int32_t t, s;
};

// The traversal of plan.hpp ("Method") of the plan's targets against one
// source tree (the plan's own, or another rank's), depth first from each
// start pair: emits (target set, source set), the source set in that tree's
// numbering (box b's points: b; proxy cluster p: boxes + p). The steps are
// traverse.hpp's, which the device traversal calls too.
class Traversal {
 public:
  Traversal(const Plan& p, const Boxes& sb, const std::vector<int32_t>& sprox)
      : P(p), T(view(p.tbox, p.tprox)), S(view(sb, sprox)), starts_(start_pairs(p, sb)) {}

  void run(std::vector<std::pair<int32_t, int32_t>>& out) const {
    out.clear();
    const int nt = omp_get_max_threads();
    std::vector<std::vector<std::pair<int32_t, int32_t>>> part(static_cast<size_t>(nt));
#pragma omp parallel
    {
      auto& mine = part[size_t(omp_get_thread_num())];
      std::vector<Pair> stack;
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < int64_t(starts_.size()); ++i) {
        stack.assign(1, {starts_[size_t(i)].first, starts_[size_t(i)].second});
        while (!stack.empty()) {
          const Pair q = stack.back();
          stack.pop_back();
          expand(q, stack, mine);
        }
      }
    }
    size_t total = 0;
    for (auto& v : part) total += v.size();
    out.reserve(total);
    for (auto& v : part) out.insert(out.end(), v.begin(), v.end());
  }

 private:
  const Plan& P;
  const TreeView T, S;
  const std::vector<std::pair<int32_t, int32_t>> starts_;

  void expand(const Pair q, std::vector<Pair>& stack, std::vector<std::pair<int32_t, int32_t>>& out) const {
    const int step = pair_step(int(P.options.type), P.par.theta, T, q.t, S, q.s);
    if (step == kSplitTarget) {
      for (int32_t c = T.child_begin[q.t]; c < T.child_end[q.t]; ++c) stack.push_back({c, q.s});
    } else if (step == kSplitSource) {
      for (int32_t c = S.child_begin[q.s]; c < S.child_end[q.s]; ++c) stack.push_back({q.t, c});
    } else {
      emit(q.t, q.s, step == kAccept, out);
    }
  }

  // A target box without proxies (or not accepted) passes the column to the
  // rows of the batches below it (itself when it is a leaf).
  void emit(int32_t t, int32_t s, bool accepted, std::vector<std::pair<int32_t, int32_t>>& out) const {
    const int32_t col = source_set(S, s, accepted);
    const int32_t row = target_proxy_set(T, t, accepted, P.nbatch);
    if (row >= 0) {
      out.push_back({row, col});
      return;
    }
    int32_t stack[8 * (tree::kMaxLevel + 1) + 1];
    int top = 0;
    stack[top++] = t;
    while (top > 0) {
      const int32_t b = stack[--top];
      if (T.leaf[b]) {
        out.push_back({P.batch_of(b), col});
        continue;
      }
      for (int32_t c = T.child_begin[b]; c < T.child_end[b]; ++c) stack[top++] = c;
    }
  }
};

}  // namespace

int32_t Plan::batch_of(int32_t leaf_box) const { return batch_index[size_t(leaf_box)]; }

std::vector<std::pair<int32_t, int32_t>> start_pairs(const Plan& P, const Boxes& S) {
  std::vector<std::pair<int32_t, int32_t>> starts;
  if (S.n == 0 || P.tbox.n == 0) return starts;
  const int32_t sroot = 0, troot = 0;
  if (P.options.type == Type::kPC) {
    for (int64_t i = 0; i < P.nbatch; ++i) starts.push_back({P.batch_box[size_t(i)], sroot});
  } else if (P.options.type == Type::kCP) {
    for (int64_t b = 0; b < S.n; ++b)
      if (S.leaf[size_t(b)]) starts.push_back({troot, int32_t(b)});
  } else {
    starts.push_back({troot, sroot});
  }
  return starts;
}

std::vector<int32_t> proxy_clusters(const Boxes& b, Type type, bool source_side, int np3,
                                    std::vector<int32_t>* proxy_box) {
  std::vector<int32_t> prox(size_t(b.n), -1);
  if (proxy_box) proxy_box->clear();
  if (type == (source_side ? Type::kCP : Type::kPC)) return prox;
  int32_t k = 0;
  for (int64_t i = 0; i < b.n; ++i)
    if (b.count(i) > np3) {
      prox[i] = k++;
      if (proxy_box) proxy_box->push_back(int32_t(i));
    }
  return prox;
}

std::unique_ptr<Plan> plan_build(Context& ctx, const Options& o, int64_t nsrc, const double* sources,
                                 int64_t ntrg, const double* targets, const Params* par, bool host_points) {
  const double t0 = now();
  validate(o);
  kernels::validate_for_backend(o.kernel, ctx.on_gpu());
  plan::check_count(nsrc, "nsrc");
  if (targets != nullptr) plan::check_count(ntrg, "ntrg");
  plan::check_points(sources, nsrc, "sources");
  if (targets != nullptr) plan::check_points(targets, ntrg, "targets");
  const bool same = targets == nullptr;
  if (same) ntrg = nsrc;

  auto P = std::make_unique<Plan>(ctx, o);
  P->nsrc = nsrc;
  P->ntrg = ntrg;
  P->par = par ? *par : choose_params(o, ctx.on_gpu(), nsrc, ntrg);
  P->np1 = P->par.degree + 1;
  P->np3 = P->np1 * P->np1 * P->np1;
  P->plan_seconds = -t0;  // finish adds its end time

  // What the host keeps: everything on the CPU; on a GPU the box arrays, and
  // the sorted sources where host_points asks for them.
  const bool gpu = ctx.on_gpu(), cpu = !gpu;
  host_points = host_points || cpu;

  // Trees: sources with leaves of N_L points, targets with batches of N_B
  // (a side without points has none). A GPU plan uploads the points once:
  // its trees are built from that copy, and its set-up sorts it.
  double t = now();
  const double* tsrc = sources;
  const double* ttrg = same ? sources : targets;
#ifdef GPUFMM_HAVE_CUDA
  if (gpu) {
    gpufmm::cuda::DevicePoints dev =
        gpufmm::cuda::upload_points(ctx, sources, nsrc, same ? nullptr : targets, ntrg, plan::parallel_copy);
    P->dev_sources = tsrc = dev.src;
    P->dev_targets = dev.trg;
    ttrg = same ? dev.src : dev.trg;
    P->dev_points = dev.hold;
  }
#endif
  tree::Options to;
  to.kind = tree::Kind::Adaptive;
  to.s_max = P->par.leaf_size;
  if (nsrc > 0) P->stree = tree::build(ctx, cornered(to, sources, nsrc), tsrc, nsrc, nullptr, 0, gpu);
  if (ntrg > 0 && (!same || nsrc == 0 || P->par.batch_size != P->par.leaf_size)) {
    to.s_max = P->par.batch_size;
    P->ttree = tree::build(ctx, cornered(to, same ? sources : targets, ntrg), ttrg, ntrg, nullptr, 0, gpu);
  }
  if (P->stree) {
    P->sbox = host_boxes(*P->stree, P->S());
    if (host_points) P->src_perm = tree::host_copy(*P->stree, P->S().perm, nsrc);
  }
  if (P->ttree) {
    P->tbox = host_boxes(*P->ttree, P->R());
    if (cpu) P->trg_perm = tree::host_copy(*P->ttree, P->R().perm, ntrg);
  } else if (ntrg > 0) {
    P->tbox = P->sbox;
    if (cpu) P->trg_perm = P->src_perm;
  }
  P->times.tree = now() - t;

  // Proxies: clusters with more than (n+1)^3 points, where the type uses them.
  t = now();
  const int np3 = P->np3;
  P->sprox = proxy_clusters(P->sbox, o.type, true, np3, &P->sprox_box);
  P->tprox = proxy_clusters(P->tbox, o.type, false, np3, &P->tprox_box);
  const int64_t nsp = int64_t(P->sprox_box.size()), ntp = int64_t(P->tprox_box.size());
  require(nsrc + nsp * np3 <= plan::kMaxPoints && ntrg + ntp * np3 <= plan::kMaxPoints,
          GPUFMM_ERROR_INVALID_ARGUMENT, "the ", nsp + ntp, " clusters with ", np3,
          " proxies each exceed 2^31 points: raise leaf_size or lower degree");

  // Batches: the leaves of the target tree.
  P->batch_index.assign(size_t(P->tbox.n), -1);
  for (int64_t b = 0; b < P->tbox.n; ++b)
    if (P->tbox.leaf[b]) {
      P->batch_index[b] = int32_t(P->batch_box.size());
      P->batch_box.push_back(int32_t(b));
    }
  P->nbatch = int64_t(P->batch_box.size());
  if (cpu) {  // a GPU plan's on the device
    P->trg_leaf.assign(size_t(ntrg), -1);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < P->nbatch; ++k) {
      const int32_t b = P->batch_box[size_t(k)];
      for (int32_t i = P->tbox.point_begin[b]; i < P->tbox.point_end[b]; ++i) P->trg_leaf[i] = b;
    }
  }

  // Sets.
  P->nsets_t = P->nbatch + ntp;
  P->nsets_s = P->nsets_s_local = P->sbox.n + nsp;
  P->nq_local = nsrc + nsp * np3;
  P->tset_begin.resize(size_t(P->nsets_t));
  P->tset_end.resize(size_t(P->nsets_t));
  P->tset_center.resize(size_t(3 * P->nsets_t));
  for (int64_t r = 0; r < P->nsets_t; ++r) {
    const bool prox = r >= P->nbatch;
    const int32_t b = prox ? P->tprox_box[r - P->nbatch] : P->batch_box[r];
    P->tset_begin[r] = prox ? int32_t(ntrg + (r - P->nbatch) * np3) : P->tbox.point_begin[b];
    P->tset_end[r] = prox ? P->tset_begin[r] + np3 : P->tbox.point_end[b];
    for (int d = 0; d < 3; ++d) P->tset_center[3 * r + d] = P->tbox.box[b].c[d];
  }
  P->sset_begin.resize(size_t(P->nsets_s));
  P->sset_end.resize(size_t(P->nsets_s));
  for (int64_t c = 0; c < P->nsets_s; ++c) {
    const bool prox = c >= P->sbox.n;
    P->sset_begin[c] = prox ? int32_t(nsrc + (c - P->sbox.n) * np3) : P->sbox.point_begin[c];
    P->sset_end[c] = prox ? P->sset_begin[c] + np3 : P->sbox.point_end[c];
  }
  if (cpu) Traversal(*P, P->sbox, P->sprox).run(P->pairs);  // a GPU plan's runs in its set-up
  P->times.lists = now() - t;

  // Combined coordinates (host: the CPU plan's; the sorted sources of
  // host_points) and the modified-charge work units.
  t = now();
  if (host_points) {
    P->sxyz.resize(size_t(3 * P->nq_local));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nsrc; ++i)
      for (int d = 0; d < 3; ++d) P->sxyz[3 * i + d] = sources[3 * int64_t(P->src_perm[i]) + d];
  }
  if (cpu) {
    std::vector<double> u(static_cast<size_t>(P->np1));
    approx::cheb_units(P->par.degree, u.data());
    P->txyz.resize(size_t(3 * (ntrg + ntp * np3)));
    const double* txyz_user = same ? sources : targets;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ntrg; ++i)
      for (int d = 0; d < 3; ++d) P->txyz[3 * i + d] = txyz_user[3 * int64_t(P->trg_perm[i]) + d];
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nsp; ++p)
      for (int k = 0; k < np3; ++k)
        proxy_point(P->par.degree, u.data(), P->sbox.box[P->sprox_box[p]], k, &P->sxyz[3 * (nsrc + p * np3 + k)]);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < ntp; ++p)
      for (int k = 0; k < np3; ++k)
        proxy_point(P->par.degree, u.data(), P->tbox.box[P->tprox_box[p]], k, &P->txyz[3 * (ntrg + p * np3 + k)]);
  }
  for (int64_t p = 0; p < nsp; ++p) {
    const int32_t b = P->sprox_box[p];
    for (int32_t i = P->sbox.point_begin[b]; i < P->sbox.point_end[b]; i += Plan::kChunk) {
      P->chunk_cluster.push_back(int32_t(p));
      P->chunk_begin.push_back(i);
      P->chunk_end.push_back(std::min(i + Plan::kChunk, P->sbox.point_end[b]));
    }
  }
  P->times.setup = now() - t;
  P->plan_seconds += now();
  return P;
}

int64_t RemoteSources::set_begin(const Plan& P, size_t k) const {
  const int32_t c = sets[k];
  return c < boxes.n ? boxes.point_begin[c] : nsrc + int64_t(c - boxes.n) * P.np3;
}

int64_t RemoteSources::set_end(const Plan& P, size_t k) const {
  const int32_t c = sets[k];
  return c < boxes.n ? boxes.point_end[c] : set_begin(P, k) + P.np3;
}

void remote_lists(const Plan& P, RemoteSources& R) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  Traversal(P, R.boxes, R.prox).run(pairs);
  R.sets.clear();
  for (const auto& e : pairs) R.sets.push_back(e.second);
  std::sort(R.sets.begin(), R.sets.end());
  R.sets.erase(std::unique(R.sets.begin(), R.sets.end()), R.sets.end());
  R.pairs.clear();
  R.pairs.reserve(pairs.size());
  for (const auto& e : pairs)
    R.pairs.push_back({e.first, int32_t(std::lower_bound(R.sets.begin(), R.sets.end(), e.second) - R.sets.begin())});
}

void append_remote(Plan& P, const std::vector<RemoteSources>& R, const std::vector<std::vector<double>>& xyz) {
  const double t0 = now();
  const int np3 = P.np3;
  std::vector<double> u(static_cast<size_t>(P.np1));
  approx::cheb_units(P.par.degree, u.data());
  // First the sets (where each one's coordinates go), then the coordinates,
  // set by set over the threads.
  struct Fill {
    int32_t r, k;
    int64_t at, len, from;  // combined index, points; from: point in xyz[r], or -1 for proxies
  };
  std::vector<Fill> fills;
  int64_t nq = P.nq_local + P.nq_remote;
  for (size_t r = 0; r < R.size(); ++r) {
    const RemoteSources& S = R[r];
    const int64_t first_set = P.nsets_s;
    int64_t m = 0;  // points of xyz[r] used
    for (size_t k = 0; k < S.sets.size(); ++k) {
      const bool prox = S.sets[k] >= S.boxes.n;
      const int64_t len = S.set_end(P, k) - S.set_begin(P, k);
      require(nq + len <= plan::kMaxPoints, GPUFMM_ERROR_INVALID_ARGUMENT, "the sources of the other ranks this ",
              "rank needs exceed 2^31 points: use more ranks or raise leaf_size");
      P.sset_begin.push_back(int32_t(nq));
      P.sset_end.push_back(int32_t(nq + len));
      P.remote_proxy.push_back(prox ? 1 : 0);
      fills.push_back({int32_t(r), int32_t(k), nq, len, prox ? -1 : m});
      if (!prox) {
        require(3 * (m + len) <= int64_t(xyz[r].size()), GPUFMM_ERROR_INTERNAL,
                "remote points: fewer coordinates than the sets need");
        m += len;
      }
      nq += len;
      ++P.nsets_s;
    }
    for (const auto& e : S.pairs) P.pairs.push_back({e.first, int32_t(first_set + e.second)});
  }
  P.sxyz.resize(size_t(3 * nq));
  const int64_t nf = int64_t(fills.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < nf; ++i) {
    const Fill& f = fills[size_t(i)];
    const RemoteSources& S = R[size_t(f.r)];
    double* out = &P.sxyz[size_t(3 * f.at)];
    if (f.from < 0) {
      const Box& bx = S.boxes.box[S.prox_box[size_t(S.sets[size_t(f.k)] - S.boxes.n)]];
      for (int j = 0; j < np3; ++j) proxy_point(P.par.degree, u.data(), bx, j, out + 3 * j);
    } else {
      const std::vector<double>& x = xyz[size_t(f.r)];
      std::copy(x.begin() + 3 * f.from, x.begin() + 3 * (f.from + f.len), out);
    }
  }
  P.nq_remote = nq - P.nq_local;
  P.times.lists += now() - t0;
}

namespace {

// The CPU plan's list: the pairs bucketed into rows (counting sort), each
// row's columns ascending, and its statistics. Each thread counts and places
// a contiguous part of the pairs; the order within a row is then the sort's,
// whatever the thread count.
void host_list(Plan& P) {
  const std::vector<std::pair<int32_t, int32_t>>& pairs = P.pairs;
  const int64_t npairs = int64_t(pairs.size()), nrows = P.nsets_t;
  P.list_offsets.assign(size_t(nrows + 1), 0);
  P.list_index.resize(pairs.size());
  const int nth = std::max(1, std::min<int>(omp_get_max_threads(), int(npairs / 65536) + 1));
  std::vector<int64_t> at(size_t(nth) * size_t(nrows), 0);  // [thread][row]
#pragma omp parallel num_threads(nth)
  {
    const int th = omp_get_thread_num();
    const int64_t e0 = npairs * th / nth, e1 = npairs * (th + 1) / nth;
    int64_t* mine = at.data() + size_t(th) * size_t(nrows);
    for (int64_t e = e0; e < e1; ++e) ++mine[pairs[size_t(e)].first];
#pragma omp barrier
#pragma omp single
    {
      int64_t sum = 0;
      for (int64_t r = 0; r < nrows; ++r) {
        P.list_offsets[size_t(r)] = sum;
        for (int t = 0; t < nth; ++t) {
          const int64_t c = at[size_t(t) * size_t(nrows) + size_t(r)];
          at[size_t(t) * size_t(nrows) + size_t(r)] = sum;
          sum += c;
        }
      }
      P.list_offsets[size_t(nrows)] = sum;
    }
    for (int64_t e = e0; e < e1; ++e) P.list_index[size_t(mine[pairs[size_t(e)].first]++)] = pairs[size_t(e)].second;
  }
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t r = 0; r < P.nsets_t; ++r)
    std::sort(P.list_index.begin() + P.list_offsets[r], P.list_index.begin() + P.list_offsets[r + 1]);
  P.row_sources.assign(size_t(P.nsets_t), 0);
  const uint8_t* remote = P.remote_proxy.data();
  int64_t approx_pairs = 0, direct_pairs = 0, max_row = P.max_row_sources;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : approx_pairs, direct_pairs) reduction(max : max_row)
  for (int64_t r = 0; r < P.nsets_t; ++r) {
    const int64_t nt = P.tset_end[r] - P.tset_begin[r];
    int64_t row = 0;
    for (int64_t e = P.list_offsets[r]; e < P.list_offsets[r + 1]; ++e) {
      const int32_t c = P.list_index[e];
      const int64_t ns = P.sset_end[c] - P.sset_begin[c];
      row += ns;
      if (is_approximation(r, c, P.nbatch, P.sbox.n, P.nsets_s_local, remote))
        approx_pairs += nt * ns;
      else
        direct_pairs += nt * ns;
    }
    P.row_sources[r] = row;
    max_row = std::max(max_row, row);
  }
  P.stats.approx_pairs += approx_pairs;
  P.stats.direct_pairs += direct_pairs;
  P.stats.list_entries = npairs;
  P.max_row_sources = max_row;
}

}  // namespace

void finish(Plan& P) {
  const double t0 = now();
  Stats& st = P.stats;
  st.source_proxies = int64_t(P.sprox_box.size());
  st.target_proxies = int64_t(P.tprox_box.size());
  st.batches = P.nbatch;
  st.source_clusters = P.sbox.n;
  st.target_clusters = P.tbox.n;
  if (!P.ctx.on_gpu()) {
    host_list(P);
    P.times.lists += now() - t0;
  } else if ((P.ntrg > 0 || P.exchange) && P.nq_local + P.nq_remote > 0) {
    // The traversal, the list and its statistics on the device (the set-up
    // adds their time to times.lists), then the rest of the set-up. A plan
    // without targets or sources has no pairs.
#ifdef GPUFMM_HAVE_CUDA
    const double lists0 = P.times.lists;
    detail::setup_cuda(P);
    P.times.setup += (now() - t0) - (P.times.lists - lists0);
#endif
  }
  P.pairs.clear();
  P.pairs.shrink_to_fit();
  P.dev_points.reset();
  P.dev_sources = P.dev_targets = nullptr;
  P.plan_seconds += now() - t0;
  P.times.plan = P.plan_seconds;
}

std::unique_ptr<Plan> plan_create(Context& ctx, const Options& o, int64_t nsrc, const double* sources,
                                  int64_t ntrg, const double* targets) {
  auto P = plan_build(ctx, o, nsrc, sources, ntrg, targets);
  finish(*P);
  if (o.calibrate) calibrate(P, sources, targets);
  return P;
}

void evaluate(Plan& p, const EvalArgs& a) {
  require(a.charges != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charges' is NULL");
  require(a.pot != nullptr || a.grad != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'pot' and 'grad' are both NULL: nothing to compute");
  if (!a.on_context) plan::check_values(static_cast<const double*>(a.charges), p.nsrc, 1, "charges", "charge");
  if (p.ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    detail::evaluate_cuda(p, a);
    return;
#endif
  }
  detail::evaluate_cpu(p, a);
}

}  // namespace treecode
}  // namespace gpufmm
