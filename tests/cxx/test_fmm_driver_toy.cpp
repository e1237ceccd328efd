// Issue 51: a second expansion through the FMM driver (fmm/pipeline.hpp) on
// the CPU, with no edit to the driver: the Laplace kernel expanded in
// complex solid harmonics (complex coefficients, a degree per level, no
// batched M2L, no scaling by the box size), with the textbook addition
// theorems of common/solid_harmonics.hpp, independent of fmm/laplace/*.hpp.
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
#include <cstdint>
#include <vector>

#include "common/distributions.hpp"
#include "common/rel_l2.hpp"
#include "common/solid_harmonics.hpp"
#include "common/test_seed.hpp"
#include "core/context.hpp"
#include "fmm/laplace/plan.hpp"
#include "fmm/pipeline.hpp"
#include "tree/stencil.hpp"

namespace {

using namespace gpufmm;
using toy_fmm::Cx;

struct NoLanes {
  std::vector<double> rot, coax;  // unused: no batched M2L
};

// The toy expansion through the CPU driver's interface (fmm/pipeline.hpp):
// degrees n <= deg[l] at level l, the math of common/solid_harmonics.hpp.
struct SolidHarmonics {
  using Real = double;
  using Coef = Cx;
  using Value = double;
  using Kernel = kernels::Laplace<double>;
  using LaneTables = NoLanes;
  static constexpr bool kBatchedM2L = false;

  double side;           // the tree's cube
  std::vector<int> deg;  // per level

  int64_t ncoef(int l) const { return toy_fmm::nterms(deg[size_t(l)]); }
  int64_t work_size() const { return toy_fmm::kMaxTerms; }
  Kernel kernel() const { return Kernel(); }
  double h(int l) const { return std::ldexp(side, -l); }  // tree::box_size

  void p2m(int l, double, int n, const double* rel, const double* q, const double* d, Cx* M) const {
    EXPECT_TRUE(d == nullptr);  // charges only
    Cx w[toy_fmm::kMaxTerms];
    for (int j = 0; j < n; ++j) toy_fmm::p2m(deg[size_t(l)], rel + 3 * j, q[j], M, w);
  }
  void p2l(int l, double, int n, const double* rel, const double* q, const double*, Cx* L) const {
    Cx w[toy_fmm::kMaxTerms];
    for (int j = 0; j < n; ++j) toy_fmm::p2l(deg[size_t(l)], rel + 3 * j, q[j], L, w);
  }
  void l2p(int l, double, const Cx* L, int n, const double* rel, double* pot, double* grad, double*) const {
    EXPECT_TRUE(grad == nullptr);  // potential only
    Cx w[toy_fmm::kMaxTerms];
    for (int j = 0; j < n; ++j) pot[j] += toy_fmm::l2p(deg[size_t(l)], L, rel + 3 * j, w);
  }
  void m2p(int l, double, const Cx* M, int n, const double* rel, double* pot, double*, double*) const {
    Cx w[toy_fmm::kMaxTerms];
    for (int j = 0; j < n; ++j) pot[j] += toy_fmm::m2p(deg[size_t(l)], M, rel + 3 * j, w);
  }
  // Centre of the child of octant o minus its parent's (child at level l).
  void octant_shift(int l, int o, double* v) const {
    for (int k = 0; k < 3; ++k) v[k] = ((o >> k) & 1 ? 0.5 : -0.5) * h(l);
  }
  void m2m(int l, int o, const Cx* child, Cx* parent, Cx* w) const {
    double v[3];
    octant_shift(l, o, v);
    toy_fmm::m2m(deg[size_t(l)], deg[size_t(l - 1)], v, child, parent, w);
  }
  void l2l(int l, int o, const Cx* parent, Cx* child, Cx* w) const {
    double v[3];
    octant_shift(l, o, v);
    toy_fmm::l2l(deg[size_t(l - 1)], deg[size_t(l)], v, parent, child, w);
  }
  void m2l(int l, int cls, const Cx* M, Cx* L, Cx* w) const {
    bool to_parent = false;
    double off[3], eta = 0;
    ASSERT_TRUE(tree::decode_class(cls, to_parent, off, eta));
    const int ls = to_parent ? l + 1 : l;  // the source's level
    const double v[3] = {-off[0] * h(ls), -off[1] * h(ls), -off[2] * h(ls)};
    toy_fmm::m2l(deg[size_t(ls)], deg[size_t(l)], v, M, L, w);
  }
};

using ToyWorkspace = fmm::Workspace<Cx, double, NoLanes>;

struct Case {
  int tree;  // gpufmm_laplace_tree_t
  bool plummer;
  bool separate_targets;
};

class FmmDriverToy : public ::testing::TestWithParam<Case> {};

std::vector<double> points(bool plummer, int64_t n, uint64_t seed) {
  return plummer ? gpufmm_test::plummer(n, seed) : gpufmm_test::uniform_cube(n, seed);
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
  const std::vector<double> ref = toy_fmm::direct_potential(x, q, y);

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
