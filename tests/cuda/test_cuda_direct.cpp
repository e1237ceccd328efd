// gpufmm_direct and gpufmm_direct_arrays on the GPU against the CPU backend,
// for every kernel (tests/common/kernel_ref.hpp's cases), float and double,
// uniform and clustered points with fresh seeds, separate targets and at the
// sources; the arrays variant (data on the device) gives the host-pointer
// call's values bit for bit; non-finite device inputs are refused naming
// the argument and the index, with the device outputs untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/gpu_cpu_fixture.hpp"
#include "common/kernel_ref.hpp"
#include "common/rel_l2.hpp"
#include "gpufmm.h"

namespace {

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

using gpufmm_test::Dist;
using gpufmm_test::kernel_cases;
using gpufmm_test::rel_l2;

uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

class CudaDirect : public gpufmm_test::GpuCpuContexts {
 protected:
  void compare(Dist dist, int64_t ns, int64_t nt, double tol_float) {
    const uint64_t seed = fresh_seed();
    const std::vector<double> src = gpufmm_test::make_points(dist, ns, seed);
    const std::vector<double> trg = nt >= 0 ? gpufmm_test::make_points(dist, nt, seed + 1) : std::vector<double>();
    gpufmm_test::Rng rng(seed + 2);
    std::vector<double> q(ns);
    for (auto& v : q) v = 2 * rng.uniform() - 1;
    const int64_t m = nt >= 0 ? nt : ns;
    const double* tp = nt >= 0 ? trg.data() : nullptr;
    for (const auto& kc : kernel_cases()) {
      gpufmm_kernel_t k;
      GPUFMM_OK(gpufmm_kernel_init(&k, kc.type, int(kc.params.size()), kc.params.data()));
      for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
        SCOPED_TRACE(kc.name + " " + gpufmm_test::dist_name(dist) + " seed " + std::to_string(seed) +
                     (precision == GPUFMM_FLOAT64 ? " double" : " float"));
        const double tol = precision == GPUFMM_FLOAT64 ? 1e-13 : tol_float;
        std::vector<double> cp(m), cg(3 * m), gp(m), gg(3 * m);
        GPUFMM_OK(gpufmm_direct(cpu, &k, precision, ns, src.data(), q.data(), nt, tp, cp.data(), cg.data()));
        GPUFMM_OK(gpufmm_direct(gpu, &k, precision, ns, src.data(), q.data(), nt, tp, gp.data(), gg.data()));
        const double ep = rel_l2(gp, cp), eg = rel_l2(gg, cg);
        EXPECT_LE(ep, tol) << "potential";
        EXPECT_LE(eg, tol) << "gradient";
        std::printf("%-14s %-9s %-6s ns %6lld nt %6lld: GPU vs CPU %.2e (pot) %.2e (grad)\n", kc.name.c_str(),
                    gpufmm_test::dist_name(dist), precision == GPUFMM_FLOAT64 ? "double" : "float",
                    (long long)ns, (long long)nt, ep, eg);

        // The arrays variant: the same values, bit for bit.
        gpufmm_array_t s, qa, t = nullptr, pa, ga;
        const int64_t ds[1] = {3 * ns}, dq[1] = {ns}, dt[1] = {3 * m}, dp[1] = {m};
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, ds, &s));
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &qa));
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dp, &pa));
        GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dt, &ga));
        GPUFMM_OK(gpufmm_array_upload(s, src.data(), 3 * ns));
        GPUFMM_OK(gpufmm_array_upload(qa, q.data(), ns));
        if (nt >= 0) {
          GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dt, &t));
          GPUFMM_OK(gpufmm_array_upload(t, trg.data(), 3 * nt));
        }
        GPUFMM_OK(gpufmm_direct_arrays(&k, precision, s, qa, t, pa, ga));
        std::vector<double> ap(m), ag(3 * m);
        GPUFMM_OK(gpufmm_array_download(pa, ap.data(), m));
        GPUFMM_OK(gpufmm_array_download(ga, ag.data(), 3 * m));
        EXPECT_EQ(ap, gp);
        EXPECT_EQ(ag, gg);
        for (gpufmm_array_t a : {s, qa, t, pa, ga}) gpufmm_array_destroy(a);
      }
    }
  }
};

TEST_F(CudaDirect, Uniform) { compare(Dist::Uniform, 5000, 3001, 1e-5); }
TEST_F(CudaDirect, UniformAtSources) { compare(Dist::Uniform, 4099, -1, 1e-5); }
TEST_F(CudaDirect, Plummer) { compare(Dist::Plummer, 6000, 2500, 1e-4); }
TEST_F(CudaDirect, ClustersAtSources) { compare(Dist::Clusters, 3000, -1, 1e-4); }
TEST_F(CudaDirect, FewTargetsManySources) { compare(Dist::Uniform, 70001, 37, 1e-5); }

TEST_F(CudaDirect, DeviceInputsChecked) {
  gpufmm_kernel_t k;
  const double p[2] = {0.5, 0.1};
  GPUFMM_OK(gpufmm_kernel_init(&k, GPUFMM_KERNEL_REGULARIZED_YUKAWA, 2, p));
  std::vector<double> src = gpufmm_test::uniform_cube(100, fresh_seed()), q(100, 1.0);
  const int64_t ds[1] = {300}, dq[1] = {100};
  gpufmm_array_t s, qa, pa;
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, ds, &s));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &qa));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dq, &pa));
  const double seven = 7.0;
  GPUFMM_OK(gpufmm_array_fill(pa, &seven));
  auto expect_refused = [&](const char* needle) {
    GPUFMM_OK(gpufmm_array_upload(s, src.data(), 300));
    GPUFMM_OK(gpufmm_array_upload(qa, q.data(), 100));
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
      EXPECT_EQ(gpufmm_direct_arrays(&k, precision, s, qa, nullptr, pa, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
      const std::string msg = gpufmm_last_error_message();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      std::vector<double> out(100);
      GPUFMM_OK(gpufmm_array_download(pa, out.data(), 100));
      for (double v : out) ASSERT_EQ(v, 7.0);
    }
  };
  src[3 * 42 + 1] = NAN;
  expect_refused("'sources': point 42");
  src[3 * 42 + 1] = 0.5;
  q[17] = -INFINITY;
  expect_refused("'charges': charge 17");
  q[17] = 1.0;
  GPUFMM_OK(gpufmm_array_upload(qa, q.data(), 100));
  GPUFMM_OK(gpufmm_direct_arrays(&k, GPUFMM_FLOAT64, s, qa, nullptr, pa, nullptr));  // the context still works
  for (gpufmm_array_t a : {s, qa, pa}) gpufmm_array_destroy(a);
}

}  // namespace
