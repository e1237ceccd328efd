// The OpenMP tree builder: parallel validation and keys, a parallel stable
// LSD radix sort and the hierarchy from the sorted keys. It produces exactly
// what the CUDA builder produces (src/cuda/tree/tree_build.cu): the same keys
// and boxes, bit for bit.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tree/parallel.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace tree {
namespace detail {

namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

int64_t first_nonfinite(const double* p, int64_t n) {
  int64_t first = kNone;
#pragma omp parallel for reduction(min : first) num_threads(team_for(n)) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    if (!(std::isfinite(p[3 * i]) && std::isfinite(p[3 * i + 1]) && std::isfinite(p[3 * i + 2])))
      first = std::min(first, i);
  }
  return first;
}

// keys[i] = key of point i, vals[i] = i; returns the first point outside the
// cube (when check_inside) or kNone.
int64_t compute_keys(const Cube& q, const double* p, int64_t n, bool check_inside,
                     uint64_t* keys, int32_t* vals) {
  int64_t first = kNone;
#pragma omp parallel for reduction(min : first) num_threads(team_for(n)) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const double cx = cube_cells(q, 0, p[3 * i]), cy = cube_cells(q, 1, p[3 * i + 1]),
                 cz = cube_cells(q, 2, p[3 * i + 2]);
    if (check_inside && !(cells_inside(cx) && cells_inside(cy) && cells_inside(cz)))
      first = std::min(first, i);
    keys[i] = morton_encode(cell_index(cx), cell_index(cy), cell_index(cz));
    vals[i] = static_cast<int32_t>(i);
  }
  return first;
}

// Stable LSD radix sort of (key, value) pairs by the 63-bit key, 8 bits per
// pass; a pass whose digit is the same for every key is skipped.
void radix_sort_pairs(uint64_t* keys, int32_t* vals, int64_t n) {
  if (n < 2) return;
  std::vector<uint64_t> tk(static_cast<size_t>(n));
  std::vector<int32_t> tv(static_cast<size_t>(n));
  uint64_t* ka = keys;
  uint64_t* kb = tk.data();
  int32_t* va = vals;
  int32_t* vb = tv.data();
  const int team = team_for(n / 4);
  std::vector<std::array<int64_t, 256>> hist(static_cast<size_t>(team));
  bool skip = false;
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = chunk_begin(n, t, nt), e = chunk_begin(n, t + 1, nt);
    for (int shift = 0; shift < 63; shift += 8) {
      std::array<int64_t, 256>& h = hist[static_cast<size_t>(t)];
      h.fill(0);
      for (int64_t i = b; i < e; ++i) ++h[(ka[i] >> shift) & 255u];
#pragma omp barrier
#pragma omp single
      {
        int64_t pos = 0;
        skip = false;
        for (int d = 0; d < 256; ++d) {
          int64_t total = 0;
          for (int u = 0; u < nt; ++u) total += hist[static_cast<size_t>(u)][d];
          if (total == n) skip = true;
          for (int u = 0; u < nt; ++u) {
            const int64_t c = hist[static_cast<size_t>(u)][d];
            hist[static_cast<size_t>(u)][d] = pos;
            pos += c;
          }
        }
      }
      if (!skip) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t dst = h[(ka[i] >> shift) & 255u]++;
          kb[dst] = ka[i];
          vb[dst] = va[i];
        }
      }
#pragma omp barrier
#pragma omp single
      {
        if (!skip) {
          std::swap(ka, kb);
          std::swap(va, vb);
        }
      }
    }
  }
  if (ka != keys) {
    std::memcpy(keys, ka, sizeof(uint64_t) * static_cast<size_t>(n));
    std::memcpy(vals, va, sizeof(int32_t) * static_cast<size_t>(n));
  }
}

LevelScan scan_levels(const uint64_t* k, int64_t n, int s_max) {
  LevelScan r;
  std::fill(r.hist, r.hist + kMaxLevel + 1, 0);
  r.cmax = -1;
  const int team = team_for(n);
  std::vector<std::array<int64_t, kMaxLevel + 1>> h(static_cast<size_t>(team));
  int cmax = -1;
#pragma omp parallel num_threads(team) reduction(max : cmax)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::array<int64_t, kMaxLevel + 1>& hh = h[static_cast<size_t>(t)];
    hh.fill(0);
    const int64_t b = std::max<int64_t>(1, chunk_begin(n, t, nt)), e = chunk_begin(n, t + 1, nt);
    for (int64_t i = b; i < e; ++i) ++hh[common_levels(k[i - 1], k[i])];
    if (s_max > 0 && n > s_max) {
      const int64_t m = n - s_max;
      const int64_t mb = chunk_begin(m, t, nt), me = chunk_begin(m, t + 1, nt);
      for (int64_t i = mb; i < me; ++i) cmax = std::max(cmax, common_levels(k[i], k[i + s_max]));
    }
  }
  for (const auto& hh : h)
    for (int c = 0; c <= kMaxLevel; ++c) r.hist[c] += hh[c];
  r.cmax = cmax;
  return r;
}

void require_count(int64_t got, int64_t expected, const char* what) {
  require(got == expected, GPUFMM_ERROR_INTERNAL, "tree build: ", what, " count ", got,
          " differs from the expected ", expected);
}

// Boxes of every level of one set of a uniform tree, from its sorted keys:
// keys, point ranges, parents (finish_boxes adds the rest).
void build_boxes(Tree& t, PointSet& ps) {
  const int L = t.l_max;
  const int64_t n = ps.n;
  if (n == 0) return;
  const std::vector<int64_t>& off = ps.level_offset;
  std::vector<int32_t> starts(static_cast<size_t>(std::max<int64_t>(n, 1)));
  {
    const int sh = level_shift(L);
    const uint64_t* k = ps.keys;
    const int64_t nl = parallel_select(
        n, [&](int64_t i) { return i == 0 || (k[i] >> sh) != (k[i - 1] >> sh); }, starts.data());
    require_count(nl, off[L + 1] - off[L], "leaf box");
    const int64_t o = off[L];
#pragma omp parallel for num_threads(team_for(nl)) schedule(static)
    for (int64_t j = 0; j < nl; ++j) {
      const int32_t s = starts[j];
      ps.box_key[o + j] = k[s] >> sh;
      ps.point_begin[o + j] = s;
      ps.point_end[o + j] = j + 1 < nl ? starts[j + 1] : static_cast<int32_t>(n);
    }
  }
  for (int l = L - 1; l >= 0; --l) {
    const int64_t co = off[l + 1], nc = off[l + 2] - off[l + 1], po = off[l];
    const uint64_t* ck = ps.box_key + co;
    const int64_t np = parallel_select(
        nc, [&](int64_t j) { return j == 0 || (ck[j] >> 3) != (ck[j - 1] >> 3); }, starts.data());
    require_count(np, off[l + 1] - off[l], "box");
#pragma omp parallel for num_threads(team_for(np)) schedule(static)
    for (int64_t p = 0; p < np; ++p) {
      const int64_t cb = starts[p], ce = p + 1 < np ? starts[p + 1] : nc;
      ps.box_key[po + p] = ck[cb] >> 3;
      ps.point_begin[po + p] = ps.point_begin[co + cb];
      ps.point_end[po + p] = ps.point_end[co + ce - 1];
      for (int64_t c = cb; c < ce; ++c) ps.parent[co + c] = static_cast<int32_t>(po + p);
    }
  }
  ps.parent[0] = -1;
}

// One level of an adaptive set, held until the box counts are known.
struct LevelBoxes {
  std::vector<uint64_t> key;
  std::vector<int32_t> begin, end, parent;  // parent: global index
};

// The levels of one set of an adaptive tree: level 0 is the root; the boxes
// of level l+1 are the children of the level-l boxes holding more than s_max
// points (AdaptiveStart), up to max_level. Sets the level offsets.
std::vector<LevelBoxes> adaptive_levels(const Tree& t, PointSet& ps) {
  std::vector<LevelBoxes> lv;
  ps.level_offset.assign(1, 0);
  const int64_t n = ps.n;
  if (n == 0) return lv;
  lv.push_back({{0}, {0}, {static_cast<int32_t>(n)}, {-1}});
  ps.level_offset.push_back(1);
  std::vector<int32_t> starts(static_cast<size_t>(n));
  for (int l = 0; l < t.options.max_level; ++l) {
    const LevelBoxes& cur = lv.back();
    const AdaptiveStart a{ps.keys, cur.key.data(), cur.begin.data(), cur.end.data(),
                          static_cast<int64_t>(cur.key.size()), l, t.options.s_max};
    const int64_t m = parallel_select(n, a, starts.data());
    if (m == 0) break;
    LevelBoxes next;
    next.key.resize(static_cast<size_t>(m));
    next.begin.resize(static_cast<size_t>(m));
    next.end.resize(static_cast<size_t>(m));
    next.parent.resize(static_cast<size_t>(m));
    const int64_t po = ps.level_offset[static_cast<size_t>(l)];
    const int sh = level_shift(l + 1);
#pragma omp parallel for num_threads(team_for(m)) schedule(static)
    for (int64_t j = 0; j < m; ++j) {
      const int32_t s = starts[j], p = a.parent_of(s);
      const int32_t stop = j + 1 < m ? starts[j + 1] : static_cast<int32_t>(n);
      next.key[j] = ps.keys[s] >> sh;
      next.begin[j] = s;
      next.end[j] = std::min(stop, cur.end[p]);
      next.parent[j] = static_cast<int32_t>(po + p);
    }
    lv.push_back(std::move(next));
    ps.level_offset.push_back(ps.level_offset.back() + m);
  }
  ps.nboxes = ps.level_offset.back();
  return lv;
}

// Copies the levels of an adaptive set into its (allocated) box arrays.
void store_levels(PointSet& ps, const std::vector<LevelBoxes>& lv) {
  for (size_t l = 0; l < lv.size(); ++l) {
    const int64_t o = ps.level_offset[l];
    std::copy(lv[l].key.begin(), lv[l].key.end(), ps.box_key + o);
    std::copy(lv[l].begin.begin(), lv[l].begin.end(), ps.point_begin + o);
    std::copy(lv[l].end.begin(), lv[l].end.end(), ps.point_end + o);
    std::copy(lv[l].parent.begin(), lv[l].parent.end(), ps.parent + o);
  }
}

// Child ranges, leaf flags, centres and tight bounds of every box of one set
// (both kinds of tree), from keys, point ranges and parents.
void finish_boxes(const Tree& t, PointSet& ps, const double* xyz) {
  const int64_t nb = ps.nboxes;
  const int L = t.l_max;
  const std::vector<int64_t>& off = ps.level_offset;
  ps.child_offset[nb] = static_cast<int32_t>(nb);
  const Cube q = t.cube;
#pragma omp parallel for num_threads(team_for(nb)) schedule(static)
  for (int64_t b = 0; b < nb; ++b) {
    const int l = static_cast<int>(std::upper_bound(off.begin(), off.end(), b) - off.begin()) - 1;
    const int64_t on = off[std::min(l + 1, L + 1)], nn = l < L ? off[l + 2] - on : 0;
    const int32_t cb = first_child(ps.parent, on, nn, static_cast<int32_t>(b)),
                  ce = first_child(ps.parent, on, nn, static_cast<int32_t>(b + 1));
    ps.child_offset[b] = cb;
    ps.leaf[b] = cb == ce ? 1 : 0;
    int32_t x, y, z;
    morton_decode(ps.box_key[b], x, y, z);
    ps.center[3 * b] = box_center(q, 0, l, x);
    ps.center[3 * b + 1] = box_center(q, 1, l, y);
    ps.center[3 * b + 2] = box_center(q, 2, l, z);
  }
  // Bounds, finest level first: a leaf from its points, a parent from its children.
  const PointBounds pt{xyz, ps.perm};
  for (int l = L; l >= 0; --l) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t b = off[l]; b < off[l + 1]; ++b) {
      Bounds r;
      if (ps.leaf[b]) {
        r = pt(ps.point_begin[b]);
        for (int64_t i = ps.point_begin[b] + 1; i < ps.point_end[b]; ++i) r = bounds_merge(r, pt(i));
      } else {
        r = ps.bounds[ps.child_offset[b]];
        for (int32_t c = ps.child_offset[b] + 1; c < ps.child_offset[b + 1]; ++c) r = bounds_merge(r, ps.bounds[c]);
      }
      ps.bounds[b] = r;
    }
  }
}

}  // namespace

void build_cpu(Tree& t, const double* src, const double* recv) {
  const int nsets = t.same_sets ? 1 : 2;
  PointSet* sets[2] = {&t.src, &t.recv_own};
  const double* coords[2] = {src, recv};

  // ---- keys: validation, bounding cube, Morton keys
  double t0 = omp_get_wtime();
  for (int s = 0; s < nsets; ++s) {
    const int64_t bad = first_nonfinite(coords[s], sets[s]->n);
    if (bad != kNone) fail_bad_point(0, s == 1, bad);
  }
  if (t.options.cube_given) {
    t.cube = cube_from_center(t.options.cube_center, t.options.cube_side);
  } else {
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::numeric_limits<double>::infinity();
      hi[k] = -std::numeric_limits<double>::infinity();
    }
    for (int s = 0; s < nsets; ++s) bounding_box(coords[s], sets[s]->n, lo, hi);
    if (t.src.n + t.recv_own.n == 0)
      for (int k = 0; k < 3; ++k) lo[k] = hi[k] = 0.0;
    t.cube = cube_from_bbox(lo, hi);
    require(std::isfinite(t.cube.side) && t.cube.scale > 0, GPUFMM_ERROR_INVALID_ARGUMENT,
            "the coordinates span a range too wide for double precision (cube side ",
            t.cube.side, ")");
  }
  allocate_points(t);
  for (int s = 0; s < nsets; ++s) {
    const int64_t bad = compute_keys(t.cube, coords[s], sets[s]->n, t.options.cube_given,
                                     sets[s]->keys, sets[s]->perm);
    if (bad != kNone) fail_bad_point(1, s == 1, bad);
  }
  double t1 = omp_get_wtime();
  t.timings.keys = t1 - t0;

  // ---- sort
  for (int s = 0; s < nsets; ++s) {
    PointSet& ps = *sets[s];
    radix_sort_pairs(ps.keys, ps.perm, ps.n);
#pragma omp parallel for num_threads(team_for(ps.n)) schedule(static)
    for (int64_t i = 0; i < ps.n; ++i) ps.iperm[ps.perm[i]] = static_cast<int32_t>(i);
  }
  t0 = omp_get_wtime();
  t.timings.sort = t0 - t1;

  // ---- hierarchy
  if (t.options.kind == Kind::Adaptive) {
    std::vector<LevelBoxes> lv[2];
    for (int s = 0; s < nsets; ++s) lv[s] = adaptive_levels(t, *sets[s]);
    finish_adaptive_levels(t);
    allocate_boxes(t);
    for (int s = 0; s < nsets; ++s) store_levels(*sets[s], lv[s]);
  } else {
    LevelScan scans[2];
    for (int s = 0; s < 2; ++s) {
      if (s < nsets) {
        scans[s] = scan_levels(sets[s]->keys, sets[s]->n, t.options.l_max < 0 ? t.options.s_max : 0);
      } else {
        std::fill(scans[s].hist, scans[s].hist + kMaxLevel + 1, 0);
        scans[s].cmax = -1;
      }
    }
    finish_levels(t, scans);
    allocate_boxes(t);
    for (int s = 0; s < nsets; ++s) build_boxes(t, *sets[s]);
  }
  for (int s = 0; s < nsets; ++s) finish_boxes(t, *sets[s], coords[s]);
  t1 = omp_get_wtime();
  t.timings.hierarchy = t1 - t0;

}

}  // namespace detail
}  // namespace tree
}  // namespace gpufmm
