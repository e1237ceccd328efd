// PlanCore (fmm/plan_core.hpp): its destructor, the far field's schedule
// and the failure of a result that is not finite.
#include "fmm/plan_core.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"

namespace gpufmm {
namespace fmm {

PlanCore::~PlanCore() {
  gpu.reset();
  lists.reset();
  tree.reset();
}

void far_schedule(PlanCore& P) {
  const tree::Tree& t = *P.tree;
  const tree::PointSet& S = t.src;
  const tree::PointSet& R = t.receivers();
  const int L = t.l_max;
  FarSchedule& f = P.far;
  f = FarSchedule();
  if (L < 2 || S.nboxes == 0 || R.nboxes == 0) return;
  const int lists[3] = {int(lists::kM2L), int(lists::kType1), int(lists::kType2)};
  // Sources referenced by an M2L entry; receivers with an M2L entry.
  std::vector<uint8_t> src_ref(size_t(S.nboxes), 0), recv(size_t(R.nboxes), 0);
  for (int k : lists) {
    const lists::List& li = P.lists->list[k];
    if (!li.built) continue;
    for (int64_t b = 0; b < li.rows; ++b)
      if (li.offsets[b + 1] > li.offsets[b]) recv[size_t(b)] = 1;
    for (int64_t e = 0; e < li.nnz; ++e) src_ref[size_t(li.index[e])] = 1;
  }
  if (P.alists) {  // M2P sources and P2L receivers of an adaptive plan
    for (int32_t b : P.alists->w) src_ref[size_t(b)] = 1;
    for (int32_t b : P.alists->x_box) recv[size_t(b)] = 1;
  }
  // below[b]: some box under b is referenced (sources) / receives (receivers);
  // children follow their parents' level, so a backward sweep sees every
  // child before its parent.
  auto below_of = [](const tree::PointSet& X, const std::vector<uint8_t>& mark) {
    std::vector<uint8_t> below(size_t(X.nboxes), 0);
    for (int64_t c = X.nboxes - 1; c > 0; --c)
      if (X.parent[c] >= 0 && (mark[size_t(c)] || below[size_t(c)])) below[size_t(X.parent[c])] = 1;
    return below;
  };
  const std::vector<uint8_t> src_below = below_of(S, src_ref), recv_below = below_of(R, recv);
  auto level_of = [](const tree::PointSet& X, int64_t b) { return tree::level_of_box(X.level_offset, b); };
  // Multipoles, top down from level 2.
  f.m.assign(size_t(S.nboxes), FarSchedule::kNone);
  for (int64_t b = S.level_offset[2]; b < S.nboxes; ++b) {
    const int32_t par = S.parent[b];
    const bool need = src_ref[size_t(b)] || (level_of(S, b) > 2 && f.m[size_t(par)] == FarSchedule::kM2M);
    if (!need) continue;
    f.m[size_t(b)] = S.leaf[b] || !src_below[size_t(b)] ? FarSchedule::kP2M : FarSchedule::kM2M;
    if (f.m[size_t(b)] == FarSchedule::kM2M) f.m2m += S.child_offset[b + 1] - S.child_offset[b];
  }
  // Locals, top down from the first level that receives (L2L from level 2).
  f.l.assign(size_t(R.nboxes), FarSchedule::kNone);
  for (int64_t b = R.level_offset[P.modified ? 1 : 2]; b < R.nboxes; ++b) {
    const int32_t par = R.parent[b];
    const bool from_parent = level_of(R, b) >= 2 && f.l[size_t(par)] == FarSchedule::kLocal;
    if (!recv[size_t(b)] && !from_parent) continue;
    f.l[size_t(b)] = R.leaf[b] || !recv_below[size_t(b)] ? FarSchedule::kTerminal : FarSchedule::kLocal;
    if (from_parent) ++f.l2l;
  }
  // The P2M and L2P boxes, finest level first.
  auto collect = [&f, L](const tree::PointSet& X, const std::vector<uint8_t>& mode, uint8_t want, int top,
                         std::vector<int32_t>& boxes, std::vector<int8_t>& levels) {
    for (int l = L; l >= top; --l)
      for (int64_t b = X.level_offset[l]; b < X.level_offset[l + 1]; ++b)
        if (mode[size_t(b)] == want) {
          boxes.push_back(int32_t(b));
          levels.push_back(int8_t(l));
          f.max_points = std::max<int64_t>(f.max_points, X.point_end[b] - X.point_begin[b]);
        }
  };
  collect(S, f.m, FarSchedule::kP2M, 2, f.p2m, f.p2m_level);
  collect(R, f.l, FarSchedule::kTerminal, 1, f.l2p, f.l2p_level);
}

void fail_nonfinite_result(bool single, int64_t target, double pot, const double* grad) {
  std::ostringstream v;
  v << "potential " << pot;
  if (grad) v << ", gradient (" << grad[0] << ", " << grad[1] << ", " << grad[2] << ")";
  fail(GPUFMM_ERROR_ACCURACY, "the result at target ", target, " (0-based) is not finite (", v.str(),
       "): it overflows ", single ? "single" : "double",
       " precision (a source within a tiny distance of the target, e.g. a pair closer than ~1e-13 in single "
       "precision, or very large charges or dipoles); no output was written",
       single ? "; a GPUFMM_FLOAT64 plan holds it" : "");
}

}  // namespace fmm
}  // namespace gpufmm
