// Issue 51: a second expansion through the FMM driver (fmm/pipeline.hpp) on
// the CPU, with no edit to the driver: the Laplace kernel expanded in
// complex solid harmonics (complex coefficients, a degree per level, no
// batched M2L, no scaling by the box size), with the textbook addition
// theorems written here from scratch, independently of fmm/laplace/*.hpp.
//
// With one degree at every level and no reduced truncation, the real RCR
// basis of the Laplace FMM and this one span the same truncated expansions
// and translate them exactly, so the two FMMs on the same plan (tree, lists,
// far schedule) agree to rounding; with a degree per level the error
// against the double direct sum falls with the degrees. Uniform and
// adaptive (Plummer) trees, separate targets, fresh seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <complex>
#include <cstdint>
#include <vector>

#include "common/distributions.hpp"
#include "common/rel_l2.hpp"
#include "common/test_seed.hpp"
#include "core/context.hpp"
#include "fmm/laplace/plan.hpp"
#include "fmm/pipeline.hpp"
#include "tree/stencil.hpp"

namespace {

using namespace gpufmm;
using cplx = std::complex<double>;

inline int idx(int n, int m) { return n * n + n + m; }

// Regular R_n^m(v) = r^n P_n^m(cos t) e^{i m phi} / (n + m)! and irregular
// I_n^m(v) = (n - m)! P_n^m(cos t) e^{i m phi} / r^{n + 1} (Condon-Shortley
// phase; R_n^{-m} = (-1)^m conj R_n^m, the same for I), degrees n <= p, so
// that 1/|x - y| = sum conj(R_n^m(y)) I_n^m(x) (|y| < |x|),
// R_n^m(a + b) = sum_{k,l} R_k^l(a) R_{n-k}^{m-l}(b) and
// I_n^m(x - y) = sum_{k,l} conj(R_k^l(y)) I_{n+k}^{m+l}(x).
void regular(int p, const double* v, cplx* out) {
  const double x = v[0], y = v[1], z = v[2], r2 = x * x + y * y + z * z;
  out[0] = 1;
  for (int m = 0; m <= p; ++m) {
    if (m > 0) out[idx(m, m)] = -cplx(x, y) / double(2 * m) * out[idx(m - 1, m - 1)];
    if (m + 1 <= p) out[idx(m + 1, m)] = z * out[idx(m, m)];
    for (int n = m + 2; n <= p; ++n)
      out[idx(n, m)] = (double(2 * n - 1) * z * out[idx(n - 1, m)] - r2 * out[idx(n - 2, m)]) / double((n + m) * (n - m));
  }
  for (int n = 1; n <= p; ++n)
    for (int m = 1; m <= n; ++m) out[idx(n, -m)] = (m % 2 ? -1.0 : 1.0) * std::conj(out[idx(n, m)]);
}

void irregular(int p, const double* v, cplx* out) {
  const double x = v[0], y = v[1], z = v[2], r2 = x * x + y * y + z * z;
  out[0] = 1 / std::sqrt(r2);
  for (int m = 0; m <= p; ++m) {
    if (m > 0) out[idx(m, m)] = -double(2 * m - 1) * cplx(x, y) / r2 * out[idx(m - 1, m - 1)];
    if (m + 1 <= p) out[idx(m + 1, m)] = double(2 * m + 1) * z / r2 * out[idx(m, m)];
    for (int n = m + 2; n <= p; ++n)
      out[idx(n, m)] =
          (double(2 * n - 1) * z * out[idx(n - 1, m)] - double((n - 1) * (n - 1) - m * m) * out[idx(n - 2, m)]) / r2;
  }
  for (int n = 1; n <= p; ++n)
    for (int m = 1; m <= n; ++m) out[idx(n, -m)] = (m % 2 ? -1.0 : 1.0) * std::conj(out[idx(n, m)]);
}

struct NoLanes {
  std::vector<double> rot, coax;  // unused: no batched M2L
};

// The toy expansion (the driver's interface, fmm/pipeline.hpp): multipole
// M_n^m = sum q conj(R_n^m(x - c)), phi = sum M I(y - c); local
// phi(y) = sum L_n^m conj(R_n^m(y - c)); degrees n <= deg[l] at level l.
struct SolidHarmonics {
  using Real = double;
  using Coef = cplx;
  using Value = double;
  using Kernel = kernels::Laplace<double>;
  using LaneTables = NoLanes;
  static constexpr bool kBatchedM2L = false;

  double side;           // the tree's cube
  std::vector<int> deg;  // per level

  int64_t ncoef(int l) const { return int64_t(deg[size_t(l)] + 1) * (deg[size_t(l)] + 1); }
  int64_t work_size() const { return 0; }
  Kernel kernel() const { return Kernel(); }
  double h(int l) const { return std::ldexp(side, -l); }  // tree::box_size

  void p2m(int l, double, int n, const double* rel, const double* q, const double* d, cplx* M) const {
    EXPECT_TRUE(d == nullptr);  // charges only
    std::vector<cplx> R(size_t(ncoef(l)));
    for (int j = 0; j < n; ++j) {
      regular(deg[size_t(l)], rel + 3 * j, R.data());
      for (size_t k = 0; k < R.size(); ++k) M[k] += q[j] * std::conj(R[k]);
    }
  }
  void p2l(int l, double, int n, const double* rel, const double* q, const double*, cplx* L) const {
    std::vector<cplx> I(size_t(ncoef(l)));
    for (int j = 0; j < n; ++j) {
      const double v[3] = {-rel[3 * j], -rel[3 * j + 1], -rel[3 * j + 2]};  // centre - source
      irregular(deg[size_t(l)], v, I.data());
      for (int a = 0; a <= deg[size_t(l)]; ++a)
        for (int b = -a; b <= a; ++b) L[idx(a, b)] += (a % 2 ? -1.0 : 1.0) * q[j] * I[size_t(idx(a, b))];
    }
  }
  void l2p(int l, double, const cplx* L, int n, const double* rel, double* pot, double* grad, double*) const {
    EXPECT_TRUE(grad == nullptr);  // potential only
    std::vector<cplx> R(size_t(ncoef(l)));
    for (int j = 0; j < n; ++j) {
      regular(deg[size_t(l)], rel + 3 * j, R.data());
      cplx s = 0;
      for (size_t k = 0; k < R.size(); ++k) s += L[k] * std::conj(R[k]);
      pot[j] += s.real();
    }
  }
  void m2p(int l, double, const cplx* M, int n, const double* rel, double* pot, double*, double*) const {
    std::vector<cplx> I(size_t(ncoef(l)));
    for (int j = 0; j < n; ++j) {
      irregular(deg[size_t(l)], rel + 3 * j, I.data());
      cplx s = 0;
      for (size_t k = 0; k < I.size(); ++k) s += M[k] * I[k];
      pot[j] += s.real();
    }
  }
  // Centre of the child of octant o minus its parent's (child at level l).
  void octant_shift(int l, int o, double* v) const {
    for (int k = 0; k < 3; ++k) v[k] = ((o >> k) & 1 ? 0.5 : -0.5) * h(l);
  }
  // M about the child c (level l) -> about the parent c': sum M_k^j conj(R_{n-k}^{m-j}(c - c')).
  void m2m(int l, int o, const cplx* child, cplx* parent, cplx*) const {
    double v[3];
    octant_shift(l, o, v);
    const int pc = deg[size_t(l)], pp = deg[size_t(l - 1)];
    std::vector<cplx> R(size_t((pp + 1) * (pp + 1)));
    regular(pp, v, R.data());
    for (int n = 0; n <= pp; ++n)
      for (int m = -n; m <= n; ++m)
        for (int k = 0; k <= std::min(n, pc); ++k)
          for (int j = -k; j <= k; ++j)
            if (std::abs(m - j) <= n - k) parent[idx(n, m)] += child[idx(k, j)] * std::conj(R[size_t(idx(n - k, m - j))]);
  }
  // L about the parent c' -> about the child c'' (level l): sum_{j >= k} L_j^i conj(R_{j-k}^{i-l}(c'' - c')).
  void l2l(int l, int o, const cplx* parent, cplx* child, cplx*) const {
    double v[3];
    octant_shift(l, o, v);
    const int pc = deg[size_t(l)], pp = deg[size_t(l - 1)];
    std::vector<cplx> R(size_t((pp + 1) * (pp + 1)));
    regular(pp, v, R.data());
    for (int k = 0; k <= pc; ++k)
      for (int m = -k; m <= k; ++m)
        for (int j = k; j <= pp; ++j)
          for (int i = -j; i <= j; ++i)
            if (std::abs(i - m) <= j - k) child[idx(k, m)] += parent[idx(j, i)] * std::conj(R[size_t(idx(j - k, i - m))]);
  }
  // L_j^i = (-1)^j sum M_k^l I_{k+j}^{l+i}(c' - c), c' the receiver's centre (level l).
  void m2l(int l, int cls, const cplx* M, cplx* L, cplx*) const {
    bool to_parent = false;
    double off[3], eta = 0;
    ASSERT_TRUE(tree::decode_class(cls, to_parent, off, eta));
    const int ls = to_parent ? l + 1 : l;  // the source's level
    const double v[3] = {-off[0] * h(ls), -off[1] * h(ls), -off[2] * h(ls)};
    const int pm = deg[size_t(ls)], pl = deg[size_t(l)];
    std::vector<cplx> I(size_t((pm + pl + 1) * (pm + pl + 1)));
    irregular(pm + pl, v, I.data());
    for (int j = 0; j <= pl; ++j)
      for (int i = -j; i <= j; ++i) {
        cplx s = 0;
        for (int k = 0; k <= pm; ++k)
          for (int a = -k; a <= k; ++a) s += M[idx(k, a)] * I[size_t(idx(k + j, a + i))];
        L[idx(j, i)] += (j % 2 ? -1.0 : 1.0) * s;
      }
  }
};

using ToyWorkspace = fmm::Workspace<cplx, double, NoLanes>;

struct Case {
  int tree;  // gpufmm_laplace_tree_t
  bool plummer;
  bool separate_targets;
};

class FmmDriverToy : public ::testing::TestWithParam<Case> {};

std::vector<double> points(bool plummer, int64_t n, uint64_t seed) {
  return plummer ? gpufmm_test::plummer(n, seed) : gpufmm_test::uniform_cube(n, seed);
}

std::vector<double> direct(const std::vector<double>& x, const std::vector<double>& q, const std::vector<double>& y) {
  std::vector<double> pot(y.size() / 3, 0.0);
  for (size_t i = 0; i < pot.size(); ++i)
    for (size_t j = 0; j < q.size(); ++j) {
      const double dx = y[3 * i] - x[3 * j], dy = y[3 * i + 1] - x[3 * j + 1], dz = y[3 * i + 2] - x[3 * j + 2];
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 > 0) pot[i] += q[j] / std::sqrt(r2);
    }
  return pot;
}

// The Laplace plan's geometry evaluated by the toy expansion (degrees deg).
std::vector<double> toy_evaluate(fmm::LaplacePlan& plan, const std::vector<int>& deg, const std::vector<double>& q) {
  SolidHarmonics toy{plan.tree->cube.side, deg};
  toy.deg.resize(size_t(plan.l_max) + 2, deg.back());
  ToyWorkspace ws;
  std::vector<double> pot(size_t(plan.ntrg));
  fmm::EvalArgs a;
  a.charges = q.data();
  a.pot = pot.data();
  fmm::run_pipeline(plan, ws, toy, a);
  return pot;
}

TEST_P(FmmDriverToy, SecondExpansionThroughTheDriver) {
  const Case c = GetParam();
  const uint64_t seed = gpufmm_test::fresh_test_seed("FmmDriverToy");
  const int64_t n = 3000, nt = c.separate_targets ? 1200 : 0;
  const std::vector<double> x = points(c.plummer, n, seed);
  const std::vector<double> y = c.separate_targets ? points(!c.plummer, nt, seed + 1) : x;
  gpufmm_test::Rng r(seed + 2);
  std::vector<double> q(static_cast<size_t>(n));
  for (auto& v : q) v = 2 * r.uniform() - 1;
  const std::vector<double> ref = direct(x, q, y);

  Context ctx;
  fmm::LaplaceOptions o;
  o.p = 9;  // degrees n < 9
  o.variable_truncation = false;
  o.calibrate = false;
  o.tree = c.tree;
  auto plan = fmm::laplace_plan_create(ctx, o, n, x.data(), nt, c.separate_targets ? y.data() : nullptr);
  ASSERT_GE(plan->l_max, 2) << "the far field must run";
  ASSERT_EQ(plan->p, 9);
  std::vector<double> lap(size_t(plan->ntrg));
  fmm::EvalArgs a;
  a.charges = q.data();
  a.pot = lap.data();
  fmm::laplace_evaluate(*plan, a);

  // One degree (8) everywhere: the same truncated FMM as the real basis.
  const std::vector<double> same = toy_evaluate(*plan, {8}, q);
  const double e_lap = gpufmm_test::rel_l2(lap, ref);
  EXPECT_LE(gpufmm_test::rel_l2(same, lap), 1e-11) << "toy vs Laplace FMM; their error vs direct " << e_lap;
  EXPECT_GT(e_lap, 1e-11) << "a far field that did nothing would agree too";

  // A degree per level (coarse levels, whose translations span further,
  // keep more terms): the error falls with the degrees.
  std::vector<int> low(size_t(plan->l_max) + 1), high(low.size());
  for (size_t l = 0; l < low.size(); ++l) {
    low[l] = 3 + int(l % 2);
    high[l] = 10 + int(l % 2);
  }
  const double e_low = gpufmm_test::rel_l2(toy_evaluate(*plan, low, q), ref);
  const double e_high = gpufmm_test::rel_l2(toy_evaluate(*plan, high, q), ref);
  std::printf("l_max %d: Laplace FMM (p = 9) %.2e; toy, degree 8: %.2e from it; degrees 3-4: %.2e, 10-11: %.2e\n",
              plan->l_max, e_lap, gpufmm_test::rel_l2(same, lap), e_low, e_high);
  EXPECT_LE(e_low, 2e-2);
  EXPECT_LT(e_high, e_low / 100) << e_low;
  EXPECT_LT(e_high, e_lap) << "degrees 10-11 against the Laplace FMM's 8";
}

INSTANTIATE_TEST_SUITE_P(Trees, FmmDriverToy,
                         ::testing::Values(Case{GPUFMM_LAPLACE_TREE_UNIFORM, false, false},
                                           Case{GPUFMM_LAPLACE_TREE_UNIFORM, false, true},
                                           Case{GPUFMM_LAPLACE_TREE_ADAPTIVE, true, false},
                                           Case{GPUFMM_LAPLACE_TREE_ADAPTIVE, true, true}));

}  // namespace
