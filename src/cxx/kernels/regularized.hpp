// Regularized kernels (vortex methods, smoothed particles): the singular
// kernels with r replaced by s = sqrt(r^2 + delta^2), delta > 0, charges only:
//
//   regularized Laplace:  G = 1 / s,                 grad_y G = -R / s^3
//   regularized Yukawa:   G = exp(-kappa s) / s,     grad_y G = -exp(-kappa s) (1 + kappa s) R / s^3
//
// with R = y - x. They are finite at r = 0: a coincident pair contributes
// q G(0) = q / delta (times exp(-kappa delta)) to the potential and nothing
// to the gradient, i.e. the self term is included (kCoincidentZero false).
// The interface every kernel has is described in kernels/kernel.hpp.
#pragma once

#include "kernels/fast_math.hpp"
#include "kernels/yukawa.hpp"

namespace gpufmm {
namespace kernels {

template <class T>
struct RegularizedLaplace {
  static constexpr bool kDipoles = false;
  static constexpr bool kSymmetric = true;
  static constexpr bool kHomogeneous = false;
  static constexpr int kDegree = 0;
  static constexpr bool kCoincidentZero = false;

  T delta2 = T(0);  // delta^2

  template <bool kC, bool kD, bool kG>
  GPUFMM_HD_INLINE void accumulate(T rx, T ry, T rz, T q, T, T, T, T& v, T& gx, T& gy, T& gz) const {
    static_assert(!kD, "the regularized Laplace kernel has no dipole sources");
    const T inv_s = fast_rsqrt(rx * rx + ry * ry + rz * rz + delta2);
    const T e = q * inv_s;
    v += e;
    if (kG) {
      const T c = -e * inv_s * inv_s;
      gx += c * rx;
      gy += c * ry;
      gz += c * rz;
    }
  }
};

template <class T>
struct RegularizedYukawa {
  static constexpr bool kDipoles = false;
  static constexpr bool kSymmetric = true;
  static constexpr bool kHomogeneous = false;
  static constexpr int kDegree = 0;
  static constexpr bool kCoincidentZero = false;

  T kappa = T(0);
  T delta2 = T(0);  // delta^2

  template <bool kC, bool kD, bool kG>
  GPUFMM_HD_INLINE void accumulate(T rx, T ry, T rz, T q, T, T, T, T& v, T& gx, T& gy, T& gz) const {
    static_assert(!kD, "the regularized Yukawa kernel has no dipole sources");
    const T s2 = rx * rx + ry * ry + rz * rz + delta2;
    const T inv_s = fast_rsqrt(s2);
    screened_terms<kG>(kappa, s2 * inv_s, inv_s, rx, ry, rz, q, v, gx, gy, gz);
  }
};

}  // namespace kernels
}  // namespace gpufmm
