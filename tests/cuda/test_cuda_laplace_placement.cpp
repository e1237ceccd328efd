// Issue 14, defects 3 and 4 on the CUDA backend (GPU 0; skips without a
// device): the checks of tests/common/laplace_placement.hpp, which the CPU
// backend passes in tests/cxx/test_laplace_placement.cpp. The exact box
// centres (P2M, L2P), the P2P differences in double, the device checks of
// tiny coordinates (first_tiny_point) and of results that overflow
// (k_check_results) are the CUDA driver's own code.
// Not here: float close pairs. The CUDA float P2P rounds each coordinate to
// float relative to the target leaf's centre, so pairs closer than ~6e-8 of
// a leaf coincide there and add nothing (as in the float direct sum), where
// the CPU keeps their difference from double (docs/laplace_fmm.md).
#include <gtest/gtest.h>

#include "common/gpu_cpu_fixture.hpp"
#include "common/laplace_placement.hpp"

namespace {

namespace pl = gpufmm_test::placement;
using CudaLaplacePlacement = gpufmm_test::GpuCpuContexts;

TEST_F(CudaLaplacePlacement, UnitCubeAt1e12) { pl::check_offset(gpu, 1e12, 1); }
TEST_F(CudaLaplacePlacement, CubeAt1e15) { pl::check_offset(gpu, 1e15, 1024); }
TEST_F(CudaLaplacePlacement, CubeAtMinus1e15) { pl::check_offset(gpu, -1e15, 1024); }
TEST_F(CudaLaplacePlacement, PairsApart1e15) { pl::check_close_pairs(gpu, 1e-15); }
TEST_F(CudaLaplacePlacement, PairsApart1e12) { pl::check_close_pairs(gpu, 1e-12); }
TEST_F(CudaLaplacePlacement, CoordinatesBeyondDoubleAreRefused) { pl::check_coordinates_refused(gpu); }
TEST_F(CudaLaplacePlacement, DoubleOverflowIsRefused) { pl::check_overflow_refused(gpu, false); }
TEST_F(CudaLaplacePlacement, FloatRefusesWhatDoesNotFitFloat) { pl::check_float_refusals(gpu); }

}  // namespace
