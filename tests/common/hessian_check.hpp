// Shared checks of the Laplace Hessians and nd densities
// (gpufmm_laplace_evaluate_nd, gpufmm_laplace_direct_nd): problems with nd
// interleaved densities (FMM3D's layout) and their errors against the
// double direct sum on a CPU context. Used by tests/cxx/test_laplace_hessian.cpp
// and, on a GPU context, tests/cuda/test_cuda_laplace_hessian.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/distributions.hpp"
#include "gpufmm.h"

namespace gpufmm_test {

enum SourceKind { kCharges = 0, kDipoles = 1, kBoth = 2 };
inline const char* source_kind_name(int k) { return k == kCharges ? "charges" : k == kDipoles ? "dipoles" : "both"; }

struct NdProblem {
  int64_t ns = 0, nt = 0;
  int nd = 1;
  int kind = kBoth;
  bool same = true;
  std::vector<double> src, trg, q, d;  // q: nd x ns, d: nd x 3 x ns (interleaved)
  const double* targets() const { return same ? nullptr : trg.data(); }
  const double* target_xyz() const { return same ? src.data() : trg.data(); }
  const double* charges() const { return kind != kDipoles ? q.data() : nullptr; }
  const double* dipoles() const { return kind != kCharges ? d.data() : nullptr; }
};

inline NdProblem make_nd_problem(Dist dist, int64_t ns, int64_t nt, int nd, int kind, uint64_t seed) {
  NdProblem p;
  p.ns = ns;
  p.same = nt < 0;
  p.nt = p.same ? ns : nt;
  p.nd = nd;
  p.kind = kind;
  p.src = make_points(dist, ns, seed);
  if (!p.same) p.trg = make_points(dist, p.nt, seed ^ 0x5bd1e995u);
  Rng r(seed + 17);
  p.q.resize(static_cast<size_t>(nd * ns));
  p.d.resize(static_cast<size_t>(3 * nd * ns));
  for (auto& v : p.q) v = 2 * r.uniform() - 1;
  for (auto& v : p.d) v = 2 * r.uniform() - 1;
  return p;
}

struct NdOutputs {
  std::vector<double> pot, grad, hess;
  explicit NdOutputs(const NdProblem& p, bool hess_wanted = true)
      : pot(size_t(p.nd * p.nt), 0.0), grad(size_t(3 * p.nd * p.nt), 0.0),
        hess(hess_wanted ? size_t(6 * p.nd * p.nt) : 0, 0.0) {}
  double* h() { return hess.empty() ? nullptr : hess.data(); }
};

struct NdErrors {
  double pot = 0, grad = 0, hess = 0;
  gpufmm_status_t status = GPUFMM_SUCCESS;
};

// Relative L2 errors (papers/000 eq. 36, over every density) of out at up
// to m evenly spaced targets, against gpufmm_laplace_direct_nd in double on
// the CPU context ref.
inline NdErrors nd_errors(gpufmm_context_t ref, const NdProblem& p, const NdOutputs& out, int64_t m = -1) {
  NdErrors e;
  m = m < 0 ? p.nt : std::min(m, p.nt);
  const int nd = p.nd;
  std::vector<int64_t> idx(static_cast<size_t>(m));
  std::vector<double> ts(static_cast<size_t>(3 * m));
  for (int64_t i = 0; i < m; ++i) {
    idx[i] = i * p.nt / m;
    for (int k = 0; k < 3; ++k) ts[3 * i + k] = p.target_xyz()[3 * idx[i] + k];
  }
  std::vector<double> pe(size_t(nd * m)), ge(size_t(3 * nd * m)), he(size_t(6 * nd * m));
  e.status = gpufmm_laplace_direct_nd(ref, GPUFMM_FLOAT64, nd, p.ns, p.src.data(), p.charges(), p.dipoles(), m,
                                      ts.data(), pe.data(), ge.data(), out.hess.empty() ? nullptr : he.data());
  auto err = [&](const std::vector<double>& a, const std::vector<double>& b, int per) {
    double e2 = 0, n2 = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int c = 0; c < per * nd; ++c) {
        const double x = a[size_t(idx[i]) * per * nd + c], y = b[size_t(i) * per * nd + c];
        e2 += (x - y) * (x - y);
        n2 += y * y;
      }
    return std::sqrt(e2 / n2);
  };
  e.pot = err(out.pot, pe, 1);
  e.grad = err(out.grad, ge, 3);
  if (!out.hess.empty()) e.hess = err(out.hess, he, 6);
  return e;
}

}  // namespace gpufmm_test
