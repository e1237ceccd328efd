#include "kernels/kernel.hpp"

#include <cmath>

namespace gpufmm {
namespace kernels {

bool kernel_has_dipoles(KernelType t) {
  bool has = false;
  KernelDesc d;
  d.type = t;
  with_kernel<double>(d, [&](auto k) { has = decltype(k)::kDipoles; });
  return has;
}

void validate(const KernelDesc& d) {
  const int t = static_cast<int>(d.type);
  require(t >= 0 && t < kNumKernelTypes, GPUFMM_ERROR_INVALID_ARGUMENT, "kernel: 'type' = ", t,
          " is not a gpufmm_kernel_type_t");
  if (d.type == KernelType::kYukawa || d.type == KernelType::kRegularizedYukawa)
    require(std::isfinite(d.kappa) && d.kappa >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "kernel (", kernel_name(d.type),
            "): 'kappa' = ", d.kappa, " must be finite and >= 0");
  if (d.type == KernelType::kRegularizedLaplace || d.type == KernelType::kRegularizedYukawa)
    require(std::isfinite(d.delta) && d.delta > 0, GPUFMM_ERROR_INVALID_ARGUMENT, "kernel (", kernel_name(d.type),
            "): 'delta' = ", d.delta, " must be finite and > 0");
  if (d.type != KernelType::kUser) return;
  const UserKernel& u = d.user;
  require(u.nparams >= 0 && u.nparams <= kMaxUserParams, GPUFMM_ERROR_INVALID_ARGUMENT,
          "kernel (user): 'nparams' = ", u.nparams, " is not in 0..", kMaxUserParams);
  for (int k = 0; k < u.nparams; ++k)
    require(std::isfinite(u.params[k]), GPUFMM_ERROR_INVALID_ARGUMENT, "kernel (user): parameter p[", k,
            "] = ", u.params[k], " is not finite");
  require(u.value_expr.empty() == u.deriv_expr.empty(), GPUFMM_ERROR_INVALID_ARGUMENT,
          "kernel (user): 'value_expr' and 'deriv_expr' come together (g and dg/dr), one is empty");
  require((u.value_fn == nullptr) == (u.deriv_fn == nullptr), GPUFMM_ERROR_INVALID_ARGUMENT,
          "kernel (user): 'value_fn' and 'deriv_fn' come together (g and dg/dr), one is NULL");
  require(u.has_gpu_form() || u.has_cpu_form(), GPUFMM_ERROR_INVALID_ARGUMENT,
          "kernel (user): neither expressions ('value_expr', 'deriv_expr') nor functions ('value_fn', "
          "'deriv_fn') are given");
}

void validate_for_backend(const KernelDesc& d, bool gpu) {
  validate(d);
  if (d.type != KernelType::kUser) return;
  if (gpu)
    require(d.user.has_gpu_form(), GPUFMM_ERROR_INVALID_ARGUMENT,
            "kernel (user): a GPU context needs the expressions 'value_expr' and 'deriv_expr', which are empty");
  else
    require(d.user.has_cpu_form(), GPUFMM_ERROR_INVALID_ARGUMENT,
            "kernel (user): the CPU backend needs the functions 'value_fn' and 'deriv_fn', which are NULL");
}

template <class S>
void check_user_results(const S* pot, const S* grad, int64_t n) {
  int64_t bad = n;
#pragma omp parallel for reduction(min : bad) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    bool ok = pot == nullptr || std::isfinite(pot[i]);
    if (grad != nullptr) ok = ok && std::isfinite(grad[3 * i]) && std::isfinite(grad[3 * i + 1]) &&
                              std::isfinite(grad[3 * i + 2]);
    if (!ok && i < bad) bad = i;
  }
  if (bad == n) return;
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "kernel (user): the ", pot != nullptr ? "potential" : "gradient",
       grad != nullptr && pot != nullptr ? " or gradient" : "", " at target ", bad,
       " is NaN or Inf: g or dg/dr is not finite at some pair (the outputs are untouched)");
}

template void check_user_results<float>(const float*, const float*, int64_t);
template void check_user_results<double>(const double*, const double*, int64_t);

}  // namespace kernels
}  // namespace gpufmm
