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
}

}  // namespace kernels
}  // namespace gpufmm
