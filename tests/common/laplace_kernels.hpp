// A Laplace plan from C options plus a kernel-strategy string such as
// "m2l=bpb,p2p=tpt,m2l_group=4" (fmm::laplace_gpu_parse_kernels): the GPU
// tests and benchmarks sweep the strategies and tuning knobs of the CUDA
// driver, some of which the C options do not carry.
#pragma once

#include "core/context.hpp"
#include "core/error.hpp"
#include "fmm/laplace/plan.hpp"
#include "gpufmm.h"
#include "laplace_convert.hpp"

namespace gpufmm_test {

inline gpufmm_status_t laplace_plan_create_kernels(gpufmm_context_t ctx, const gpufmm_laplace_options_t* opt,
                                                   const char* kernels, int64_t nsrc, const double* sources,
                                                   int64_t ntrg, const double* targets, gpufmm_laplace_plan_t* plan) {
  using namespace gpufmm;
  return guard("laplace_plan_create_kernels", [&] {
    fmm::LaplaceOptions o = capi::laplace_options(opt);
    require(fmm::laplace_gpu_parse_kernels(kernels, o.gpu), GPUFMM_ERROR_INVALID_ARGUMENT,
            "kernel strategies '", kernels, "' not understood");
    *plan = fmm::laplace_plan_handle(fmm::laplace_plan_create(*checked_context(ctx), o, nsrc, sources, ntrg, targets));
  });
}

}  // namespace gpufmm_test
