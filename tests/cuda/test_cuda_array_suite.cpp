// The backend-neutral device-array suite (tests/common/array_suite.hpp) on
// GPU 0; skipped without a device.
#include "common/array_suite.hpp"

using array_suite::ArraySuite;
INSTANTIATE_TEST_SUITE_P(Gpu, ArraySuite, ::testing::Values(0));
