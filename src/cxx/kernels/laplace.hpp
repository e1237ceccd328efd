// The Laplace kernel G(y, x) = 1/|y - x| (no 1/(4 pi)), sources with charges
// q and/or dipoles d:
//
//   phi(y)      = sum_j q_j / r_j + d_j . R_j / r_j^3,        R_j = y - x_j, r_j = |R_j|
//   grad phi(y) = sum_j -q_j R_j / r_j^3 + d_j / r_j^3 - 3 (d_j . R_j) R_j / r_j^5
//
// The dipole term is d . grad_x (1/|y - x|) at x = x_j (the field of a
// dipole pointing along d). A source that coincides exactly with the target
// (r == 0) contributes nothing (no self term). The interface every kernel
// has is described in kernels/kernel.hpp.
#pragma once

#include "kernels/fast_math.hpp"

namespace gpufmm {
namespace kernels {

template <class T>
struct Laplace {
  static constexpr bool kDipoles = true;      // sources may carry dipoles
  static constexpr bool kSymmetric = true;    // G(y, x) = G(x, y)
  static constexpr bool kHomogeneous = true;  // G(s R) = s^kDegree G(R)
  static constexpr int kDegree = -1;
  static constexpr bool kCoincidentZero = true;  // r == 0 adds exactly zero

  // One source (charge q and/or dipole (dx, dy, dz)) acting on one target,
  // (rx, ry, rz) = y - x: v += phi and, when kG, (gx, gy, gz) += grad phi.
  // kC / kD say which of q and d the source carries (the other arguments
  // are then ignored). The reciprocal square root is taken unconditionally
  // (Inf or NaN at r == 0) and then selected away (rsqrt_or_zero), with no
  // branch, so that loops over sources vectorise on the CPU and compile to
  // straight-line code (an integer compare and a select) on the GPU.
  template <bool kC, bool kD, bool kG>
  GPUFMM_HD_INLINE void accumulate(T rx, T ry, T rz, T q, T dx, T dy, T dz, T& v, T& gx, T& gy,
                                   T& gz) const {
    const T r2 = rx * rx + ry * ry + rz * rz;
    const T inv_r = rsqrt_or_zero(r2);  // no self interaction
    const T inv_r2 = inv_r * inv_r;
    const T inv_r3 = inv_r2 * inv_r;
    if (kC) {
      v += q * inv_r;
      if (kG) {
        const T c = -q * inv_r3;
        gx += c * rx;
        gy += c * ry;
        gz += c * rz;
      }
    }
    if (kD) {
      const T dr = (dx * rx + dy * ry + dz * rz) * inv_r3;
      v += dr;
      if (kG) {
        const T c = T(3) * dr * inv_r2;
        gx += dx * inv_r3 - c * rx;
        gy += dy * inv_r3 - c * ry;
        gz += dz * inv_r3 - c * rz;
      }
    }
  }

  // Both directions of one charge-charge pair (the mutual near field of
  // sources = targets, nearfield/p2p_mutual.cuh): (rx, ry, rz) = a - b,
  // charges qa at a and qb at b. (va, ga) += what accumulate<true, false, kG>
  // adds with source b at target a, (vb, gb) += the same with source a at
  // target b (the vector negated, exactly); the distance and its powers once
  // for both.
  template <bool kG>
  GPUFMM_HD_INLINE void accumulate_mutual(T rx, T ry, T rz, T qa, T qb, T& va, T& gxa, T& gya, T& gza, T& vb,
                                          T& gxb, T& gyb, T& gzb) const {
    const T r2 = rx * rx + ry * ry + rz * rz;
    const T inv_r = rsqrt_or_zero(r2);  // no self interaction
    const T inv_r2 = inv_r * inv_r;
    const T inv_r3 = inv_r2 * inv_r;
    va += qb * inv_r;
    vb += qa * inv_r;
    if (kG) {
      const T ca = -qb * inv_r3, cb = -qa * inv_r3;
      gxa += ca * rx;
      gya += ca * ry;
      gza += ca * rz;
      gxb -= cb * rx;
      gyb -= cb * ry;
      gzb -= cb * rz;
    }
  }

  // accumulate<kC, kD, true> with the Hessian of phi as well: o.v += phi,
  // o[1..3] += grad phi, o[4..9] += the second derivatives xx, yy, zz, xy,
  // xz, yz:
  //   charge  q (3 R_i R_j / r^5 - delta_ij / r^3)
  //   dipole  15 (d.R) R_i R_j / r^7 - 3 (d_i R_j + d_j R_i + (d.R) delta_ij) / r^5
  // (the Laplace kernel only; the same no-self-term rule).
  template <bool kC, bool kD>
  GPUFMM_HD_INLINE void accumulate_hess(T rx, T ry, T rz, T q, T dx, T dy, T dz, HessRef<T> o) const {
    const T r2 = rx * rx + ry * ry + rz * rz;
    const T inv_r = rsqrt_or_zero(r2);
    const T inv_r2 = inv_r * inv_r;
    const T inv_r3 = inv_r2 * inv_r;
    const T inv_r5 = inv_r3 * inv_r2;
    if (kC) {
      o.v += q * inv_r;
      const T c = -q * inv_r3;
      const T c5 = T(3) * q * inv_r5;
      o.gx += c * rx;
      o.gy += c * ry;
      o.gz += c * rz;
      o.xx += c5 * rx * rx + c;
      o.yy += c5 * ry * ry + c;
      o.zz += c5 * rz * rz + c;
      o.xy += c5 * rx * ry;
      o.xz += c5 * rx * rz;
      o.yz += c5 * ry * rz;
    }
    if (kD) {
      const T dr3 = (dx * rx + dy * ry + dz * rz) * inv_r3;
      o.v += dr3;
      const T c = T(3) * dr3 * inv_r2;  // 3 (d.R) / r^5
      o.gx += dx * inv_r3 - c * rx;
      o.gy += dy * inv_r3 - c * ry;
      o.gz += dz * inv_r3 - c * rz;
      const T c7 = T(5) * c * inv_r2;  // 15 (d.R) / r^7
      const T t5 = T(3) * inv_r5;
      o.xx += c7 * rx * rx - t5 * (dx * rx + dx * rx) - c;
      o.yy += c7 * ry * ry - t5 * (dy * ry + dy * ry) - c;
      o.zz += c7 * rz * rz - t5 * (dz * rz + dz * rz) - c;
      o.xy += c7 * rx * ry - t5 * (dx * ry + dy * rx);
      o.xz += c7 * rx * rz - t5 * (dx * rz + dz * rx);
      o.yz += c7 * ry * rz - t5 * (dy * rz + dz * ry);
    }
  }
};

}  // namespace kernels
}  // namespace gpufmm
