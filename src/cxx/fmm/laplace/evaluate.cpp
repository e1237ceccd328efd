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

// nd > 1: the interleaved densities (LaplaceEvalArgs) as one flat array,
// the first bad value named by its density and source.
template <class V>
void check_interleaved(const V* v, int64_t n, int per, int nd, const char* name, const char* what) {
  if (v == nullptr) return;
  const int64_t m = n * per * nd;
  for (int64_t i = 0; i < m; ++i)
    if (!std::isfinite(v[i]))
      fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i / (per * nd),
           " (0-based) of density ", i % nd, " (0-based) has a NaN or Inf value (", double(v[i]), ")");
}

template <class V>
void check_values(const LaplaceEvalArgs& a, const V* v, int64_t n, int per, const char* name, const char* what) {
  if (a.nd == 1)
    plan::check_values(v, n, per, name, what);
  else
    check_interleaved(v, n, per, a.nd, name, what);
}

void check_inputs(const LaplacePlan& plan, const LaplaceEvalArgs& a) {
  const int64_t ns = plan.nsrc;
  if (a.dtype == GPUFMM_FLOAT32) {
    check_values(a, static_cast<const float*>(a.charges), ns, 1, "charges", "charge");
    check_values(a, static_cast<const float*>(a.dipoles), ns, 3, "dipoles", "dipole");
  } else {
    check_values(a, static_cast<const double*>(a.charges), ns, 1, "charges", "charge");
    check_values(a, static_cast<const double*>(a.dipoles), ns, 3, "dipoles", "dipole");
    if (plan.single()) {  // double inputs of a float plan (the host API)
      plan::check_values_fit_float(static_cast<const double*>(a.charges), ns * a.nd, 1, "charges", "charge");
      plan::check_values_fit_float(static_cast<const double*>(a.dipoles), ns * a.nd, 3, "dipoles", "dipole");
    }
  }
}

}  // namespace

void laplace_evaluate(LaplacePlan& plan, const LaplaceEvalArgs& a) {
  require(a.charges != nullptr || a.dipoles != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'charges' and 'dipoles' are both NULL: the sources carry nothing");
  require(a.pot != nullptr || a.grad != nullptr || a.hess != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
          a.nd_api ? "arguments 'pot', 'grad' and 'hess' are all NULL: nothing to compute"
                   : "arguments 'pot' and 'grad' are both NULL: nothing to compute");
  require(a.nd >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nd' = ", a.nd, " is not positive");
  require(a.dtype == GPUFMM_FLOAT64 || a.dtype == GPUFMM_FLOAT32, GPUFMM_ERROR_INTERNAL,
          "laplace_evaluate: bad dtype");
  require(a.dipoles == nullptr || plan.options.densities != GPUFMM_LAPLACE_DENSITIES_CHARGES,
          GPUFMM_ERROR_INVALID_ARGUMENT,
          "argument 'dipoles' is not NULL, but the plan was made for charges only (options field 'densities' = "
          "GPUFMM_LAPLACE_DENSITIES_CHARGES: its accuracy is calibrated on charges)");
  require(a.charges == nullptr || plan.options.densities != GPUFMM_LAPLACE_DENSITIES_DIPOLES,
          GPUFMM_ERROR_INVALID_ARGUMENT,
          "argument 'charges' is not NULL, but the plan was made for dipoles only (options field 'densities' = "
          "GPUFMM_LAPLACE_DENSITIES_DIPOLES: its accuracy is calibrated on dipoles)");
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
