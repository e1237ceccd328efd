// A Laplace plan from C options plus a kernel-strategy string such as
// "m2l=bpb,p2p=tpt,m2l_group=4" (fmm::laplace_gpu_parse_kernels): the GPU
// tests and benchmarks sweep the strategies and tuning knobs of the CUDA
// driver, some of which the C options do not carry. Plan keys taken here,
// for every backend: "tree=auto|uniform|adaptive", "s_max=N" (the options'
// s_max), "v_direct=F" (LaplaceOptions::adaptive_v_direct: which same-level
// translations of an adaptive tree go to the direct sum), "cost=cpu|gpu"
// (the cost model's constants of that backend, so that plans on both decide
// alike), "c_pair=S" (the constants with S seconds per near-field pair; after
// cost=) and "cube=F" (the options' cube_padding).
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

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
    std::string rest;
    std::stringstream in(kernels ? kernels : "");
    for (std::string kv; std::getline(in, kv, ',');) {
      if (kv.rfind("v_direct=", 0) == 0) {
        o.adaptive_v_direct = std::strtod(kv.c_str() + 9, nullptr);
      } else if (kv.rfind("cube=", 0) == 0) {
        o.cube_padding = std::strtod(kv.c_str() + 5, nullptr);
      } else if (kv.rfind("c_pair=", 0) == 0) {  // the backend's constants with this cost per pair
        const bool single = o.precision == GPUFMM_FLOAT32;
        if (!o.cost)
          o.cost = checked_context(ctx)->on_gpu() ? fmm::laplace_cost_constants_gpu(single)
                                                  : fmm::laplace_cost_constants_cpu(single);
        o.cost->c_pair = std::strtod(kv.c_str() + 7, nullptr);
      } else if (kv.rfind("s_max=", 0) == 0) {
        o.s_max = std::atoi(kv.c_str() + 6);
      } else if (kv == "cost=cpu" || kv == "cost=gpu") {
        const bool single = o.precision == GPUFMM_FLOAT32;
        o.cost = kv == "cost=cpu" ? fmm::laplace_cost_constants_cpu(single) : fmm::laplace_cost_constants_gpu(single);
      } else if (kv == "tree=auto" || kv == "tree=uniform" || kv == "tree=adaptive") {
        o.tree = kv == "tree=auto"      ? GPUFMM_LAPLACE_TREE_AUTO
                 : kv == "tree=uniform" ? GPUFMM_LAPLACE_TREE_UNIFORM
                                        : GPUFMM_LAPLACE_TREE_ADAPTIVE;
      } else {
        rest += (rest.empty() ? "" : ",") + kv;
      }
    }
    require(fmm::laplace_gpu_parse_kernels(rest.c_str(), o.gpu), GPUFMM_ERROR_INVALID_ARGUMENT,
            "kernel strategies '", kernels, "' not understood");
    *plan = fmm::laplace_plan_handle(fmm::laplace_plan_create(*checked_context(ctx), o, nsrc, sources, ntrg, targets));
  });
}

}  // namespace gpufmm_test
