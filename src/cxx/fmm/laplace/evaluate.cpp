// Evaluate of a Laplace plan: input checks (finite charges and dipoles,
// named with their index) and the dispatch to the CPU pipeline
// (fmm/laplace/pipeline.cpp) or the CUDA driver (src/cuda/fmm/laplace/).
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "fmm/laplace/gpu.hpp"
#include "fmm/laplace/plan.hpp"
#include "plan/checks.hpp"

namespace gpufmm {
namespace fmm {

namespace {

void check_inputs(const LaplacePlan& plan, const LaplaceEvalArgs& a) {
  if (a.dtype == GPUFMM_FLOAT32) {
    plan::check_values(static_cast<const float*>(a.charges), plan.nsrc, 1, "charges", "charge");
    plan::check_values(static_cast<const float*>(a.dipoles), plan.nsrc, 3, "dipoles", "dipole");
  } else {
    plan::check_values(static_cast<const double*>(a.charges), plan.nsrc, 1, "charges", "charge");
    plan::check_values(static_cast<const double*>(a.dipoles), plan.nsrc, 3, "dipoles", "dipole");
    if (plan.single()) {  // double inputs of a float plan (the host API)
      plan::check_values_fit_float(static_cast<const double*>(a.charges), plan.nsrc, 1, "charges", "charge");
      plan::check_values_fit_float(static_cast<const double*>(a.dipoles), plan.nsrc, 3, "dipoles", "dipole");
    }
  }
}

}  // namespace

void fail_nonfinite_result(const LaplacePlan& plan, int64_t target, double pot, const double* grad) {
  std::ostringstream v;
  v << "potential " << pot;
  if (grad) v << ", gradient (" << grad[0] << ", " << grad[1] << ", " << grad[2] << ")";
  fail(GPUFMM_ERROR_ACCURACY, "the result at target ", target, " (0-based) is not finite (", v.str(),
       "): it overflows ", plan.single() ? "single" : "double",
       " precision (a source within a tiny distance of the target, e.g. a pair closer than ~1e-13 in single "
       "precision, or very large charges or dipoles); no output was written",
       plan.single() ? "; a GPUFMM_FLOAT64 plan holds it" : "");
}

void laplace_evaluate(LaplacePlan& plan, const LaplaceEvalArgs& a) {
  require(a.charges != nullptr || a.dipoles != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'charges' and 'dipoles' are both NULL: the sources carry nothing");
  require(a.pot != nullptr || a.grad != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'pot' and 'grad' are both NULL: nothing to compute");
  require(a.dtype == GPUFMM_FLOAT64 || a.dtype == GPUFMM_FLOAT32, GPUFMM_ERROR_INTERNAL,
          "laplace_evaluate: bad dtype");
#if defined(GPUFMM_HAVE_CUDA)
  if (!plan.cpu_pipeline()) {
    if (!a.on_context) check_inputs(plan, a);  // device inputs: checked by the driver
    cuda::laplace_evaluate(plan, a);
    return;
  }
#endif
  check_inputs(plan, a);
  laplace_evaluate_cpu(plan, a);
}

}  // namespace fmm
}  // namespace gpufmm
