// The Laplace FMM on the CUDA backend (issue 5):
//  - GPU and CPU agree to rounding for the same p and tree (forced p, l_max);
//  - the achieved error (relative L2, papers/000 eq. 36, against the direct
//    sum) is <= eps on uniform, ellipsoid and Plummer inputs, sources ==
//    targets and !=, charges and dipoles, double and float;
//  - evaluate repeated with new charges equals a fresh plan (bit for bit:
//    the GPU pipeline has no atomics in its sums);
//  - every kernel strategy (options.gpu, laplace_gpu_parse_kernels) agrees
//    with the default;
//  - a CUDA graph replay gives the bits of kernels launched one by one;
//  - the mutual near field of sources = targets agrees with the one-sided
//    one and is deterministic;
//  - evaluate_arrays with device arrays equals the host API; a NaN charge in
//    a device array is reported with its index and leaves the outputs alone.
// Skips when no CUDA device is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/gpu_cpu_fixture.hpp"
#include "common/laplace_kernels.hpp"
#include "common/rel_l2.hpp"
#include "gpufmm.h"

namespace {

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

using gpufmm_test::Dist;

using gpufmm_test::rel_l2;

std::vector<double> randu(uint64_t seed, size_t n, double lo, double hi) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

struct Result {
  std::vector<double> pot, grad;
};

// Points and a forced depth.
struct DistDepth {
  Dist dist;
  int l_max;
};

class CudaLaplaceFmm : public gpufmm_test::GpuCpuContexts {
 protected:
  // Kernel strategies of the plans fmm() makes (laplace_gpu_parse_kernels).
  std::string kernels;

  // Plan + evaluate on ctx; returns the plan's l_max and p through info.
  void fmm(gpufmm_context_t ctx, const gpufmm_laplace_options_t& opt, const std::vector<double>& src,
           const std::vector<double>* trg, const double* q, const double* d, Result& r,
           gpufmm_laplace_info_t* info = nullptr) {
    const int64_t ns = int64_t(src.size() / 3), nt = trg ? int64_t(trg->size() / 3) : ns;
    gpufmm_laplace_plan_t plan = nullptr;
    GPUFMM_OK(gpufmm_test::laplace_plan_create_kernels(ctx, &opt, kernels.c_str(), ns, src.data(), nt,
                                                       trg ? trg->data() : nullptr, &plan));
    r.pot.assign(size_t(nt), 0);
    r.grad.assign(size_t(3 * nt), 0);
    GPUFMM_OK(gpufmm_laplace_evaluate(plan, q, d, r.pot.data(), r.grad.data()));
    if (info) GPUFMM_OK(gpufmm_laplace_plan_info(plan, info));
    GPUFMM_OK(gpufmm_laplace_plan_destroy(plan));
  }

  void direct(int precision, const std::vector<double>& src, const std::vector<double>* trg, const double* q,
              const double* d, Result& r) {
    const int64_t ns = int64_t(src.size() / 3), nt = trg ? int64_t(trg->size() / 3) : ns;
    r.pot.assign(size_t(nt), 0);
    r.grad.assign(size_t(3 * nt), 0);
    GPUFMM_OK(gpufmm_laplace_direct(gpu, precision, ns, src.data(), q, d, nt, trg ? trg->data() : nullptr,
                                    r.pot.data(), r.grad.data()));
  }
};

gpufmm_laplace_options_t options(double eps, int precision, int p = 0, int l_max = -1) {
  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.eps = eps;
  o.precision = precision;
  o.p = p;
  o.l_max = l_max;
  return o;
}

// NaN / Inf coordinates on a GPU context (checked on the device copy of the
// coordinates): the smallest bad index is named, no plan is made, and the
// context stays usable.
TEST_F(CudaLaplaceFmm, NonFiniteCoordinatesNamed) {
  const int64_t ns = 3000, nt = 2000;
  const auto src = gpufmm_test::make_points(Dist::Uniform, ns, 71);
  const auto trg = gpufmm_test::make_points(Dist::Uniform, nt, 72);
  const auto o = options(1e-6, GPUFMM_FLOAT64);
  gpufmm_laplace_plan_t keep = reinterpret_cast<gpufmm_laplace_plan_t>(0x1234), plan = keep;
  auto expect_named = [&](const std::vector<double>& s, const std::vector<double>* t, const char* what) {
    EXPECT_EQ(gpufmm_laplace_plan_create(gpu, &o, ns, s.data(), nt, t ? t->data() : nullptr, &plan),
              GPUFMM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find(what), std::string::npos)
        << gpufmm_last_error_message();
    EXPECT_EQ(plan, keep);
  };
  std::vector<double> s2 = src, t2 = trg;
  s2[3 * 2900] = std::numeric_limits<double>::infinity();
  s2[3 * 7 + 1] = std::nan("");
  expect_named(s2, nullptr, "'sources': point 7 ");
  expect_named(s2, &trg, "'sources': point 7 ");
  t2[3 * 1999 + 2] = std::nan("");
  t2[3 * 3 + 2] = -std::numeric_limits<double>::infinity();
  expect_named(src, &t2, "'targets': point 3 ");
  Result r;
  fmm(gpu, o, src, &trg, randu(73, ns, -1, 1).data(), nullptr, r);
  EXPECT_TRUE(std::isfinite(r.pot[0]));
}

// Same p, same tree: GPU == CPU to rounding.
TEST_F(CudaLaplaceFmm, MatchesCpuPipeline) {
  const int64_t n = 6000;
  const auto src = gpufmm_test::make_points(Dist::Plummer, n, 3);
  const auto trg = gpufmm_test::make_points(Dist::Uniform, 4000, 4);
  const auto q = randu(5, n, -1, 1), d = randu(6, 3 * n, -1, 1);
  for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)})
    for (int stencil : {int(GPUFMM_STENCIL_MODIFIED), int(GPUFMM_STENCIL_STANDARD)})
      for (int same : {1, 0}) {
        SCOPED_TRACE("precision " + std::to_string(precision) + " stencil " + std::to_string(stencil) +
                     " same " + std::to_string(same));
        auto o = options(1e-6, precision, precision == GPUFMM_FLOAT64 ? 12 : 7, 4);
        o.stencil = stencil;
        Result g, c;
        gpufmm_laplace_info_t gi, ci;
        fmm(gpu, o, src, same ? nullptr : &trg, q.data(), d.data(), g, &gi);
        fmm(cpu, o, src, same ? nullptr : &trg, q.data(), d.data(), c, &ci);
        EXPECT_EQ(gi.l_max, ci.l_max);
        EXPECT_EQ(gi.backend, int(GPUFMM_BACKEND_CUDA));
        const double tol = precision == GPUFMM_FLOAT64 ? 1e-12 : 2e-5;
        EXPECT_LE(rel_l2(g.pot, c.pot), tol);
        EXPECT_LE(rel_l2(g.grad, c.grad), tol);
      }
}

// Achieved error <= eps on the three distributions, charges and/or dipoles.
TEST_F(CudaLaplaceFmm, AchievedErrorWithinEps) {
  const int64_t n = 20000;
  for (Dist dist : {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer})
    for (int same : {1, 0})
      for (int inputs : {1, 2, 3}) {
        const auto src = gpufmm_test::make_points(dist, n, 11);
        const auto trg = gpufmm_test::make_points(dist, 7000, 12);
        const auto q = randu(13, n, -1, 1), d = randu(14, 3 * n, -1, 1);
        const double* qp = (inputs & 1) ? q.data() : nullptr;
        const double* dp = (inputs & 2) ? d.data() : nullptr;
        Result ref;
        direct(GPUFMM_FLOAT64, src, same ? nullptr : &trg, qp, dp, ref);
        for (auto [precision, eps] : {std::pair<int, double>{GPUFMM_FLOAT64, 1e-6},
                                      std::pair<int, double>{GPUFMM_FLOAT64, 1e-9},
                                      std::pair<int, double>{GPUFMM_FLOAT32, 1e-4}}) {
          SCOPED_TRACE(std::string(gpufmm_test::dist_name(dist)) + " same " + std::to_string(same) + " inputs " +
                       std::to_string(inputs) + " precision " + std::to_string(precision) + " eps " +
                       std::to_string(eps));
          Result r;
          gpufmm_laplace_info_t info;
          fmm(gpu, options(eps, precision), src, same ? nullptr : &trg, qp, dp, r, &info);
          EXPECT_LE(rel_l2(r.pot, ref.pot), eps) << "p " << info.p << " l_max " << info.l_max;
          EXPECT_LE(rel_l2(r.grad, ref.grad), eps) << "p " << info.p << " l_max " << info.l_max;
        }
      }
}

// Evaluate repeated with new charges == a fresh plan, bit for bit; device
// arrays == host API.
TEST_F(CudaLaplaceFmm, RepeatedEvaluateAndDeviceArrays) {
  const int64_t n = 30000;
  const auto src = gpufmm_test::make_points(Dist::Ellipsoid, n, 21);
  const auto q1 = randu(22, n, -1, 1), q2 = randu(23, n, 0, 2);
  for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
    const auto o = options(precision == GPUFMM_FLOAT64 ? 1e-6 : 1e-5, precision);  // float's smallest eps
    gpufmm_laplace_plan_t plan = nullptr;
    GPUFMM_OK(gpufmm_laplace_plan_create(gpu, &o, n, src.data(), 0, nullptr, &plan));
    std::vector<double> p1(n), g1(3 * n), p2(n), g2(3 * n);
    GPUFMM_OK(gpufmm_laplace_evaluate(plan, q1.data(), nullptr, p1.data(), g1.data()));
    GPUFMM_OK(gpufmm_laplace_evaluate(plan, q2.data(), nullptr, p2.data(), g2.data()));
    Result fresh;
    fmm(gpu, o, src, nullptr, q2.data(), nullptr, fresh);
    EXPECT_EQ(p2, fresh.pot);
    EXPECT_EQ(g2, fresh.grad);

    // Device arrays in the plan's precision.
    const gpufmm_dtype_t dt = gpufmm_dtype_t(precision);
    const int64_t dn[1] = {n}, dg[1] = {3 * n};
    gpufmm_array_t aq = nullptr, ap = nullptr, ag = nullptr;
    GPUFMM_OK(gpufmm_array_create(gpu, dt, 1, dn, &aq));
    GPUFMM_OK(gpufmm_array_create(gpu, dt, 1, dn, &ap));
    GPUFMM_OK(gpufmm_array_create(gpu, dt, 1, dg, &ag));
    std::vector<double> hp(n), hg(3 * n);
    if (precision == GPUFMM_FLOAT64) {
      GPUFMM_OK(gpufmm_array_upload(aq, q2.data(), n));
      GPUFMM_OK(gpufmm_laplace_evaluate_arrays(plan, aq, nullptr, ap, ag));
      GPUFMM_OK(gpufmm_array_download(ap, hp.data(), n));
      GPUFMM_OK(gpufmm_array_download(ag, hg.data(), 3 * n));
      EXPECT_EQ(hp, p2);
      EXPECT_EQ(hg, g2);
    } else {
      std::vector<float> qf(q2.begin(), q2.end()), pf(n), gf(3 * n);
      GPUFMM_OK(gpufmm_array_upload(aq, qf.data(), n));
      GPUFMM_OK(gpufmm_laplace_evaluate_arrays(plan, aq, nullptr, ap, ag));
      GPUFMM_OK(gpufmm_array_download(ap, pf.data(), n));
      GPUFMM_OK(gpufmm_array_download(ag, gf.data(), 3 * n));
      for (int64_t i = 0; i < n; ++i) hp[i] = pf[i];
      for (int64_t i = 0; i < 3 * n; ++i) hg[i] = gf[i];
      EXPECT_LE(rel_l2(hp, p2), 1e-6);
      EXPECT_LE(rel_l2(hg, g2), 1e-6);
      // A NaN charge on the device: named, outputs untouched.
      qf[1234] = std::numeric_limits<float>::quiet_NaN();
      GPUFMM_OK(gpufmm_array_upload(aq, qf.data(), n));
      std::vector<float> sentinel(n, 7.0f);
      GPUFMM_OK(gpufmm_array_upload(ap, sentinel.data(), n));
      EXPECT_EQ(gpufmm_laplace_evaluate_arrays(plan, aq, nullptr, ap, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(gpufmm_last_error_message()).find("charge 1234"), std::string::npos)
          << gpufmm_last_error_message();
      GPUFMM_OK(gpufmm_array_download(ap, pf.data(), n));
      EXPECT_EQ(pf, sentinel);
    }
    gpufmm_array_destroy(aq);
    gpufmm_array_destroy(ap);
    gpufmm_array_destroy(ag);
    GPUFMM_OK(gpufmm_laplace_plan_destroy(plan));
  }
}

// Every strategy of every stage agrees with the default to rounding.
TEST_F(CudaLaplaceFmm, KernelStrategiesAgree) {
  const int64_t n = 15000;
  const auto src = gpufmm_test::make_points(Dist::Plummer, n, 31);
  const auto q = randu(32, n, -1, 1), d = randu(33, 3 * n, -1, 1);
  for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
    const auto o = options(precision == GPUFMM_FLOAT64 ? 1e-6 : 1e-5, precision, 0, 4);  // float's smallest eps
    Result base;
    fmm(gpu, o, src, nullptr, q.data(), d.data(), base);
    for (const char* k : {"p2m=wpb", "p2m=tpb", "m2m=gpb", "m2m=gemm", "m2l=wpb", "l2p=tpt", "l2p=tpb", "p2p=tpt", "overlap=off",
                          "work=global", "graph=off",
                          "p2m=wpb,m2m=gpb,m2l=wpb,l2p=tpt,p2p=tpt,overlap=off,work=global"}) {
      SCOPED_TRACE(std::string(k) + " precision " + std::to_string(precision));
      kernels = k;
      Result r;
      fmm(gpu, o, src, nullptr, q.data(), d.data(), r);
      kernels.clear();
      const double tol = precision == GPUFMM_FLOAT64 ? 1e-12 : 1e-5;
      EXPECT_LE(rel_l2(r.pot, base.pot), tol);
      EXPECT_LE(rel_l2(r.grad, base.grad), tol);
    }
  }
}

// CUDA graph replay (graph=on, the default) against kernels launched one by
// one (graph=off), bit for bit, on one plan: evaluate 1 launches directly, 2
// captures, 3 replays; new device arrays (same topology: the executable graph
// is updated), potential only (another topology: re-instantiated), dipoles
// added, back to the first arguments; with and without the second stream.
// The stage times of a replay come from the graph's event nodes.
TEST_F(CudaLaplaceFmm, GraphReplayEqualsDirectLaunches) {
  const int64_t n = 20000;
  const auto src = gpufmm_test::make_points(Dist::Plummer, n, 81);
  const auto q1 = randu(82, n, -1, 1), q2 = randu(83, n, -1, 1), d = randu(84, 3 * n, -1, 1);
  for (const char* overlap : {"overlap=on", "overlap=off"}) {
    SCOPED_TRACE(overlap);
    const auto o = options(1e-6, GPUFMM_FLOAT64, 0, 4);
    // The sequence of (charges, dipoles, want gradient, device arrays set).
    struct Step {
      const std::vector<double>* q;
      bool dip, grad;
      int arrays;  // 0: host API, 1 or 2: one of two sets of device arrays
    };
    const Step steps[] = {{&q1, false, true, 0}, {&q2, false, true, 0}, {&q1, false, true, 0},
                          {&q2, false, true, 1}, {&q1, false, true, 1}, {&q2, false, true, 2},
                          {&q1, false, false, 2}, {&q2, true, true, 2}, {&q1, false, true, 0}};
    std::vector<std::vector<double>> out[2];
    for (int graph = 0; graph < 2; ++graph) {
      gpufmm_laplace_plan_t plan = nullptr;
      GPUFMM_OK(gpufmm_test::laplace_plan_create_kernels(
          gpu, &o, (std::string(overlap) + (graph ? ",graph=on" : ",graph=off")).c_str(), n, src.data(), 0, nullptr,
          &plan));
      const int64_t dn[1] = {n}, dg[1] = {3 * n};
      gpufmm_array_t aq[2], ad[2], ap[2], ag[2];
      for (int s = 0; s < 2; ++s) {
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dn, &aq[s]));
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dg, &ad[s]));
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dn, &ap[s]));
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dg, &ag[s]));
        GPUFMM_OK(gpufmm_array_upload(ad[s], d.data(), 3 * n));
      }
      for (const Step& st : steps) {
        std::vector<double> pot(n, 0.0), grad(st.grad ? 3 * n : 0, 0.0);
        if (st.arrays == 0) {
          GPUFMM_OK(gpufmm_laplace_evaluate(plan, st.q->data(), st.dip ? d.data() : nullptr, pot.data(),
                                            st.grad ? grad.data() : nullptr));
        } else {
          const int s = st.arrays - 1;
          GPUFMM_OK(gpufmm_array_upload(aq[s], st.q->data(), n));
          GPUFMM_OK(gpufmm_laplace_evaluate_arrays(plan, aq[s], st.dip ? ad[s] : nullptr, ap[s],
                                                   st.grad ? ag[s] : nullptr));
          GPUFMM_OK(gpufmm_array_download(ap[s], pot.data(), n));
          if (st.grad) GPUFMM_OK(gpufmm_array_download(ag[s], grad.data(), 3 * n));
        }
        gpufmm_laplace_info_t info;
        GPUFMM_OK(gpufmm_laplace_plan_info(plan, &info));
        EXPECT_GT(info.t_downward, 0.0);
        EXPECT_GT(info.t_p2p, 0.0);
        out[graph].push_back(pot);
        out[graph].push_back(grad);
      }
      for (int s = 0; s < 2; ++s) {
        gpufmm_array_destroy(aq[s]);
        gpufmm_array_destroy(ad[s]);
        gpufmm_array_destroy(ap[s]);
        gpufmm_array_destroy(ag[s]);
      }
      GPUFMM_OK(gpufmm_laplace_plan_destroy(plan));
    }
    ASSERT_EQ(out[0].size(), out[1].size());
    for (size_t k = 0; k < out[0].size(); ++k) {
      SCOPED_TRACE("step " + std::to_string(k / 2) + (k % 2 ? " gradient" : " potential"));
      EXPECT_EQ(out[0][k], out[1][k]);
    }
    // The charges alone decide the result: q1 at steps 0, 2, 4, 6 (potential), 8.
    EXPECT_EQ(out[1][0], out[1][4]);
    EXPECT_EQ(out[1][0], out[1][8]);
    EXPECT_EQ(out[1][0], out[1][16]);
    EXPECT_EQ(out[1][1], out[1][17]);
    EXPECT_LE(rel_l2(out[1][12], out[1][0]), 1e-14);
  }
}

// Grouped M2L (the default): group sizes (1 receiver .. more than a level),
// 4 and 8 lanes, 256/320/384/512 threads (automatic: 256, 384 and 512 for
// the three p), both stencils, a low, a middle and a high p (reduced
// classes), and the receiver-major BpB kernel, all against the CPU pipeline.
TEST_F(CudaLaplaceFmm, GroupedM2LMatchesCpu) {
  const int64_t n = 12000;
  const auto src = gpufmm_test::make_points(Dist::Ellipsoid, n, 51);
  const auto trg = gpufmm_test::make_points(Dist::Uniform, n / 2, 52);
  const auto q = randu(53, n, -1, 1);
  struct Case {
    const char *group, *lanes, *kernels;
  };
  for (int stencil : {int(GPUFMM_STENCIL_MODIFIED), int(GPUFMM_STENCIL_STANDARD)})
    for (int p : {9, 18, 30}) {
      auto o = options(1e-6, GPUFMM_FLOAT64, p, 4);
      o.stencil = stencil;
      Result c;
      fmm(cpu, o, src, &trg, q.data(), nullptr, c);
      for (const Case k : {Case{"16", "8", "m2l=grp"}, Case{"1", "4", "m2l=grp"}, Case{"3", "8", "m2l=grp"},
                           Case{"100000", "4", "m2l=grp"}, Case{"16", "8", "m2l=grp,m2l_threads=256"},
                           Case{"16", "4", "m2l=grp,m2l_threads=320"}, Case{"5", "8", "m2l=grp,m2l_threads=384"},
                           Case{"16", "8", "m2l=grp,m2l_threads=512"}, Case{"16", "8", "m2l=bpb"}}) {
        SCOPED_TRACE(std::string("stencil ") + std::to_string(stencil) + " p " + std::to_string(p) + " group " +
                     k.group + " lanes " + k.lanes + " " + k.kernels);
        kernels = std::string("m2l_group=") + k.group + ",m2l_lanes=" + k.lanes + "," + k.kernels;
        Result g;
        fmm(gpu, o, src, &trg, q.data(), nullptr, g);
        kernels.clear();
        EXPECT_LE(rel_l2(g.pot, c.pot), 1e-12);
        EXPECT_LE(rel_l2(g.grad, c.grad), 1e-12);
      }
    }
}

// M2L as dense products (m2l=gemm), the dense operators and their RCR
// factors (m2l_rcr), against the CPU pipeline and the grouped kernel: both
// stencils; p = 9, 18 and 30 in double (the reduced p' of the
// far classes: operators of several sizes in one grouped product), 7 and 12
// in float; sources != targets (ellipsoid, uniform) and = (Plummer); a
// uniform depth and an adaptive tree (the V lists of leaves of many levels); one
// chunk, and chunks of one group of a few receivers (m2l_gemm_mb=1: many
// products of a few columns, receivers of two levels in one chunk). The
// same bits from a second evaluate (graph replay) and with graph=off.
TEST_F(CudaLaplaceFmm, GemmM2LMatchesCpu) {
  const int64_t n = 12000;
  const auto src = gpufmm_test::make_points(Dist::Ellipsoid, n, 56);
  const auto trg = gpufmm_test::make_points(Dist::Uniform, n / 2, 57);
  const auto plum = gpufmm_test::make_points(Dist::Plummer, n, 58);
  const auto q = randu(59, n, -1, 1);
  struct Case {
    int precision, p, stencil;
    bool same, adaptive;
  };
  for (const Case c : {Case{GPUFMM_FLOAT64, 9, GPUFMM_STENCIL_MODIFIED, false, false},
                       Case{GPUFMM_FLOAT64, 18, GPUFMM_STENCIL_MODIFIED, false, false},
                       Case{GPUFMM_FLOAT64, 30, GPUFMM_STENCIL_MODIFIED, true, false},
                       Case{GPUFMM_FLOAT64, 18, GPUFMM_STENCIL_STANDARD, true, false},
                       Case{GPUFMM_FLOAT64, 14, GPUFMM_STENCIL_MODIFIED, true, true},
                       Case{GPUFMM_FLOAT32, 7, GPUFMM_STENCIL_MODIFIED, false, false},
                       Case{GPUFMM_FLOAT32, 12, GPUFMM_STENCIL_STANDARD, true, false},
                       Case{GPUFMM_FLOAT32, 9, GPUFMM_STENCIL_MODIFIED, false, true}}) {
    const bool dbl = c.precision == GPUFMM_FLOAT64;
    auto o = options(dbl ? 1e-6 : 1e-5, c.precision, c.p, c.adaptive ? -1 : 4);
    o.stencil = c.stencil;
    if (c.adaptive) {
      o.tree = GPUFMM_LAPLACE_TREE_ADAPTIVE;
      o.s_max = 40;
    }
    const auto& s = c.same ? plum : src;
    const std::vector<double>* t = c.same ? nullptr : &trg;
    Result cp, grp;
    fmm(cpu, o, s, t, q.data(), nullptr, cp);
    kernels = "m2l=grp";
    fmm(gpu, o, s, t, q.data(), nullptr, grp);
    kernels.clear();
    for (const char* k : {"m2l=gemm,m2l_rcr=off", "m2l=gemm,m2l_rcr=off,m2l_gemm_mb=1", "m2l=gemm,m2l_rcr=on",
                          "m2l=gemm,m2l_rcr=on,m2l_gemm_mb=1"}) {
      SCOPED_TRACE(std::string(dbl ? "double" : "float") + " p " + std::to_string(c.p) + " stencil " +
                   std::to_string(c.stencil) + (c.same ? " same" : " distinct") +
                   (c.adaptive ? " adaptive " : " uniform ") + k);
      // r[0], r[1]: two evaluates of one plan; r[2]: graph=off.
      Result r[3];
      const int64_t nt = t ? int64_t(t->size() / 3) : n;
      auto run = [&](const std::string& ks, Result* out, int evaluates) {
        gpufmm_laplace_plan_t plan = nullptr;
        GPUFMM_OK(gpufmm_test::laplace_plan_create_kernels(gpu, &o, ks.c_str(), n, s.data(), nt,
                                                           t ? t->data() : nullptr, &plan));
        for (int e = 0; e < evaluates; ++e) {
          out[e].pot.assign(size_t(nt), 0);
          out[e].grad.assign(size_t(3 * nt), 0);
          GPUFMM_OK(gpufmm_laplace_evaluate(plan, q.data(), nullptr, out[e].pot.data(), out[e].grad.data()));
        }
        GPUFMM_OK(gpufmm_laplace_plan_destroy(plan));
      };
      run(k, r, 2);
      run(std::string(k) + ",graph=off", r + 2, 1);
      EXPECT_EQ(r[0].pot, r[1].pot);
      EXPECT_EQ(r[0].grad, r[1].grad);
      EXPECT_EQ(r[0].pot, r[2].pot);
      EXPECT_EQ(r[0].grad, r[2].grad);
      EXPECT_NE(r[0].grad, grp.grad) << "the dense products did not run";
      // The adaptive plans of the two backends send different W and X boxes
      // and same-level translations to the direct sum (adaptive_direct_max,
      // adaptive_v_direct), so there they agree to the FMM's error only: each
      // within eps of the direct sum, so within 2 eps of each other; the
      // grouped kernel on the same plan to rounding.
      const double tol = dbl ? 1e-12 : 2e-5, tol_cpu = c.adaptive ? (dbl ? 2e-6 : 1e-4) : tol;
      EXPECT_LE(rel_l2(r[0].pot, cp.pot), tol_cpu);
      EXPECT_LE(rel_l2(r[0].grad, cp.grad), tol_cpu);
      EXPECT_LE(rel_l2(r[0].pot, grp.pot), tol);
      EXPECT_LE(rel_l2(r[0].grad, grp.grad), tol);
    }
  }
}

// P2P work units: leaves of many passes of 256 targets (l_max 0 .. 2 on 20000
// points: 20000 .. 312 targets per leaf) and crowded next to nearly empty
// leaves (ellipsoid at l_max 4), sources == targets and distinct, against
// the CPU pipeline; the thread-per-target P2P agrees too.
TEST_F(CudaLaplaceFmm, P2PWorkUnitsMatchCpu) {
  const int64_t n = 20000;
  const auto q = randu(91, n, -1, 1);
  for (const DistDepth c : {DistDepth{Dist::Uniform, 0}, DistDepth{Dist::Uniform, 1}, DistDepth{Dist::Uniform, 2},
                            DistDepth{Dist::Ellipsoid, 4}}) {
    const auto src = gpufmm_test::make_points(c.dist, n, 92);
    const auto trg = gpufmm_test::make_points(c.dist, n / 3, 93);
    for (int same : {1, 0}) {
      SCOPED_TRACE(std::string(gpufmm_test::dist_name(c.dist)) + " l_max " + std::to_string(c.l_max) + " same " +
                   std::to_string(same));
      const auto o = options(1e-6, GPUFMM_FLOAT64, 0, c.l_max);
      Result g, t, cp;
      fmm(cpu, o, src, same ? nullptr : &trg, q.data(), nullptr, cp);
      fmm(gpu, o, src, same ? nullptr : &trg, q.data(), nullptr, g);
      kernels = "p2p=tpt";
      fmm(gpu, o, src, same ? nullptr : &trg, q.data(), nullptr, t);
      kernels.clear();
      EXPECT_LE(rel_l2(g.pot, cp.pot), 1e-12);
      EXPECT_LE(rel_l2(g.grad, cp.grad), 1e-12);
      EXPECT_LE(rel_l2(t.pot, g.pot), 1e-12);
      EXPECT_LE(rel_l2(t.grad, g.grad), 1e-12);
    }
  }
}

// The mutual near field (p2p_mutual=on; automatic by default, for charges on
// uniform trees with sources = targets whose passes fill the GPU, which
// these small trees do not) against the one-sided BpB (p2p_mutual=off)
// and the CPU pipeline: leaves of 20000 .. 39 points (l_max 0 .. 3), the
// crowded and nearly empty leaves of an ellipsoid (l_max 4: chunks of A and
// tiles of B that end part-way), Plummer; double and float; potential with
// and without the gradient; up to 5 (float; 4 in double), 2 and 1 points
// of A per lane. Its sums run in another order than BpB's (so the bits
// differ where there is more than one leaf: the test sees which path ran)
// and in the same order every time (a second evaluate, graph=off, and the
// flow schedule's single launch, twice, and with one block per SM: the same
// bits).
TEST_F(CudaLaplaceFmm, MutualNearFieldMatchesBpb) {
  const int64_t n = 20000;
  const auto q = randu(101, n, -1, 1);
  for (const DistDepth c : {DistDepth{Dist::Uniform, 0}, DistDepth{Dist::Uniform, 2}, DistDepth{Dist::Uniform, 3},
                            DistDepth{Dist::Ellipsoid, 4}, DistDepth{Dist::Plummer, 3}}) {
    const auto src = gpufmm_test::make_points(c.dist, n, 102);
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
      const bool dbl = precision == GPUFMM_FLOAT64;
      const auto o = options(dbl ? 1e-6 : 1e-5, precision, dbl ? 12 : 7, c.l_max);
      Result cp;
      fmm(cpu, o, src, nullptr, q.data(), nullptr, cp);
      for (bool want_grad : {true, false}) {
        SCOPED_TRACE(std::string(gpufmm_test::dist_name(c.dist)) + " l_max " + std::to_string(c.l_max) +
                     (dbl ? " double" : " float") + (want_grad ? " pot+grad" : " pot"));
        // [0], [1]: two evaluates of one plan; [2]: graph=off; [3]: BpB;
        // [4], [5]: 2 and 1 points of A per lane (blocks of 4 and 8 warps);
        // [6], [7]: two evaluates of the flow schedule (5 blocks per SM);
        // [8]: flow with one block per SM, 1 point per lane. [0] .. [5]:
        // the passes (p2p_mutual_flow=off; auto would take the flow on
        // these shallow trees, whose passes have few pairs).
        Result r[9];
        const char* ks[7] = {"p2p_mutual=on,p2p_mutual_flow=off", "p2p_mutual=on,p2p_mutual_flow=off,graph=off",
                             "p2p_mutual=off", "p2p_mutual=on,p2p_mutual_flow=off,p2p_mutual_lanes=2",
                             "p2p_mutual=on,p2p_mutual_flow=off,p2p_mutual_lanes=1",
                             "p2p_mutual=on,p2p_mutual_flow=5", "p2p_mutual=on,p2p_mutual_flow=1,p2p_mutual_lanes=1"};
        for (int k = 0, i = 0; k < 7; ++k) {
          gpufmm_laplace_plan_t plan = nullptr;
          GPUFMM_OK(gpufmm_test::laplace_plan_create_kernels(gpu, &o, ks[k], n, src.data(), 0, nullptr, &plan));
          for (int e = 0; e < (k == 0 || k == 5 ? 2 : 1); ++e, ++i) {
            r[i].pot.assign(size_t(n), 0);
            r[i].grad.assign(want_grad ? size_t(3 * n) : 0, 0);
            GPUFMM_OK(gpufmm_laplace_evaluate(plan, q.data(), nullptr, r[i].pot.data(),
                                              want_grad ? r[i].grad.data() : nullptr));
          }
          GPUFMM_OK(gpufmm_laplace_plan_destroy(plan));
        }
        EXPECT_EQ(r[0].pot, r[1].pot);
        EXPECT_EQ(r[0].grad, r[1].grad);
        for (int i : {2, 6, 7}) {
          EXPECT_EQ(r[0].pot, r[i].pot) << "evaluate " << i;
          EXPECT_EQ(r[0].grad, r[i].grad) << "evaluate " << i;
        }
        EXPECT_EQ(r[5].pot, r[8].pot) << "flow, 1 point of A per lane";
        EXPECT_EQ(r[5].grad, r[8].grad) << "flow, 1 point of A per lane";

        if (c.l_max >= 2) EXPECT_NE(r[0].pot, r[3].pot) << "the mutual near field did not run";
        const double tol = dbl ? 1e-12 : 1e-5;
        EXPECT_LE(rel_l2(r[0].pot, r[3].pot), tol);
        EXPECT_LE(rel_l2(r[0].pot, cp.pot), dbl ? 1e-12 : 2e-5);
        for (int i : {4, 5}) {
          EXPECT_LE(rel_l2(r[i].pot, r[0].pot), tol);
          if (want_grad) EXPECT_LE(rel_l2(r[i].grad, r[0].grad), tol);
        }
        if (want_grad) {
          EXPECT_LE(rel_l2(r[0].grad, r[3].grad), tol);
          EXPECT_LE(rel_l2(r[0].grad, cp.grad), dbl ? 1e-12 : 2e-5);
        }
      }
    }
  }
}

// p2p_mutual=auto at a forced uniform depth (L = 4, 4096 leaves, passes of
// more than 4 leaf pairs per SM): 400000 uniform points take the mutual
// near field (bits unlike BpB's; tail x SMs / work ~ 0.1 on 132 SMs); the
// same points with a dense ball of 40000 inside one leaf do not (~ 100), as its passes would wait on that leaf's blocks
// (nf::mutual_is_balanced): the bits are BpB's (p2p_mutual=off). Both
// agree with p2p_mutual=on to rounding, whose flow schedule (4096 leaves,
// 53000 leaf pairs in one launch of 5 or 2 blocks per SM taking pairs in
// turn; automatic, as the default takes it here, and with the near field
// below the far field's priority) gives the passes' bits.
TEST_F(CudaLaplaceFmm, MutualNearFieldAutoSkipsUnbalancedLeaves) {
  const int64_t nu = 400000, nball = 40000;
  const auto uni = gpufmm_test::make_points(Dist::Uniform, nu, 111);
  auto ball = uni;
  const auto off = randu(112, 3 * nball, -0.01, 0.01);
  for (int64_t i = 0; i < 3 * nball; ++i) ball.push_back(0.53125 + off[size_t(i)]);
  for (bool balanced : {true, false}) {
    SCOPED_TRACE(balanced ? "uniform" : "uniform + dense ball");
    const auto& src = balanced ? uni : ball;
    const int64_t n = int64_t(src.size() / 3);
    const auto q = randu(113, n, -1, 1);
    const auto o = options(1e-6, GPUFMM_FLOAT64, 10, 4);
    Result r[6];
    const char* ks[6] = {"", "p2p_mutual=off", "p2p_mutual=on,p2p_mutual_flow=off", "p2p_mutual=on,p2p_mutual_flow=5",
                         "p2p_mutual=on,p2p_mutual_flow=2", "p2p_mutual=on,p2p_mutual_flow=auto,p2p_low_priority=on"};
    for (int k = 0; k < 6; ++k) {
      kernels = ks[k];
      fmm(gpu, o, src, nullptr, q.data(), nullptr, r[k]);
    }
    kernels.clear();
    if (balanced) {
      EXPECT_NE(r[0].pot, r[1].pot) << "the mutual near field did not run on uniform points";
      EXPECT_EQ(r[0].pot, r[2].pot) << "the default's mutual sums (the flow schedule) are not the passes' bits";
      EXPECT_EQ(r[0].grad, r[2].grad);
    } else {
      EXPECT_EQ(r[0].pot, r[1].pot) << "the mutual near field ran on unbalanced leaves";
      EXPECT_EQ(r[0].grad, r[1].grad);
    }
    EXPECT_LE(rel_l2(r[0].pot, r[2].pot), 1e-12);
    EXPECT_LE(rel_l2(r[0].grad, r[2].grad), 1e-12);
    for (int k : {3, 4, 5}) {
      EXPECT_EQ(r[2].pot, r[k].pot) << "the flow schedule's bits are the passes' (" << ks[k] << ")";
      EXPECT_EQ(r[2].grad, r[k].grad) << ks[k];
    }
  }
}

// Degenerate sizes: one source, shallow trees, dipoles only, potential only.
TEST_F(CudaLaplaceFmm, SmallAndShallow) {
  for (int64_t n : {1, 2, 50, 700}) {
    const auto src = gpufmm_test::make_points(Dist::Uniform, n, 41);
    const auto d = randu(42, 3 * n, -1, 1);
    for (int l : {0, 1, 2, 3}) {
      SCOPED_TRACE("n " + std::to_string(n) + " l_max " + std::to_string(l));
      const auto o = options(1e-6, GPUFMM_FLOAT64, 0, l);
      Result g, c;
      fmm(gpu, o, src, nullptr, nullptr, d.data(), g);
      fmm(cpu, o, src, nullptr, nullptr, d.data(), c);
      EXPECT_LE(rel_l2(g.pot, c.pot), 1e-12);
      EXPECT_LE(rel_l2(g.grad, c.grad), 1e-12);
    }
  }
}

// P2M and L2P strategies (p2m=bpb|wpb|tpb, p2m=bpb with 1, 2 and 4 warps per
// leaf, l2p=bpb|tpt|tpb) against the CPU pipeline: charges, dipoles and both,
// double and float, sources == targets and !=. Uniform points at l_max 2
// (~190 per leaf: more than one tile of 32 sources and one block of 128
// targets) and Plummer points at l_max 3 (crowded central leaves, sparse outer
// ones). p = 40 and 50 (double): k_p2m_bpb with the shared-memory opt-in (4
// warps, 85 KB at p = 40) and with fewer warps per block (2 at p = 50).
TEST_F(CudaLaplaceFmm, P2MAndL2PStrategiesMatchCpu) {
  const int64_t n = 12000;
  const auto q = randu(63, n, -1, 1), d = randu(64, 3 * n, -1, 1);
  const char* all[] = {"",  // the defaults (p2m=bpb with automatic warps per leaf, l2p=bpb)
                       "p2m=bpb,p2m_warps=1,l2p=bpb", "p2m=bpb,p2m_warps=2,l2p=tpt",
                       "p2m=bpb,p2m_warps=4,l2p=tpb", "p2m=wpb,l2p=tpt", "p2m=tpb,l2p=tpb"};
  for (auto [dist, l_max] : {std::pair<Dist, int>{Dist::Uniform, 2}, std::pair<Dist, int>{Dist::Plummer, 3}}) {
    const auto src = gpufmm_test::make_points(dist, n, 61);
    const auto trg = gpufmm_test::make_points(dist, n / 2, 62);
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)})
      for (int inputs : {1, 2, 3})
        for (int same : {1, 0}) {
          if (!same && inputs != 3) continue;
          const double* qp = (inputs & 1) ? q.data() : nullptr;
          const double* dp = (inputs & 2) ? d.data() : nullptr;
          const auto o = options(1e-6, precision, precision == GPUFMM_FLOAT64 ? 12 : 7, l_max);
          Result c;
          fmm(cpu, o, src, same ? nullptr : &trg, qp, dp, c);
          for (const char* k : all) {
            SCOPED_TRACE(std::string(gpufmm_test::dist_name(dist)) + " precision " + std::to_string(precision) +
                         " inputs " + std::to_string(inputs) + " same " + std::to_string(same) + " kernels '" + k +
                         "'");
            kernels = k;
            Result g;
            fmm(gpu, o, src, same ? nullptr : &trg, qp, dp, g);
            kernels.clear();
            // Float: GPU and CPU round differently (FMA contraction, rsqrt,
            // order of the M2L sums); with dipoles on Plummer data every
            // strategy, the unchanged wpb / tpt kernels included, differs from
            // the CPU by 2.2e-5 in the gradient (H100), hence 5e-5.
            const double tol = precision == GPUFMM_FLOAT64 ? 1e-12 : 5e-5;
            EXPECT_LE(rel_l2(g.pot, c.pot), tol);
            EXPECT_LE(rel_l2(g.grad, c.grad), tol);
          }
        }
  }
  // High p (double, charges and dipoles).
  const auto src = gpufmm_test::make_points(Dist::Uniform, n, 65);
  for (int p : {40, 50}) {
    const auto o = options(1e-6, GPUFMM_FLOAT64, p, 2);
    Result c;
    fmm(cpu, o, src, nullptr, q.data(), d.data(), c);
    for (const char* k : {"", "p2m=bpb,p2m_warps=1", "p2m=bpb,p2m_warps=4", "p2m=wpb,l2p=tpt"}) {
      SCOPED_TRACE("p " + std::to_string(p) + " kernels '" + k + "'");
      kernels = k;
      Result g;
      fmm(gpu, o, src, nullptr, q.data(), d.data(), g);
      kernels.clear();
      EXPECT_LE(rel_l2(g.pot, c.pot), 1e-12);
      EXPECT_LE(rel_l2(g.grad, c.grad), 1e-12);
    }
  }
}

}  // namespace
