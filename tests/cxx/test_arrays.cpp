// Device arrays on the CPU backend (the same suite runs on the GPU in
// tests/cuda/test_cuda_arrays.cpp).
#include "common/array_suite.hpp"

using array_suite::ArraySuite;
INSTANTIATE_TEST_SUITE_P(Cpu, ArraySuite, ::testing::Values(GPUFMM_DEVICE_CPU));
