// Handles of every type (contexts, arrays, trees, Laplace plans) on the CPU
// backend: a destroyed handle stays GPUFMM_ERROR_INVALID_HANDLE forever,
// whatever the allocator does with the object's memory, and destroy while
// another thread is inside a call on the handle neither crashes nor lets the
// call see a freed object (issue 14, defects 1 and 2).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "gpufmm.h"

namespace {

constexpr int64_t kPoints = 64;

std::vector<double> points() {
  std::vector<double> p(3 * kPoints);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<double>((i * 7919) % 1000) / 1000.0;
  return p;
}

// One handle type: how to create, use (a query that succeeds on a live
// handle) and destroy one.
template <class H>
struct Kind {
  std::function<gpufmm_status_t(H*)> create;
  std::function<gpufmm_status_t(H)> use;
  std::function<gpufmm_status_t(H)> destroy;
};

// Creates, destroys and creates again: the memory of the first object is
// free for the second, and the allocator gives it back at once (malloc's
// per-size free lists), so a registry keyed by address took the stale handle
// for the new object. Re-creates until the new handle has the stale handle's
// value, if it ever does; then the stale handle must be refused and must not
// reach the new object.
template <class H>
void stale_after_reuse(const Kind<H>& k) {
  H stale = nullptr;
  ASSERT_EQ(k.create(&stale), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  ASSERT_EQ(k.destroy(stale), GPUFMM_SUCCESS);
  H fresh = nullptr;
  for (int attempt = 1;; ++attempt) {
    ASSERT_EQ(k.create(&fresh), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    if (fresh == stale || attempt == 100) break;
    ASSERT_EQ(k.destroy(fresh), GPUFMM_SUCCESS);
  }
  EXPECT_EQ(k.use(stale), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(k.destroy(stale), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(k.use(fresh), GPUFMM_SUCCESS) << "destroying the stale handle destroyed the new object";
  EXPECT_EQ(k.destroy(fresh), GPUFMM_SUCCESS);
  EXPECT_EQ(k.use(fresh), GPUFMM_ERROR_INVALID_HANDLE);
}

// One thread uses the handle in a loop until the handle is refused, another
// destroys it once the first call has run: every call returns SUCCESS or
// INVALID_HANDLE, the destroy succeeds, and nothing touches freed memory
// (ASan, TSan).
template <class H>
void destroy_during_use(const Kind<H>& k, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    H h = nullptr;
    ASSERT_EQ(k.create(&h), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    std::atomic<int> calls{0};
    std::atomic<bool> other{false};
    std::thread user([&] {
      for (;;) {
        const gpufmm_status_t s = k.use(h);
        calls++;
        if (s == GPUFMM_ERROR_INVALID_HANDLE) return;
        if (s != GPUFMM_SUCCESS) {
          other = true;
          return;
        }
      }
    });
    while (calls.load() == 0) std::this_thread::yield();
    const gpufmm_status_t destroyed = k.destroy(h);
    user.join();
    EXPECT_EQ(destroyed, GPUFMM_SUCCESS) << gpufmm_last_error_message();
    EXPECT_FALSE(other.load()) << "a call during destroy returned neither SUCCESS nor INVALID_HANDLE";
  }
}

class Handles : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx_), GPUFMM_SUCCESS);
    ASSERT_EQ(gpufmm_laplace_options_init(&opt_), GPUFMM_SUCCESS);
    opt_.eps = 1e-3;
  }
  void TearDown() override { EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_SUCCESS) << gpufmm_last_error_message(); }

  Kind<gpufmm_context_t> contexts() const {
    return {[](gpufmm_context_t* c) { return gpufmm_context_create(GPUFMM_DEVICE_CPU, c); },
            [](gpufmm_context_t c) {
              gpufmm_device_info_t info;
              return gpufmm_context_device_info(c, &info);
            },
            gpufmm_context_destroy};
  }
  Kind<gpufmm_array_t> arrays() const {
    return {[this](gpufmm_array_t* a) {
              const int64_t n = kPoints;
              const gpufmm_status_t s = gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 1, &n, a);
              return s != GPUFMM_SUCCESS ? s : gpufmm_array_upload(*a, q_.data(), n);
            },
            [](gpufmm_array_t a) {
              double sum = 0;
              return gpufmm_array_sum(a, &sum);
            },
            gpufmm_array_destroy};
  }
  Kind<gpufmm_tree_t> trees() const {
    return {[this](gpufmm_tree_t* t) {
              return gpufmm_tree_build(ctx_, nullptr, kPoints, pts_.data(), kPoints, nullptr, t);
            },
            [](gpufmm_tree_t t) {
              gpufmm_tree_stats_t st;
              return gpufmm_tree_stats(t, &st);
            },
            gpufmm_tree_destroy};
  }
  Kind<gpufmm_laplace_plan_t> plans() {
    return {[this](gpufmm_laplace_plan_t* p) {
              return gpufmm_laplace_plan_create(ctx_, &opt_, kPoints, pts_.data(), 0, nullptr, p);
            },
            [this](gpufmm_laplace_plan_t p) {
              return gpufmm_laplace_evaluate(p, q_.data(), nullptr, pot_.data(), nullptr);
            },
            gpufmm_laplace_plan_destroy};
  }

  gpufmm_context_t ctx_ = nullptr;
  gpufmm_laplace_options_t opt_;
  std::vector<double> pts_ = points();
  std::vector<double> q_ = std::vector<double>(kPoints, 1.0);
  std::vector<double> pot_ = std::vector<double>(kPoints, 0.0);
};

TEST_F(Handles, StaleContextAfterReuse) { stale_after_reuse(contexts()); }
TEST_F(Handles, StaleArrayAfterReuse) { stale_after_reuse(arrays()); }
TEST_F(Handles, StaleTreeAfterReuse) { stale_after_reuse(trees()); }
TEST_F(Handles, StaleLaplacePlanAfterReuse) { stale_after_reuse(plans()); }

// A handle of one type is never taken for another, even where the values
// could meet.
TEST_F(Handles, KindsAreNotConfused) {
  gpufmm_array_t a = nullptr;
  ASSERT_EQ(arrays().create(&a), GPUFMM_SUCCESS);
  gpufmm_backend_t b;
  EXPECT_EQ(gpufmm_context_backend(reinterpret_cast<gpufmm_context_t>(a), &b), GPUFMM_ERROR_INVALID_HANDLE);
  gpufmm_context_t back = nullptr;
  ASSERT_EQ(gpufmm_array_context(a, &back), GPUFMM_SUCCESS);
  EXPECT_EQ(back, ctx_);
  EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_SUCCESS);
}

TEST_F(Handles, DestroyContextDuringUse) { destroy_during_use(contexts(), 50); }
TEST_F(Handles, DestroyArrayDuringUse) { destroy_during_use(arrays(), 50); }
TEST_F(Handles, DestroyTreeDuringUse) { destroy_during_use(trees(), 20); }
TEST_F(Handles, DestroyLaplacePlanDuringEvaluate) { destroy_during_use(plans(), 20); }

// An array that a running evaluate reads: destroying it waits for the
// evaluate, which sees either the whole array or an invalid handle.
TEST_F(Handles, DestroyArrayDuringEvaluate) {
  gpufmm_laplace_plan_t plan = nullptr;
  ASSERT_EQ(plans().create(&plan), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  gpufmm_array_t pot = nullptr;
  ASSERT_EQ(arrays().create(&pot), GPUFMM_SUCCESS);
  Kind<gpufmm_array_t> charges = arrays();
  charges.use = [&](gpufmm_array_t q) { return gpufmm_laplace_evaluate_arrays(plan, q, nullptr, pot, nullptr); };
  destroy_during_use(charges, 20);
  EXPECT_EQ(gpufmm_array_destroy(pot), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_laplace_plan_destroy(plan), GPUFMM_SUCCESS);
}

}  // namespace
