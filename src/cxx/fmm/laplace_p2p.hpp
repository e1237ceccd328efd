// Laplace FMM math, part 5: direct particle-particle interaction (P2P).
//
//   phi(y)      = sum_j q_j / r_j + d_j . R_j / r_j^3,        R_j = y - x_j, r_j = |R_j|
//   grad phi(y) = sum_j -q_j R_j / r_j^3 + d_j / r_j^3 - 3 (d_j . R_j) R_j / r_j^5
//
// Kernel 1/r (no 1/(4 pi)); the dipole term is d . grad_x (1/|y - x|) at
// x = x_j (field of a dipole pointing along d).  A source that coincides
// exactly with the target (r == 0) contributes nothing (no self term).
// Charge/dipole pointers may be null; pot/grad pointers may be null.  Results
// are ACCUMULATED.
//
// The formula lives in ONE place, laplace_p2p_accumulate (one source-target
// pair, compile-time flags for what the sources carry and whether the
// gradient is wanted).  The loops below, the OpenMP direct sum
// (src/cxx/fmm/direct_cpu.cpp) and the CUDA kernels (src/cuda/fmm/direct.cu)
// all call it.
#pragma once

#include "fmm/laplace/basis.hpp"

namespace gpufmm {

// 1/sqrt(x): on the device the hardware reciprocal square root, on the host
// 1/sqrt(x).
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
GPUFMM_HD_INLINE float laplace_rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / laplace_detail::hd_sqrt(x);
#endif
}
GPUFMM_HD_INLINE double laplace_rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double e = fma(-x, y * y, 1.0);
  return fma(fma(e, 0.375, 0.5), y * e, y);
#else
  return 1.0 / laplace_detail::hd_sqrt(x);
#endif
}

// One source at x (charge q and/or dipole (dx, dy, dz)) acting on one target
// at y, with (rx, ry, rz) = y - x: v += phi and, when kGrad, (gx, gy, gz) +=
// grad phi.  kCharge / kDipole say which of q and d the source carries (the
// other arguments are then ignored).  r == 0 adds exactly zero (no self
// term): the reciprocal square root is taken unconditionally (Inf or NaN at
// 0) and then selected away, with no branch, so that loops over sources vectorise
// on the CPU and compile to straight-line code (a compare and a select) on
// the GPU.
template <bool kCharge, bool kDipole, bool kGrad, class T>
GPUFMM_HD_INLINE void laplace_p2p_accumulate(T rx, T ry, T rz, T q, T dx, T dy, T dz, T& v, T& gx,
                                             T& gy, T& gz) {
  const T r2 = rx * rx + ry * ry + rz * rz;
  const T rs = laplace_rsqrt(r2);
  const T inv_r = r2 != T(0) ? rs : T(0);  // no self interaction
  const T inv_r2 = inv_r * inv_r;
  const T inv_r3 = inv_r2 * inv_r;
  if (kCharge) {
    v += q * inv_r;
    if (kGrad) {
      const T c = -q * inv_r3;
      gx += c * rx;
      gy += c * ry;
      gz += c * rz;
    }
  }
  if (kDipole) {
    const T dr = (dx * rx + dy * ry + dz * rz) * inv_r3;
    v += dr;
    if (kGrad) {
      const T c = T(3) * dr * inv_r2;
      gx += dx * inv_r3 - c * rx;
      gy += dy * inv_r3 - c * ry;
      gz += dz * inv_r3 - c * rz;
    }
  }
}

namespace laplace_detail {

template <bool kCharge, bool kDipole, bool kGrad, class T>
GPUFMM_HD inline void p2p_sources(const T* y, int n_src, const T* src_xyz, const T* charge,
                                  const T* dipole, T& v, T& gx, T& gy, T& gz) {
  for (int j = 0; j < n_src; ++j)
    laplace_p2p_accumulate<kCharge, kDipole, kGrad>(
        y[0] - src_xyz[3 * j], y[1] - src_xyz[3 * j + 1], y[2] - src_xyz[3 * j + 2],
        kCharge ? charge[j] : T(0), kDipole ? dipole[3 * j] : T(0),
        kDipole ? dipole[3 * j + 1] : T(0), kDipole ? dipole[3 * j + 2] : T(0), v, gx, gy, gz);
}

template <bool kGrad, class T>
GPUFMM_HD inline void p2p_sources(const T* y, int n_src, const T* src_xyz, const T* charge,
                                  const T* dipole, T& v, T& gx, T& gy, T& gz) {
  if (charge && dipole)
    p2p_sources<true, true, kGrad>(y, n_src, src_xyz, charge, dipole, v, gx, gy, gz);
  else if (charge)
    p2p_sources<true, false, kGrad>(y, n_src, src_xyz, charge, dipole, v, gx, gy, gz);
  else if (dipole)
    p2p_sources<false, true, kGrad>(y, n_src, src_xyz, charge, dipole, v, gx, gy, gz);
}

}  // namespace laplace_detail

// One target y (3 values) against n_src sources: *pot += phi, grad[0..2] += grad phi.
template <class T>
GPUFMM_HD inline void laplace_p2p(const T* y, int n_src, const T* src_xyz, laplace_detail::nd<const T>* charge,
                                  laplace_detail::nd<const T>* dipole, laplace_detail::nd<T>* pot,
                                  laplace_detail::nd<T>* grad) {
  T v = T(0), gx = T(0), gy = T(0), gz = T(0);
  if (grad)
    laplace_detail::p2p_sources<true>(y, n_src, src_xyz, charge, dipole, v, gx, gy, gz);
  else
    laplace_detail::p2p_sources<false>(y, n_src, src_xyz, charge, dipole, v, gx, gy, gz);
  if (pot) *pot += v;
  if (grad) {
    grad[0] += gx;
    grad[1] += gy;
    grad[2] += gz;
  }
}

// n_trg targets (interleaved xyz) against n_src sources; pot[i] and
// grad[3i..3i+2] accumulate.
template <class T>
GPUFMM_HD inline void laplace_p2p(int n_trg, const T* trg_xyz, int n_src, const T* src_xyz,
                                  laplace_detail::nd<const T>* charge,
                                  laplace_detail::nd<const T>* dipole, laplace_detail::nd<T>* pot,
                                  laplace_detail::nd<T>* grad) {
  for (int i = 0; i < n_trg; ++i)
    laplace_p2p(trg_xyz + 3 * i, n_src, src_xyz, charge, dipole, pot ? pot + i : nullptr,
                grad ? grad + 3 * i : nullptr);
}

}  // namespace gpufmm
