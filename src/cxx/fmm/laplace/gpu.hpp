// The CUDA driver of the Laplace FMM (issue 5): what the plan and the
// benchmark see of it. The kernels are in src/cuda/fmm/laplace/*.cu; the
// design, the strategies and measured numbers in docs/laplace_gpu.md.
//
// The device data of a plan (tables, sorted coordinates, workspace, streams,
// events) hang off LaplacePlan::gpu (a type-erased shared_ptr whose deleter
// frees them), so that the plan's own code needs no CUDA types.
#pragma once

#include "fmm/laplace/plan.hpp"

namespace gpufmm {
namespace fmm {

#if defined(GPUFMM_HAVE_CUDA)
namespace cuda {
// Uploads the tables and sorted coordinates of a plan whose tree was built on
// a GPU context, creates the second stream and the events; sets plan.gpu.
void laplace_plan_setup(LaplacePlan& plan);
// Strategy of the plan's kernels (options.gpu at set-up; a benchmark or a
// test may change it between evaluates). Requires a set-up plan.
LaplaceGpuKernels& laplace_gpu_kernels(LaplacePlan& plan);
// The automatic strategies resolved again (options.gpu's AUTO fields) and
// their plan data built: after the calibration, whose test evaluates keep
// the grouped M2L above p = 24 (LaplacePlan::calibrating).
void laplace_plan_strategies(LaplacePlan& plan);
}  // namespace cuda
#endif

}  // namespace fmm
}  // namespace gpufmm
