// A radial kernel given at run time (GPUFMM_KERNEL_USER): G(y, x) = g(r),
// r = |y - x|, charges only:
//
//   phi(y)      = sum_j q_j g(r_j)
//   grad phi(y) = sum_j q_j g'(r_j) R_j / r_j,   R_j = y - x_j
//
// F supplies g and g' as `T value(T r) const` and `T deriv(T r) const`: on
// the CPU the user's function pointers (kernels/kernel.hpp, HostRadial), on
// a GPU the user's expressions, compiled by NVRTC together with this header
// and the near-field kernels (src/cuda/nearfield/user_kernel.cu). A pair at
// r == 0 adds nothing (kR0Included false: singular g, the rule of the
// built-in singular kernels) or q g(0) with zero gradient.
//
// This header is compiled by NVRTC as well as by the host compiler and nvcc:
// it includes nothing beyond the host+device math headers. The interface
// every kernel has is described in kernels/kernel.hpp.
#pragma once

#include "kernels/fast_math.hpp"

namespace gpufmm {
namespace kernels {

constexpr int kMaxUserParams = 8;  // = GPUFMM_KERNEL_MAX_PARAMS

// The parameters p[0..7] in the working precision: all a compiled user
// function holds, so that the host launches a compiled kernel with this
// struct as its kernel argument (same layout; user_kernel.cu checks it).
template <class T>
struct RadialParams {
  T p[kMaxUserParams];
};

template <class T, class F, bool kR0Included>
struct Radial {
  static constexpr bool kDipoles = false;
  static constexpr bool kSymmetric = true;
  static constexpr bool kHomogeneous = false;
  static constexpr int kDegree = 0;
  static constexpr bool kCoincidentZero = !kR0Included;

  F f;

  template <bool kC, bool kD, bool kG>
  GPUFMM_HD_INLINE void accumulate(T rx, T ry, T rz, T q, T, T, T, T& v, T& gx, T& gy, T& gz) const {
    static_assert(!kD, "a user kernel has no dipole sources");
    const T r2 = rx * rx + ry * ry + rz * rz;
    if (r2 == T(0)) {
      if (kR0Included) v += q * f.value(T(0));
      return;
    }
    const T r = hd_sqrt(r2);
    v += q * f.value(r);
    if (kG) {
      const T c = q * f.deriv(r) / r;
      gx += c * rx;
      gy += c * ry;
      gz += c * rz;
    }
  }
};

}  // namespace kernels
}  // namespace gpufmm
