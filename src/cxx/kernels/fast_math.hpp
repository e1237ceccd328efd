// Elementary functions of the pair kernels (src/cxx/kernels), host+device.
//
// fast_rsqrt(x) = 1/sqrt(x): on the device the hardware reciprocal square
// root, on the host 1/sqrt(x).
//  - float: the MUFU approximation (rsqrt.approx.ftz.f32, about 2 ulp). The
//    ftz form skips rsqrtf's rescaling of subnormal inputs, which would only
//    matter for squared distances below 1.2e-38, where the pair terms
//    overflow anyway.
//  - double: the MUFU seed (rsqrt.approx.ftz.f64) and one cubic correction,
//    y += y e (1/2 + 3/8 e) with e = 1 - x y^2: the main path of CUDA's
//    rsqrt(double), bit for bit, without its branch to a slow path for zero,
//    subnormal, infinite and NaN inputs (about 1 ulp; far cheaper than
//    1/sqrt, which is two iterative sequences). Zero gives NaN (the caller
//    selects it away); a subnormal x, i.e. a distance below 1.5e-154 whose
//    pair terms overflow anyway, gives NaN instead of Inf.
#pragma once

#include <math.h>

#include "core/hd.hpp"

namespace gpufmm {
namespace kernels {

GPUFMM_HD_INLINE float hd_sqrt(float x) { return sqrtf(x); }
GPUFMM_HD_INLINE double hd_sqrt(double x) { return sqrt(x); }
GPUFMM_HD_INLINE float hd_exp(float x) { return expf(x); }
GPUFMM_HD_INLINE double hd_exp(double x) { return exp(x); }

GPUFMM_HD_INLINE float fast_rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / hd_sqrt(x);
#endif
}

GPUFMM_HD_INLINE double fast_rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double e = fma(-x, y * y, 1.0);
  return fma(fma(e, 0.375, 0.5), y * e, y);
#else
  return 1.0 / hd_sqrt(x);
#endif
}

// The ten sums of the Laplace kernel's accumulate_hess (kernels/laplace.hpp;
// here, beside the math that every kernel header and NVRTC program
// includes): potential, gradient, Hessian (xx, yy, zz, xy, xz, yz), as
// references, so that the CPU's source loop vectorises over lanes whose sums
// live in ten arrays; hess_ref makes one from ten consecutive values.
template <class T>
struct HessRef {
  T &v, &gx, &gy, &gz, &xx, &yy, &zz, &xy, &xz, &yz;
};
template <class T>
GPUFMM_HD_INLINE HessRef<T> hess_ref(T* o) {
  return HessRef<T>{o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9]};
}

}  // namespace kernels
}  // namespace gpufmm
