// User kernels on the GPU (GPUFMM_KERNEL_USER, issue 15 item 3): the
// expressions compiled by NVRTC into the library's own near-field kernels.
// A user Yukawa equals the built-in Yukawa on the GPU and the CPU backend's
// user Yukawa (function pointers) to rounding, in the direct sum (host and
// device arrays) and the treecode (PC, CP, CC); a Gaussian in the treecode
// meets eps against the direct sum; an expression that does not compile is
// refused with NVRTC's log, a kernel without expressions with the missing
// field named, a kernel that gives NaN with the outputs untouched.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gpu_cpu_fixture.hpp"
#include "common/user_kernels.hpp"
#include "gpufmm.h"

namespace {

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

using gpufmm_test::Dist;
using gpufmm_test::expect_close;
using gpufmm_test::expect_error;
using gpufmm_test::Sums;
using gpufmm_test::user_case;
using gpufmm_test::user_kernel;

class CudaUserKernel : public gpufmm_test::GpuCpuContexts {};

// The GPU's user kernel (g) against the GPU's built-in one (b) and the
// CPU's user kernel (c), to rounding.
void expect_same(const Sums& g, const Sums& b, const Sums& c, int precision) {
  const double tol = precision == GPUFMM_FLOAT64 ? 1e-13 : 1e-4;  // float: as test_cuda_direct on Plummer points
  expect_close(g, b, tol, "GPU user vs GPU built-in");
  expect_close(g, c, tol, "GPU user vs CPU user");
}

TEST_F(CudaUserKernel, YukawaEqualsTheBuiltInAndTheCpuInTheDirectSum) {
  const gpufmm_kernel_t user = user_kernel(user_case("yukawa"), true, true);
  const gpufmm_kernel_t yuk = gpufmm_test::builtin_yukawa();
  for (int64_t nt : {int64_t(0), int64_t(3000)})
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
      SCOPED_TRACE("nt " + std::to_string(nt) + " precision " + std::to_string(precision));
      const auto p = gpufmm_test::user_problem(Dist::Plummer, 5000, nt, 31 + nt);
      const auto g = gpufmm_test::direct_sums(gpu, user, precision, p);
      const auto b = gpufmm_test::direct_sums(gpu, yuk, precision, p);
      expect_same(g, b, gpufmm_test::direct_sums(cpu, user, GPUFMM_FLOAT64, p), precision);
    }
}

TEST_F(CudaUserKernel, YukawaEqualsTheBuiltInAndTheCpuInTheTreecode) {
  const gpufmm_kernel_t user = user_kernel(user_case("yukawa"), true, true);
  const gpufmm_kernel_t yuk = gpufmm_test::builtin_yukawa();
  for (int type : {GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC})
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
      SCOPED_TRACE("type " + std::to_string(type) + " precision " + std::to_string(precision));
      const auto p = gpufmm_test::user_problem(Dist::Plummer, 20000, type == GPUFMM_TREECODE_CP ? 15000 : 0, 7);
      const auto g = gpufmm_test::treecode_sums(gpu, user, type, precision, p);
      const auto b = gpufmm_test::treecode_sums(gpu, yuk, type, precision, p);
      expect_same(g, b, gpufmm_test::treecode_sums(cpu, user, type, precision, p), precision);
    }
}

TEST_F(CudaUserKernel, DeviceArraysGiveTheHostResults) {
  const gpufmm_kernel_t user = user_kernel(user_case("gaussian"), false, true);
  const auto p = gpufmm_test::user_problem(Dist::Uniform, 4000, 0, 9);
  const auto h = gpufmm_test::direct_sums(gpu, user, GPUFMM_FLOAT64, p);
  const int64_t n3[1] = {3 * p.ns}, n1[1] = {p.ns};
  gpufmm_array_t s, q, pot, grad;
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, n3, &s));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, n1, &q));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, n1, &pot));
  GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, n3, &grad));
  GPUFMM_OK(gpufmm_array_upload(s, p.src.data(), 3 * p.ns));
  GPUFMM_OK(gpufmm_array_upload(q, p.q.data(), p.ns));
  GPUFMM_OK(gpufmm_direct_arrays(&user, GPUFMM_FLOAT64, s, q, nullptr, pot, grad));
  std::vector<double> dp(size_t(p.ns)), dg(size_t(3 * p.ns));
  GPUFMM_OK(gpufmm_array_download(pot, dp.data(), p.ns));
  GPUFMM_OK(gpufmm_array_download(grad, dg.data(), 3 * p.ns));
  EXPECT_EQ(dp, h.pot);
  EXPECT_EQ(dg, h.grad);
  for (gpufmm_array_t a : {s, q, pot, grad}) GPUFMM_OK(gpufmm_array_destroy(a));
}

TEST_F(CudaUserKernel, GaussianInTheTreecodeMeetsEps) {
  const gpufmm_kernel_t k = user_kernel(user_case("gaussian"), false, true);
  for (double eps : {1e-4, 1e-6})
    for (int type : {GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC})
      gpufmm_test::check_treecode(gpu, gpufmm_test::user_treecode_case("gaussian", k, type, eps, 50000, 200));
}

TEST_F(CudaUserKernel, BadKernelsAreRefused) {
  gpufmm_test::BadInput in(2000);
  const auto& c = in.c;
  const auto& p = in.p;
  const auto I = GPUFMM_ERROR_INVALID_ARGUMENT;
  auto direct = [&](const gpufmm_kernel_t& k, int precision) {
    return gpufmm_direct(gpu, &k, precision, p.ns, p.src.data(), p.q.data(), 0, nullptr, in.pot.data(), in.grad.data());
  };
  gpufmm_treecode_options_t o;
  GPUFMM_OK(gpufmm_treecode_options_init(&o));
  o.theta = 0.7;
  o.degree = 3;
  o.leaf_size = o.batch_size = 100;

  // A syntax error: refused with NVRTC's log, in either precision.
  gpufmm_kernel_t syntax;
  GPUFMM_OK(gpufmm_kernel_init_user(&syntax, 1, &c.param, "exp(-p[0] * r / r", c.deriv_expr, nullptr, nullptr,
                                    GPUFMM_KERNEL_R0_LEFT_OUT));
  for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
    expect_error(direct(syntax, precision), I, "do not compile");
    const std::string msg = gpufmm_last_error_message();
    EXPECT_NE(msg.find("NVRTC log"), std::string::npos) << msg;
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("exp(-p[0] * r / r"), std::string::npos) << msg;
  }
  gpufmm_kernel_t unknown;  // an identifier the compiler does not know
  GPUFMM_OK(gpufmm_kernel_init_user(&unknown, 1, &c.param, "besselq(r)", c.deriv_expr, nullptr, nullptr, 0));
  expect_error(direct(unknown, GPUFMM_FLOAT64), I, "besselq");
  o.kernel = syntax;  // the plan compiles it
  gpufmm_treecode_plan_t plan = nullptr;
  expect_error(gpufmm_treecode_plan_create(gpu, &o, p.ns, p.src.data(), 0, nullptr, &plan), I, "do not compile");
  EXPECT_EQ(plan, nullptr);
  in.expect_untouched();

  // Functions only: a GPU context needs the expressions.
  const gpufmm_kernel_t cpu_only = user_kernel(c, true, false);
  expect_error(direct(cpu_only, GPUFMM_FLOAT64), I, "'value_expr'");
  o.kernel = cpu_only;
  plan = nullptr;
  expect_error(gpufmm_treecode_plan_create(gpu, &o, p.ns, p.src.data(), 0, nullptr, &plan), I, "'value_expr'");
  EXPECT_EQ(plan, nullptr);
  in.expect_untouched();

  // NaN beyond r = 0.5: the sums fail, the outputs (host and device) untouched.
  gpufmm_kernel_t nan;
  GPUFMM_OK(gpufmm_kernel_init_user(&nan, 0, nullptr, "r > 0.5 ? nan(\"\") : 1 / r", "r > 0.5 ? nan(\"\") : -1 / (r * r)",
                                    nullptr, nullptr, GPUFMM_KERNEL_R0_LEFT_OUT));
  for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) expect_error(direct(nan, precision), I, "NaN or Inf");
  o.kernel = nan;
  for (int type : {GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC}) {
    o.type = type;
    GPUFMM_OK(gpufmm_treecode_plan_create(gpu, &o, p.ns, p.src.data(), 0, nullptr, &plan));
    expect_error(gpufmm_treecode_evaluate(plan, p.q.data(), in.pot.data(), in.grad.data()), I, "NaN or Inf");
    const int64_t n1[1] = {p.ns};
    gpufmm_array_t q, dpot;
    GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, n1, &q));
    GPUFMM_OK(gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, n1, &dpot));
    GPUFMM_OK(gpufmm_array_upload(q, p.q.data(), p.ns));
    GPUFMM_OK(gpufmm_array_upload(dpot, in.pot.data(), p.ns));
    expect_error(gpufmm_treecode_evaluate_arrays(plan, q, dpot, nullptr), I, "NaN or Inf");
    std::vector<double> back(size_t(p.ns));
    GPUFMM_OK(gpufmm_array_download(dpot, back.data(), p.ns));
    EXPECT_EQ(back, in.pot) << "device outputs untouched";
    GPUFMM_OK(gpufmm_array_destroy(q));
    GPUFMM_OK(gpufmm_array_destroy(dpot));
    GPUFMM_OK(gpufmm_treecode_plan_destroy(plan));
  }
  in.expect_untouched();
}

}  // namespace
