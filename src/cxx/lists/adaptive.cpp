// The U, W and X lists of the adaptive FMM (lists/adaptive.hpp): two walks,
// each run twice (count, then fill at the scanned offsets), so that the
// lists are the same for any number of threads.
#include "lists/adaptive.hpp"

#include <algorithm>

#include "tree/stencil.hpp"

namespace gpufmm {
namespace lists {

int BoxView::level(int64_t b) const { return tree::level_of_box(level_offset, b); }

int32_t BoxView::find(int l, int32_t x, int32_t y, int32_t z) const {
  if (l > l_max) return -1;
  const int64_t o = level_offset[size_t(l)], n = level_offset[size_t(l) + 1] - o;
  if (n <= 0) return -1;
  return tree::find_box(key, o, n, l, x, y, z);
}

BoxView box_view(const tree::Tree& t, const tree::PointSet& s) {
  BoxView v;
  v.key = s.box_key;
  v.child = s.child_offset;
  v.begin = s.point_begin;
  v.end = s.point_end;
  v.leaf = s.leaf;
  v.level_offset = s.level_offset;
  v.l_max = t.l_max;
  return v;
}

namespace {

// off[0] = 0, off[i + 1] = off[i] + cnt[i] (i < n).
void offsets_of(const std::vector<int64_t>& cnt, std::vector<int64_t>& off, int64_t n) {
  off.assign(size_t(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) off[size_t(i) + 1] = off[size_t(i)] + cnt[size_t(i)];
}

// A box: level and integer coordinates at that level.
struct Cell {
  int level;
  int32_t x, y, z;
};

Cell cell_of(const BoxView& v, int64_t b, int level) {
  Cell c{level, 0, 0, 0};
  tree::morton_decode(v.key[b], c.x, c.y, c.z);
  return c;
}

// True when the closed boxes a and b (b at a level >= a's) touch or overlap.
bool touches(const Cell& a, const Cell& b) {
  const int k = b.level - a.level;
  auto axis = [k](int32_t ac, int32_t bc) {
    const int64_t lo = int64_t(ac) << k, hi = (int64_t(ac + 1) << k) - 1;
    return bc >= lo - 1 && bc <= hi + 1;
  };
  return axis(a.x, b.x) && axis(a.y, b.y) && axis(a.z, b.z);
}

Cell child_cell(const BoxView& v, int32_t ch, const Cell& parent) {
  const uint32_t o = static_cast<uint32_t>(v.key[ch] & 7u);
  return Cell{parent.level + 1, 2 * parent.x + int32_t(o & 1u), 2 * parent.y + int32_t((o >> 1) & 1u),
              2 * parent.z + int32_t((o >> 2) & 1u)};
}

// The walk from receiver leaf B (cell b): emit(kind, source box) with kind
// 0 = U, 1 = W, for every source box of B's level touching B, descended.
template <class Emit>
void walk_receiver_leaf(const BoxView& S, const Cell& b, const AdaptiveListOptions& opt, Emit&& emit) {
  // Source box c (cell cc) touches B.
  auto visit = [&](auto&& self, int32_t c, const Cell& cc) -> void {
    if (S.leaf[c]) {
      emit(0, c);
      return;
    }
    for (int32_t ch = S.child[c]; ch < S.child[c + 1]; ++ch) {
      const Cell d = child_cell(S, ch, cc);
      if (touches(b, d)) {
        self(self, ch, d);
      } else if (opt.skip_type2 && d.level == b.level + 1 &&
                 tree::is_type2(tree::parent_offset2(d.x, b.x), tree::parent_offset2(d.y, b.y),
                                tree::parent_offset2(d.z, b.z))) {
        continue;  // in B's type-2 row
      } else {
        emit(S.points(ch) <= opt.p2p_max ? 0 : 1, ch);
      }
    }
  };
  for (int k = 0; k < 27; ++k) {
    int dx, dy, dz;
    tree::stencil27(k, dx, dy, dz);
    const int32_t c = S.find(b.level, b.x + dx, b.y + dy, b.z + dz);
    if (c >= 0) visit(visit, c, Cell{b.level, b.x + dx, b.y + dy, b.z + dz});
  }
}

// Receiver leaves under receiver box f, in ascending order per level (f
// itself when it is a leaf).
template <class F>
void leaves_under(const BoxView& R, int32_t f, F&& fn) {
  if (R.leaf[f]) {
    fn(f);
    return;
  }
  for (int32_t ch = R.child[f]; ch < R.child[f + 1]; ++ch) leaves_under(R, ch, fn);
}

// The walk from source leaf A (cell a): emit(kind, receiver box) with kind
// 0 = U (a receiver leaf), 2 = X, under the non-leaf receiver boxes of A's
// level touching A.
template <class Emit>
void walk_source_leaf(const BoxView& R, const Cell& a, const AdaptiveListOptions& opt, Emit&& emit) {
  auto visit = [&](auto&& self, int32_t e, const Cell& ec) -> void {
    for (int32_t ch = R.child[e]; ch < R.child[e + 1]; ++ch) {
      const Cell f = child_cell(R, ch, ec);
      if (touches(a, f)) {
        if (R.leaf[ch])
          emit(0, ch);
        else
          self(self, ch, f);
      } else if (R.points(ch) <= opt.p2p_max) {
        leaves_under(R, ch, [&](int32_t leaf) { emit(0, leaf); });
      } else {
        emit(2, ch);
      }
    }
  };
  for (int k = 0; k < 27; ++k) {
    int dx, dy, dz;
    tree::stencil27(k, dx, dy, dz);
    const int32_t e = R.find(a.level, a.x + dx, a.y + dy, a.z + dz);
    if (e >= 0 && !R.leaf[e]) visit(visit, e, Cell{a.level, a.x + dx, a.y + dy, a.z + dz});
  }
}

// A's U sizes: source-target pairs, the most sources of one row.
void count_u(const BoxView& S, const BoxView& R, AdaptiveLists& A) {
  const int64_t nl = int64_t(A.leaves.size());
  int64_t u_pairs = 0, max_u = 0;
#pragma omp parallel for schedule(static) reduction(+ : u_pairs) reduction(max : max_u) if (nl > 4096)
  for (int64_t i = 0; i < nl; ++i) {
    int64_t near = 0;
    for (int64_t k = A.u_off[size_t(i)]; k < A.u_off[size_t(i) + 1]; ++k) near += S.points(A.u[size_t(k)]);
    u_pairs += near * R.points(A.leaves[size_t(i)]);
    max_u = std::max(max_u, near);
  }
  A.u_pairs = u_pairs;
  A.max_u_sources = max_u;
}

}  // namespace

AdaptiveLists build_adaptive(const BoxView& S, const BoxView& R, const AdaptiveListOptions& opt) {
  AdaptiveLists out;
  const int64_t nr = R.nboxes(), ns = S.nboxes();
  for (int64_t b = 0; b < nr; ++b)
    if (R.leaf[b]) out.leaves.push_back(int32_t(b));
  const int64_t nl = int64_t(out.leaves.size());
  // Row of a receiver leaf (-1 for other boxes).
  std::vector<int32_t> row_of(size_t(nr), -1);
  for (int64_t i = 0; i < nl; ++i) row_of[size_t(out.leaves[size_t(i)])] = int32_t(i);
  std::vector<int32_t> src_leaves;
  for (int64_t a = 0; a < ns; ++a)
    if (S.leaf[a]) src_leaves.push_back(int32_t(a));
  const int64_t na = int64_t(src_leaves.size());

  // Walk from the source leaves: (receiver box, kind) pairs per source leaf.
  std::vector<int64_t> a_cnt(size_t(na) + 1, 0), a_off(size_t(na) + 1, 0);
  const bool any = nr > 0 && ns > 0;
  if (any) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < na; ++i) {
      const int32_t a = src_leaves[size_t(i)];
      int64_t n = 0;
      walk_source_leaf(R, cell_of(S, a, S.level(a)), opt, [&](int, int32_t) { ++n; });
      a_cnt[size_t(i)] = n;
    }
  }
  offsets_of(a_cnt, a_off, na);
  const int64_t npairs = a_off[size_t(na)];
  std::vector<int32_t> pair_box(static_cast<size_t>(npairs));
  std::vector<int8_t> pair_kind(static_cast<size_t>(npairs));
  if (any) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < na; ++i) {
      const int32_t a = src_leaves[size_t(i)];
      int64_t o = a_off[size_t(i)];
      walk_source_leaf(R, cell_of(S, a, S.level(a)), opt, [&](int kind, int32_t f) {
        pair_box[size_t(o)] = f;
        pair_kind[size_t(o)] = int8_t(kind);
        ++o;
      });
    }
  }
  // The pairs by row, stable (source leaves ascending within a row): U rows
  // of receiver leaves, X rows of receiver boxes.
  std::vector<int64_t> ua_cnt(size_t(nl) + 1, 0), ua_off(size_t(nl) + 1, 0);
  std::vector<int64_t> x_cnt(size_t(nr) + 1, 0);
  for (int64_t k = 0; k < npairs; ++k) {
    if (pair_kind[size_t(k)] == 0)
      ++ua_cnt[size_t(row_of[size_t(pair_box[size_t(k)])])];
    else
      ++x_cnt[size_t(pair_box[size_t(k)])];
  }
  offsets_of(ua_cnt, ua_off, nl);
  std::vector<int32_t> ua(static_cast<size_t>(ua_off[size_t(nl)]));
  for (int64_t b = 0; b < nr; ++b)
    if (x_cnt[size_t(b)] > 0) out.x_box.push_back(int32_t(b));
  out.x_off.assign(out.x_box.size() + 1, 0);
  std::vector<int64_t> x_pos(static_cast<size_t>(nr), 0);
  for (size_t r = 0; r < out.x_box.size(); ++r) {
    out.x_off[r + 1] = out.x_off[r] + x_cnt[size_t(out.x_box[r])];
    x_pos[size_t(out.x_box[r])] = out.x_off[r];
  }
  out.x.resize(size_t(out.x_off.back()));
  {
    std::vector<int64_t> fill(ua_off.begin(), ua_off.end() - 1);
    for (int64_t i = 0; i < na; ++i)
      for (int64_t k = a_off[size_t(i)]; k < a_off[size_t(i) + 1]; ++k) {
        const int32_t f = pair_box[size_t(k)];
        if (pair_kind[size_t(k)] == 0)
          ua[size_t(fill[size_t(row_of[size_t(f)])]++)] = src_leaves[size_t(i)];
        else
          out.x[size_t(x_pos[size_t(f)]++)] = src_leaves[size_t(i)];
      }
  }

  // Walk from the receiver leaves: U (then the pairs above) and W per row.
  std::vector<int64_t> u_cnt(size_t(nl) + 1, 0), w_cnt(size_t(nl) + 1, 0);
  if (any) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < nl; ++i) {
      const int32_t b = out.leaves[size_t(i)];
      int64_t nu = 0, nw = 0;
      walk_receiver_leaf(S, cell_of(R, b, R.level(b)), opt, [&](int kind, int32_t) { ++(kind == 0 ? nu : nw); });
      u_cnt[size_t(i)] = nu + (ua_off[size_t(i) + 1] - ua_off[size_t(i)]);
      w_cnt[size_t(i)] = nw;
    }
  }
  offsets_of(u_cnt, out.u_off, nl);
  offsets_of(w_cnt, out.w_off, nl);
  out.u.resize(size_t(out.u_off[size_t(nl)]));
  out.w.resize(size_t(out.w_off[size_t(nl)]));
  int64_t w_targets = 0;
  if (any) {
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : w_targets)
    for (int64_t i = 0; i < nl; ++i) {
      const int32_t b = out.leaves[size_t(i)];
      int64_t ou = out.u_off[size_t(i)], ow = out.w_off[size_t(i)];
      walk_receiver_leaf(S, cell_of(R, b, R.level(b)), opt, [&](int kind, int32_t c) {
        if (kind == 0)
          out.u[size_t(ou++)] = c;
        else
          out.w[size_t(ow++)] = c;
      });
      for (int64_t k = ua_off[size_t(i)]; k < ua_off[size_t(i) + 1]; ++k) out.u[size_t(ou++)] = ua[size_t(k)];
      w_targets += (out.w_off[size_t(i) + 1] - out.w_off[size_t(i)]) * R.points(b);
    }
  }
  count_u(S, R, out);
  out.w_targets = w_targets;
  int64_t xs = 0;
  for (int32_t a : out.x) xs += S.points(a);
  out.x_sources = xs;
  return out;
}

int64_t move_to_direct(const BoxView& S, const BoxView& R, HostLists& v, const DirectRule& direct, AdaptiveLists& A) {
  const int64_t nl = int64_t(A.leaves.size()), nr = R.nboxes();
  std::vector<int32_t> row_of(size_t(nr), -1);
  for (int64_t i = 0; i < nl; ++i) row_of[size_t(A.leaves[size_t(i)])] = int32_t(i);
  // The moved entries, (receiver box, source box), in list, row, entry order;
  // the kept ones compacted in place.
  std::vector<std::pair<int32_t, int32_t>> moved;
  std::vector<uint8_t> go;
  for (int k : {int(kM2L), int(kType1), int(kType2)}) {
    HostList& l = v[size_t(k)];
    if (!l.built || l.offsets.empty()) continue;
    const int64_t rows = int64_t(l.offsets.size()) - 1;
    go.assign(l.index.size(), 0);  // the rule per entry, then the rows compacted in order
#pragma omp parallel for schedule(dynamic, 256) if (rows > 4096)
    for (int64_t a = 0; a < rows; ++a)
      for (int64_t e = l.offsets[size_t(a)]; e < l.offsets[size_t(a) + 1]; ++e)
        go[size_t(e)] = direct(R.points(a), S.points(l.index[size_t(e)]), l.cls[size_t(e)]) ? 1 : 0;
    int64_t w = 0;
    for (int64_t a = 0; a < rows; ++a) {
      const int64_t e0 = l.offsets[size_t(a)], e1 = l.offsets[size_t(a) + 1];
      l.offsets[size_t(a)] = w;
      for (int64_t e = e0; e < e1; ++e) {
        const int32_t s = l.index[size_t(e)];
        if (go[size_t(e)]) {
          moved.emplace_back(int32_t(a), s);
          continue;
        }
        l.index[size_t(w)] = s;
        l.cls[size_t(w)] = l.cls[size_t(e)];
        if (!l.eta.empty()) l.eta[size_t(w)] = l.eta[size_t(e)];
        ++w;
      }
    }
    l.offsets.back() = w;
    l.index.resize(size_t(w));
    l.cls.resize(size_t(w));
    if (!l.eta.empty()) l.eta.resize(size_t(w));
  }
  // The U rows with the moved sources appended: counted, then filled.
  std::vector<int64_t> cnt(static_cast<size_t>(nl), 0);
  for (int64_t i = 0; i < nl; ++i) cnt[size_t(i)] = A.u_off[size_t(i) + 1] - A.u_off[size_t(i)];
  int64_t pairs = 0;
  for (const auto& m : moved) {
    leaves_under(R, m.first, [&](int32_t leaf) { ++cnt[size_t(row_of[size_t(leaf)])]; });
    pairs += R.points(m.first) * S.points(m.second);
  }
  std::vector<int64_t> off;
  offsets_of(cnt, off, nl);
  std::vector<int32_t> u(static_cast<size_t>(off[size_t(nl)]));
  std::vector<int64_t> fill(static_cast<size_t>(nl));
  for (int64_t i = 0; i < nl; ++i) {
    const int64_t n = A.u_off[size_t(i) + 1] - A.u_off[size_t(i)];
    std::copy_n(A.u.begin() + A.u_off[size_t(i)], n, u.begin() + off[size_t(i)]);
    fill[size_t(i)] = off[size_t(i)] + n;
  }
  for (const auto& m : moved)
    leaves_under(R, m.first, [&](int32_t leaf) { u[size_t(fill[size_t(row_of[size_t(leaf)])]++)] = m.second; });
  A.u_off = std::move(off);
  A.u = std::move(u);
  A.v_moved += int64_t(moved.size());
  A.v_pairs += pairs;
  count_u(S, R, A);
  return int64_t(moved.size());
}

}  // namespace lists
}  // namespace gpufmm
