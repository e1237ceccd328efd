// The Laplace FMM on the CPU: the OpenMP driver (fmm/pipeline.hpp) with the
// Laplace expansion (fmm/laplace/cpu_expansion.hpp). The data layout is
// described in fmm/laplace/plan.hpp.
#include "fmm/pipeline.hpp"

#include "fmm/laplace/cpu_expansion.hpp"
#include "fmm/laplace/plan.hpp"

namespace gpufmm {
namespace fmm {

void laplace_evaluate_cpu(LaplacePlan& plan, const LaplaceEvalArgs& a) {
  if (plan.single())
    run_pipeline(plan, plan.ws_f, LaplaceCpuExpansion<float>(*plan.tables_f, plan.p), a);
  else
    run_pipeline(plan, plan.ws_d, LaplaceCpuExpansion<double>(*plan.tables_d, plan.p), a);
}

}  // namespace fmm
}  // namespace gpufmm
