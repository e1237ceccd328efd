// Issue 14, defect 8: an allocation that fails is OUT_OF_MEMORY with a message
// that names what could not be allocated, the outputs are untouched, and the
// context stays usable; no std::bad_alloc escapes from an OpenMP region
// (which would terminate the process). This program replaces the global
// operator new so that, while a limit is set, any request of at least that
// many bytes throws std::bad_alloc, as a real shortage would.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "gpufmm.h"

namespace {
std::atomic<size_t> g_limit{0};  // 0: no limit
}  // namespace

void* operator new(size_t n) {
  const size_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit != 0 && n >= limit) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

// Sets the limit for its lifetime.
struct Limit {
  explicit Limit(size_t bytes) { g_limit = bytes; }
  ~Limit() { g_limit = 0; }
};

struct CpuContext {
  gpufmm_context_t ctx = nullptr;
  CpuContext() { EXPECT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  ~CpuContext() { EXPECT_EQ(gpufmm_context_destroy(ctx), GPUFMM_SUCCESS); }
};

void expect_named(gpufmm_status_t s, const char* what) {
  const std::string msg = gpufmm_last_error_message();
  EXPECT_EQ(s, GPUFMM_ERROR_OUT_OF_MEMORY) << msg;
  EXPECT_NE(msg.find("cannot allocate"), std::string::npos) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
}

// 40,000 points: sorted coordinates of 960 kB, a workspace of several MB.
TEST(OutOfMemory, LaplacePlanAndEvaluateNameWhatFailed) {
  CpuContext c;
  const int64_t n = 40000;
  const std::vector<double> x = gpufmm_test::uniform_cube(n, 1);
  std::vector<double> q(static_cast<size_t>(n), 1.0), pot(static_cast<size_t>(n), 7.0),
      grad(static_cast<size_t>(3 * n), 7.0);
  gpufmm_laplace_options_t opt;
  gpufmm_laplace_options_init(&opt);
  opt.eps = 1e-3;
  // No test evaluates at plan creation: they would allocate the workspace
  // that the first evaluate below is to fail on.
  opt.calibrate = 0;
  gpufmm_laplace_plan_t plan = nullptr;
  {
    Limit limit(900 << 10);
    expect_named(gpufmm_laplace_plan_create(c.ctx, &opt, n, x.data(), 0, nullptr, &plan), "host memory for");
  }
  EXPECT_EQ(plan, nullptr);
  ASSERT_EQ(gpufmm_laplace_plan_create(c.ctx, &opt, n, x.data(), 0, nullptr, &plan), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  {
    Limit limit(200 << 10);  // the workspace
    expect_named(gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), grad.data()), "workspace");
  }
  for (double v : pot) ASSERT_EQ(v, 7.0);
  for (double v : grad) ASSERT_EQ(v, 7.0);
  EXPECT_EQ(gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), grad.data()), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  EXPECT_EQ(gpufmm_laplace_plan_destroy(plan), GPUFMM_SUCCESS);
}

TEST(OutOfMemory, DirectSumAndTreeNameWhatFailed) {
  CpuContext c;
  const int64_t n = 40000;
  const std::vector<double> x = gpufmm_test::uniform_cube(n, 2);
  std::vector<double> q(static_cast<size_t>(n), 1.0), pot(100, 7.0);
  {
    Limit limit(200 << 10);
    expect_named(gpufmm_laplace_direct(c.ctx, GPUFMM_FLOAT64, n, x.data(), q.data(), nullptr, 100, x.data(),
                                       pot.data(), nullptr),
                 "direct sum");
  }
  for (double v : pot) ASSERT_EQ(v, 7.0);
  gpufmm_tree_t tree = nullptr;
  {
    Limit limit(200 << 10);
    expect_named(gpufmm_tree_build(c.ctx, nullptr, n, x.data(), n, nullptr, &tree), "octree");
  }
  EXPECT_EQ(tree, nullptr);
  ASSERT_EQ(gpufmm_tree_build(c.ctx, nullptr, n, x.data(), n, nullptr, &tree), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_tree_destroy(tree), GPUFMM_SUCCESS);
}

}  // namespace
