// Elementary functions of the pair kernels (src/cxx/kernels), host+device.
//
// fast_rsqrt(x) = 1/sqrt(x): on the device the hardware reciprocal square
// root, on the host 1/sqrt(x); rsqrt_or_zero (below) with 0 at x = 0.
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
//
// hd_exp(x) = e^x: on the device CUDA's exp; on the host host_exp below,
// which the CPU loops vectorise (a call to libm's exp stays scalar: glibc
// declares its vector exp only under -ffast-math; the Yukawa kernels ran
// 10x below the Laplace ones on the CPU).
#pragma once

#include <math.h>
#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#include <string.h>
#endif

#include "core/hd.hpp"

namespace gpufmm {
namespace kernels {

GPUFMM_HD_INLINE float hd_sqrt(float x) { return sqrtf(x); }
GPUFMM_HD_INLINE double hd_sqrt(double x) { return sqrt(x); }

#if !defined(__CUDA_ARCH__)
// e^x without branches or calls, so that a loop over it vectorises:
//   x = n ln2 + r, |r| <= ln2 / 2: n from the rounding of x / ln2 by the
//   1.5 2^52 (2^23) shifter, whose low bits then hold n; r with ln2 in two
//   parts (fdlibm's; n ln2_hi is exact);
//   e^r: its Taylor polynomial of degree 13 (6 in float), Horner; the
//   truncation is below 4e-18 (1.2e-10) relative;
//   2^n as two powers of two, normal numbers for every n the clamped x
//   gives, so that a result in the subnormal range is rounded once.
// Within 1.2 ulp of e^x in double and in float over 1.2e7 random arguments
// (tests/cxx/test_kernels.cpp: HostExp); exp(NaN) = NaN, and x above 709.79
// (88.72) or below -745.14 (-103.98) gives Inf or 0 as exp does.
inline double host_exp(double x) {
  const double xl = x > -746.0 ? x : -746.0;  // a NaN becomes -746 here and is returned at the end
  const double xc = xl < 710.0 ? xl : 710.0;
  const double shifter = 6755399441055744.0;  // 1.5 2^52
  const double t = xc * 1.4426950408889634 + shifter;
  const double kn = t - shifter;  // n, exactly
  int64_t tb, sb;
  memcpy(&tb, &t, sizeof t);
  memcpy(&sb, &shifter, sizeof shifter);
  const int64_t n = tb - sb;  // in [-1077, 1025]
  const double r = (xc - kn * 6.93147180369123816490e-01) - kn * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const int64_t n1 = n >> 1, n2 = n - n1;
  const uint64_t b1 = uint64_t(n1 + 1023) << 52, b2 = uint64_t(n2 + 1023) << 52;
  double s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  const double e = p * s1 * s2;
  return x == x ? e : x;
}
inline float host_exp(float x) {
  const float xl = x > -104.0f ? x : -104.0f;
  const float xc = xl < 89.0f ? xl : 89.0f;
  const float shifter = 12582912.0f;  // 1.5 2^23
  const float t = xc * 1.44269504088896341f + shifter;
  const float kn = t - shifter;
  int32_t tb, sb;
  memcpy(&tb, &t, sizeof t);
  memcpy(&sb, &shifter, sizeof shifter);
  const int32_t n = tb - sb;  // in [-150, 129]
  const float r = (xc - kn * 0.693359375f) - kn * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t n1 = n >> 1, n2 = n - n1;
  const uint32_t b1 = uint32_t(n1 + 127) << 23, b2 = uint32_t(n2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  const float e = p * s1 * s2;
  return x == x ? e : x;
}
#endif

GPUFMM_HD_INLINE float hd_exp(float x) {
#if defined(__CUDA_ARCH__)
  return expf(x);
#else
  return host_exp(x);
#endif
}
GPUFMM_HD_INLINE double hd_exp(double x) {
#if defined(__CUDA_ARCH__)
  return exp(x);
#else
  return host_exp(x);
#endif
}

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

// 1/r from r2 = r^2 >= 0, and 0 where r2 == 0 (a source on its target: no
// self interaction), without a branch: fast_rsqrt taken unconditionally
// (Inf or NaN at 0) and then selected away. On the device the double test
// is on r2's high word, an integer compare: a compare of doubles runs on
// the FP64 pipe, which bounds the double near field (one of its 19
// instructions per pair, 24 for both directions of a mutual pair). The high
// word is zero for 0 and for r2 below 2^-1042, a subnormal whose 1/r^3
// overflows anyway (also 0 there, where fast_rsqrt flushes it to Inf or NaN).
GPUFMM_HD_INLINE float rsqrt_or_zero(float r2) {
  const float rs = fast_rsqrt(r2);  // outside the select: in it, the float BpB near field ran 2 % slower
  return r2 != 0.0f ? rs : 0.0f;
}
GPUFMM_HD_INLINE double rsqrt_or_zero(double r2) {
  const double rs = fast_rsqrt(r2);
#if defined(__CUDA_ARCH__)
  return __double2hiint(r2) != 0 ? rs : 0.0;
#else
  return r2 != 0.0 ? rs : 0.0;
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
