// The Laplace FMM as an expansion of the CPU driver (fmm/pipeline.hpp, the
// interface it asks for): p^2 real coefficients per box at every level over
// the normalised basis scaled by the box size (fmm/laplace/plan.hpp), its
// operators the shared host+device math of fmm/laplace/*.hpp on the plan's
// translation tables (every translation RCR, eq. 33), the near field the
// Laplace kernel, and the M2L batched across SIMD lanes up to
// kBatchedM2LMaxP (the tables repeated per lane once per plan).
#pragma once

#include <cstdint>

#include "fmm/lanes.hpp"
#include "fmm/laplace/math.hpp"
#include "fmm/laplace/plan.hpp"
#include "kernels/laplace.hpp"

namespace gpufmm {
namespace fmm {

template <class T>
struct LaplaceCpuExpansion {
  using Real = T;
  using Coef = T;
  using Value = T;
  using Kernel = kernels::Laplace<T>;
  using LaneTables = LaplaceLaneTables<T>;
  static constexpr bool kBatchedM2L = true;

  const LaplaceTables<T>& tab;
  int p;

  LaplaceCpuExpansion(const LaplaceTables<T>& t, int p_) : tab(t), p(p_) {}

  int64_t ncoef(int) const { return int64_t(p) * p; }
  int64_t work_size() const { return laplace_apply_work_size(p); }
  Kernel kernel() const { return Kernel(); }

  // The walk's coefficient table (the same values as computed per point).
  static const LaplaceWalkCoef<T>* walk_coef() {
    static const LaplaceWalkCoef<T> c = [] {
      LaplaceWalkCoef<T> t;
      laplace_walk_coef_fill(t);
      return t;
    }();
    return &c;
  }

  void p2m(int, T h, int n, const T* rel, const T* q, const T* d, T* M) const {
    const T zero[3] = {T(0), T(0), T(0)};
    laplace_p2m<T>(p, h, zero, n, rel, q, d, M, walk_coef());
  }
  void p2l(int, T h, int n, const T* rel, const T* q, const T* d, T* L) const {
    const T zero[3] = {T(0), T(0), T(0)};
    laplace_p2l<T>(p, h, zero, n, rel, q, d, L, walk_coef());
  }
  void l2p(int, T h, const T* L, int n, const T* rel, T* pot, T* grad, T* hess) const {
    const T zero[3] = {T(0), T(0), T(0)};
    laplace_l2p<T>(p, h, zero, L, n, rel, pot, grad, walk_coef(), hess);
  }
  void m2p(int, T h, const T* M, int n, const T* rel, T* pot, T* grad, T* hess) const {
    const T zero[3] = {T(0), T(0), T(0)};
    laplace_m2p<T>(p, h, zero, M, n, rel, pot, grad, walk_coef(), hess);
  }

  // Translation op of the tables (plan.hpp), at its truncation number pp.
  void rcr(int op, int pp, const T* in, T* out, T* work) const {
    laplace_rcr_apply<T>(pp, pp, tab.op_cos_a[op], tab.op_sin_a[op], tab.rotation(op), tab.op_flip[op] != 0,
                         tab.coax_matrix(op), in, out, work);
  }
  void m2m(int, int octant, const T* child, T* parent, T* work) const { rcr(kOpM2M + octant, p, child, parent, work); }
  void l2l(int, int octant, const T* parent, T* child, T* work) const { rcr(kOpL2L + octant, p, parent, child, work); }
  void m2l(int, int cls, const T* M, T* L, T* work) const { rcr(cls, tab.op_p[cls], M, L, work); }

  // The batched M2L (p <= kBatchedM2LMaxP: above it the lane tables, W x
  // the scalar ones, outgrow the caches).
  bool batch_m2l() const { return p <= kBatchedM2LMaxP; }
  int64_t m2l_inputs(int cls) const { return int64_t(tab.op_p[cls]) * tab.op_p[cls]; }
  void lane_tables(LaneTables& x) const {
    constexpr int kW = kLanesOf<T>;
    if (tab.rot.empty()) return;
    x.rot.resize(tab.rot.size() * kW);
    x.coax.resize(tab.coax.size() * kW);
    for (size_t i = 0; i < tab.rot.size(); ++i)
      for (int k = 0; k < kW; ++k) x.rot[i * kW + k] = tab.rot[i];
    for (size_t i = 0; i < tab.coax.size(); ++i)
      for (int k = 0; k < kW; ++k) x.coax[i * kW + k] = tab.coax[i];
  }
  template <int W>
  void m2l_lanes(int, int cls, const LaneTables& x, const Lanes<T, W>* in, Lanes<T, W>* out,
                 Lanes<T, W>* work) const {
    static_assert(W == kLanesOf<T>, "lane tables are built for kLanesOf<T> lanes");
    const Lanes<T, W>* rot = reinterpret_cast<const Lanes<T, W>*>(x.rot.data());
    const Lanes<T, W>* coax = reinterpret_cast<const Lanes<T, W>*>(x.coax.data());
    const int pp = tab.op_p[cls];
    laplace_rcr_apply<Lanes<T, W>>(pp, pp, Lanes<T, W>(tab.op_cos_a[cls]), Lanes<T, W>(tab.op_sin_a[cls]),
                                   rot + size_t(tab.op_rot[cls]) * tab.rot_stride, tab.op_flip[cls] != 0,
                                   coax + tab.coax_offset[tab.op_coax[cls]], in, out, work);
  }
};

}  // namespace fmm
}  // namespace gpufmm
