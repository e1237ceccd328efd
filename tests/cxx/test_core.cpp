// Status strings, version, device queries and context error paths.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "gpufmm.h"

TEST(Status, EveryStatusHasADistinctString) {
  std::set<std::string> seen;
  for (int s = GPUFMM_SUCCESS; s <= GPUFMM_ERROR_COMMUNICATION; ++s) {
    const char* str = gpufmm_status_string(static_cast<gpufmm_status_t>(s));
    ASSERT_NE(str, nullptr);
    EXPECT_EQ(std::string(str).rfind("GPUFMM_", 0), 0u) << str;
    EXPECT_TRUE(seen.insert(str).second) << "duplicate " << str;
  }
  EXPECT_NE(std::string(gpufmm_status_string(static_cast<gpufmm_status_t>(1234))).find("UNKNOWN"),
            std::string::npos);
  EXPECT_NE(std::string(gpufmm_status_string(GPUFMM_ERROR_SIZE_MISMATCH)).find("SIZE_MISMATCH"), std::string::npos);
}

TEST(Status, VersionParts) {
  int ma = -1, mi = -1, pa = -1;
  const std::string v = gpufmm_version(&ma, &mi, &pa);
  EXPECT_EQ(v, std::to_string(ma) + "." + std::to_string(mi) + "." + std::to_string(pa));
  EXPECT_EQ(std::string(gpufmm_version(nullptr, nullptr, nullptr)), v);
}

TEST(Status, LastErrorIsThreadLocal) {
  gpufmm_context_t c = nullptr;
  ASSERT_EQ(gpufmm_context_create(-7, &c), GPUFMM_ERROR_INVALID_ARGUMENT);
  const std::string here = gpufmm_last_error_message();
  EXPECT_NE(here.find("device"), std::string::npos) << here;
  EXPECT_NE(here.find("gpufmm_context_create"), std::string::npos) << here;
  std::string there = "unset";
  std::thread([&] { there = gpufmm_last_error_message(); }).join();
  EXPECT_EQ(there, "");
}

TEST(Context, CpuBackendLifecycle) {
  gpufmm_context_t c = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &c), GPUFMM_SUCCESS);
  gpufmm_backend_t b;
  ASSERT_EQ(gpufmm_context_backend(c, &b), GPUFMM_SUCCESS);
  EXPECT_EQ(b, GPUFMM_BACKEND_CPU);
  EXPECT_EQ(gpufmm_context_destroy(c), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_context_destroy(c), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_context_synchronize(c), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_context_destroy(nullptr), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_context_synchronize(nullptr), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
}

TEST(Context, DefaultPicksGpuIfAnyElseCpu) {
  int n = -1;
  ASSERT_EQ(gpufmm_device_count(&n), GPUFMM_SUCCESS);
  EXPECT_GE(n, 0);
  if (!gpufmm_cuda_built()) EXPECT_EQ(n, 0);
  EXPECT_EQ(gpufmm_device_count(nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  gpufmm_context_t c = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &c), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  gpufmm_backend_t b;
  ASSERT_EQ(gpufmm_context_backend(c, &b), GPUFMM_SUCCESS);
  EXPECT_EQ(b, n > 0 ? GPUFMM_BACKEND_CUDA : GPUFMM_BACKEND_CPU);
  EXPECT_EQ(gpufmm_context_destroy(c), GPUFMM_SUCCESS);
}

TEST(Context, MissingGpuIsAClearError) {
  int n = 0;
  ASSERT_EQ(gpufmm_device_count(&n), GPUFMM_SUCCESS);
  gpufmm_context_t c = nullptr;
  const gpufmm_status_t s = gpufmm_context_create(n, &c);  // one past the last device
  EXPECT_EQ(s, gpufmm_cuda_built() ? GPUFMM_ERROR_NO_DEVICE : GPUFMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("GPU"), std::string::npos);
}
