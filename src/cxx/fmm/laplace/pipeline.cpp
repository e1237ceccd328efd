// The OpenMP pipeline of the Laplace FMM (issue 4). Every stage is a loop
// over the boxes of one level in which each box's output is written by one
// thread (gather formulation: no atomics, no reductions over boxes); scratch
// is allocated once per thread per stage, never per box. The math is the
// shared host+device code of fmm/laplace*.hpp; the data layout is described
// in fmm/laplace/plan.hpp.
//
//   inputs   charges / dipoles -> Morton order, precision T
//   P2M      leaves (level l_max) of the source tree
//   M2M      levels l_max-1 .. 2, children -> parent
//   down     modified stencil: levels 1..l_max, per receiver box b
//              L_b = L2L(L_parent) + sum_TYPE1 M2L + sum_TYPE2 M2L(level l+1)
//            standard stencil: levels 2..l_max, L_b = L2L(L_parent) + sum_M2L
//   L2P      leaves of the target tree (potential and/or gradient)
//   P2P      leaves: NEIGHBORS sources gathered per target leaf into
//            structure-of-arrays scratch (the user's coordinates: each
//            difference is one rounding, as in the direct sum), vectorised
//            inner loop over the sources
//   check    a potential or gradient that is not finite (it overflowed the
//            precision) is GPUFMM_ERROR_ACCURACY, before any output is written
//   outputs  Morton order -> the user's order
//
// The library is compiled for the baseline ISA (x86-64: SSE2). The pipeline
// body (pipeline_impl.hpp) is therefore compiled three times on x86
// with GCC - generic, AVX2+FMA, AVX-512 - and the copy for the running CPU is
// chosen once at run time (GPUFMM_CPU_ISA=generic|avx2 forces a lower one).
// The math templates inline into each copy and vectorise for its ISA.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "fmm/laplace/math.hpp"
#include "fmm/laplace/plan.hpp"
#include "nearfield/p2p.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GPUFMM_LAPLACE_ISA_CLONES 1
#include <cstdlib>
#include <string>
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
template <class T>
void check_results(const LaplacePlan& P, int nd, const std::vector<T>& pot, const std::vector<T>& grad,
                   const std::vector<T>& hess) {
  const int64_t n = P.ntrg;
  // Values of target i, density k, finite (true for what was not computed).
  auto finite = [&](int64_t i, int k) {
    auto ok = [&](const std::vector<T>& v, int per) {
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
  fail_nonfinite_result(P, P.targets().perm[bad], pot.empty() ? 0.0 : double(pot[ip]), grad.empty() ? nullptr : g);
}

// W translations of ONE class at once (SIMD across translations): the math
// templates run on Lanes<T, W>, a value of W independent lanes, so every
// multiply-add of the rotations and the coaxial matrix is a W-wide vector
// operation with the same per-lane arithmetic as the scalar code (the
// reductions inside the math, which the compiler may not reorder, become W
// independent chains). The class's tables are broadcast to Lanes once per
// plan (LaplaceWorkspace::rot_lanes / coax_lanes).
template <class T, int W>
struct Lanes {
  T v[W];
  Lanes() = default;
  Lanes(T s) {  // NOLINT: implicit broadcast, as the math writes T(0), T(1)
    for (int i = 0; i < W; ++i) v[i] = s;
  }
  Lanes& operator+=(const Lanes& o) {
    for (int i = 0; i < W; ++i) v[i] += o.v[i];
    return *this;
  }
  Lanes& operator-=(const Lanes& o) {
    for (int i = 0; i < W; ++i) v[i] -= o.v[i];
    return *this;
  }
  Lanes& operator*=(const Lanes& o) {
    for (int i = 0; i < W; ++i) v[i] *= o.v[i];
    return *this;
  }
  friend Lanes operator+(Lanes a, const Lanes& b) { return a += b; }
  friend Lanes operator-(Lanes a, const Lanes& b) { return a -= b; }
  friend Lanes operator*(Lanes a, const Lanes& b) { return a *= b; }
  friend Lanes operator-(Lanes a) {
    for (int i = 0; i < W; ++i) a.v[i] = -a.v[i];
    return a;
  }
};

namespace pipeline_generic {
#include "fmm/laplace/pipeline_impl.hpp"
}  // namespace pipeline_generic

#ifdef GPUFMM_LAPLACE_ISA_CLONES
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace pipeline_avx2 {
#include "fmm/laplace/pipeline_impl.hpp"
}  // namespace pipeline_avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,prefer-vector-width=512")
namespace pipeline_avx512 {
#include "fmm/laplace/pipeline_impl.hpp"
}  // namespace pipeline_avx512
#pragma GCC pop_options
#endif

namespace {

// The best the CPU supports, at most `cap` (LaplaceOptions::cpu_isa): 0
// generic, 1 AVX2 + FMA, 2 AVX-512 (F, VL, DQ, BW).
int cpu_isa_level(LaplaceCpuIsa cap) {
#ifdef GPUFMM_LAPLACE_ISA_CLONES
  static const int level = [] {
    __builtin_cpu_init();
    int l = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) l = 1;
    if (l == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
      l = 2;
    return l;
  }();
  return std::min(level, static_cast<int>(cap));
#else
  (void)cap;
  return 0;
#endif
}

template <class T>
void dispatch(LaplacePlan& plan, LaplaceWorkspace<T>& w, const LaplaceTables<T>& tab,
              const LaplaceEvalArgs& a) {
#ifdef GPUFMM_LAPLACE_ISA_CLONES
  switch (cpu_isa_level(plan.options.cpu_isa)) {
    case 2: pipeline_avx512::run_typed<T>(plan, w, tab, a); return;
    case 1: pipeline_avx2::run_typed<T>(plan, w, tab, a); return;
    default: break;
  }
#endif
  pipeline_generic::run_typed<T>(plan, w, tab, a);
}

}  // namespace

const char* laplace_cpu_isa(LaplaceCpuIsa cap) {
  switch (cpu_isa_level(cap)) {
    case 2: return "avx512";
    case 1: return "avx2";
    default: return "generic";
  }
}

void laplace_evaluate_cpu(LaplacePlan& plan, const LaplaceEvalArgs& a) {
  require(!plan.tree->ctx.on_gpu(), GPUFMM_ERROR_INTERNAL,
          "laplace_evaluate_cpu: the plan's tree is in device memory");
  if (plan.single())
    dispatch<float>(plan, plan.ws_f, *plan.tables_f, a);
  else
    dispatch<double>(plan, plan.ws_d, *plan.tables_d, a);
}

}  // namespace fmm
}  // namespace gpufmm
