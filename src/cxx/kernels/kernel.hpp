// Kernels as data. A pair kernel is a small traits struct templated on the
// real type T (kernels/laplace.hpp, yukawa.hpp, regularized.hpp):
//
//   static constexpr bool kDipoles;        sources may carry dipoles
//   static constexpr bool kSymmetric;      G(y, x) = G(x, y)
//   static constexpr bool kHomogeneous;    G(s R) = s^kDegree G(R) (then kDegree)
//   static constexpr bool kCoincidentZero; a pair at r == 0 adds exactly zero
//                                          (singular kernels); otherwise the
//                                          finite value G(0) is added
//   parameters as members (kappa, delta^2, ...), in T
//   template <bool kC, bool kD, bool kG> GPUFMM_HD void accumulate(
//       T rx, T ry, T rz, T q, T dx, T dy, T dz, T& v, T& gx, T& gy, T& gz) const;
//     one source (charge q when kC, dipole d when kD) acting on one target,
//     R = target - source: v += phi, and when kG (gx, gy, gz) += grad_y phi.
//
// Every near-field loop (src/cxx/nearfield, src/cuda/nearfield) is a
// template over such a struct; the FMM, the treecode and the direct sum
// instantiate it. KernelDesc is the run-time description (the C descriptor
// gpufmm_kernel_t, converted by the C thunks); with_kernel turns it into the
// struct, with_sources turns the "charges / dipoles / gradient present"
// flags into compile-time ones. Those two are the only run-time -> template
// dispatches of the near field.
#pragma once

#include <type_traits>

#include "core/error.hpp"
#include "kernels/laplace.hpp"
#include "kernels/regularized.hpp"
#include "kernels/yukawa.hpp"

namespace gpufmm {
namespace kernels {

// Values equal those of gpufmm_kernel_type_t (checked in bindings/c).
enum class KernelType : int { kLaplace = 0, kYukawa = 1, kRegularizedLaplace = 2, kRegularizedYukawa = 3 };
constexpr int kNumKernelTypes = 4;

struct KernelDesc {
  KernelType type = KernelType::kLaplace;
  double kappa = 0;  // Yukawa, regularized Yukawa: the screening constant (>= 0)
  double delta = 0;  // regularized kernels: the smoothing length (> 0)
};

inline const char* kernel_name(KernelType t) {
  switch (t) {
    case KernelType::kLaplace: return "Laplace";
    case KernelType::kYukawa: return "Yukawa";
    case KernelType::kRegularizedLaplace: return "regularized Laplace";
    case KernelType::kRegularizedYukawa: return "regularized Yukawa";
  }
  return "unknown";
}

// Whether kernel t takes dipole sources (the kernel struct's kDipoles).
bool kernel_has_dipoles(KernelType t);

// Throws INVALID_ARGUMENT naming the field: an unknown type, kappa < 0 or
// not finite, delta <= 0 or not finite for the regularized kernels.
void validate(const KernelDesc& d);

// f(K{...}) with the kernel struct of d in real type T; returns what f returns.
template <class T, class F>
decltype(auto) with_kernel(const KernelDesc& d, F&& f) {
  switch (d.type) {
    case KernelType::kYukawa: {
      Yukawa<T> k;
      k.kappa = T(d.kappa);
      return f(k);
    }
    case KernelType::kRegularizedLaplace: {
      RegularizedLaplace<T> k;
      k.delta2 = T(d.delta * d.delta);
      return f(k);
    }
    case KernelType::kRegularizedYukawa: {
      RegularizedYukawa<T> k;
      k.kappa = T(d.kappa);
      k.delta2 = T(d.delta * d.delta);
      return f(k);
    }
    case KernelType::kLaplace:
      break;
  }
  return f(Laplace<T>{});
}

template <bool b>
using Flag = std::integral_constant<bool, b>;

// f(Flag<kC>, Flag<kD>, Flag<kG>) for the sources' charges / dipoles and
// whether the gradient is wanted (at least one of charges, dipoles).
// kDipoles false (a kernel without dipole sources): only kD = false is
// instantiated; dipoles must then be false (the callers validate it).
template <bool kDipoles, class F>
void with_sources(bool charges, bool dipoles, bool grad, F&& f) {
  auto go = [&](auto g) {
    if constexpr (kDipoles) {
      if (charges && dipoles) return f(Flag<true>{}, Flag<true>{}, g);
      if (!charges) return f(Flag<false>{}, Flag<true>{}, g);
    }
    return f(Flag<true>{}, Flag<false>{}, g);
  };
  if (grad)
    go(Flag<true>{});
  else
    go(Flag<false>{});
}

}  // namespace kernels
}  // namespace gpufmm
