// User kernels (GPUFMM_KERNEL_USER, issue 15 item 3) on the CPU backend: a
// user kernel (function pointers) that is the Yukawa kernel gives the
// built-in Yukawa's results to rounding in gpufmm_direct and in the
// treecode (PC, CP, CC; same parameters); smooth user kernels (Gaussian,
// multiquadric) in the treecode against the direct sum at eps 1e-4 and
// 1e-6; bad input refused with INVALID_ARGUMENT naming what is wrong, the
// outputs untouched. The GPU form (NVRTC): tests/cuda/test_cuda_user_kernel.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/rel_l2.hpp"
#include "common/user_kernels.hpp"
#include "gpufmm.h"

namespace {

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()

using gpufmm_test::Dist;
using gpufmm_test::expect_close;
using gpufmm_test::expect_error;
using gpufmm_test::rel_l2;
using gpufmm_test::user_case;
using gpufmm_test::user_kernel;

class UserKernel : public ::testing::Test {
 protected:
  void SetUp() override { GPUFMM_OK(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx)); }
  void TearDown() override { EXPECT_EQ(gpufmm_context_destroy(ctx), GPUFMM_SUCCESS); }
  gpufmm_context_t ctx = nullptr;
};

double nan_beyond_half(double r, const double*) {
  return r > 0.5 ? std::numeric_limits<double>::quiet_NaN() : 1 / r;
}

TEST_F(UserKernel, YukawaEqualsTheBuiltInInTheDirectSum) {
  const gpufmm_kernel_t user = user_kernel(user_case("yukawa"), true, false);
  const gpufmm_kernel_t yuk = gpufmm_test::builtin_yukawa();
  for (int64_t nt : {int64_t(0), int64_t(700)})
    for (int precision : {int(GPUFMM_FLOAT64), int(GPUFMM_FLOAT32)}) {
      const auto p = gpufmm_test::user_problem(Dist::Plummer, 1500, nt, 11 + nt);
      const auto a = gpufmm_test::direct_sums(ctx, user, precision, p);
      const auto b = gpufmm_test::direct_sums(ctx, yuk, precision, p);
      SCOPED_TRACE("nt " + std::to_string(nt) + " precision " + std::to_string(precision));
      expect_close(a, b, precision == GPUFMM_FLOAT64 ? 1e-14 : 1e-5, "user vs built-in");
    }
}

TEST_F(UserKernel, YukawaEqualsTheBuiltInInTheTreecode) {
  const gpufmm_kernel_t user = user_kernel(user_case("yukawa"), true, false);
  const gpufmm_kernel_t yuk = gpufmm_test::builtin_yukawa();
  for (int type : {GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC})
    for (int64_t nt : {int64_t(0), int64_t(3000)}) {
      const auto p = gpufmm_test::user_problem(Dist::Uniform, 5000, nt, 23 + type);
      const auto a = gpufmm_test::treecode_sums(ctx, user, type, GPUFMM_FLOAT64, p);
      const auto b = gpufmm_test::treecode_sums(ctx, yuk, type, GPUFMM_FLOAT64, p);
      SCOPED_TRACE("type " + std::to_string(type) + " nt " + std::to_string(nt));
      expect_close(a, b, 1e-13, "user vs built-in");
    }
}

TEST_F(UserKernel, SmoothKernelsInTheTreecodeMeetEps) {
  for (const char* name : {"gaussian", "multiquadric"}) {
    const gpufmm_kernel_t k = user_kernel(user_case(name), true, false);
    for (double eps : {1e-4, 1e-6})
      for (int type : {GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC})
        // eps 1e-6 asks degree 10: clusters need more than 11^3 points to
        // carry proxies, so more points than at 1e-4 (degree 5).
        gpufmm_test::check_treecode(ctx,
                                    gpufmm_test::user_treecode_case(name, k, type, eps, eps < 1e-5 ? 15000 : 6000, 100));
  }
}

TEST_F(UserKernel, TheOneShotTreecodeTakesAUserKernel) {
  const gpufmm_kernel_t user = user_kernel(user_case("gaussian"), true, true);  // both forms: the CPU takes its own
  const auto p = gpufmm_test::user_problem(Dist::Uniform, 3000, 0, 5);
  std::vector<double> pot(3000), ref(3000);
  GPUFMM_OK(gpufmm_treecode(ctx, &user, 1e-6, p.ns, p.src.data(), p.q.data(), 0, nullptr, pot.data(), nullptr));
  GPUFMM_OK(gpufmm_direct(ctx, &user, GPUFMM_FLOAT64, p.ns, p.src.data(), p.q.data(), 0, nullptr, ref.data(),
                          nullptr));
  EXPECT_LE(rel_l2(pot, ref), 1e-6);
}

TEST_F(UserKernel, InitRefusesBadArguments) {
  const auto c = user_case("yukawa");
  gpufmm_kernel_t k = gpufmm_test::builtin_yukawa();
  const gpufmm_kernel_t before = k;
  const double p9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, nan = std::numeric_limits<double>::quiet_NaN();
  auto unchanged = [&] { EXPECT_EQ(k.type, before.type); };
  const auto I = GPUFMM_ERROR_INVALID_ARGUMENT;
  expect_error(gpufmm_kernel_init(&k, GPUFMM_KERNEL_USER, 1, p9), I, "gpufmm_kernel_init_user");
  expect_error(gpufmm_kernel_init_user(&k, 9, p9, c.value_expr, c.deriv_expr, nullptr, nullptr, 0), I, "'nparams'");
  expect_error(gpufmm_kernel_init_user(&k, -1, p9, c.value_expr, c.deriv_expr, nullptr, nullptr, 0), I, "'nparams'");
  expect_error(gpufmm_kernel_init_user(&k, 1, nullptr, c.value_expr, c.deriv_expr, nullptr, nullptr, 0), I,
               "'params'");
  expect_error(gpufmm_kernel_init_user(&k, 1, &nan, c.value_expr, c.deriv_expr, nullptr, nullptr, 0), I, "p[0]");
  expect_error(gpufmm_kernel_init_user(&k, 1, p9, c.value_expr, nullptr, nullptr, nullptr, 0), I, "'deriv_expr'");
  expect_error(gpufmm_kernel_init_user(&k, 1, p9, nullptr, nullptr, c.value_fn, nullptr, 0), I, "'deriv_fn'");
  expect_error(gpufmm_kernel_init_user(&k, 1, p9, nullptr, nullptr, nullptr, nullptr, 0), I, "neither");
  expect_error(gpufmm_kernel_init_user(&k, 1, p9, "", c.deriv_expr, nullptr, nullptr, 0), I, "'value_expr'");
  const std::string long_expr(GPUFMM_KERNEL_MAX_EXPR, 'r');
  expect_error(gpufmm_kernel_init_user(&k, 1, p9, long_expr.c_str(), c.deriv_expr, nullptr, nullptr, 0), I,
               "'value_expr'");
  expect_error(gpufmm_kernel_init_user(&k, 1, p9, nullptr, nullptr, c.value_fn, c.deriv_fn, 2), I, "'r0'");
  expect_error(gpufmm_kernel_init_user(nullptr, 1, p9, nullptr, nullptr, c.value_fn, c.deriv_fn, 0), I, "'kernel'");
  unchanged();
}

TEST_F(UserKernel, SumsRefuseBadKernels) {
  gpufmm_test::BadInput in(400);
  const auto& c = in.c;
  const auto& p = in.p;
  const auto I = GPUFMM_ERROR_INVALID_ARGUMENT;
  gpufmm_treecode_options_t o;
  GPUFMM_OK(gpufmm_treecode_options_init(&o));
  gpufmm_treecode_plan_t plan = nullptr;

  // Expressions only: the CPU backend needs the functions.
  const gpufmm_kernel_t gpu_only = user_kernel(c, false, true);
  expect_error(gpufmm_direct(ctx, &gpu_only, GPUFMM_FLOAT64, p.ns, p.src.data(), p.q.data(), 0, nullptr, in.pot.data(),
                             in.grad.data()),
               I, "'value_fn'");
  o.kernel = gpu_only;
  expect_error(gpufmm_treecode_plan_create(ctx, &o, p.ns, p.src.data(), 0, nullptr, &plan), I, "'value_fn'");
  EXPECT_EQ(plan, nullptr);
  in.expect_untouched();

  // A hand-made kernel: parameter count, r0 rule, an expression without NUL.
  gpufmm_kernel_t bad = user_kernel(c, true, false);
  bad.nparams = 9;
  expect_error(gpufmm_direct(ctx, &bad, GPUFMM_FLOAT64, p.ns, p.src.data(), p.q.data(), 0, nullptr, in.pot.data(),
                             nullptr),
               I, "0..8");
  bad = user_kernel(c, true, false);
  bad.r0 = -1;
  expect_error(gpufmm_direct(ctx, &bad, GPUFMM_FLOAT64, p.ns, p.src.data(), p.q.data(), 0, nullptr, in.pot.data(),
                             nullptr),
               I, "'r0'");
  bad = user_kernel(c, true, false);
  for (char& ch : bad.value_expr) ch = 'r';
  expect_error(gpufmm_direct(ctx, &bad, GPUFMM_FLOAT64, p.ns, p.src.data(), p.q.data(), 0, nullptr, in.pot.data(),
                             nullptr),
               I, "NUL");
  in.expect_untouched();

  // The Yukawa functions with the self pairs included: g(0) = Inf.
  gpufmm_kernel_t inf_at_0 = user_kernel(c, true, false);
  inf_at_0.r0 = GPUFMM_KERNEL_R0_INCLUDED;
  expect_error(gpufmm_direct(ctx, &inf_at_0, GPUFMM_FLOAT64, p.ns, p.src.data(), p.q.data(), 0, nullptr, in.pot.data(),
                             in.grad.data()),
               I, "NaN or Inf");
  o.kernel = inf_at_0;
  o.theta = 0.7;
  o.degree = 3;
  o.leaf_size = o.batch_size = 50;
  // A kernel whose g and dg/dr are NaN beyond r = 0.5 (pairs the treecode
  // meets both directly and through proxies).
  gpufmm_kernel_t far_nan;
  GPUFMM_OK(gpufmm_kernel_init_user(&far_nan, 0, nullptr, nullptr, nullptr, nan_beyond_half, nan_beyond_half,
                                    GPUFMM_KERNEL_R0_LEFT_OUT));
  expect_error(gpufmm_direct(ctx, &far_nan, GPUFMM_FLOAT32, p.ns, p.src.data(), p.q.data(), 0, nullptr, nullptr,
                             in.grad.data()),
               I, "NaN or Inf");
  for (int type : {GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC}) {
    o.type = type;
    o.kernel = inf_at_0;
    GPUFMM_OK(gpufmm_treecode_plan_create(ctx, &o, p.ns, p.src.data(), 0, nullptr, &plan));
    expect_error(gpufmm_treecode_evaluate(plan, p.q.data(), in.pot.data(), in.grad.data()), I, "NaN or Inf");
    GPUFMM_OK(gpufmm_treecode_plan_destroy(plan));
    o.kernel = far_nan;
    GPUFMM_OK(gpufmm_treecode_plan_create(ctx, &o, p.ns, p.src.data(), 0, nullptr, &plan));
    expect_error(gpufmm_treecode_evaluate(plan, p.q.data(), nullptr, in.grad.data()), I, "NaN or Inf");
    GPUFMM_OK(gpufmm_treecode_plan_destroy(plan));
  }
  in.expect_untouched();
}

}  // namespace
