// The OpenMP driver of every FMM (issue 51): the passes over the tree and
// its lists, written once over an expansion type E. Every stage is a loop
// over the boxes of one level in which each box's output is written by one
// thread (gather formulation: no atomics, no reductions over boxes);
// scratch is allocated once per thread per stage, never per box.
//
//   inputs   densities -> Morton order, E's value type
//   P2M      the far schedule's P2M boxes (the leaves, and boxes with no
//            M2L source below them), at their levels
//   M2M      levels l_max-1 .. 2, children -> parent (FarSchedule::kM2M)
//   down     modified stencil: levels 1..l_max, per receiver box b
//              L_b = L2L(L_parent) + sum_TYPE1 M2L + sum_TYPE2 M2L(level l+1)
//            standard stencil: levels 2..l_max, L_b = L2L(L_parent) + sum_M2L;
//            adaptive trees: + P2L of the X rows
//   L2P      the far schedule's terminal boxes; adaptive trees: + M2P of
//            the W rows
//   P2P      the leaves' NEIGHBORS rows (adaptive: U rows), E's kernel:
//            sources gathered per target leaf into structure-of-arrays
//            scratch (the user's coordinates: each difference is one
//            rounding, as in the direct sum), nearfield::sum_sources
//   check    a result that is not finite (it overflowed the precision) is
//            GPUFMM_ERROR_ACCURACY, before any output is written
//   outputs  Morton order -> the user's order
//
// ---------------------------------------------------------------------------
// The expansion E (CPU side). An object of E is bound to a plan's tables for
// one precision; the driver calls it with a box's level and the box's
// coordinates relative to its centre (tree::box_relative, rounded to Real):
//
//   using Real, Coef, Value;      coordinates; coefficients; densities and results
//   using Kernel;                 the near-field kernel (kernels/kernel.hpp traits)
//   using LaneTables;             per-plan scratch of the batched M2L (Workspace::ext)
//   static constexpr bool kBatchedM2L;   the M2L runs kLanesOf<Coef> translations
//                                        of one class at once (m2l_lanes)
//   int64_t ncoef(int l) const;   coefficients of a box of level l
//   int64_t work_size() const;    scratch (Coef) of one translation
//   Kernel kernel() const;
//   void p2m(int l, Real h, int n, const Real* rel, const Value* q, const Value* d, Coef* M) const;
//   void p2l(int l, Real h, int n, const Real* rel, const Value* q, const Value* d, Coef* L) const;
//   void l2p(int l, Real h, const Coef* L, int n, const Real* rel, Value* pot, Value* grad, Value* hess) const;
//   void m2p(int l, Real h, const Coef* M, int n, const Real* rel, Value* pot, Value* grad, Value* hess) const;
//   void m2m(int l, int octant, const Coef* child, Coef* parent, Coef* work) const;  // l: the child's level
//   void l2l(int l, int octant, const Coef* parent, Coef* child, Coef* work) const;  // l: the child's level
//   void m2l(int l, int cls, const Coef* M, Coef* L, Coef* work) const;  // l: the receiver's level,
//                                                                         // cls: tree/stencil.hpp's class
//   with kBatchedM2L also:
//   bool batch_m2l() const;                    the batched M2L is used (else m2l one at a time)
//   void lane_tables(LaneTables& x) const;     fills x once per plan (x empty before)
//   int64_t m2l_inputs(int cls) const;         leading coefficients of M that the class reads
//   template <int W> void m2l_lanes(int l, int cls, const LaneTables& x, const Lanes<Coef, W>* in,
//                                   Lanes<Coef, W>* out, Lanes<Coef, W>* work) const;
//
// p2m and p2l add into M and L (the driver zeroes a box first where it
// starts it); l2p, m2p add into the results (null: not wanted; hess only
// when the evaluate asks for it). Everything E does inlines into the
// driver's per-ISA copies (below), so it must be inline code in headers.
//
// The library is compiled for the baseline ISA (x86-64: SSE2). The driver's
// body (fmm/pipeline_impl.hpp) is therefore compiled three times on x86 with
// GCC - generic, AVX2+FMA, AVX-512 - in the translation unit of each
// expansion that includes this header, and the copy for the running CPU is
// chosen at run time (cpu_pipeline_isa). The expansion's math inlines into
// each copy (GPUFMM_PIPELINE_FLATTEN on the calls) and vectorises for its ISA.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "fmm/lanes.hpp"
#include "fmm/plan_core.hpp"
#include "kernels/kernel.hpp"
#include "nearfield/p2p.hpp"
#include "tree/stencil.hpp"
#include "tree/tree.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GPUFMM_PIPELINE_ISA_CLONES 1
#endif

#if defined(__GNUC__)
#define GPUFMM_PIPELINE_FLATTEN __attribute__((flatten))
#else
#define GPUFMM_PIPELINE_FLATTEN
#endif

namespace gpufmm {
namespace fmm {

// Results in sorted order, nd densities one after the other (empty when not
// wanted): the first target whose potential, gradient or Hessian is not
// finite fails (fail_nonfinite_result).
template <class V>
void check_results(const PlanCore& P, int nd, const std::vector<V>& pot, const std::vector<V>& grad,
                   const std::vector<V>& hess) {
  const int64_t n = P.ntrg;
  // Values of target i, density k, finite (true for what was not computed).
  auto finite = [&](int64_t i, int k) {
    auto ok = [&](const std::vector<V>& v, int per) {
      if (v.empty()) return true;
      const size_t o = size_t(k) * per * n + size_t(per) * i;
      for (int c = 0; c < per; ++c)
        if (!std::isfinite(v[o + c])) return false;
      return true;
    };
    return ok(pot, 1) && ok(grad, 3) && ok(hess, 6);
  };
  int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n * nd >= (int64_t(1) << 15))
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < nd; ++k)
      if (!finite(i, k)) bad = std::min(bad, i);
  if (bad == n) return;
  int k = 0;
  while (finite(bad, k)) ++k;
  const size_t ip = size_t(k) * n + bad, ig = size_t(k) * 3 * n + 3 * bad;
  const double g[3] = {grad.empty() ? 0.0 : double(grad[ig]), grad.empty() ? 0.0 : double(grad[ig + 1]),
                       grad.empty() ? 0.0 : double(grad[ig + 2])};
  fail_nonfinite_result(sizeof(V) == sizeof(float), P.targets().perm[bad], pot.empty() ? 0.0 : double(pot[ip]),
                        grad.empty() ? nullptr : g);
}

namespace pipeline_generic {
#include "fmm/pipeline_impl.hpp"
}  // namespace pipeline_generic

#ifdef GPUFMM_PIPELINE_ISA_CLONES
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace pipeline_avx2 {
#include "fmm/pipeline_impl.hpp"
}  // namespace pipeline_avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,prefer-vector-width=512")
namespace pipeline_avx512 {
#include "fmm/pipeline_impl.hpp"
}  // namespace pipeline_avx512
#pragma GCC pop_options
#endif

// One evaluate of plan P with expansion ex on the CPU: host pointers, inputs
// already validated; fills P.last.
template <class E>
void run_pipeline(PlanCore& P, Workspace<typename E::Coef, typename E::Value, typename E::LaneTables>& w,
                  const E& ex, const EvalArgs& a) {
  require(!P.tree->ctx.on_gpu(), GPUFMM_ERROR_INTERNAL, "run_pipeline: the plan's tree is in device memory");
#ifdef GPUFMM_PIPELINE_ISA_CLONES
  switch (cpu_pipeline_isa_level()) {
    case 2: pipeline_avx512::run_typed<E>(P, w, ex, a); return;
    case 1: pipeline_avx2::run_typed<E>(P, w, ex, a); return;
    default: break;
  }
#endif
  pipeline_generic::run_typed<E>(P, w, ex, a);
}

}  // namespace fmm
}  // namespace gpufmm
