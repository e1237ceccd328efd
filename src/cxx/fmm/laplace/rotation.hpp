// Laplace FMM math, part 3: rotations of the reference frame (RCR, eqs. 33-34).
//
// A translation along t = |t| (sin b cos a, sin b sin a, cos b) is done as
//   rotate (A(a), then B(b))  ->  coaxial translation along +z  ->  rotate back
// (eq. 33).  In the normalised basis of basis.hpp rotations act on
// multipole (Sh) and local (Rh) coefficients by the same ORTHOGONAL matrices,
// so "rotate back" is the transpose, and one table serves M2M, M2L and L2L.
//
// Definition.  For a rotation Q of space, W(Q) maps coefficients c of
// f(r) = sum c_k Phi_k(r) to coefficients c' of the same function in the
// rotated frame, f(Q r') = sum c'_k Phi_k(r').  Then W(Q1 Q2) = W(Q2) W(Q1) and
//   A(a) = W(Rz(a))   rotation about z, 2x2 blocks on (m, -m):
//          c'_n^m  = cos(ma) c_n^m - sin(ma) c_n^-m
//          c'_n^-m = sin(ma) c_n^m + cos(ma) c_n^-m
//   B(b) = W(Ry(b))   rotation about y.  It commutes with the reflection
//          y -> -y, so it never mixes "cos" (m >= 0) with "sin" (m < 0)
//          coefficients: per degree n it is a dense (n+1)x(n+1) block on
//          m = 0..n and an n x n block on m = -1..-n.
// With Q = Rz(a) Ry(b) (Q e_z = t/|t|): c' = B(b) A(a) c, c = A^T B^T c'.
//
// Flip (eq. 34).  F = W(Rx(pi)) = diag(f_n^m), f = (-1)^(n+m) for m >= 0 and
// -(-1)^(n+|m|) for m < 0.  Since -t has angles (pi - b, a + pi) and
// B(pi - b) A(a + pi) = B(b)^T F A(a), the operator for -t is
//   A^T F B(b) Coax(|t|) B(b)^T F A
// i.e. the table for b also serves pi - b: the apply functions take `flip`.
//
// B(b) is computed with the Ivanic-Ruedenberg recursion for rotation matrices
// of real spherical harmonics (J. Phys. Chem. 100 (1996) 6342; errata 102
// (1998) 9099), in the corrected form used by Google's spherical-harmonics
// library: degree l from degree l-1 and the 3x3 matrix, with coefficients
// bounded by 1, stable for the degrees used here (measured: orthogonality to
// 1e-14 at p = 40 in double).  Our Rh_n^m equal (-1)^n sqrt(4 pi/(2n+1)) r^n
// times the real spherical harmonics of that recursion, except for a sign
// -1 on m < 0, which cancels inside each block of B (both indices have the
// same sign), so the blocks are taken over unchanged.
#pragma once

#include "fmm/laplace/basis.hpp"

namespace gpufmm {

// Offset of the degree-n blocks in a B(b) table: sum_{k<n} (k+1)^2 + k^2.
// Independent of p, so a table built for p serves every p' <= p.
GPUFMM_HD constexpr int laplace_rotation_offset(int n) {
  return n * (n - 1) * (2 * n - 1) / 3 + n * n;
}
// Size (in T) of a B(b) table for truncation p.
GPUFMM_HD constexpr int laplace_rotation_size(int p) { return laplace_rotation_offset(p); }
// Size (in the work type W) of the scratch of laplace_rotation_precompute.
GPUFMM_HD constexpr int laplace_rotation_scratch_size(int p) {
  return 2 * (2 * p - 1) * (2 * p - 1);
}

namespace laplace_detail {

// Ivanic-Ruedenberg helper P(i, a, b): r1 is the degree-1 matrix (3x3, index
// -1..1 in the order y, z, x), prev the degree l-1 matrix (2l-1 square).
template <class W>
GPUFMM_HD inline W ir_p(int i, int a, int b, int l, const W* r1, const W* prev) {
  const int w = 2 * l - 1;
  const int o = l - 1;
  const W ri1 = r1[(i + 1) * 3 + 2];   // r1(i, 1)
  const W rim1 = r1[(i + 1) * 3 + 0];  // r1(i, -1)
  if (b == l) return ri1 * prev[(a + o) * w + (l - 1 + o)] - rim1 * prev[(a + o) * w + (-l + 1 + o)];
  if (b == -l) return ri1 * prev[(a + o) * w + (-l + 1 + o)] + rim1 * prev[(a + o) * w + (l - 1 + o)];
  return r1[(i + 1) * 3 + 1] * prev[(a + o) * w + (b + o)];
}

// Degree-l matrix cur ((2l+1)^2, row-major, rows/cols m = -l..l) from the
// degree-(l-1) matrix prev, l >= 2.  cur(m, n) = u U + v V + w W.
template <class W>
GPUFMM_HD inline void ir_degree(int l, const W* r1, const W* prev, W* cur) {
  using laplace_detail::hd_sqrt;
  const int w2 = 2 * l + 1;
  for (int m = -l; m <= l; ++m) {
    const int am = m < 0 ? -m : m;
    const W d = (m == 0) ? W(1) : W(0);
    for (int n = -l; n <= l; ++n) {
      const int an = n < 0 ? -n : n;
      const W denom = (an == l) ? W(2 * l * (2 * l - 1)) : W((l + n) * (l - n));
      const W u = hd_sqrt(W((l + m) * (l - m)) / denom);
      const W v = W(0.5) * hd_sqrt((W(1) + d) * W((l + am - 1) * (l + am)) / denom) * (W(1) - W(2) * d);
      const W wc = W(-0.5) * hd_sqrt(W((l - am - 1) * (l - am)) / denom) * (W(1) - d);
      W val = W(0);
      if (u != W(0)) val += u * ir_p(0, m, n, l, r1, prev);
      if (v != W(0)) {
        W vv;
        if (m == 0) {
          vv = ir_p(1, 1, n, l, r1, prev) + ir_p(-1, -1, n, l, r1, prev);
        } else if (m > 0) {
          const W d1 = (m == 1) ? W(1) : W(0);
          vv = ir_p(1, m - 1, n, l, r1, prev) * hd_sqrt(W(1) + d1);
          if (m != 1) vv -= ir_p(-1, -m + 1, n, l, r1, prev);
        } else {
          const W d1 = (m == -1) ? W(1) : W(0);
          vv = ir_p(-1, -m - 1, n, l, r1, prev) * hd_sqrt(W(1) + d1);
          if (m != -1) vv += ir_p(1, m + 1, n, l, r1, prev);
        }
        val += v * vv;
      }
      if (wc != W(0)) {
        W ww;
        if (m > 0)
          ww = ir_p(1, m + 1, n, l, r1, prev) + ir_p(-1, -m - 1, n, l, r1, prev);
        else
          ww = ir_p(1, m - 1, n, l, r1, prev) - ir_p(-1, -m + 1, n, l, r1, prev);
        val += wc * ww;
      }
      cur[(m + l) * w2 + (n + l)] = val;
    }
  }
}

// Degree-1 matrix of Ivanic-Ruedenberg for the 3x3 rotation g (row-major),
// order (y, z, x) for m = (-1, 0, 1).
template <class W>
GPUFMM_HD inline void ir_degree1(const W* g, W* r1) {
  const int perm[3] = {1, 2, 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r1[i * 3 + j] = g[perm[i] * 3 + perm[j]];
}

// One step of the degree recursion: cur = the degree-n matrix (n = 0: 1;
// n = 1: r1; n >= 2: ir_degree from prev, the degree n - 1 matrix).
template <class W>
GPUFMM_HD inline void ir_step(int n, const W* r1, const W* prev, W* cur) {
  if (n == 0) {
    cur[0] = W(1);
  } else if (n == 1) {
    for (int k = 0; k < 9; ++k) cur[k] = r1[k];
  } else {
    ir_degree(n, r1, prev, cur);
  }
}

}  // namespace laplace_detail

// Full (2n+1)x(2n+1) matrices of W(Q) in our basis for degrees n < p, for any
// rotation Q (3x3 row-major, proper orthogonal).  out: for each degree n the
// block at offset sum_{k<n}(2k+1)^2 = n(4n^2-1)/3, row-major, rows/columns
// m = -n..n; c'_n^i = sum_j out(i, j) c_n^j.  scratch: 2(2p-1)^2 + 9 W.
// Used by B(b) below and by tests (general rotations).
template <class T, class W>
GPUFMM_HD inline void laplace_rotation_full(int p, const W* Q, T* out, W* scratch) {
  W* r1 = scratch;
  W* prev = scratch + 9;
  W* cur = prev + (2 * p - 1) * (2 * p - 1);
  // The Ivanic-Ruedenberg representation D(g) is a homomorphism with degree-1
  // block P g P^T; our W(Q) = D(Q)^T = D(Q^T).
  W qt[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) qt[i * 3 + j] = Q[j * 3 + i];
  laplace_detail::ir_degree1(qt, r1);
  int off = 0;
  for (int n = 0; n < p; ++n) {
    const int w = 2 * n + 1;
    laplace_detail::ir_step(n, r1, prev, cur);
    for (int i = -n; i <= n; ++i)
      for (int j = -n; j <= n; ++j) {
        const W s = ((i < 0) != (j < 0)) ? W(-1) : W(1);  // our sign on m < 0
        out[off + (i + n) * w + (j + n)] = T(s * cur[(i + n) * w + (j + n)]);
      }
    off += w * w;
    W* t = prev;
    prev = cur;
    cur = t;
  }
}

// Precomputes the B(b) = W(Ry(b)) table for degrees n < p from cos b, sin b
// (b in [0, pi], sin b >= 0).  Layout: for each n at laplace_rotation_offset(n)
// the "cos" block Bc (n+1)x(n+1), rows/cols m = 0..n, then the "sin" block
// Bs n x n, rows/cols m = -1..-n; row-major.  Work type W (use double for a
// float plan); scratch holds laplace_rotation_scratch_size(p) + 9 W.
template <class T, class W>
GPUFMM_HD inline void laplace_rotation_precompute(int p, W cos_b, W sin_b, T* B, W* scratch) {
  W* r1 = scratch;
  W* prev = scratch + 9;
  W* cur = prev + (2 * p - 1) * (2 * p - 1);
  // W(Ry(b)) = D(Ry(b)^T) = D(Ry(-b)); Ry(-b) row-major:
  const W g[9] = {cos_b, W(0), -sin_b, W(0), W(1), W(0), sin_b, W(0), cos_b};
  laplace_detail::ir_degree1(g, r1);
  for (int n = 0; n < p; ++n) {
    const int w = 2 * n + 1;
    laplace_detail::ir_step(n, r1, prev, cur);
    T* bc = B + laplace_rotation_offset(n);
    T* bs = bc + (n + 1) * (n + 1);
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j) bc[i * (n + 1) + j] = T(cur[(i + n) * w + (j + n)]);
    for (int i = 1; i <= n; ++i)
      for (int j = 1; j <= n; ++j) bs[(i - 1) * n + (j - 1)] = T(cur[(-i + n) * w + (-j + n)]);
    W* t = prev;
    prev = cur;
    cur = t;
  }
}

// ---------------------------------------------------------------------------
// Per-element entry points (one output coefficient each).  The serial
// functions below loop over them, and the GPU's cooperative kernels call them
// with threads over (n, m), so CPU and GPU run the very same element formulas
// in the same summation order.

// Degree-n, order-m output of B(b) in (or B(b)^T in when transpose), m in
// -n..n; in: the input vector (p^2 layout n*n+n+m).  Sums over j in
// increasing order (as laplace_rotate_y).  TB: table type, TV: vector type
// (TV = TB, or several vectors at once: TB * TV -> TV, TV += TV, TV(TB(0))).
template <class TB, class TV>
GPUFMM_HD inline TV laplace_rotate_y_elem(const TB* B, const TV* in, int n, int m, bool transpose) {
  const TB* bc = B + laplace_rotation_offset(n);
  const TV* vi = in + n * n + n;  // vi[m], m = -n..n
  TV acc = TV(TB(0));
  if (m >= 0) {
    const int w = n + 1;
    if (transpose)
      for (int j = 0; j <= n; ++j) acc += bc[j * w + m] * vi[j];
    else
      for (int j = 0; j <= n; ++j) acc += bc[m * w + j] * vi[j];
  } else {
    const TB* bs = bc + (n + 1) * (n + 1);
    const int i = -m;
    if (transpose)
      for (int j = 1; j <= n; ++j) acc += bs[(j - 1) * n + (i - 1)] * vi[-j];
    else
      for (int j = 1; j <= n; ++j) acc += bs[(i - 1) * n + (j - 1)] * vi[-j];
  }
  return acc;
}

// One angle-addition step: (cos(m a), sin(m a)) -> (cos((m+1) a), sin((m+1) a)).
template <class T>
GPUFMM_HD inline void laplace_rotate_z_step(T cos_a, T sin_a, T& cm, T& sm) {
  const T c = cm * cos_a - sm * sin_a;
  sm = sm * cos_a + cm * sin_a;
  cm = c;
}

// cos(m a), sin(m a) for m = 0..p-1 by angle addition (the recurrence of
// laplace_rotate_z; pass -sin_a for the inverse rotation).
template <class T>
GPUFMM_HD inline void laplace_rotate_z_cs(int p, T cos_a, T sin_a, T* cm_out, T* sm_out) {
  T cm = T(1), sm = T(0);
  for (int m = 0; m < p; ++m) {
    if (m > 0) laplace_rotate_z_step(cos_a, sin_a, cm, sm);
    cm_out[m] = cm;
    sm_out[m] = sm;
  }
}

// The order-m output of A(a) from the pair a = in(n, |m|), b = in(n, -|m|),
// m != 0; cm, sm = cos(|m| a), sin(|m| a) (sin negated for A^T).
template <class T, class TV>
GPUFMM_HD inline TV laplace_rotate_z_pair(T cm, T sm, TV a, TV b, int m) {
  return m > 0 ? cm * a - sm * b : sm * a + cm * b;
}

// Degree-n, order-m output of A(a) in, m in -n..n; cm, sm = cos(|m| a),
// sin(|m| a) (from laplace_rotate_z_cs, sin negated for A^T).
// TV: as in laplace_rotate_y_elem (T * TV -> TV, TV +- TV).
template <class T, class TV>
GPUFMM_HD inline TV laplace_rotate_z_elem(T cm, T sm, const TV* in, int n, int m) {
  if (m == 0) return in[n * n + n];
  const int am = m < 0 ? -m : m;
  return laplace_rotate_z_pair(cm, sm, in[n * n + n + am], in[n * n + n - am], m);
}

// True when the flip F (eq. 34) negates coefficient (n, m):
// F = diag((-1)^(n+m), m >= 0; -(-1)^(n+|m|), m < 0).
GPUFMM_HD inline bool laplace_flip_negates(int n, int m) {
  const int am = m < 0 ? -m : m;
  const bool odd = ((n + am) & 1) != 0;
  return m >= 0 ? odd : !odd;
}

// out = B(b) in (transpose == false) or B(b)^T in = B(-b) in (transpose ==
// true), degrees n < p.  out != in.  B: table from laplace_rotation_precompute
// for some p_table >= p.
template <class T>
GPUFMM_HD inline void laplace_rotate_y(int p, const T* B, const T* in, T* out, bool transpose) {
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m) out[n * n + n + m] = laplace_rotate_y_elem(B, in, n, m, transpose);
}

// out = A(a) in, or A(a)^T in = A(-a) in when inverse; degrees n < p.
// In-place (out == in) is allowed.  cos(ma), sin(ma) by angle addition.
template <class T>
GPUFMM_HD inline void laplace_rotate_z(int p, T cos_a, T sin_a, const T* in, T* out, bool inverse) {
  if (inverse) sin_a = -sin_a;
  for (int n = 0; n < p; ++n) out[n * n + n] = laplace_rotate_z_elem(T(1), T(0), in, n, 0);
  T cm = T(1), sm = T(0);
  for (int m = 1; m < p; ++m) {
    laplace_rotate_z_step(cos_a, sin_a, cm, sm);
    for (int n = m; n < p; ++n) {
      const T a = laplace_rotate_z_elem(cm, sm, in, n, m);
      const T b = laplace_rotate_z_elem(cm, sm, in, n, -m);
      out[n * n + n + m] = a;
      out[n * n + n - m] = b;
    }
  }
}

// v = F v in place (eq. 34), F = W(Rx(pi)) = diag((-1)^(n+m), m >= 0;
// -(-1)^(n+|m|), m < 0).
template <class T>
GPUFMM_HD inline void laplace_flip(int p, T* v) {
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m)
      if (laplace_flip_negates(n, m)) v[n * n + n + m] = -v[n * n + n + m];
}

// Frame rotation that takes the direction (a, b) to +z:
//   out = B(b) A(a) in            (flip == false)
//   out = B(b)^T F A(a) in        (flip == true: the direction is -(a, b))
// tmp: p*p scratch, may alias in.  out must not alias in or tmp.
template <class T>
GPUFMM_HD inline void laplace_rotate_forward(int p, T cos_a, T sin_a, const T* B, bool flip,
                                             const T* in, T* out, T* tmp) {
  laplace_rotate_z(p, cos_a, sin_a, in, tmp, false);
  if (flip) laplace_flip(p, tmp);
  laplace_rotate_y(p, B, tmp, out, flip);
}

// Inverse of laplace_rotate_forward, ACCUMULATED into out when accumulate:
//   out (+)= A(a)^T B(b)^T in      or      out (+)= A(a)^T F B(b) in.
// tmp: p*p scratch distinct from in and out.
template <class T>
GPUFMM_HD inline void laplace_rotate_back(int p, T cos_a, T sin_a, const T* B, bool flip,
                                          const T* in, T* out, T* tmp, bool accumulate) {
  laplace_rotate_y(p, B, in, tmp, !flip);
  if (flip) laplace_flip(p, tmp);
  if (accumulate) {
    laplace_rotate_z(p, cos_a, sin_a, tmp, tmp, true);
    for (int i = 0; i < p * p; ++i) out[i] += tmp[i];
  } else {
    laplace_rotate_z(p, cos_a, sin_a, tmp, out, true);
  }
}

}  // namespace gpufmm
