// Barycentric Lagrange interpolation at Chebyshev points of the second kind
// (papers/001 sec. 2.1, eqs. 4, 6, 7), host+device. The treecode's modified
// charges and downward interpolation use it (treecode/geometry.hpp, and its
// CUDA kernels, src/cuda/treecode/treecode.cu); the Chebyshev FMM of
// papers/004 will too. At the end: the Lagrange basis over Chebyshev points
// of the first kind (papers/002 sec. 4.3, the FMM-FFT: fmmfft/plan.cpp).
//
// On an interval [c - h, c + h] the n + 1 points are
//   s_k = c + h cos(pi k / n),  k = 0..n   (n = 0: the single point c)
// with the barycentric weights w_k = (-1)^k delta_k, delta_k = 1/2 at the
// two ends and 1 inside (eq. 7; the same on every interval).
//
// lagrange() evaluates all L_k(x) (eq. 4) and, on request, dL_k/dx. The
// removable singularities at x = s_j (eq. 5) are not handled by a tolerance
// (papers/001 sec. 2.3) but by writing both in the scaled form around the
// nearest node j, e = x - s_j, c_m = 1 / (x - s_m) for m != j:
//   b_j = w_j,  b_m = w_m e c_m,  B = sum_m b_m,  L_m = b_m / B
//   L'_m = (w_m c_m / B) (w_j / B + e^2 sum_{l!=j} w_l c_l^2 / B - e c_m)   (m != j)
//   L'_j = (w_j / B^2) (e sum_{l!=j} w_l c_l^2 - sum_{l!=j} w_l c_l)
// which equal the textbook formulas for e != 0, are exact at e == 0
// (L = delta_j, L' = row j of the differentiation matrix) and lose no
// accuracy in between: nothing is divided by e.
#pragma once

#include <cmath>

#include "core/hd.hpp"

namespace gpufmm {
namespace approx {

constexpr int kMaxDegree = 30;  // interpolation degree n: 0..kMaxDegree

// cos(pi k / n) (1 for n == 0).
template <class T>
GPUFMM_HD_INLINE T cheb_unit(int n, int k) {
  if (n == 0) return T(1);
  // sin(pi (n - 2k) / (2n)) = cos(pi k / n), symmetric under k -> n - k to the last bit.
  return T(sin(M_PI * double(n - 2 * k) / double(2 * n)));
}

// The k-th Chebyshev point of degree n on [c - h, c + h] (n == 0: c).
template <class T>
GPUFMM_HD_INLINE T cheb_point(int n, int k, T c, T h) {
  return n == 0 ? c : c + h * cheb_unit<T>(n, k);
}

// Barycentric weight w_k of degree n (eq. 7).
template <class T>
GPUFMM_HD_INLINE T cheb_weight(int n, int k) {
  const T d = (k == 0 || k == n) ? T(0.5) : T(1);
  return (k & 1) ? -d : d;
}

// The n + 1 unit nodes u[k] = cos(pi k / n) of degree n (the callers keep
// them, so that no cosine is taken per evaluation).
template <class T>
GPUFMM_HD_INLINE void cheb_units(int n, T* u) {
  for (int k = 0; k <= n; ++k) u[k] = cheb_unit<T>(n, k);
}

// L[k] = L_k(x), k = 0..n, on the points c + h u[k] of degree n (h > 0;
// u from cheb_units), and dL[k] = dL_k/dx when dL is not null.
template <class T>
GPUFMM_HD_INLINE void lagrange(int n, const T* u, T c, T h, T x, T* L, T* dL) {
  if (n == 0) {
    L[0] = T(1);
    if (dL) dL[0] = T(0);
    return;
  }
  // Nearest node j (smallest |x - s_m|).
  int j = 0;
  T best = fabs(x - (c + h * u[0]));
  for (int m = 1; m <= n; ++m) {
    const T d = fabs(x - (c + h * u[m]));
    if (d < best) best = d, j = m;
  }
  const T e = x - (c + h * u[j]);
  const T wj = cheb_weight<T>(n, j);
  T B = wj, S1 = T(0), S2 = T(0);
  for (int m = 0; m <= n; ++m) {
    if (m == j) continue;
    const T cm = T(1) / (x - (c + h * u[m]));
    const T wc = cheb_weight<T>(n, m) * cm;
    L[m] = wc * e;  // b_m
    if (dL) dL[m] = cm;
    B += wc * e;
    S1 += wc;
    S2 += wc * cm;
  }
  const T iB = T(1) / B;
  for (int m = 0; m <= n; ++m) {
    if (m == j) continue;
    L[m] *= iB;
    if (dL) {
      const T cm = dL[m];
      dL[m] = cheb_weight<T>(n, m) * cm * iB * (wj * iB + e * e * S2 * iB - e * cm);
    }
  }
  L[j] = wj * iB;
  if (dL) dL[j] = wj * iB * iB * (e * S2 - S1);
}

// Chebyshev points of the first kind (papers/002 sec. 4.3):
//   z_j = cos((2j + 1) pi / (2Q)),  j = 0..Q-1,
// and the Lagrange polynomial l_i over them at z, in the product form
//   l_i(z) = prod_{k != i} (z - z_k) / (z_i - z_k),
// exact at the nodes (l_i(z_j) = delta_ij) with no special case; the
// FMM-FFT builds its operator matrices with it once per plan (Q <= 32).
template <class T>
GPUFMM_HD_INLINE T cheb1_node(int Q, int j) {
  // sin(pi (Q - 1 - 2j) / (2Q)) = cos((2j + 1) pi / (2Q)), odd-symmetric to the last bit.
  return T(sin(M_PI * double(Q - 1 - 2 * j) / double(2 * Q)));
}

template <class T>
GPUFMM_HD_INLINE T cheb1_lagrange(int Q, int i, T z) {
  const T zi = cheb1_node<T>(Q, i);
  T v = T(1);
  for (int k = 0; k < Q; ++k)
    if (k != i) {
      const T zk = cheb1_node<T>(Q, k);
      v *= (z - zk) / (zi - zk);
    }
  return v;
}

}  // namespace approx
}  // namespace gpufmm
