// gpufmm_laplace_direct on the CUDA backend against the CPU backend on the
// same inputs: relative L2 error <= 1e-13 in double and <= 1e-5 in float
// (GPU float against CPU float: the same rounded inputs, so what differs is
// the arithmetic - rsqrtf, summation order). Sizes that are and are not
// multiples of the tile, few targets against many sources (the split-source
// path), coincident points, every input/output combination; determinism, an
// error path. Skips when no CUDA device is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpufmm.h"
#include "common/gpu_cpu_fixture.hpp"
#include "common/rel_l2.hpp"

namespace {

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

std::vector<double> uniform(std::mt19937_64& g, size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

using gpufmm_test::rel_l2;

class CudaLaplaceDirect : public gpufmm_test::GpuCpuContexts {
 protected:

  // ns random sources (source 1 duplicates source 0), nt targets (nt < 0: at
  // the sources; otherwise target 0 sits on source 2), both precisions, every
  // combination of inputs and outputs (all = false: charges and dipoles, pot
  // and grad only).
  void compare(uint64_t seed, int64_t ns, int64_t nt, bool all = true) {
    std::mt19937_64 g(seed);
    auto src = uniform(g, 3 * ns, 0, 1);
    if (ns > 1)
      for (int k = 0; k < 3; ++k) src[3 + k] = src[k];
    const auto q = uniform(g, ns, -1, 1), d = uniform(g, 3 * ns, -1, 1);
    std::vector<double> trg;
    if (nt >= 0) {
      trg = uniform(g, 3 * nt, -0.1, 1.1);
      if (nt > 0 && ns > 2)
        for (int k = 0; k < 3; ++k) trg[k] = src[6 + k];
    }
    const int64_t m = nt >= 0 ? nt : ns;
    const double* tp = nt >= 0 ? trg.data() : nullptr;
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
      const double tol = precision == GPUFMM_FLOAT64 ? 1e-13 : 1e-5;
      for (int inputs = all ? 1 : 3; inputs <= 3; ++inputs)
        for (int outputs = all ? 1 : 3; outputs <= 3; ++outputs) {
          const double* qp = (inputs & 1) ? q.data() : nullptr;
          const double* dp = (inputs & 2) ? d.data() : nullptr;
          const bool want_pot = outputs & 1, want_grad = outputs & 2;
          SCOPED_TRACE("seed " + std::to_string(seed) + " ns " + std::to_string(ns) + " nt " + std::to_string(nt) +
                       " precision " + std::to_string(precision) + " inputs " + std::to_string(inputs) +
                       " outputs " + std::to_string(outputs));
          std::vector<double> cp(m, 0), cg(3 * m, 0), gp(m, 5.0), gg(3 * m, -5.0);
          GPUFMM_OK(gpufmm_laplace_direct(cpu, precision, ns, src.data(), qp, dp, nt, tp,
                                          want_pot ? cp.data() : nullptr, want_grad ? cg.data() : nullptr));
          GPUFMM_OK(gpufmm_laplace_direct(gpu, precision, ns, src.data(), qp, dp, nt, tp,
                                          want_pot ? gp.data() : nullptr, want_grad ? gg.data() : nullptr));
          if (want_pot) {
            const double e = rel_l2(gp, cp);
            EXPECT_LE(e, tol) << "potential";
            max_err[precision == GPUFMM_FLOAT64] = std::max(max_err[precision == GPUFMM_FLOAT64], e);
          } else {
            for (double v : gp) ASSERT_EQ(v, 5.0);
          }
          if (want_grad) {
            const double e = rel_l2(gg, cg);
            EXPECT_LE(e, tol) << "gradient";
            max_err[precision == GPUFMM_FLOAT64] = std::max(max_err[precision == GPUFMM_FLOAT64], e);
          } else {
            for (double v : gg) ASSERT_EQ(v, -5.0);
          }
        }
    }
    std::printf("ns %lld nt %lld: max relative L2 difference GPU vs CPU: double %.2e, float %.2e\n",
                static_cast<long long>(ns), static_cast<long long>(nt), max_err[1], max_err[0]);
  }

  double max_err[2] = {0, 0};  // [float, double]
};

TEST_F(CudaLaplaceDirect, SeparateTargets) { compare(31001, 3001, 2777); }

TEST_F(CudaLaplaceDirect, AtSources) { compare(31002, 4099, -1); }

TEST_F(CudaLaplaceDirect, TileMultiples) { compare(31003, 512, 256); }

TEST_F(CudaLaplaceDirect, Tiny) {
  compare(31004, 1, 1);
  compare(31005, 3, 2);
  compare(31006, 2, -1);
}

// Few targets, many sources: the sources are split over gridDim.y and the
// partial sums added by a second kernel.
TEST_F(CudaLaplaceDirect, FewTargetsManySources) {
  compare(31007, 200003, 37);
  compare(31008, 70001, 300);
}

// A larger case: more blocks than the split threshold, several waves.
TEST_F(CudaLaplaceDirect, Larger) { compare(31009, 4001, 140001, false); }

TEST_F(CudaLaplaceDirect, DeterministicAndNoSources) {
  std::mt19937_64 g(31010);
  const int64_t ns = 100000, nt = 500;
  const auto src = uniform(g, 3 * ns, 0, 1), q = uniform(g, ns, -1, 1), trg = uniform(g, 3 * nt, 0, 1);
  for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
    std::vector<double> p1(nt), g1(3 * nt), p2(nt), g2(3 * nt);
    GPUFMM_OK(gpufmm_laplace_direct(gpu, precision, ns, src.data(), q.data(), nullptr, nt, trg.data(), p1.data(),
                                    g1.data()));
    GPUFMM_OK(gpufmm_laplace_direct(gpu, precision, ns, src.data(), q.data(), nullptr, nt, trg.data(), p2.data(),
                                    g2.data()));
    EXPECT_EQ(p1, p2);
    EXPECT_EQ(g1, g2);
  }
  std::vector<double> p(nt, 3.0), gr(3 * nt, 3.0);
  GPUFMM_OK(gpufmm_laplace_direct(gpu, GPUFMM_FLOAT32, 0, nullptr, q.data(), nullptr, nt, trg.data(), p.data(),
                                  gr.data()));
  for (double v : p) EXPECT_EQ(v, 0.0);
  for (double v : gr) EXPECT_EQ(v, 0.0);
}

// Argument errors are caught before any device work: outputs untouched, the
// context usable afterwards.
TEST_F(CudaLaplaceDirect, ErrorLeavesOutputsAndContextIntact) {
  std::mt19937_64 g(31011);
  const int64_t ns = 1000;
  auto src = uniform(g, 3 * ns, 0, 1);
  const auto q = uniform(g, ns, -1, 1);
  std::vector<double> pot(ns, 42.0);
  src[3 * 500 + 1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(gpufmm_laplace_direct(gpu, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr, 0, nullptr, pot.data(),
                                  nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("point 500"), std::string::npos)
      << gpufmm_last_error_message();
  for (double v : pot) ASSERT_EQ(v, 42.0);
  src[3 * 500 + 1] = 0.5;
  GPUFMM_OK(gpufmm_laplace_direct(gpu, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr, 0, nullptr, pot.data(),
                                  nullptr));
  EXPECT_NE(pot[0], 42.0);
}

}  // namespace
