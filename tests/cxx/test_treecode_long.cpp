// The treecode's accuracy at eps 1e-8 (and 1e-6 on every distribution) on
// the CPU backend: sizes where clusters above (n+1)^3 points exist for
// those degrees, too slow for CI (label long; tools/gpu-check runs it on the
// GPU machine's host). tests/cuda/test_cuda_treecode.cpp checks the same
// matrix on the GPU.
#include <gtest/gtest.h>

#include "common/treecode_check.hpp"

namespace {

using gpufmm_test::check_treecode;
using gpufmm_test::Dist;
using gpufmm_test::TreecodeCase;

TEST(TreecodeLong, EveryKernelTypeAndDistribution) {
  gpufmm_context_t ctx;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS);
  int alt = 0;
  for (const auto& k : gpufmm_test::treecode_kernels())
    for (int type : {0, 1, 2})
      for (Dist dist : {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer})
        for (double eps : {1e-6, 1e-8}) {
          TreecodeCase c;
          c.kernel = k;
          c.type = type;
          c.dist = dist;
          c.eps = eps;
          c.n = eps < 1e-7 ? 60000 : 30000;
          c.sample = 300;
          c.at_sources = (alt++ % 2) == 0;
          check_treecode(ctx, c);
        }
  EXPECT_EQ(gpufmm_context_destroy(ctx), GPUFMM_SUCCESS);
}

}  // namespace
