// Independent validation of an octree and its lists (HostTree below), shared
// by the CPU and GPU tree tests. Every check recomputes what it verifies from first
// principles (naive bit loops, box coordinates from centres, geometric
// definitions by brute force over all box pairs) rather than reusing the
// library's helpers. Each returns "" when the tree passes, else a message
// listing the first problems found.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <utility>
#include <string>
#include <vector>

#include "gpufmm.h"
#include "lists/lists.hpp"
#include "tree/tree.hpp"

namespace gpufmm_test {

using gpufmm::lists::HostList;
using gpufmm::tree::HostPointSet;

// A tree and its lists, copied to the host.
struct HostTree : gpufmm::tree::HostTree {
  gpufmm::lists::HostLists lists;
};

inline HostTree host_tree(const gpufmm::tree::Tree& t, const gpufmm::lists::Lists& l) {
  HostTree h;
  static_cast<gpufmm::tree::HostTree&>(h) = gpufmm::tree::to_host(t);
  h.lists = gpufmm::lists::to_host(t, l);
  return h;
}

// Tree options and the lists to build (as gpufmm_tree_options_t.lists).
struct TreeOptions : gpufmm::tree::Options {
  unsigned lists = gpufmm::lists::kAllLists;
};

// Builds a tree and its lists from host coordinates and copies both to the host.
inline HostTree build_host(gpufmm::Context& ctx, const TreeOptions& o, const double* src, int64_t n,
                           const double* recv, int64_t m) {
  auto t = gpufmm::tree::build(ctx, o, src, n, recv, m, false);
  auto l = gpufmm::lists::build(*t, o.lists);
  return host_tree(*t, *l);
}

// The tree and lists behind a C handle.
inline HostTree host_tree(gpufmm_tree_t handle) {
  const gpufmm::TreeObject* h = gpufmm::checked_tree(handle);
  return host_tree(*h->tree, *h->lists);
}

class Problems {
 public:
  template <class... A>
  void add(A&&... parts) {
    if (count_++ < 12) {
      std::ostringstream os;
      (os << ... << parts);
      text_ += os.str() + "\n";
    }
  }
  std::string str() const {
    if (count_ == 0) return "";
    std::ostringstream os;
    os << count_ << " problem(s):\n" << text_;
    return os.str();
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
  std::string text_;
};

inline uint64_t naive_morton(uint64_t x, uint64_t y, uint64_t z, int bits) {
  uint64_t k = 0;
  for (int b = 0; b < bits; ++b) {
    k |= ((x >> b) & 1u) << (3 * b);
    k |= ((y >> b) & 1u) << (3 * b + 1);
    k |= ((z >> b) & 1u) << (3 * b + 2);
  }
  return k;
}

inline double level_size(const HostTree& t, int l) { return t.cube.side / std::ldexp(1.0, l); }

inline int level_of(const std::vector<int64_t>& off, int64_t b) {
  return static_cast<int>(std::upper_bound(off.begin(), off.end(), b) - off.begin()) - 1;
}

// Integer coordinates of a box at level l from its centre.
inline void box_coords(const HostTree& t, const HostPointSet& s, int64_t b, int l, int64_t c[3]) {
  const double h = level_size(t, l);
  for (int k = 0; k < 3; ++k)
    c[k] = static_cast<int64_t>(std::floor((s.center[3 * b + k] - t.cube.corner[k]) / h));
}

// ---------------------------------------------------------------- points

// xyz: the set's user coordinates (3 x n).
inline std::string check_points(const HostTree& t, const HostPointSet& s,
                                const std::vector<double>& xyz) {
  Problems pr;
  const int64_t n = s.n;
  if (static_cast<int64_t>(xyz.size()) != 3 * n) pr.add("coordinate count mismatch");
  if (static_cast<int64_t>(s.keys.size()) != n || static_cast<int64_t>(s.perm.size()) != n ||
      static_cast<int64_t>(s.iperm.size()) != n) {
    pr.add("point arrays have the wrong size");
    return pr.str();
  }
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t j = s.perm[i];
    if (j < 0 || j >= n || seen[j]) {
      pr.add("perm[", i, "] = ", j, " is not a permutation entry");
      continue;
    }
    seen[j] = 1;
    if (s.iperm[j] != i) pr.add("iperm[perm[", i, "]] = ", s.iperm[j], " != ", i);
  }
  const double cells = 2097152.0;
  for (int64_t i = 0; i < n && pr.count() == 0; ++i) {
    const int32_t j = s.perm[i];
    uint64_t c[3];
    for (int k = 0; k < 3; ++k) {
      const double q = (xyz[3 * j + k] - t.cube.corner[k]) * t.cube.scale;
      double f = std::floor(q);
      if (f < 0) f = 0;
      if (f > cells - 1) f = cells - 1;
      c[k] = static_cast<uint64_t>(f);
    }
    const uint64_t key = naive_morton(c[0], c[1], c[2], 21);
    if (key != s.keys[i]) pr.add("keys[", i, "] = ", s.keys[i], " but point ", j, " has key ", key);
    if (i > 0) {
      if (s.keys[i - 1] > s.keys[i]) pr.add("keys not sorted at ", i);
      if (s.keys[i - 1] == s.keys[i] && s.perm[i - 1] > s.perm[i])
        pr.add("sort not stable at ", i, ": equal keys, perm ", s.perm[i - 1], " > ", s.perm[i]);
    }
  }
  // The cube holds every point.
  for (int64_t j = 0; j < n; ++j)
    for (int k = 0; k < 3; ++k) {
      const double x = xyz[3 * j + k];
      if (x < t.cube.corner[k] || x > t.cube.corner[k] + t.cube.side)
        pr.add("point ", j, " lies outside the cube on axis ", k);
    }
  return pr.str();
}

// ---------------------------------------------------------------- boxes

inline std::string check_boxes(const HostTree& t, const HostPointSet& s) {
  Problems pr;
  const int L = t.l_max;
  const auto& off = s.level_offset;
  const int64_t nb = s.nboxes();
  if (static_cast<int>(off.size()) != L + 2 || off[0] != 0 || off.back() != nb) {
    pr.add("level offsets malformed");
    return pr.str();
  }
  if (static_cast<int64_t>(s.parent.size()) != nb || static_cast<int64_t>(s.child_offset.size()) != nb + 1 ||
      static_cast<int64_t>(s.point_begin.size()) != nb || static_cast<int64_t>(s.point_end.size()) != nb ||
      static_cast<int64_t>(s.center.size()) != 3 * nb) {
    pr.add("box arrays have the wrong size");
    return pr.str();
  }
  for (int l = 0; l <= L; ++l) {
    const int sh = 3 * (21 - l);
    // Independent count of the distinct boxes at this level.
    int64_t distinct = 0;
    for (int64_t i = 0; i < s.n; ++i)
      if (i == 0 || (s.keys[i] >> sh) != (s.keys[i - 1] >> sh)) ++distinct;
    if (off[l + 1] - off[l] != distinct)
      pr.add("level ", l, ": ", off[l + 1] - off[l], " boxes, expected ", distinct);
    const double h = level_size(t, l);
    int64_t expect_begin = 0;
    for (int64_t b = off[l]; b < off[l + 1]; ++b) {
      if (b > off[l] && s.box_key[b - 1] >= s.box_key[b]) pr.add("box keys not increasing at ", b);
      const int32_t pb = s.point_begin[b], pe = s.point_end[b];
      if (pb != expect_begin || pe <= pb || pe > s.n) {
        pr.add("box ", b, " point range [", pb, ",", pe, ") does not tile the points");
        continue;
      }
      expect_begin = pe;
      if ((s.keys[pb] >> sh) != s.box_key[b] || (s.keys[pe - 1] >> sh) != s.box_key[b])
        pr.add("box ", b, " key does not match its points");
      int64_t c[3];
      box_coords(t, s, b, l, c);
      if (naive_morton(static_cast<uint64_t>(c[0]), static_cast<uint64_t>(c[1]),
                       static_cast<uint64_t>(c[2]), l) != s.box_key[b])
        pr.add("box ", b, " centre does not match its key");
      for (int k = 0; k < 3; ++k) {
        const double want = t.cube.corner[k] + (static_cast<double>(c[k]) + 0.5) * h;
        if (std::fabs(s.center[3 * b + k] - want) > 1e-12 * t.cube.side)
          pr.add("box ", b, " centre off on axis ", k);
      }
      if (l == 0) {
        if (s.parent[b] != -1) pr.add("root parent is ", s.parent[b]);
      } else {
        const int32_t p = s.parent[b];
        if (p < off[l - 1] || p >= off[l] || s.box_key[p] != (s.box_key[b] >> 3))
          pr.add("box ", b, " has a wrong parent ", p);
        else if (b < s.child_offset[p] || b >= s.child_offset[p + 1])
          pr.add("box ", b, " is not among the children of its parent ", p);
      }
      const int32_t cb = s.child_offset[b], ce = s.child_offset[b + 1];
      if (l == L) {
        if (cb != ce) pr.add("leaf ", b, " has children");
      } else {
        if (ce <= cb || ce - cb > 8) pr.add("box ", b, " has ", ce - cb, " children");
        for (int32_t ch = cb; ch < ce; ++ch)
          if (ch < off[l + 1] || ch >= off[l + 2] || s.parent[ch] != b)
            pr.add("child ", ch, " of box ", b, " does not point back");
      }
    }
    if (s.n > 0 && expect_begin != s.n) pr.add("level ", l, " boxes do not cover all points");
  }
  if (s.child_offset[nb] != nb) pr.add("child_offset[nboxes] != nboxes");
  return pr.str();
}

// Tight bounds: every box's bounds equal the min / max of its points'
// coordinates, exactly; leaf flags mark the boxes without children.
inline std::string check_bounds_and_leaves(const HostPointSet& s, const std::vector<double>& xyz) {
  Problems pr;
  const int64_t nb = s.nboxes();
  if (static_cast<int64_t>(s.bounds.size()) != nb || static_cast<int64_t>(s.leaf.size()) != nb) {
    pr.add("bounds or leaf arrays have the wrong size");
    return pr.str();
  }
  for (int64_t b = 0; b < nb; ++b) {
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::numeric_limits<double>::infinity();
      hi[k] = -std::numeric_limits<double>::infinity();
    }
    for (int32_t i = s.point_begin[b]; i < s.point_end[b]; ++i)
      for (int k = 0; k < 3; ++k) {
        const double x = xyz[3 * static_cast<size_t>(s.perm[i]) + k];
        lo[k] = std::min(lo[k], x);
        hi[k] = std::max(hi[k], x);
      }
    for (int k = 0; k < 3; ++k)
      if (!(s.bounds[b].lo[k] == lo[k] && s.bounds[b].hi[k] == hi[k]))
        pr.add("box ", b, " bounds on axis ", k, " are [", s.bounds[b].lo[k], ", ", s.bounds[b].hi[k],
               "], its points span [", lo[k], ", ", hi[k], "]");
    const bool childless = s.child_offset[b] == s.child_offset[b + 1];
    if ((s.leaf[b] != 0) != childless) pr.add("box ", b, " leaf flag ", int(s.leaf[b]), " but ", s.child_offset[b + 1] - s.child_offset[b], " children");
  }
  return pr.str();
}

// The invariants of an adaptive set: a box holding more than s_max points
// below max_level has children, every other box is a leaf; the leaves' point
// ranges partition the points; every non-leaf's children partition its range;
// parents and children point at each other one level apart with matching keys;
// keys ascend within a level and match the points; centres match the keys.
inline std::string check_adaptive_boxes(const HostTree& t, const HostPointSet& s, int s_max,
                                        int max_level) {
  Problems pr;
  const int L = t.l_max;
  const auto& off = s.level_offset;
  const int64_t nb = s.nboxes();
  if (static_cast<int>(off.size()) != L + 2 || off[0] != 0 || off.back() != nb ||
      static_cast<int64_t>(s.child_offset.size()) != nb + 1 || static_cast<int64_t>(s.leaf.size()) != nb) {
    pr.add("level offsets or box arrays malformed");
    return pr.str();
  }
  if (s.n > 0 && (nb == 0 || s.point_begin[0] != 0 || s.point_end[0] != s.n || s.parent[0] != -1))
    pr.add("the root does not hold every point");
  std::vector<std::pair<int32_t, int32_t>> leaves;
  for (int l = 0; l <= L; ++l) {
    const int sh = 3 * (21 - l);
    const double h = level_size(t, l);
    for (int64_t b = off[l]; b < off[l + 1]; ++b) {
      const int32_t pb = s.point_begin[b], pe = s.point_end[b];
      if (pe <= pb || pb < 0 || pe > s.n) {
        pr.add("box ", b, " has an empty or bad range");
        continue;
      }
      if (b > off[l] && s.box_key[b - 1] >= s.box_key[b]) pr.add("box keys not increasing at ", b);
      if ((s.keys[pb] >> sh) != s.box_key[b] || (s.keys[pe - 1] >> sh) != s.box_key[b])
        pr.add("box ", b, " key does not match its points");
      if ((pb > 0 && (s.keys[pb - 1] >> sh) == s.box_key[b]) || (pe < s.n && (s.keys[pe] >> sh) == s.box_key[b]))
        pr.add("box ", b, " does not hold every point of its key");
      int64_t c[3];
      box_coords(t, s, b, l, c);
      if (naive_morton(static_cast<uint64_t>(c[0]), static_cast<uint64_t>(c[1]), static_cast<uint64_t>(c[2]), l) !=
          s.box_key[b])
        pr.add("box ", b, " centre does not match its key");
      for (int k = 0; k < 3; ++k)
        if (std::fabs(s.center[3 * b + k] - (t.cube.corner[k] + (static_cast<double>(c[k]) + 0.5) * h)) >
            1e-12 * t.cube.side)
          pr.add("box ", b, " centre off on axis ", k);
      const bool crowded = pe - pb > s_max && l < max_level;
      const int32_t cb = s.child_offset[b], ce = s.child_offset[b + 1];
      if (crowded != (ce > cb)) pr.add("box ", b, " (level ", l, ", ", pe - pb, " points) has ", ce - cb, " children");
      if (!s.leaf[b] != (ce > cb)) pr.add("box ", b, " leaf flag disagrees with its children");
      if (ce == cb) {
        leaves.push_back({pb, pe});
        if (pe - pb > s_max && l < max_level) pr.add("leaf ", b, " holds ", pe - pb, " > s_max points above max_level");
        continue;
      }
      int32_t expect = pb;
      for (int32_t ch = cb; ch < ce; ++ch) {
        if (ch < off[l + 1] || ch >= off[l + 2] || s.parent[ch] != b || (s.box_key[ch] >> 3) != s.box_key[b])
          pr.add("child ", ch, " of box ", b, " does not point back");
        if (s.point_begin[ch] != expect) pr.add("children of box ", b, " do not tile its range");
        expect = s.point_end[ch];
      }
      if (expect != pe) pr.add("children of box ", b, " do not cover its range");
    }
  }
  for (int64_t b = 1; b < nb; ++b) {
    const int32_t p = s.parent[b];
    if (p < 0 || p >= b || b < s.child_offset[p] || b >= s.child_offset[p + 1]) pr.add("box ", b, " has a wrong parent ", p);
  }
  if (s.child_offset[nb] != nb) pr.add("child_offset[nboxes] != nboxes");
  std::sort(leaves.begin(), leaves.end());
  int32_t at = 0;
  for (const auto& r : leaves) {
    if (r.first != at) pr.add("leaves do not partition the points at ", at);
    at = r.second;
  }
  if (at != s.n) pr.add("leaves cover ", at, " of ", s.n, " points");
  return pr.str();
}

// ---------------------------------------------------------------- lists

struct StencilConsts {
  double sqrt3 = std::sqrt(3.0);
  double eta_star = std::sqrt(3.0) / (4.0 - std::sqrt(3.0));          // eq. 22
  double d_star = std::sqrt(3.0) / 2 + std::sqrt(3.0) / eta_star;    // eq. 23, child units
};

inline bool touches(const int64_t a[3], const int64_t b[3]) {
  for (int k = 0; k < 3; ++k)
    if (std::llabs(a[k] - b[k]) > 1) return false;
  return true;
}

// Geometric type-2 test of source box s (level l+1) against receiver box P
// (level l): parent of s touches P, s touches none of P's eight children, and
// the centre distance is at least D* child sizes.
inline bool geometric_type2(const HostTree& t, const double* cs, const int64_t s_c[3],
                            const double* cp, const int64_t p_c[3], int l) {
  static const StencilConsts K;
  const int64_t sp[3] = {s_c[0] >> 1, s_c[1] >> 1, s_c[2] >> 1};
  if (!touches(sp, p_c)) return false;
  for (int i = 0; i < 8; ++i) {
    const int64_t ch[3] = {2 * p_c[0] + (i & 1), 2 * p_c[1] + ((i >> 1) & 1), 2 * p_c[2] + ((i >> 2) & 1)};
    if (touches(s_c, ch)) return false;
  }
  const double h = level_size(t, l + 1);
  double d2 = 0;
  for (int k = 0; k < 3; ++k) d2 += (cs[k] - cp[k]) * (cs[k] - cp[k]);
  return std::sqrt(d2) >= K.d_star * h;
}

inline void check_entry(Problems& pr, const HostTree& t, int list, int64_t row, int32_t s,
                        int32_t cls, double eta, const double* cs, const double* cr, double hs,
                        bool to_parent) {
  static const StencilConsts K;
  int tp = -1;
  double off[3], ceta = 0;
  if (gpufmm_tree_m2l_class_info(cls, &tp, off, &ceta) != GPUFMM_SUCCESS) {
    pr.add("list ", list, " row ", row, ": class ", cls, " does not decode");
    return;
  }
  if (tp != (to_parent ? 1 : 0)) pr.add("list ", list, " row ", row, ": class ", cls, " has the wrong kind");
  double d2 = 0;
  for (int k = 0; k < 3; ++k) {
    const double want = (cs[k] - cr[k]) / hs;
    if (std::fabs(off[k] - want) > 1e-6)
      pr.add("list ", list, " row ", row, " source ", s, ": class offset ", off[k], " != ", want);
    d2 += (cs[k] - cr[k]) * (cs[k] - cr[k]);
  }
  const double r1 = K.sqrt3 / 2 * hs, r2 = (to_parent ? K.sqrt3 : K.sqrt3 / 2) * hs;
  const double want_eta = std::max(r1, r2) / (std::sqrt(d2) - std::min(r1, r2));  // eq. 20
  if (std::fabs(eta - want_eta) > 1e-9 * want_eta)
    pr.add("list ", list, " row ", row, " source ", s, ": eta ", eta, " != ", want_eta);
  if (eta != ceta) pr.add("list ", list, " row ", row, ": eta differs from the class's eta");
  if (!(eta <= K.eta_star * (1 + 1e-12)))
    pr.add("list ", list, " row ", row, ": eta ", eta, " exceeds eta* ", K.eta_star);
}

// Compares every built list with its brute-force geometric definition.
inline std::string check_lists(const HostTree& t) {
  Problems pr;
  const HostPointSet& S = t.src;
  const HostPointSet& R = t.recv;
  const int L = t.l_max;
  const int64_t rows = R.nboxes();
  std::vector<int64_t> sc(3 * static_cast<size_t>(S.nboxes())), rc(3 * static_cast<size_t>(rows));
  for (int64_t b = 0; b < S.nboxes(); ++b) box_coords(t, S, b, level_of(S.level_offset, b), &sc[3 * b]);
  for (int64_t b = 0; b < rows; ++b) box_coords(t, R, b, level_of(R.level_offset, b), &rc[3 * b]);
  const int max_len[4] = {27, 189, 109, 80};

  for (int k = 0; k < 4; ++k) {
    const HostList& hl = t.lists[k];
    if (!hl.built) continue;
    if (static_cast<int64_t>(hl.offsets.size()) != rows + 1 || hl.offsets[0] != 0) {
      pr.add("list ", k, ": offsets malformed");
      continue;
    }
    std::vector<int32_t> want;
    for (int l = 0; l <= L; ++l) {
      for (int64_t r = R.level_offset[l]; r < R.level_offset[l + 1]; ++r) {
        want.clear();
        const int64_t* cb = &rc[3 * r];
        const int64_t pb[3] = {cb[0] >> 1, cb[1] >> 1, cb[2] >> 1};
        if (k == 3) {
          if (l + 1 <= L)
            for (int64_t s = S.level_offset[l + 1]; s < S.level_offset[l + 2]; ++s)
              if (geometric_type2(t, &S.center[3 * s], &sc[3 * s], &R.center[3 * r], cb, l))
                want.push_back(static_cast<int32_t>(s));
        } else if (l < static_cast<int>(S.level_offset.size()) - 1) {
          for (int64_t s = S.level_offset[l]; s < S.level_offset[l + 1]; ++s) {
            const int64_t* cs = &sc[3 * s];
            const bool near = touches(cs, cb);
            if (k == 0) {
              if (near) want.push_back(static_cast<int32_t>(s));
              continue;
            }
            if (near || l < 1) continue;
            const int64_t ps[3] = {cs[0] >> 1, cs[1] >> 1, cs[2] >> 1};
            if (!touches(ps, pb)) continue;
            if (k == 2) {
              // Type 2 relative to the receiver's parent (its centre from the tree).
              const int32_t P = R.parent[r];
              if (geometric_type2(t, &S.center[3 * s], cs, &R.center[3 * P], pb, l - 1)) continue;
            }
            want.push_back(static_cast<int32_t>(s));
          }
        }
        const int64_t b = hl.offsets[r], e = hl.offsets[r + 1];
        if (e - b > max_len[k]) pr.add("list ", k, " row ", r, " has ", e - b, " > ", max_len[k], " entries");
        bool same = (e - b) == static_cast<int64_t>(want.size());
        for (int64_t i = 0; same && i < e - b; ++i) same = hl.index[b + i] == want[i];
        if (!same) {
          pr.add("list ", k, " row ", r, " (level ", l, "): ", e - b, " entries, brute force ", want.size());
          continue;
        }
        if (k == 0) continue;
        for (int64_t i = b; i < e; ++i) {
          const int32_t s = hl.index[i];
          // Type 2: the row's box is the parent-level receiver P itself.
          const bool to_parent = (k == 3);
          check_entry(pr, t, k, r, s, hl.cls[i], hl.eta[i], &S.center[3 * s], &R.center[3 * r],
                      level_size(t, to_parent ? l + 1 : l), to_parent);
        }
      }
    }
  }
  return pr.str();
}

// ---------------------------------------------------------------- counting

struct Acc {
  uint64_t n = 0, w = 0;  // count and hash sum (mod 2^64)
  Acc& operator+=(const Acc& o) {
    n += o.n;
    w += o.w;
    return *this;
  }
};

inline uint64_t source_weight(uint64_t i) {
  uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Runs a counting "FMM" through the lists: sources carry (1, hash), the
// upward pass sums children, the downward pass adds M2L entries and passes
// parents' locals to children, the near field adds the neighbours' sources at
// the leaves. Every receiver must see (N, sum of hashes): every source exactly
// once. modified = false: standard M2L list; true: type-1 to the box, type-2
// to the parent (then passed down).
inline std::string counting_check(const HostTree& t, bool modified) {
  Problems pr;
  const HostPointSet& S = t.src;
  const HostPointSet& R = t.recv;
  const int L = t.l_max;
  const HostList& nbr = t.lists[0];
  const HostList& m2l = t.lists[1];
  const HostList& t1 = t.lists[2];
  const HostList& t2 = t.lists[3];
  if (!nbr.built || (!modified && !m2l.built) || (modified && !(t1.built && t2.built)))
    return "counting check needs the neighbour and M2L lists";
  Acc total;
  for (int64_t i = 0; i < S.n; ++i) total += Acc{1, source_weight(static_cast<uint64_t>(i))};

  // Upward pass.
  std::vector<Acc> M(static_cast<size_t>(S.nboxes()));
  auto direct = [&](int64_t s) {
    Acc a;
    for (int32_t p = S.point_begin[s]; p < S.point_end[s]; ++p)
      a += Acc{1, source_weight(static_cast<uint64_t>(S.perm[p]))};
    return a;
  };
  if (S.nboxes() > 0) {
    for (int64_t s = S.level_offset[L]; s < S.level_offset[L + 1]; ++s) M[s] = direct(s);
    for (int l = L - 1; l >= 0; --l)
      for (int64_t s = S.level_offset[l]; s < S.level_offset[l + 1]; ++s)
        for (int32_t c = S.child_offset[s]; c < S.child_offset[s + 1]; ++c) M[s] += M[c];
  }
  // Downward pass.
  std::vector<Acc> loc(static_cast<size_t>(R.nboxes()));
  auto add_row = [&](const HostList& hl, int64_t r, Acc& a) {
    for (int64_t i = hl.offsets[r]; i < hl.offsets[r + 1]; ++i) a += M[hl.index[i]];
  };
  for (int l = 0; l <= L && R.nboxes() > 0; ++l)
    for (int64_t r = R.level_offset[l]; r < R.level_offset[l + 1]; ++r) {
      Acc a;
      if (l > 0) a = loc[R.parent[r]];
      if (modified) {
        add_row(t1, r, a);
        add_row(t2, r, a);
      } else {
        add_row(m2l, r, a);
      }
      loc[r] = a;
    }
  // Near field and the check, receiver by receiver.
  int64_t covered = 0;
  if (R.nboxes() > 0) {
    for (int64_t r = R.level_offset[L]; r < R.level_offset[L + 1]; ++r) {
      Acc a = loc[r];
      for (int64_t i = nbr.offsets[r]; i < nbr.offsets[r + 1]; ++i) a += direct(nbr.index[i]);
      for (int32_t p = R.point_begin[r]; p < R.point_end[r]; ++p) {
        ++covered;
        if (a.n != total.n || a.w != total.w)
          pr.add("receiver ", R.perm[p], " (leaf box ", r, ") sees ", a.n, " of ", total.n,
                 " sources", a.n == total.n ? " but not each exactly once" : "");
      }
    }
  }
  if (covered != R.n) pr.add("leaves hold ", covered, " receivers, expected ", R.n);
  return pr.str();
}

// Bitwise comparison of two trees (e.g. built on the GPU and on the CPU).
inline std::string compare_trees(const HostTree& a, const HostTree& b) {
  Problems pr;
  if (a.same_sets != b.same_sets) pr.add("same_sets differs");
  if (a.l_max != b.l_max) pr.add("l_max differs: ", a.l_max, " vs ", b.l_max);
  for (int k = 0; k < 3; ++k)
    if (a.cube.center[k] != b.cube.center[k] || a.cube.corner[k] != b.cube.corner[k])
      pr.add("cube differs on axis ", k);
  if (a.cube.side != b.cube.side || a.cube.scale != b.cube.scale) pr.add("cube side differs");
  auto cmp = [&](const char* what, const auto& x, const auto& y) {
    if (x.size() != y.size()) {
      pr.add(what, ": sizes ", x.size(), " vs ", y.size());
      return;
    }
    for (size_t i = 0; i < x.size(); ++i)
      if (!(x[i] == y[i])) {
        pr.add(what, ": first difference at ", i, ": ", x[i], " vs ", y[i]);
        return;
      }
  };
  for (int s = 0; s < 2; ++s) {
    const HostPointSet& x = s == 0 ? a.src : a.recv;
    const HostPointSet& y = s == 0 ? b.src : b.recv;
    const std::string n = s == 0 ? "sources " : "receivers ";
    if (x.n != y.n) pr.add(n, "point counts differ");
    cmp((n + "keys").c_str(), x.keys, y.keys);
    cmp((n + "perm").c_str(), x.perm, y.perm);
    cmp((n + "iperm").c_str(), x.iperm, y.iperm);
    cmp((n + "level_offset").c_str(), x.level_offset, y.level_offset);
    cmp((n + "box_key").c_str(), x.box_key, y.box_key);
    cmp((n + "parent").c_str(), x.parent, y.parent);
    cmp((n + "child_offset").c_str(), x.child_offset, y.child_offset);
    cmp((n + "point_begin").c_str(), x.point_begin, y.point_begin);
    cmp((n + "point_end").c_str(), x.point_end, y.point_end);
    cmp((n + "center").c_str(), x.center, y.center);
    cmp((n + "bounds").c_str(), x.bounds, y.bounds);
    cmp((n + "leaf").c_str(), x.leaf, y.leaf);
  }
  for (int k = 0; k < 4; ++k) {
    const std::string n = "list " + std::to_string(k) + " ";
    if (a.lists[k].built != b.lists[k].built) pr.add(n, "built differs");
    cmp((n + "offsets").c_str(), a.lists[k].offsets, b.lists[k].offsets);
    cmp((n + "index").c_str(), a.lists[k].index, b.lists[k].index);
    cmp((n + "cls").c_str(), a.lists[k].cls, b.lists[k].cls);
    cmp((n + "eta").c_str(), a.lists[k].eta, b.lists[k].eta);
  }
  return pr.str();
}

// Every check of an adaptive tree: points, the adaptive invariants, bounds
// and leaf flags of both sets, and the lists against their (same-level)
// brute-force definitions.
inline std::string check_adaptive_tree(const HostTree& t, const std::vector<double>& src_xyz,
                                       const std::vector<double>& recv_xyz, int s_max, int max_level) {
  std::string msg;
  msg += check_points(t, t.src, src_xyz);
  msg += check_adaptive_boxes(t, t.src, s_max, max_level);
  msg += check_bounds_and_leaves(t.src, src_xyz);
  if (!t.same_sets) {
    msg += check_points(t, t.recv, recv_xyz);
    msg += check_adaptive_boxes(t, t.recv, s_max, max_level);
    msg += check_bounds_and_leaves(t.recv, recv_xyz);
  }
  msg += check_lists(t);
  return msg;
}

// Every check at once (coordinates of both sets; recv_xyz ignored when the
// sets are the same).
inline std::string check_tree(const HostTree& t, const std::vector<double>& src_xyz,
                              const std::vector<double>& recv_xyz) {
  std::string msg;
  msg += check_points(t, t.src, src_xyz);
  msg += check_boxes(t, t.src);
  msg += check_bounds_and_leaves(t.src, src_xyz);
  if (!t.same_sets) {
    msg += check_points(t, t.recv, recv_xyz);
    msg += check_boxes(t, t.recv);
    msg += check_bounds_and_leaves(t.recv, recv_xyz);
  }
  msg += check_lists(t);
  msg += counting_check(t, false);
  msg += counting_check(t, true);
  return msg;
}

}  // namespace gpufmm_test
