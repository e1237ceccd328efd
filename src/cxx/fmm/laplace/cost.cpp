// The cost model that chooses l_max (papers/000 sec. 2.4, eqs. 26-29).
//
// Eq. (27) models one evaluate as C N (A1 + A2/s + B1 s): the dense part
// (translations) grows like the number of boxes, the sparse part (P2P) like
// the points per box. Instead of the uniform estimate s = N 8^-l we count, for
// every candidate depth l, on the sorted Morton keys of the actual points:
//   pairs(l)  = sum over target boxes b at l of n_trg(b) * sum_{27 nbrs} n_src
//   far(l)    = sum over M2L translations (modified or standard stencil, with
//               the truncation number p' of each class) of t_rcr(p')
//             + (M2M + L2L translations) t_rcr(p)
//   cost(l)   = c_pair pairs(l) + far(l) + c_point p^2 (nsrc + ntrg)  [l >= 2]
// with t_rcr(p) = c_rcr3 p^3 + c_rcr2 p^2 + c_rcr0 and the per-core constants of
// laplace_cost_constants_cpu (measured, see docs/laplace_fmm.md). far(l) only
// grows with l, so the scan stops at the first depth whose far part alone
// exceeds the best total so far. Everything here is exact counting; the only
// model is the linear cost per pair / per translation.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fmm/laplace/math.hpp"
#include "fmm/laplace/plan.hpp"
#include "tree/morton.hpp"
#include "tree/stencil.hpp"

namespace gpufmm {
namespace fmm {

LaplaceCostConstants laplace_cost_constants_cpu(bool single_precision) {
  // Measured with `bench_laplace --calibrate` (one thread of the development
  // machine: Xeon, Sapphire Rapids class, AVX-512 copy of the pipeline, the
  // library's flags including -fno-math-errno): seconds per P2P pair
  // (charges, potential + gradient), per p^3 and per p^2 of one RCR
  // translation (least-squares fit over p = 4..30 and two depths), per p^2
  // per point of P2M + L2P. Only their ratios matter for the choice of
  // l_max. Re-measure after changing the kernels or the compiler flags.
  // scalar_factor: one-at-a-time translations (p > kBatchedM2LMaxP) against
  // the batched ones, measured at p = 22 and 30.
  if (single_precision) return LaplaceCostConstants{1.6e-9, 1.2e-9, 2.1e-9, 5.4e-9, 1.3};
  return LaplaceCostConstants{2.7e-9, 1.0e-9, 4.2e-9, 6.2e-9, 1.7};
}

// Cost-model constants of the CUDA driver (papers/000 eqs. 26-32 with the
// GPU's own per-operation costs, so the optimal cluster size differs from the
// CPU's; docs/laplace_gpu.md). Whole-device seconds, not per core.
// LaplaceOptions::cost overrides them.
LaplaceCostConstants laplace_cost_constants_gpu(bool single_precision) {
  // Fitted on an H100 (2026-11-24, docs/laplace_gpu.md "GPU-optimal depth"),
  // uniform points, potential + gradient, default kernels:
  //  - c_pair: P2P seconds / pairs at N = 1e6 (L = 4) and 1e7 (L = 5);
  //  - c_rcr3, c_rcr0: (M2M + M2L + L2L) seconds per translation against
  //    the mean p'^3 of the translations at N = 1e7: double p = 8 (L = 6)
  //    and 38 (L = 5; p = 22 within 10 %), float p = 8 and 16 (L = 5). The
  //    grouped M2L's cost is mostly latency between its RCR steps: a
  //    translation costs ~2.6 ns whatever p, plus ~2.1 ps (double) / 0.9 ps
  //    (float) per p'^3. Trees of a few hundred boxes run their translations
  //    2-3x slower than this (too few groups to fill the GPU);
  //  - c_point: (P2M + L2P) seconds per p^2 per point at N = 1e6.
  LaplaceCostConstants c;
  if (single_precision) {
    c.c_pair = 7.0e-13;
    c.c_rcr3 = 8.9e-13;
    c.c_rcr2 = 0.0;
    c.c_rcr0 = 2.6e-9;
    c.c_point = 1.8e-15;
  } else {
    c.c_pair = 1.45e-12;
    c.c_rcr3 = 2.1e-12;
    c.c_rcr2 = 0.0;
    c.c_rcr0 = 2.6e-9;
    c.c_point = 2.6e-15;
  }
  return c;
}

namespace {

// The non-empty boxes of one level: keys (ascending) and point counts.
struct LevelBoxes {
  std::vector<uint64_t> key;
  std::vector<int64_t> count;
  int64_t size() const { return static_cast<int64_t>(key.size()); }
};

// Work of at least this many elements per thread (below: fewer threads).
constexpr int64_t kMinPerThread = 1 << 15;

int threads_for(int64_t n) {
  const int64_t t = std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), n / kMinPerThread));
  return static_cast<int>(t);
}

// cl[i] = tree::common_levels(key[i-1], key[i]) (cl[0] = 0): point i starts a
// box of level l >= 1 iff cl[i] < l.
std::vector<uint8_t> common_levels_of(const uint64_t* keys, int64_t n) {
  std::vector<uint8_t> cl(static_cast<size_t>(n));
  if (n > 0) cl[0] = 0;
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
  for (int64_t i = 1; i < n; ++i) cl[i] = static_cast<uint8_t>(tree::common_levels(keys[i - 1], keys[i]));
  return cl;
}

// The bytes of the 8-byte word w (values <= kMaxLevel < 128) that are < lev:
// their high bits (lev8 = lev in every byte). (b | 0x80) - lev borrows from
// no other byte and keeps the high bit iff b >= lev.
constexpr uint64_t kHighBits = 0x8080808080808080ull;
inline uint64_t bytes_below(uint64_t w, uint64_t lev8) { return ~((w | kHighBits) - lev8) & kHighBits; }

// Number of high bits set in a bytes_below result (no popcount instruction
// needed): the bytes' 0/1 summed by one multiplication.
inline int64_t count_below(uint64_t m) { return static_cast<int64_t>(((m >> 7) * 0x0101010101010101ull) >> 56); }

inline uint64_t load8(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// Boxes of `level` from the sorted point keys and their common levels: box
// starts are the i with cl[i] < level. Two parallel passes over cl, 8 bytes
// at a time (count the starts per chunk, then write them), so no merge is
// needed.
LevelBoxes boxes_at(const uint64_t* keys, const uint8_t* cl, int64_t n, int level) {
  LevelBoxes b;
  if (n <= 0) return b;
  if (level == 0) {
    b.key.assign(1, 0);
    b.count.assign(1, n);
    return b;
  }
  const int sh = tree::level_shift(level);
  const uint8_t lev = static_cast<uint8_t>(level);
  const uint64_t lev8 = 0x0101010101010101ull * lev;
  const int nt = threads_for(n);
  std::vector<int64_t> first(static_cast<size_t>(nt) + 1, 0);
  std::vector<int64_t> start;
#pragma omp parallel num_threads(nt)
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    // chunks of whole words: [i0, i1), the last one ends at n
    const int64_t i0 = (n * t / T) & ~int64_t(7), i1 = t + 1 == T ? n : (n * (t + 1) / T) & ~int64_t(7);
    const int64_t w1 = i0 + ((i1 - i0) & ~int64_t(7));  // end of the whole words
    int64_t c = 0;
    for (int64_t i = i0; i < w1; i += 8) c += count_below(bytes_below(load8(cl + i), lev8));
    for (int64_t i = w1; i < i1; ++i) c += cl[i] < lev ? 1 : 0;
    first[static_cast<size_t>(t) + 1] = c;
#pragma omp barrier
#pragma omp single
    {
      for (int k = 0; k < T; ++k) first[static_cast<size_t>(k) + 1] += first[static_cast<size_t>(k)];
      const size_t nb = static_cast<size_t>(first[static_cast<size_t>(T)]);
      start.resize(nb + 1);
      start[nb] = n;
      b.key.resize(nb);
      b.count.resize(nb);
    }
    int64_t j = first[static_cast<size_t>(t)];
    for (int64_t i = i0; i < w1; i += 8)
      for (uint64_t m = bytes_below(load8(cl + i), lev8); m != 0; m &= m - 1) {
        const int64_t at = i + (__builtin_ctzll(m) >> 3);
        start[static_cast<size_t>(j)] = at;
        b.key[static_cast<size_t>(j)] = keys[at] >> sh;
        ++j;
      }
    for (int64_t i = w1; i < i1; ++i)
      if (cl[i] < lev) {
        start[static_cast<size_t>(j)] = i;
        b.key[static_cast<size_t>(j)] = keys[i] >> sh;
        ++j;
      }
#pragma omp barrier
    const int64_t nb = b.size();
#pragma omp for schedule(static)
    for (int64_t k = 0; k < nb; ++k) b.count[k] = start[k + 1] - start[k];
  }
  return b;
}

// For each box of `coarse` (level l-1), its children in `fine` (level l):
// [first[j], first[j+1]). Every fine box has its parent in coarse.
std::vector<int64_t> child_ranges(const LevelBoxes& coarse, const LevelBoxes& fine) {
  const int64_t nc = coarse.size(), nf = fine.size();
  std::vector<int64_t> first(static_cast<size_t>(nc + 1));
  // A binary search at the start of each thread's chunk, then a merge.
#pragma omp parallel num_threads(threads_for(nc + nf))
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t j0 = nc * t / T, j1 = nc * (t + 1) / T;
    if (j0 < j1) {
      int64_t c = std::lower_bound(fine.key.begin(), fine.key.end(), coarse.key[j0] << 3) - fine.key.begin();
      for (int64_t j = j0; j < j1; ++j) {
        first[j] = c;
        while (c < nf && (fine.key[c] >> 3) == coarse.key[j]) ++c;
      }
    }
  }
  first[nc] = nf;
  return first;
}

// Box lookup by coordinates at one level: a dense Morton-indexed table when
// the level's grid is not much larger than its box count, else binary search.
class BoxIndex {
 public:
  BoxIndex(const LevelBoxes& b, int level) : b_(b), level_(level) {
    const int64_t cells = level <= 7 ? int64_t(1) << (3 * level) : -1;
    if (cells < 0 || cells > std::max<int64_t>(int64_t(1) << 15, 8 * b.size())) return;
    dense_.assign(static_cast<size_t>(cells), -1);
    const int64_t nb = b.size();
#pragma omp parallel for schedule(static) num_threads(threads_for(nb))
    for (int64_t j = 0; j < nb; ++j) dense_[b.key[j]] = static_cast<int32_t>(j);
  }
  int64_t find(int32_t x, int32_t y, int32_t z) const {
    if (dense_.empty()) return tree::find_box(b_.key.data(), 0, b_.size(), level_, x, y, z);
    const int32_t lim = int32_t(1) << level_;
    if (x < 0 || y < 0 || z < 0 || x >= lim || y >= lim || z >= lim) return -1;
    return dense_[tree::morton_encode(uint32_t(x), uint32_t(y), uint32_t(z))];
  }

 private:
  const LevelBoxes& b_;
  int level_;
  std::vector<int32_t> dense_;
};

}  // namespace

void depth_stencil_tables(bool modified, const std::vector<double>& w_op, DepthStencil& t) {
  t.modified = modified;
  int nn[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 27; ++k) {
    int dx, dy, dz;
    tree::stencil27(k, dx, dy, dz);
    for (int oc = 0; oc < 8; ++oc) {
      const int cx = 2 * dx + (oc & 1), cy = 2 * dy + ((oc >> 1) & 1), cz = 2 * dz + ((oc >> 2) & 1);
      // parent_offset2(c, p) with c = 2 (p + d) + oc: independent of p.
      const int ex = 2 * cx - 1, ey = 2 * cy - 1, ez = 2 * cz - 1;
      const bool type2 = tree::is_type2(ex, ey, ez);
      t.up[k][oc] = type2 ? static_cast<int16_t>(tree::parent_class(ex, ey, ez)) : kDepthSkip;
      for (int ob = 0; ob < 8; ++ob) {
        const int ox = cx - (ob & 1), oy = cy - ((ob >> 1) & 1), oz = cz - ((ob >> 2) & 1);
        int16_t v;
        if (tree::adjacent(ox, oy, oz)) {
          v = kDepthNear;
          t.near_k[ob][nn[ob]] = static_cast<int8_t>(k);
          t.near_oc[ob][nn[ob]++] = static_cast<int8_t>(oc);
        } else if (modified && type2) {
          v = kDepthSkip;
        } else {
          v = static_cast<int16_t>(tree::same_level_class(ox, oy, oz));
        }
        t.same[k][ob][oc] = v;
      }
    }
  }
  // Mask m = m' + its lowest bit: one addition per entry (stride: between masks).
  auto fill = [&](const int16_t* cls, double* w, int32_t* n, int stride) {
    w[0] = 0;
    n[0] = 0;
    for (int m = 1; m < 256; ++m) {
      const int oc = __builtin_ctz(static_cast<unsigned>(m)), rest = m & (m - 1);
      const bool add = cls[oc] >= 0;
      w[m * stride] = w[rest * stride] + (add ? w_op[static_cast<size_t>(cls[oc])] : 0.0);
      n[m * stride] = n[rest * stride] + (add ? 1 : 0);
    }
  };
  t.w_same.resize(27 * 256 * 8);
  t.n_same.resize(27 * 256 * 8);
  t.w_up.resize(27 * 256);
  t.n_up.resize(27 * 256);
  for (int k = 0; k < 27; ++k) {
    for (int ob = 0; ob < 8; ++ob)
      fill(t.same[k][ob], &t.w_same[static_cast<size_t>(k * 256 * 8 + ob)],
           &t.n_same[static_cast<size_t>(k * 256 * 8 + ob)], 8);
    fill(t.up[k], &t.w_up[static_cast<size_t>(k * 256)], &t.n_up[static_cast<size_t>(k * 256)], 1);
  }
}

namespace {

// Depth l >= 1 is counted parent by parent: for each target box P at l-1 the
// (<= 27) source boxes around it are looked up once; their children (counts
// and occupancy masks) give the near field of every child b of P, its
// same-level translations and P's type-2 translations (depth_parent). The
// counts are those of a box-by-box search over the level (and of the tree's
// lists); only the grouping of the floating-point sums differs.
class HostDepthLevels : public DepthLevels {
 public:
  HostDepthLevels(const uint64_t* sk, int64_t ns, const uint64_t* tk, int64_t nt)
      : sk_(sk), tk_(tk), ns_(ns), nt_(nt), same_(tk == nullptr), s_cl_(common_levels_of(sk, ns)) {
    if (!same_) t_cl_own_ = common_levels_of(tk, nt);
  }

  DepthLevel level(int l, const DepthStencil& st) override {
    const uint8_t* t_cl = same_ ? s_cl_.data() : t_cl_own_.data();
    LevelBoxes sb = boxes_at(sk_, s_cl_.data(), ns_, l);
    LevelBoxes tb_own;
    if (!same_) tb_own = boxes_at(tk_, t_cl, nt_, l);
    const LevelBoxes& tb = same_ ? sb : tb_own;
    DepthLevel d;
    d.src_boxes = sb.size();
    d.trg_boxes = tb.size();
    if (l > 0) {  // level 0: the driver's pairs
      const LevelBoxes& tp = same_ ? s_prev_ : t_prev_;
      const std::vector<int64_t> sch = child_ranges(s_prev_, sb);
      std::vector<int64_t> tch_own;
      if (!same_) tch_own = child_ranges(t_prev_, tb);
      const std::vector<int64_t>& tch = same_ ? sch : tch_own;
      const BoxIndex sidx(s_prev_, l - 1);
      const bool with_far = l >= 2, with_up = with_far && st.modified;
      // Per source box at l-1: its children's point counts by octant and
      // their occupancy mask.
      const int64_t nq = s_prev_.size();
      std::vector<int64_t> q_cnt(static_cast<size_t>(8 * nq));
      std::vector<uint8_t> q_mask(static_cast<size_t>(nq));
#pragma omp parallel for schedule(static) num_threads(threads_for(8 * nq))
      for (int64_t q = 0; q < nq; ++q) {
        int64_t* qc = q_cnt.data() + 8 * q;
        for (int oc = 0; oc < 8; ++oc) qc[oc] = 0;
        unsigned m = 0;
        for (int64_t cc = sch[q]; cc < sch[q + 1]; ++cc) {
          const unsigned oc = static_cast<unsigned>(sb.key[cc] & 7u);
          qc[oc] = sb.count[cc];
          m |= 1u << oc;
        }
        q_mask[q] = static_cast<uint8_t>(m);
      }
      const DepthStencilView view{st.w_same.data(), st.n_same.data(), st.w_up.data(),
                                  st.n_up.data(),   &st.near_k[0][0], &st.near_oc[0][0]};
      auto find = [&sidx](int32_t x, int32_t y, int32_t z) { return sidx.find(x, y, z); };
      double pairs = 0, far = 0;
      int64_t m2l = 0;
      const int64_t np = tp.size();
#pragma omp parallel for schedule(dynamic, 32) reduction(+ : pairs, far, m2l) num_threads(threads_for(64 * np))
      for (int64_t P = 0; P < np; ++P)
        depth_parent(view, tp.key[P], find, q_cnt.data(), q_mask.data(), tb.key.data(), tb.count.data(), tch[P],
                     tch[P + 1], with_far, with_up, pairs, far, m2l);
      d.pairs = pairs;
      d.far = far;
      d.m2l = m2l;
    }
    s_prev_ = std::move(sb);
    if (!same_) t_prev_ = std::move(tb_own);
    return d;
  }

 private:
  const uint64_t *sk_, *tk_;
  int64_t ns_, nt_;
  bool same_;
  std::vector<uint8_t> s_cl_, t_cl_own_;
  LevelBoxes s_prev_, t_prev_;  // level l-1
};

}  // namespace

template <class T>
DepthChoice laplace_depth_scan(int64_t ns, int64_t nt, bool modified, const LaplaceTables<T>& tab,
                                      const LaplaceCostConstants& c, DepthLevels& levels) {
  DepthChoice out;
  out.l_max = 0;
  if (ns == 0 || nt == 0) return out;
  const int p = tab.p;
  auto t_rcr = [&](int q) { return laplace_translation_seconds(c, p, q); };
  std::vector<double> w_op(kNumOps);
  for (int op = 0; op < kNumOps; ++op) w_op[op] = tab.op_p[op] > 0 ? t_rcr(tab.op_p[op]) : 0.0;
  const double point_cost = laplace_point_seconds(c, p, ns, nt);
  DepthStencil st;
  depth_stencil_tables(modified, w_op, st);
  double far_cum = 0, m2l_cum = 0, best = 0;
  for (int l = 0; l <= tree::kMaxLevel; ++l) {
    DepthLevel d = levels.level(l, st);
    if (l == 0) d.pairs = double(ns) * double(nt);  // one box each, its own neighbour
    double far = d.far;
    // M2M into level l-1 >= 2 and L2L into level l.
    if (l >= 3) far += double(d.src_boxes) * t_rcr(p);
    if (l >= 3 || (l >= 2 && modified)) far += double(d.trg_boxes) * t_rcr(p);
    far_cum += far;
    m2l_cum += double(d.m2l);
    const double total = laplace_evaluate_seconds(c, l, d.pairs, far_cum, point_cost);
    out.cost.push_back(total);
    out.p2p_pairs.push_back(d.pairs);
    out.m2l.push_back(m2l_cum);
    if (l == 0 || total < best) {
      best = total;
      out.l_max = l;
    }
    // Deeper levels only add far-field work.
    if (l >= 2 && far_cum + point_cost >= best) break;
    // Every box holds one point and no pair is left to remove.
    if (d.trg_boxes == nt && d.src_boxes == ns && l >= 2) break;
  }
  return out;
}

template DepthChoice laplace_depth_scan<double>(int64_t, int64_t, bool, const LaplaceTables<double>&,
                                                       const LaplaceCostConstants&, DepthLevels&);
template DepthChoice laplace_depth_scan<float>(int64_t, int64_t, bool, const LaplaceTables<float>&,
                                                      const LaplaceCostConstants&, DepthLevels&);

template <class T>
DepthChoice laplace_choose_depth(const uint64_t* sk, int64_t ns, const uint64_t* tk, int64_t nt,
                                        bool modified, const LaplaceTables<T>& tab, const LaplaceCostConstants& c) {
  if (tk == nullptr) nt = ns;
  if (ns == 0 || nt == 0) return DepthChoice{};
  HostDepthLevels levels(sk, ns, tk, nt);
  return laplace_depth_scan<T>(ns, nt, modified, tab, c, levels);
}

template DepthChoice laplace_choose_depth<double>(const uint64_t*, int64_t, const uint64_t*,
                                                         int64_t, bool, const LaplaceTables<double>&,
                                                         const LaplaceCostConstants&);
template DepthChoice laplace_choose_depth<float>(const uint64_t*, int64_t, const uint64_t*,
                                                        int64_t, bool, const LaplaceTables<float>&,
                                                        const LaplaceCostConstants&);

}  // namespace fmm
}  // namespace gpufmm
