// The Laplace FMM plan: options, translation tables, plan creation, evaluate
// dispatch and plan_info. Layout and conventions: laplace_plan.hpp.
#include "fmm/laplace/plan.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "core/handles.hpp"
#include "core/lru_cache.hpp"
#include "fmm/laplace/math.hpp"
#include "fmm/laplace/depth_scan.hpp"
#include "fmm/laplace/gpu.hpp"

namespace gpufmm {
namespace fmm {

namespace {

constexpr int64_t kMaxPoints = std::numeric_limits<int32_t>::max() - 1;

double now() { return omp_get_wtime(); }

}  // namespace

// ---------------------------------------------------------------- tables

template <class T>
size_t LaplaceTables<T>::bytes() const {
  return sizeof(T) * (rot.size() + coax.size() + 2 * kNumOps) +
         sizeof(int32_t) * 3 * kNumOps + kNumOps + sizeof(int64_t) * coax_offset.size();
}

namespace {

int64_t gcd64(int64_t a, int64_t b) { return b == 0 ? a : gcd64(b, a % b); }

// Two steps: the ops are walked in a fixed order, which numbers the distinct
// rotation tables and coax matrices (and sizes them); compute() then fills
// them, in parallel: each is a pure function of its own parameters, so the
// tables are bitwise the same for any thread count.
template <class T>
struct TableBuilder {
  LaplaceTables<T>& t;
  std::map<std::pair<int64_t, int64_t>, int> rot_index;  // reduced (tz^2, |t|^2)
  std::map<std::pair<int, int64_t>, int> coax_index;     // (kind, |t|^2 in its units)
  struct RotJob {
    double cos_b, sin_b;
  };
  struct CoaxJob {
    int kind, pp;
    double rd, rs;
  };
  std::vector<RotJob> rot_jobs;    // [nrot]
  std::vector<CoaxJob> coax_jobs;  // [ncoax]

  explicit TableBuilder(LaplaceTables<T>& tab) : t(tab) {}

  // Direction of the translation t (integer components in any unit).
  void direction(int op, int64_t tx, int64_t ty, int64_t tz) {
    const bool flip = tz < 0;  // tables only for cos(b) >= 0 (eq. 34)
    if (flip) {
      tx = -tx;
      ty = -ty;
      tz = -tz;
    }
    const LaplaceDirection<double> d =
        laplace_direction<double>(double(tx), double(ty), double(tz));
    const int64_t n2 = tx * tx + ty * ty + tz * tz, z2 = tz * tz;
    const int64_t g = gcd64(n2, z2);
    const std::pair<int64_t, int64_t> key{z2 / g, n2 / g};
    auto it = rot_index.find(key);
    int idx;
    if (it == rot_index.end()) {
      idx = t.nrot++;
      rot_index[key] = idx;
      rot_jobs.push_back({d.cos_b, d.sin_b});
    } else {
      idx = it->second;
    }
    t.op_rot[op] = idx;
    t.op_flip[op] = flip ? 1 : 0;
    t.op_cos_a[op] = T(d.cos_a);
    t.op_sin_a[op] = T(d.sin_a);
  }

  int add_coax(int kind, int64_t key, int pp, double rd, double rs) {
    auto it = coax_index.find({kind, key});
    if (it != coax_index.end()) return it->second;
    const int idx = static_cast<int>(t.coax_p.size());
    coax_index[{kind, key}] = idx;
    const int64_t off = t.coax_offset.back();
    const int64_t size = laplace_coax_size(pp, pp);
    coax_jobs.push_back({kind, pp, rd, rs});
    t.coax_p.push_back(pp);
    t.coax_offset.push_back(off + size);
    return idx;
  }

  // Fills rot and coax (jobs: the rotation tables, the coax matrices;
  // dynamic: coax sizes vary with p').
  void compute() {
    const int p = t.p;
    t.rot.assign(static_cast<size_t>(t.nrot) * t.rot_stride, T(0));
    t.coax.assign(static_cast<size_t>(t.coax_offset.back()), T(0));
    const int nrot = t.nrot, ncoax = static_cast<int>(coax_jobs.size()), jobs = nrot + ncoax;
#pragma omp parallel if (p >= 8 && omp_get_max_threads() > 1)
    {
      std::vector<double> scratch(static_cast<size_t>(laplace_rotation_scratch_size(p) + 9));
#pragma omp for schedule(dynamic, 1)
      for (int j = 0; j < jobs; ++j) {
        if (j < nrot) {
          const RotJob& r = rot_jobs[static_cast<size_t>(j)];
          laplace_rotation_precompute<T, double>(p, r.cos_b, r.sin_b,
                                                 t.rot.data() + static_cast<size_t>(j) * t.rot_stride,
                                                 scratch.data());
        } else {
          const int c = j - nrot;
          const CoaxJob& x = coax_jobs[static_cast<size_t>(c)];
          T* mat = t.coax.data() + t.coax_offset[static_cast<size_t>(c)];
          if (x.kind == 0)
            laplace_coax_ss<T>(x.pp, x.rd, x.rs, mat);  // rd = tau, rs = rho
          else if (x.kind == 1)
            laplace_coax_rr<T>(x.pp, x.rd, x.rs, mat);
          else
            laplace_coax_sr<T>(x.pp, x.pp, x.rd, x.rs, mat);
        }
      }
    }
  }
};

}  // namespace

template <class T>
void build_tables(int p, bool variable_truncation, LaplaceTables<T>& t) {
  t = LaplaceTables<T>();
  t.p = p;
  t.rot_stride = laplace_rotation_size(p);
  t.op_p.assign(kNumOps, 0);
  t.op_rot.assign(kNumOps, 0);
  t.op_coax.assign(kNumOps, 0);
  t.op_flip.assign(kNumOps, 0);
  t.op_cos_a.assign(kNumOps, T(1));
  t.op_sin_a.assign(kNumOps, T(0));
  t.coax_offset.assign(1, 0);
  TableBuilder<T> b(t);

  // M2M / L2L: child offset from the parent centre is v/2 h_child, v = +-1.
  const double tau = std::sqrt(3.0) / 4.0, rho = 0.5;
  const int ss = b.add_coax(0, 0, p, tau, rho);
  const int rr = b.add_coax(1, 0, p, tau, rho);
  for (int o = 0; o < 8; ++o) {
    const int64_t v[3] = {(o & 1) ? 1 : -1, (o & 2) ? 1 : -1, (o & 4) ? 1 : -1};
    b.direction(kOpM2M + o, -v[0], -v[1], -v[2]);  // t = parent - child
    t.op_p[kOpM2M + o] = p;
    t.op_coax[kOpM2M + o] = ss;
    b.direction(kOpL2L + o, v[0], v[1], v[2]);  // t = child - parent
    t.op_p[kOpL2L + o] = p;
    t.op_coax[kOpL2L + o] = rr;
  }

  // M2L classes (tree/stencil.hpp).
  for (int cls = 0; cls < tree::kNumClasses; ++cls) {
    bool to_parent = false;
    double off[3], eta = 0;
    if (!tree::decode_class(cls, to_parent, off, eta)) continue;
    const int pp = variable_truncation ? laplace_p_reduced(p, eta) : p;
    int64_t e[3];
    double rd, rs;
    int kind;
    if (!to_parent) {  // off = d (integers), t = -d h_l
      for (int k = 0; k < 3; ++k) e[k] = std::llround(off[k]);
      const double dist = std::sqrt(double(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]));
      rd = rs = 1.0 / dist;
      kind = 2;
    } else {  // off = e/2, t = -(e/2) h_{l+1}
      for (int k = 0; k < 3; ++k) e[k] = std::llround(2.0 * off[k]);
      const double dist = std::sqrt(double(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]));
      rd = 4.0 / dist;
      rs = 2.0 / dist;
      kind = 3;
    }
    b.direction(cls, -e[0], -e[1], -e[2]);
    t.op_p[cls] = pp;
    t.op_coax[cls] = b.add_coax(kind, e[0] * e[0] + e[1] * e[1] + e[2] * e[2], pp, rd, rs);
  }
  b.compute();
}

template void build_tables<double>(int, bool, LaplaceTables<double>&);
template void build_tables<float>(int, bool, LaplaceTables<float>&);

namespace {

struct TableKey {
  int p;
  bool vt;
  bool operator==(const TableKey& o) const { return p == o.p && vt == o.vt; }
};

template <class T>
LruCache<TableKey, LaplaceTables<T>>& table_cache() {
  static LruCache<TableKey, LaplaceTables<T>> c(kLaplaceTableCacheBytes);  // plans hold their own references
  return c;
}

}  // namespace

template <class T>
std::shared_ptr<const LaplaceTables<T>> laplace_tables_cached(int p, bool variable_truncation) {
  return table_cache<T>().get(TableKey{p, variable_truncation}, 0, [&] {
    auto built = std::make_shared<LaplaceTables<T>>();
    build_tables<T>(p, variable_truncation, *built);
    const size_t bytes = built->bytes();
    return std::make_pair(std::shared_ptr<const LaplaceTables<T>>(std::move(built)), bytes);
  });
}

template <class T>
std::shared_ptr<const LaplaceTables<T>> laplace_tables_get(int p, bool variable_truncation, bool cache) {
  if (cache) return laplace_tables_cached<T>(p, variable_truncation);
  auto t = std::make_shared<LaplaceTables<T>>();
  build_tables<T>(p, variable_truncation, *t);
  return t;
}

void laplace_tables_cache_clear() {
  table_cache<double>().clear();
  table_cache<float>().clear();
}

template std::shared_ptr<const LaplaceTables<double>> laplace_tables_cached<double>(int, bool);
template std::shared_ptr<const LaplaceTables<float>> laplace_tables_cached<float>(int, bool);
template std::shared_ptr<const LaplaceTables<double>> laplace_tables_get<double>(int, bool, bool);
template std::shared_ptr<const LaplaceTables<float>> laplace_tables_get<float>(int, bool, bool);
template struct LaplaceTables<double>;
template struct LaplaceTables<float>;

// ---------------------------------------------------------------- plan

LaplacePlan::LaplacePlan(Context& c) : ctx(c) { ctx.children.fetch_add(1); }
LaplacePlan::~LaplacePlan() {
  gpu.reset();
  tree.reset();
  ctx.children.fetch_sub(1);
}

bool LaplacePlan::cpu_pipeline() const { return !ctx.on_gpu(); }

#if defined(GPUFMM_HAVE_CUDA)
void laplace_parallel_copy(void* dst, const void* src, size_t bytes) {
  const int nt = bytes >= (size_t(1) << 20) ? omp_get_max_threads() : 1;
#pragma omp parallel num_threads(nt)
  {
    const size_t T = static_cast<size_t>(omp_get_num_threads()), t = static_cast<size_t>(omp_get_thread_num());
    const size_t b = bytes * t / T / 64 * 64, e = t + 1 == T ? bytes : bytes * (t + 1) / T / 64 * 64;
    if (e > b) std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  }
}
#endif

namespace {

void check_count(int64_t n, const char* name) {
  require(n >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' = ", n, " is negative");
  require(n <= kMaxPoints, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' = ", n,
          " is larger than ", kMaxPoints, " (int32 indices)");
}

void check_points_pointer(const double* xyz, int64_t n, const char* name) {
  require(xyz != nullptr || n == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name,
          "' is NULL but holds ", n, " points");
}

// bad < n: point `bad` of xyz (host) has a NaN or Inf coordinate.
void fail_if_bad_point(const double* xyz, int64_t bad, int64_t n, const char* name) {
  if (bad >= n) return;
  const double x = xyz[3 * bad], y = xyz[3 * bad + 1], z = xyz[3 * bad + 2];
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': point ", bad,
       " (0-based) has a NaN or Inf coordinate (", x, ", ", y, ", ", z, ")");
}

void check_points(const double* xyz, int64_t n, const char* name) {
  check_points_pointer(xyz, n, name);
  // The first bad point (the smallest index): a parallel min over chunks,
  // each counted branch-free first (a double is NaN or Inf iff its exponent
  // bits, all in the high 32-bit word, are all ones).
  int64_t bad = n;
  const int64_t m = 3 * n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (m >= (int64_t(1) << 16))
  for (int64_t c = 0; c < m; c += 4096) {
    const int64_t e = std::min(m, c + 4096);
    uint32_t nonfinite = 0;
    for (int64_t k = c; k < e; ++k) {
      uint64_t bits;
      std::memcpy(&bits, xyz + k, sizeof bits);
      nonfinite += (static_cast<uint32_t>(bits >> 32) & 0x7ff00000u) == 0x7ff00000u ? 1u : 0u;
    }
    if (nonfinite == 0) continue;
    for (int64_t k = c; k < e; ++k)
      if (!std::isfinite(xyz[k])) {
        bad = std::min(bad, k / 3);
        break;
      }
  }
  fail_if_bad_point(xyz, bad, n, name);
}


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
  if (n > 0) cuda::laplace_staged_download(t.ctx, h.own.get(), src, sizeof(V) * static_cast<size_t>(n), laplace_parallel_copy);
#else
  if (n > 0) tree::download(t, h.own.get(), src, sizeof(V) * static_cast<size_t>(n));
#endif
  h.p = h.own.get();
  return h;
}

// Sizes for plan_info and the workspace: near-field pairs and the largest
// near-field source count of a target leaf. A device tree: reduced on the
// device (integer sums and maxima, the same numbers).
void near_field_stats(LaplacePlan& plan) {
  const tree::Tree& t = *plan.tree;
  int64_t pairs = 0, max_near = 0, max_leaf = 0;
  if (t.ctx.on_gpu()) {
#if defined(GPUFMM_HAVE_CUDA)
    cuda::laplace_near_field_stats(t, pairs, max_near, max_leaf);
#endif
  } else {
    const tree::PointSet& S = t.src;
    const tree::PointSet& R = t.receivers();
    const tree::List& nb = t.lists[tree::kNeighbors];
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
std::vector<int64_t> class_counts(const tree::Tree& t) {
  std::vector<int64_t> counts(tree::kNumClasses, 0);
  const int lists[3] = {int(tree::kM2L), int(tree::kType1), int(tree::kType2)};
  if (t.ctx.on_gpu()) {
#if defined(GPUFMM_HAVE_CUDA)
    cuda::laplace_class_counts(t, lists, 3, counts.data());
#endif
    return counts;
  }
  for (int k : lists) {
    const tree::List& l = t.lists[k];
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
  const std::vector<int64_t> per_class = class_counts(t);
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

// sources / targets: host memory, or the context's when on_context.
template <class T>
void choose_depth_with(LaplacePlan& plan, const LaplaceTables<T>& tab, const double* sources,
                       const double* targets, bool on_context) {
  // A keys-only tree (depth 0, no lists) gives the sorted Morton keys of
  // both sets in the final tree's cube; the model scans depths on them.
  tree::Options so;
  so.l_max = 0;
  so.lists = 0;
  const double t0 = now();
  auto scan = tree::build(plan.ctx, so, sources, plan.nsrc, targets, plan.ntrg, on_context);
  const LaplaceCostConstants c =
      plan.options.cost   ? *plan.options.cost
      : plan.cpu_pipeline() ? laplace_cost_constants_cpu(plan.single())
                            : laplace_cost_constants_gpu(plan.single());
#if defined(GPUFMM_HAVE_CUDA)
  if (scan->ctx.on_gpu()) {  // the keys stay on the device, and so does the scan
    const double t1 = now();
    plan.plan_times.depth_keys = t1 - t0;
    plan.depth = cuda::laplace_choose_depth_device<T>(scan->ctx, scan->src.keys, plan.nsrc,
                                                      plan.same_sets ? nullptr : scan->recv_own.keys, plan.ntrg,
                                                      plan.modified, tab, c);
    plan.plan_times.depth_scan = now() - t1;
    return;
  }
#endif
  const auto sk = fetch(*scan, scan->src.keys, scan->src.n);  // views into `scan` on the CPU
  HostView<uint64_t> rk;
  if (!plan.same_sets) rk = fetch(*scan, scan->recv_own.keys, scan->recv_own.n);
  const double t1 = now();
  plan.plan_times.depth_keys = t1 - t0;
  plan.depth = laplace_choose_depth<T>(sk.data(), plan.nsrc, plan.same_sets ? nullptr : rk.data(), plan.ntrg,
                                       plan.modified, tab, c);
  plan.plan_times.depth_scan = now() - t1;
}

}  // namespace

std::unique_ptr<LaplacePlan> laplace_plan_create(Context& ctx, const LaplaceOptions& opt,
                                                 int64_t nsrc, const double* sources,
                                                 int64_t ntrg, const double* targets) {
  const double t0 = now();
  validate_options(opt);
  check_count(nsrc, "nsrc");
  if (targets != nullptr) check_count(ntrg, "ntrg");
#ifndef GPUFMM_HAVE_CUDA
  require(!ctx.on_gpu(), GPUFMM_ERROR_NOT_SUPPORTED, "gpufmm was built without CUDA");
#endif
  auto plan = std::make_unique<LaplacePlan>(ctx);
  LaplacePlan& P = *plan;
  // Finite coordinates: checked here on the host, or by the CUDA driver on
  // the device copy it uploads anyway (one pass over the data fewer).
  if (P.cpu_pipeline()) {
    check_points(sources, nsrc, "sources");
    if (targets != nullptr) check_points(targets, ntrg, "targets");
  } else {
    check_points_pointer(sources, nsrc, "sources");
    if (targets != nullptr) check_points_pointer(targets, ntrg, "targets");
  }
  LaplacePlanTimes& tp = P.plan_times;
  double tmark = now();
  tp.check = tmark - t0;
  auto lap = [&tmark](double& field) {
    const double t = now();
    field += t - tmark;
    tmark = t;
  };
  P.options = opt;
  P.same_sets = targets == nullptr;
  P.nsrc = nsrc;
  P.ntrg = P.same_sets ? nsrc : ntrg;
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

  // CUDA driver: the coordinates go to the device once; both trees are built
  // from that copy and the sorted coordinates are gathered there.
  const double* tsrc = sources;
  const double* ttrg = targets;
  bool on_context = false;
#if defined(GPUFMM_HAVE_CUDA)
  cuda::LaplaceDevicePoints dev_points;
#endif
  if (!P.cpu_pipeline()) {
    // The tree stays on the device (the CUDA driver evaluates).
#if defined(GPUFMM_HAVE_CUDA)
    dev_points = cuda::laplace_upload_points(ctx, sources, nsrc, targets, P.ntrg, laplace_parallel_copy);
    fail_if_bad_point(sources, cuda::laplace_first_nonfinite(ctx, dev_points.src, nsrc), nsrc, "sources");
    if (!P.same_sets)
      fail_if_bad_point(targets, cuda::laplace_first_nonfinite(ctx, dev_points.trg, P.ntrg), P.ntrg, "targets");
    tsrc = dev_points.src;
    ttrg = dev_points.trg;
    on_context = true;
#endif
    lap(tp.upload);
  }

  auto get_tables = [&P] {  // the operator tables for P.p
    if (P.single())
      P.tables_f = laplace_tables_get<float>(P.p, P.options.variable_truncation, P.options.table_cache);
    else
      P.tables_d = laplace_tables_get<double>(P.p, P.options.variable_truncation, P.options.table_cache);
  };
  get_tables();
  lap(tp.tables);

  tree::Options to;
  if (opt.l_max >= 0) {
    to.l_max = opt.l_max;
  } else if (opt.s_max >= 1) {
    to.l_max = -1;
    to.s_max = opt.s_max;
  } else {
    if (P.single())
      choose_depth_with(P, *P.tables_f, tsrc, ttrg, on_context);
    else
      choose_depth_with(P, *P.tables_d, tsrc, ttrg, on_context);
    to.l_max = P.depth.l_max;
  }
  tmark = now();
  to.lists = (1u << tree::kNeighbors) |
             (P.modified ? (1u << tree::kType1) | (1u << tree::kType2) : (1u << tree::kM2L));
  P.tree = tree::build(ctx, to, tsrc, nsrc, ttrg, P.ntrg, on_context);
  P.l_max = P.tree->l_max;
  P.src_boxes = P.tree->src.nboxes;
  P.trg_boxes = P.tree->receivers().nboxes;
  P.m2l_translations = P.modified
                           ? P.tree->lists[tree::kType1].nnz + P.tree->lists[tree::kType2].nnz
                           : P.tree->lists[tree::kM2L].nnz;
  lap(tp.tree);

  // Sorted coordinates (double): on the host for the CPU pipeline; for the
  // CUDA driver laplace_plan_setup gathers them on the device.
  if (on_context) {
    P.dev_sources = tsrc;
    P.dev_targets = ttrg;
  } else {
    const auto perm = fetch(*P.tree, P.tree->src.perm, nsrc);
    P.src_xyz.resize(static_cast<size_t>(3 * nsrc));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nsrc; ++i)
      for (int k = 0; k < 3; ++k) P.src_xyz[3 * i + k] = sources[3 * int64_t(perm[i]) + k];
    if (!P.same_sets) {
      const auto rperm = fetch(*P.tree, P.tree->recv_own.perm, P.ntrg);
      P.trg_xyz.resize(static_cast<size_t>(3 * P.ntrg));
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < P.ntrg; ++i)
        for (int k = 0; k < 3; ++k) P.trg_xyz[3 * i + k] = targets[3 * int64_t(rperm[i]) + k];
    }
  }
  lap(tp.coords);
  near_field_stats(P);
  // p from eps assumes a near field that holds each target's closest sources;
  // a nearly empty one (laplace_p_sparse) needs more terms. The depth stays.
  if (opt.p == 0 && P.l_max >= 2 && P.ntrg > 0) {
    const int ps = laplace_p_sparse(P.p, double(P.p2p_pairs) / double(P.ntrg), P.single());
    if (ps != P.p) {
      P.p = ps;
      get_tables();
    }
  }
  if (P.single())
    translation_work(P, *P.tables_f);
  else
    translation_work(P, *P.tables_d);
  lap(tp.stats);
#if defined(GPUFMM_HAVE_CUDA)
  if (!P.cpu_pipeline()) cuda::laplace_plan_setup(P);  // tables etc. to the device
#endif
  P.dev_sources = P.dev_targets = nullptr;  // freed with dev_points
  lap(tp.setup);
  P.plan_seconds = now() - t0;
  return plan;
}

// ---------------------------------------------------------------- evaluate

namespace {

template <class V>
void check_values(const V* v, int64_t n, int per, const char* name, const char* what) {
  if (v == nullptr) return;
  const int64_t m = n * per;
  int64_t bad = -1;
  for (int64_t i = 0; i < m; ++i)
    if (!std::isfinite(v[i])) {
      bad = i;
      break;
    }
  if (bad < 0) return;
  const int64_t i = bad / per;
  if (per == 1)
    fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i,
         " (0-based) is NaN or Inf (", double(v[i]), ")");
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i,
       " (0-based) has a NaN or Inf component (", double(v[per * i]), ", ", double(v[per * i + 1]),
       ", ", double(v[per * i + 2]), ")");
}

void check_inputs(const LaplacePlan& plan, const LaplaceEvalArgs& a) {
  if (a.dtype == GPUFMM_FLOAT32) {
    check_values(static_cast<const float*>(a.charges), plan.nsrc, 1, "charges", "charge");
    check_values(static_cast<const float*>(a.dipoles), plan.nsrc, 3, "dipoles", "dipole");
  } else {
    check_values(static_cast<const double*>(a.charges), plan.nsrc, 1, "charges", "charge");
    check_values(static_cast<const double*>(a.dipoles), plan.nsrc, 3, "dipoles", "dipole");
  }
}

}  // namespace

void laplace_evaluate(LaplacePlan& plan, const LaplaceEvalArgs& a) {
  require(a.charges != nullptr || a.dipoles != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'charges' and 'dipoles' are both NULL: the sources carry nothing");
  require(a.pot != nullptr || a.grad != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'pot' and 'grad' are both NULL: nothing to compute");
  require(a.dtype == GPUFMM_FLOAT64 || a.dtype == GPUFMM_FLOAT32, GPUFMM_ERROR_INTERNAL,
          "laplace_evaluate: bad dtype");
#if defined(GPUFMM_HAVE_CUDA)
  if (!plan.cpu_pipeline()) {
    if (!a.on_context) check_inputs(plan, a);  // device inputs: checked by the driver
    cuda::laplace_evaluate(plan, a);
    return;
  }
#endif
  check_inputs(plan, a);
  laplace_evaluate_cpu(plan, a);
}

gpufmm_laplace_plan_t laplace_plan_handle(std::unique_ptr<LaplacePlan> plan) {
  auto h = std::make_unique<gpufmm_laplace_plan_s>();
  h->plan = std::move(plan);
  register_handle(h.get(), HandleKind::LaplacePlan);
  return h.release();
}

gpufmm_laplace_info_t laplace_plan_info(const LaplacePlan& plan) {
  gpufmm_laplace_info_t info;
  std::memset(&info, 0, sizeof info);
  info.p = plan.p;
  info.l_max = plan.l_max;
  info.precision = plan.options.precision;
  info.backend = plan.ctx.backend;
  info.nsrc = plan.nsrc;
  info.ntrg = plan.ntrg;
  info.source_boxes = plan.src_boxes;
  info.target_boxes = plan.trg_boxes;
  info.m2l_translations = plan.m2l_translations;
  info.p2p_pairs = plan.p2p_pairs;
  info.plan_seconds = plan.plan_seconds;
  info.t_p2m = plan.last.p2m;
  info.t_upward = plan.last.upward;
  info.t_downward = plan.last.downward;
  info.t_l2p = plan.last.l2p;
  info.t_p2p = plan.last.p2p;
  info.t_total = plan.last.total;
  return info;
}

}  // namespace fmm
}  // namespace gpufmm
