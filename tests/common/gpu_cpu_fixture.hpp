// Test fixture with a GPU context (device 0) and a CPU context; the test is
// skipped when no CUDA device is visible. Shared by the GPU tests that
// compare the two backends.
#pragma once

#include <gtest/gtest.h>

#include "gpufmm.h"

namespace gpufmm_test {

class GpuCpuContexts : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (gpufmm_device_count(&n) != GPUFMM_SUCCESS || n == 0) GTEST_SKIP() << "no CUDA device visible";
    ASSERT_EQ(gpufmm_context_create(0, &gpu), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &cpu), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  }
  void TearDown() override {
    if (gpu) EXPECT_EQ(gpufmm_context_destroy(gpu), GPUFMM_SUCCESS);
    if (cpu) EXPECT_EQ(gpufmm_context_destroy(cpu), GPUFMM_SUCCESS);
  }
  gpufmm_context_t gpu = nullptr, cpu = nullptr;
};

}  // namespace gpufmm_test
