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
// with t_rcr(p) = c_rcr3 p^3 + c_rcr2 p^2 and the per-core constants of
// laplace_cost_constants_cpu (measured, see docs/laplace_fmm.md). far(l) only
// grows with l, so the scan stops at the first depth whose far part alone
// exceeds the best total so far. Everything here is exact counting; the only
// model is the linear cost per pair / per translation.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fmm/laplace.hpp"
#include "fmm/laplace_plan.hpp"
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

namespace {

// The non-empty boxes of one level: keys (ascending) and point counts.
struct LevelBoxes {
  std::vector<uint64_t> key;
  std::vector<int64_t> count;
  int64_t size() const { return static_cast<int64_t>(key.size()); }
};

LevelBoxes boxes_at(const uint64_t* keys, int64_t n, int level) {
  LevelBoxes b;
  const int sh = tree::level_shift(level);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = keys[i] >> sh;
    if (b.key.empty() || b.key.back() != k) {
      b.key.push_back(k);
      b.count.push_back(1);
    } else {
      ++b.count.back();
    }
  }
  return b;
}

// For each box of `coarse` (level l-1), its children in `fine` (level l):
// [first[j], first[j+1]).
std::vector<int64_t> child_ranges(const LevelBoxes& coarse, const LevelBoxes& fine) {
  std::vector<int64_t> first(static_cast<size_t>(coarse.size() + 1));
  int64_t c = 0;
  for (int64_t j = 0; j < coarse.size(); ++j) {
    first[j] = c;
    while (c < fine.size() && (fine.key[c] >> 3) == coarse.key[j]) ++c;
  }
  first[coarse.size()] = c;
  return first;
}

int64_t find(const LevelBoxes& b, int level, int32_t x, int32_t y, int32_t z) {
  return tree::find_box(b.key.data(), 0, b.size(), level, x, y, z);
}

}  // namespace

template <class T>
LaplaceDepthChoice laplace_choose_depth(const uint64_t* sk, int64_t ns, const uint64_t* tk,
                                        int64_t nt, bool modified, const LaplaceTables<T>& tab,
                                        const LaplaceCostConstants& c) {
  LaplaceDepthChoice out;
  out.l_max = 0;
  const bool same = tk == nullptr;
  if (same) {
    tk = sk;
    nt = ns;
  }
  if (ns == 0 || nt == 0) return out;
  const int p = tab.p;
  const double f = p > kBatchedM2LMaxP ? c.scalar_factor : 1.0;
  auto t_rcr = [&](int q) { return f * (c.c_rcr3 * q * q * q + c.c_rcr2 * q * q); };
  std::vector<double> w_op(kNumOps);
  for (int op = 0; op < kNumOps; ++op) w_op[op] = tab.op_p[op] > 0 ? t_rcr(tab.op_p[op]) : 0.0;
  const double point_cost = c.c_point * p * p * double(ns + nt);

  LevelBoxes s_prev, t_prev;  // level l-1
  double far_cum = 0, m2l_cum = 0, best = 0;
  for (int l = 0; l <= tree::kMaxLevel; ++l) {
    LevelBoxes sb = boxes_at(sk, ns, l);
    LevelBoxes tb_own;
    if (!same) tb_own = boxes_at(tk, nt, l);
    const LevelBoxes& tb = same ? sb : tb_own;
    // Near field at depth l.
    double pairs = 0;
#pragma omp parallel for schedule(static) reduction(+ : pairs)
    for (int64_t b = 0; b < tb.size(); ++b) {
      int32_t x, y, z;
      tree::morton_decode(tb.key[b], x, y, z);
      int64_t near = 0;
      for (int k = 0; k < 27; ++k) {
        int dx, dy, dz;
        tree::stencil27(k, dx, dy, dz);
        const int64_t s = find(sb, l, x + dx, y + dy, z + dz);
        if (s >= 0) near += sb.count[s];
      }
      pairs += double(near) * double(tb.count[b]);
    }
    // Far field added by depth l: translations whose sources are at level l.
    double far = 0, m2l = 0;
    if (l >= 2) {
      const std::vector<int64_t> ch = child_ranges(s_prev, sb);
      // Per target box b at l: same-level M2L (type 1 only when modified).
      // Per target box P at l-1 (modified): type-2 translations from level l.
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : far, m2l)
      for (int64_t b = 0; b < tb.size(); ++b) {
        int32_t x, y, z;
        tree::morton_decode(tb.key[b], x, y, z);
        const int32_t px = x >> 1, py = y >> 1, pz = z >> 1;
        for (int k = 0; k < 27; ++k) {
          int dx, dy, dz;
          tree::stencil27(k, dx, dy, dz);
          const int64_t q = find(s_prev, l - 1, px + dx, py + dy, pz + dz);
          if (q < 0) continue;
          for (int64_t cc = ch[q]; cc < ch[q + 1]; ++cc) {
            int32_t cx, cy, cz;
            tree::morton_decode(sb.key[cc], cx, cy, cz);
            const int ox = cx - x, oy = cy - y, oz = cz - z;
            if (tree::adjacent(ox, oy, oz)) continue;
            if (modified && tree::is_type2(tree::parent_offset2(cx, px), tree::parent_offset2(cy, py),
                                           tree::parent_offset2(cz, pz)))
              continue;
            far += w_op[tree::same_level_class(ox, oy, oz)];
            m2l += 1;
          }
        }
      }
      if (modified) {
        const LevelBoxes& tp = same ? s_prev : t_prev;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : far, m2l)
        for (int64_t P = 0; P < tp.size(); ++P) {
          int32_t px, py, pz;
          tree::morton_decode(tp.key[P], px, py, pz);
          for (int k = 0; k < 27; ++k) {
            int dx, dy, dz;
            tree::stencil27(k, dx, dy, dz);
            const int64_t q = find(s_prev, l - 1, px + dx, py + dy, pz + dz);
            if (q < 0) continue;
            for (int64_t cc = ch[q]; cc < ch[q + 1]; ++cc) {
              int32_t cx, cy, cz;
              tree::morton_decode(sb.key[cc], cx, cy, cz);
              const int ex = tree::parent_offset2(cx, px), ey = tree::parent_offset2(cy, py),
                        ez = tree::parent_offset2(cz, pz);
              if (!tree::is_type2(ex, ey, ez)) continue;
              far += w_op[tree::parent_class(ex, ey, ez)];
              m2l += 1;
            }
          }
        }
      }
      // M2M into level l-1 >= 2 and L2L into level l.
      if (l >= 3) far += double(sb.size()) * t_rcr(p);
      if (l >= 3 || modified) far += double(tb.size()) * t_rcr(p);
    }
    far_cum += far;
    m2l_cum += m2l;
    const double total = c.c_pair * pairs + far_cum + (l >= 2 ? point_cost : 0.0);
    out.cost.push_back(total);
    out.p2p_pairs.push_back(pairs);
    out.m2l.push_back(m2l_cum);
    if (l == 0 || total < best) {
      best = total;
      out.l_max = l;
    }
    // Deeper levels only add far-field work.
    if (l >= 2 && far_cum + point_cost >= best) break;
    // Every box holds one point and no pair is left to remove.
    if (tb.size() == nt && sb.size() == ns && l >= 2) break;
    s_prev = std::move(sb);
    if (!same) t_prev = std::move(tb_own);
  }
  return out;
}

template LaplaceDepthChoice laplace_choose_depth<double>(const uint64_t*, int64_t, const uint64_t*,
                                                         int64_t, bool, const LaplaceTables<double>&,
                                                         const LaplaceCostConstants&);
template LaplaceDepthChoice laplace_choose_depth<float>(const uint64_t*, int64_t, const uint64_t*,
                                                        int64_t, bool, const LaplaceTables<float>&,
                                                        const LaplaceCostConstants&);

}  // namespace fmm
}  // namespace gpufmm
