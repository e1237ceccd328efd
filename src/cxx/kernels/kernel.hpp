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
//
// User kernels (kUser, kernels/radial.hpp) reach the CPU through with_kernel
// (the user's function pointers). CUDA code dispatches with
// with_builtin_kernel and sends user kernels to the NVRTC path
// (src/cuda/nearfield/user_kernel.cuh), which compiles the same kernel
// templates with the user's expressions.
#pragma once

#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "kernels/laplace.hpp"
#include "kernels/radial.hpp"
#include "kernels/regularized.hpp"
#include "kernels/yukawa.hpp"

namespace gpufmm {
namespace kernels {

// Values equal those of gpufmm_kernel_type_t (checked in bindings/c).
enum class KernelType : int {
  kLaplace = 0,
  kYukawa = 1,
  kRegularizedLaplace = 2,
  kRegularizedYukawa = 3,
  kUser = 4
};
constexpr int kNumKernelTypes = 5;

// g(r) or g'(r) of a user kernel on the CPU, p = its kMaxUserParams parameters
// (= gpufmm_radial_fn_t).
using RadialFn = double (*)(double r, const double* p);

// A user kernel g(r; p) (kernels/radial.hpp) in its two forms.
struct UserKernel {
  int nparams = 0;
  double params[kMaxUserParams] = {};  // unused entries 0
  bool r0_included = false;            // a pair at r == 0 adds g(0) (else nothing)
  std::string value_expr, deriv_expr;  // GPU form: C expressions in r and p[k] ("" when absent)
  RadialFn value_fn = nullptr, deriv_fn = nullptr;  // CPU form (NULL when absent)
  bool has_gpu_form() const { return !value_expr.empty() && !deriv_expr.empty(); }
  bool has_cpu_form() const { return value_fn != nullptr && deriv_fn != nullptr; }
};

struct KernelDesc {
  KernelType type = KernelType::kLaplace;
  double kappa = 0;  // Yukawa, regularized Yukawa: the screening constant (>= 0)
  double delta = 0;  // regularized kernels: the smoothing length (> 0)
  UserKernel user;   // kUser
};

// The CPU form of a user kernel: the function pointers, called in double.
template <class T>
struct HostRadial {
  RadialFn g = nullptr, dg = nullptr;
  double p[kMaxUserParams] = {};
  T value(T r) const { return T(g(double(r), p)); }
  T deriv(T r) const { return T(dg(double(r), p)); }
};

inline const char* kernel_name(KernelType t) {
  switch (t) {
    case KernelType::kLaplace: return "Laplace";
    case KernelType::kYukawa: return "Yukawa";
    case KernelType::kRegularizedLaplace: return "regularized Laplace";
    case KernelType::kRegularizedYukawa: return "regularized Yukawa";
    case KernelType::kUser: return "user";
  }
  return "unknown";
}

// Whether kernel t takes dipole sources (the kernel struct's kDipoles).
bool kernel_has_dipoles(KernelType t);

// Throws INVALID_ARGUMENT naming the field: an unknown type, kappa < 0 or
// not finite, delta <= 0 or not finite for the regularized kernels; for a
// user kernel a parameter count outside 0..kMaxUserParams, a parameter not
// finite, half a form (one expression or one function), no form at all.
void validate(const KernelDesc& d);

// validate, and for a user kernel the form the backend runs: the functions
// on the CPU (gpu false), the expressions on a GPU. Throws INVALID_ARGUMENT
// naming the missing form.
void validate_for_backend(const KernelDesc& d, bool gpu);

// Throws INVALID_ARGUMENT, naming the first target, when a result of a sum
// with a user kernel is NaN or Inf (g or dg/dr not finite at some pair):
// pot[n] and grad[3 n] in host memory (NULL: not computed). S: float, double.
template <class S>
void check_user_results(const S* pot, const S* grad, int64_t n);

// f(K{...}) with the kernel struct of a built-in kernel d (not kUser: CUDA
// code compiles these; user kernels go through NVRTC) in real type T;
// returns what f returns.
template <class T, class F>
decltype(auto) with_builtin_kernel(const KernelDesc& d, F&& f) {
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
    case KernelType::kUser:  // not a built-in kernel: the callers send it elsewhere
      break;
  }
  return f(Laplace<T>{});
}

// with_builtin_kernel, and a user kernel as Radial over its CPU form (host
// code only: the CPU near field; d validated for the CPU).
template <class T, class F>
decltype(auto) with_kernel(const KernelDesc& d, F&& f) {
  if (d.type == KernelType::kUser) {
    HostRadial<T> h;
    h.g = d.user.value_fn;
    h.dg = d.user.deriv_fn;
    for (int k = 0; k < kMaxUserParams; ++k) h.p[k] = d.user.params[k];
    if (d.user.r0_included) return f(Radial<T, HostRadial<T>, true>{h});
    return f(Radial<T, HostRadial<T>, false>{h});
  }
  return with_builtin_kernel<T>(d, std::forward<F>(f));
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
