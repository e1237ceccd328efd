// The Yukawa (screened Coulomb) kernel G(y, x) = exp(-kappa r) / r,
// r = |y - x|, kappa >= 0 (kappa = 0 is the Laplace kernel), charges only:
//
//   phi(y)      = sum_j q_j exp(-kappa r_j) / r_j
//   grad phi(y) = sum_j -q_j exp(-kappa r_j) (1 + kappa r_j) R_j / r_j^3,   R_j = y - x_j
//
// A coincident pair (r == 0) contributes nothing, as for Laplace. The
// interface every kernel has is described in kernels/kernel.hpp.
#pragma once

#include "kernels/fast_math.hpp"

namespace gpufmm {
namespace kernels {

// q exp(-kappa s) / s and its gradient with respect to R = y - x, given s
// (the distance, or the regularized one) and inv_s = 1/s (0 where the pair
// is left out): v += q G, (gx, gy, gz) += q dG/ds R / s when kG.
template <bool kG, class T>
GPUFMM_HD_INLINE void screened_terms(T kappa, T s, T inv_s, T rx, T ry, T rz, T q, T& v, T& gx, T& gy, T& gz) {
  const T e = q * hd_exp(-kappa * s) * inv_s;  // q G
  v += e;
  if (kG) {
    const T c = -e * (T(1) + kappa * s) * inv_s * inv_s;
    gx += c * rx;
    gy += c * ry;
    gz += c * rz;
  }
}

template <class T>
struct Yukawa {
  static constexpr bool kDipoles = false;
  static constexpr bool kSymmetric = true;
  static constexpr bool kHomogeneous = false;
  static constexpr int kDegree = 0;  // not homogeneous
  static constexpr bool kCoincidentZero = true;

  T kappa = T(0);

  template <bool kC, bool kD, bool kG>
  GPUFMM_HD_INLINE void accumulate(T rx, T ry, T rz, T q, T, T, T, T& v, T& gx, T& gy, T& gz) const {
    static_assert(!kD, "the Yukawa kernel has no dipole sources");
    const T r2 = rx * rx + ry * ry + rz * rz;
    const T inv_r = rsqrt_or_zero(r2);  // no self interaction
    screened_terms<kG>(kappa, r2 * inv_r, inv_r, rx, ry, rz, q, v, gx, gy, gz);
  }
};

}  // namespace kernels
}  // namespace gpufmm
