// Long adaptive Laplace FMM tests (label "long": left out of CI, run by
// tools/gpu-check on the 16-core GPU host): every W and X box through M2P
// and P2L at eps 1e-9 on every distribution, the Hessian and two densities
// in every other case. The same check at eps 1e-3 and 1e-6 runs in CI
// (tests/cxx/test_laplace_adaptive.cpp); at 1e-9 p passes the CPU's
// batched M2L and the five cases took 45-70 s on the 2 cores of CI.
// GPUFMM_TEST_SEED replays a run.
#include <gtest/gtest.h>

#include "common/laplace_adaptive_check.hpp"

namespace {

using namespace gpufmm_test;

TEST(LaplaceAdaptiveFmmLong, ThroughM2PAndP2LAt1e9) {
  int i = 0;
  for (Dist d : kAdaptiveDists) {
    ++i;
    check_through_m2p_p2l(d, 1e-9, 100 + i, i % 2 == 1);
  }
}

}  // namespace
