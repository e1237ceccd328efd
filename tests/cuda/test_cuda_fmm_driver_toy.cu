// Issue 51: a second expansion through the CUDA FMM driver
// (cuda/fmm/eval.cuh), with no edit to the driver: the complex solid
// harmonics of common/solid_harmonics.hpp (the CPU toy's math, here in
// device code) on a Laplace plan's geometry (tree, lists, sorted
// coordinates), with its own device data (DriverData), kernels of one
// thread per box and its own near field. Its stages run through the
// driver's streams, staging, checks and CUDA graph.
//
// At one degree everywhere and no reduced truncation it equals the Laplace
// FMM on the same GPU plan to rounding; with a degree per level its error
// against the double direct sum falls with the degrees. Uniform trees, same
// and separate targets, both stencils, graph replay, fresh seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/distributions.hpp"
#include "common/gpu_cpu_fixture.hpp"
#include "common/rel_l2.hpp"
#include "common/solid_harmonics.hpp"
#include "common/test_seed.hpp"
#include "core/handles.hpp"
#include "cuda/fmm/eval.cuh"
#include "fmm/laplace/plan.hpp"

namespace {

using namespace gpufmm;
using toy_fmm::Cx;

// The toy's part of the graph's key: what changes the work it enqueues (its
// degrees per level, a parameter of its kernels), and the graph switch.
struct ToyKey {
  bool graph = true;  // the driver's CUDA graph
  int deg[GPUFMM_TREE_MAX_LEVEL + 1] = {};
  bool operator==(const ToyKey& o) const { return graph == o.graph && std::equal(deg, deg + GPUFMM_TREE_MAX_LEVEL + 1, o.deg); }
};
using ToyData = fmm::cuda::DriverData<ToyKey>;

// Box b of level l: coefficients at base[l] + b n[l] (fmm::CoefLayout), degree deg[l].
struct Layout {
  int64_t base[GPUFMM_TREE_MAX_LEVEL + 2];
  int64_t n[GPUFMM_TREE_MAX_LEVEL + 1];
  int deg[GPUFMM_TREE_MAX_LEVEL + 2];
  __device__ Cx* at(Cx* c, int64_t b, int l) const { return c + base[l] + b * n[l]; }
};

__device__ void diff(const double* a, const double* b, double* v) {
  for (int k = 0; k < 3; ++k) v[k] = a[k] - b[k];
}

__global__ void k_p2m(int64_t b0, int64_t nb, int l, const int32_t* pb, const int32_t* pe, const double* center,
                      const double* xyz, const double* q, Cx* M, Layout ly) {
  Cx w[toy_fmm::kMaxTerms];
  for (int64_t b = b0 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < b0 + nb; b += int64_t(gridDim.x) * blockDim.x) {
    Cx* Mb = ly.at(M, b, l);
    for (int32_t i = pb[b]; i < pe[b]; ++i) {
      double v[3];
      diff(xyz + 3 * i, center + 3 * b, v);
      toy_fmm::p2m(ly.deg[l], v, q[i], Mb, w);
    }
  }
}

__global__ void k_m2m(int64_t b0, int64_t nb, int l, const int32_t* child_offset, const double* center, Cx* M,
                      Layout ly) {
  Cx w[toy_fmm::kMaxTerms];
  for (int64_t b = b0 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < b0 + nb; b += int64_t(gridDim.x) * blockDim.x)
    for (int32_t c = child_offset[b]; c < child_offset[b + 1]; ++c) {
      double v[3];
      diff(center + 3 * c, center + 3 * b, v);
      toy_fmm::m2m(ly.deg[l + 1], ly.deg[l], v, ly.at(M, c, l + 1), ly.at(M, b, l), w);
    }
}

struct ToyList {
  const int64_t* off;
  const int32_t* index;
  int source_level_shift;  // 1: type 2 (sources one level finer)
};

// Receivers of level l: L2L from the parent, then the M2L of up to two lists.
__global__ void k_down(int64_t b0, int64_t nb, int l, const int32_t* parent, const double* rc, const double* sc,
                       ToyList a, ToyList b2, int nlists, const Cx* M, Cx* L, uint8_t* hl, Layout ms, Layout ls) {
  Cx w[toy_fmm::kMaxTerms];
  for (int64_t b = b0 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < b0 + nb; b += int64_t(gridDim.x) * blockDim.x) {
    Cx* Lb = ls.at(L, b, l);
    bool any = false;
    if (l >= 2 && hl[parent[b]]) {
      double v[3];
      diff(rc + 3 * b, rc + 3 * parent[b], v);
      toy_fmm::l2l(ls.deg[l - 1], ls.deg[l], v, ls.at(L, parent[b], l - 1), Lb, w);
      any = true;
    }
    for (int k = 0; k < nlists; ++k) {
      const ToyList& li = k == 0 ? a : b2;
      const int lsrc = l + li.source_level_shift;
      for (int64_t e = li.off[b]; e < li.off[b + 1]; ++e) {
        const int32_t s = li.index[e];
        double v[3];
        diff(rc + 3 * b, sc + 3 * s, v);
        toy_fmm::m2l(ms.deg[lsrc], ls.deg[l], v, ms.at(const_cast<Cx*>(M), s, lsrc), Lb, w);
        any = true;
      }
    }
    hl[b] = any ? 1 : 0;
  }
}

__global__ void k_l2p(int64_t b0, int64_t nb, int l, const int32_t* pb, const int32_t* pe, const double* center,
                      const double* xyz, const Cx* L, const uint8_t* hl, double* fp, Layout ly) {
  Cx w[toy_fmm::kMaxTerms];
  for (int64_t b = b0 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < b0 + nb; b += int64_t(gridDim.x) * blockDim.x)
    for (int32_t i = pb[b]; i < pe[b]; ++i) {
      double v[3];
      diff(xyz + 3 * i, center + 3 * b, v);
      fp[i] = hl[b] ? toy_fmm::l2p(ly.deg[l], ly.at(const_cast<Cx*>(L), b, l), v, w) : 0.0;
    }
}

__global__ void k_p2p(int64_t b0, int64_t nb, const int32_t* rpb, const int32_t* rpe, const int32_t* spb,
                      const int32_t* spe, const int64_t* off, const int32_t* index, const double* sxyz,
                      const double* txyz, const double* q, double* np) {
  for (int64_t b = b0 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < b0 + nb; b += int64_t(gridDim.x) * blockDim.x)
    for (int32_t i = rpb[b]; i < rpe[b]; ++i) {
      double s = 0;
      for (int64_t e = off[b]; e < off[b + 1]; ++e)
        for (int32_t j = spb[index[e]]; j < spe[index[e]]; ++j) {
          double v[3];
          diff(txyz + 3 * i, sxyz + 3 * j, v);
          const double r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
          if (r2 > 0) s += q[j] / sqrt(r2);
        }
      np[i] = s;
    }
}

unsigned blocks(int64_t n) { return unsigned(std::max<int64_t>(1, (n + 63) / 64)); }

// The toy through the CUDA driver's interface (cuda/fmm/eval.cuh): charges
// and potentials only.
struct ToyGpu {
  using Real = double;
  fmm::PlanCore& P;
  ToyData& G;
  cudaStream_t s0;
  Layout ms{}, ls{};
  int64_t nm = 0, nl = 0;  // coefficients (Cx) of all source / receiver boxes

  ToyGpu(fmm::PlanCore& plan, ToyData& g, std::vector<int> deg)
      : P(plan), G(g), s0(static_cast<cudaStream_t>(plan.ctx.stream)) {
    deg.resize(size_t(P.l_max) + 1, deg.back());  // {d}: d at every level
    std::copy(deg.begin(), deg.end(), G.k.deg);
    auto fill = [&](const tree::PointSet& X, Layout& y) {
      fmm::CoefLayout c;
      c.build(X, P.l_max, [&](int l) { return int64_t(toy_fmm::nterms(deg[size_t(l)])); });
      for (int l = 0; l <= P.l_max + 1; ++l) y.base[l] = c.base[size_t(l)];
      for (int l = 0; l <= P.l_max; ++l) y.n[l] = c.n[size_t(l)];
      for (int l = 0; l <= P.l_max + 1; ++l) y.deg[l] = deg[size_t(std::min(l, P.l_max))];
      return c.total(X, P.l_max);
    };
    nm = fill(P.sources(), ms);
    nl = fill(P.targets(), ls);
  }
  int64_t mult_size() const { return 2 * nm; }  // in doubles
  int64_t local_size() const { return 2 * nl; }
  bool overlap() const { return true; }
  bool graph() const { return G.k.graph; }
  void prepare() {}

  template <class At>
  void upward(double* q, double*, double* Md, int, At at) {
    const tree::PointSet& S = P.sources();
    Cx* M = reinterpret_cast<Cx*>(Md);
    const int L = P.l_max;
    cudaMemsetAsync(M, 0, size_t(nm) * sizeof(Cx), s0);
    const int64_t b0 = S.level_offset[L], nb = S.boxes_at(L);
    k_p2m<<<blocks(nb), 64, 0, s0>>>(b0, nb, L, S.point_begin, S.point_end, S.center, G.sxyz, q, M, ms);
    gpufmm::cuda::check_launch("toy P2M kernel");
    at(1);
    for (int l = L - 1; l >= 2; --l) {
      k_m2m<<<blocks(S.boxes_at(l)), 64, 0, s0>>>(S.level_offset[l], S.boxes_at(l), l, S.child_offset, S.center, M, ms);
      gpufmm::cuda::check_launch("toy M2M kernel");
    }
  }
  void downward(double*, double*, double* Md, double* Ld, uint8_t* hl) {
    const tree::PointSet& R = P.targets();
    const lists::Lists& li = *P.lists;
    for (int l = P.modified ? 1 : 2; l <= P.l_max; ++l) {
      const ToyList type1{li.list[lists::kType1].offsets, li.list[lists::kType1].index, 0};
      const ToyList type2{li.list[lists::kType2].offsets, li.list[lists::kType2].index, 1};
      const ToyList standard{li.list[lists::kM2L].offsets, li.list[lists::kM2L].index, 0};
      // The modified stencil: type 1 (from level 2) and type 2; else the M2L list.
      const ToyList a = !P.modified ? standard : l >= 2 ? type1 : type2, b = type2;
      const int n = P.modified && l >= 2 ? 2 : 1;
      k_down<<<blocks(R.boxes_at(l)), 64, 0, s0>>>(R.level_offset[l], R.boxes_at(l), l, R.parent, R.center,
                                                  P.sources().center, a, b, n, reinterpret_cast<const Cx*>(Md),
                                                  reinterpret_cast<Cx*>(Ld), hl, ms, ls);
      gpufmm::cuda::check_launch("toy L2L + M2L kernel");
    }
  }
  void to_targets(const double*, double* Ld, uint8_t* hl, double* fp, double*, double*, int) {
    const tree::PointSet& R = P.targets();
    const int L = P.l_max;
    k_l2p<<<blocks(R.boxes_at(L)), 64, 0, s0>>>(R.level_offset[L], R.boxes_at(L), L, R.point_begin, R.point_end,
                                               R.center, G.txyz, reinterpret_cast<const Cx*>(Ld), hl, fp, ls);
    gpufmm::cuda::check_launch("toy L2P kernel");
  }
  void near(double* q, double*, double* np, double*, double*, cudaStream_t s, int) {
    const tree::PointSet& R = P.targets();
    const tree::PointSet& S = P.sources();
    const lists::List& nb = P.lists->list[lists::kNeighbors];
    const int L = P.l_max;
    k_p2p<<<blocks(R.boxes_at(L)), 64, 0, s>>>(R.level_offset[L], R.boxes_at(L), R.point_begin, R.point_end,
                                              S.point_begin, S.point_end, nb.offsets, nb.index, G.sxyz, G.txyz, q, np);
    gpufmm::cuda::check_launch("toy P2P kernel");
  }
};

// The host copy of a device array.
template <class V>
std::vector<V> download(const V* d, int64_t n) {
  std::vector<V> h(static_cast<size_t>(n));
  EXPECT_EQ(cudaMemcpy(h.data(), d, size_t(n) * sizeof(V), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// The sorted coordinates of a GPU plan for the toy's device data (the plan's
// own are the Laplace driver's).
void toy_setup(fmm::LaplacePlan& plan, ToyData& G, const std::vector<double>& x, const std::vector<double>& y) {
  fmm::cuda::driver_init(G, plan, false);
  auto sorted = [](const std::vector<double>& u, const std::vector<int32_t>& perm) {
    std::vector<double> s(3 * perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      for (int k = 0; k < 3; ++k) s[3 * i + k] = u[3 * size_t(perm[i]) + k];
    return s;
  };
  plan.src_xyz = sorted(x, download(plan.sources().perm, plan.nsrc));
  if (!plan.same_sets) plan.trg_xyz = sorted(y, download(plan.targets().perm, plan.ntrg));
  fmm::cuda::driver_coordinates(G, plan, static_cast<cudaStream_t>(plan.ctx.stream));
  ASSERT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(plan.ctx.stream)), cudaSuccess);
  plan.src_xyz.clear();
  plan.trg_xyz.clear();
}

std::vector<double> toy_evaluate(fmm::LaplacePlan& plan, ToyData& G, const std::vector<int>& deg,
                                 const std::vector<double>& q) {
  ToyGpu toy(plan, G, deg);
  std::vector<double> pot(size_t(plan.ntrg));
  fmm::EvalArgs a;
  a.charges = q.data();
  a.pot = pot.data();
  fmm::cuda::evaluate(toy, a);
  return pot;
}

struct Case {
  bool separate_targets;
  int stencil;
};

class CudaFmmDriverToy : public gpufmm_test::GpuCpuContexts, public ::testing::WithParamInterface<Case> {};

TEST_P(CudaFmmDriverToy, SecondExpansionThroughTheDriver) {
  const Case c = GetParam();
  const uint64_t seed = gpufmm_test::fresh_test_seed("CudaFmmDriverToy");
  const int64_t n = 3000, nt = c.separate_targets ? 1200 : 0;
  const std::vector<double> x = gpufmm_test::uniform_cube(n, seed);
  const std::vector<double> y = c.separate_targets ? gpufmm_test::plummer(nt, seed + 1) : x;
  gpufmm_test::Rng r(seed + 2);
  std::vector<double> q(static_cast<size_t>(n));
  for (auto& v : q) v = 2 * r.uniform() - 1;
  const std::vector<double> ref = toy_fmm::direct_potential(x, q, y);

  Context& ctx = *checked_context(gpu);
  fmm::LaplaceOptions o;
  o.p = 9;  // degrees n < 9
  o.variable_truncation = false;
  o.calibrate = false;
  o.tree = GPUFMM_LAPLACE_TREE_UNIFORM;
  o.l_max = 3;  // M2M and L2L at every level they have (the GPU's cost model takes 0-2 here)
  o.stencil = c.stencil;
  auto plan = fmm::laplace_plan_create(ctx, o, n, x.data(), nt, c.separate_targets ? y.data() : nullptr);
  ASSERT_EQ(plan->l_max, 3);
  std::vector<double> lap(size_t(plan->ntrg));
  fmm::EvalArgs a;
  a.charges = q.data();
  a.pot = lap.data();
  fmm::laplace_evaluate(*plan, a);

  ToyData G;
  toy_setup(*plan, G, x, y);
  G.k.graph = false;  // kernels launched one by one, then captured and replayed
  const std::vector<double> same = toy_evaluate(*plan, G, {8}, q);
  G.k.graph = true;
  EXPECT_EQ(toy_evaluate(*plan, G, {8}, q), same) << "the graph's capture";
  const std::vector<double> again = toy_evaluate(*plan, G, {8}, q);  // its replay
  const double e_lap = gpufmm_test::rel_l2(lap, ref);
  EXPECT_LE(gpufmm_test::rel_l2(same, lap), 1e-11) << "toy vs Laplace FMM; their error vs direct " << e_lap;
  EXPECT_GT(e_lap, 1e-11) << "a far field that did nothing would agree too";
  EXPECT_EQ(same, again);
  EXPECT_GT(G.bytes, size_t(0));

  std::vector<int> low(size_t(plan->l_max) + 1), high(low.size());
  for (size_t l = 0; l < low.size(); ++l) {
    low[l] = 3 + int(l % 2);
    high[l] = 10 + int(l % 2);
  }
  const double e_low = gpufmm_test::rel_l2(toy_evaluate(*plan, G, low, q), ref);
  const double e_high = gpufmm_test::rel_l2(toy_evaluate(*plan, G, high, q), ref);
  std::printf("l_max %d: Laplace FMM (GPU, p = 9) %.2e; toy, degree 8: %.2e from it; degrees 3-4: %.2e, 10-11: %.2e\n",
              plan->l_max, e_lap, gpufmm_test::rel_l2(same, lap), e_low, e_high);
  EXPECT_LE(e_low, 2e-2);
  EXPECT_LT(e_high, e_low / 100) << e_low;
  EXPECT_LT(e_high, e_lap) << "degrees 10-11 against the Laplace FMM's 8";

  // A NaN charge is refused by the driver's check, nothing written.
  std::vector<double> bad = q, out(size_t(plan->ntrg), 7.0);
  bad[17] = std::nan("");
  ToyGpu toy(*plan, G, {8});
  fmm::EvalArgs b;
  b.charges = bad.data();
  b.pot = out.data();
  EXPECT_THROW(fmm::cuda::evaluate(toy, b), Error);
  EXPECT_EQ(out, std::vector<double>(size_t(plan->ntrg), 7.0));
}

INSTANTIATE_TEST_SUITE_P(Trees, CudaFmmDriverToy,
                         ::testing::Values(Case{false, GPUFMM_STENCIL_MODIFIED}, Case{true, GPUFMM_STENCIL_MODIFIED},
                                           Case{false, GPUFMM_STENCIL_STANDARD}));

}  // namespace
