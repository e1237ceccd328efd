// Laplace FMM math, part 4: coaxial translations and M2M / M2L / L2L by RCR.
//
// Coaxial translations (eqs. 18-19) along +z by |t|, t = (new centre) -
// (old centre), act on each order m separately and identically on m and -m.
// In the normalised, box-scaled basis (basis.hpp) they become
//
//   S|S  (M2M, child scale h_c -> parent scale h_p, tau = |t|/h_p, rho = h_c/h_p)
//     M'_n = sum_{n'=|m|}^{n}    (-tau)^(n-n') rho^n'      G^m_{n,n'} M_n'
//   R|R  (L2L, parent -> child, same tau, rho)
//     L'_n = sum_{n'=n}^{p-1}    (-tau)^(n'-n) rho^(n+1)   G^m_{n',n} L_n'
//   S|R  (M2L, source scale h_s -> target scale h_d, rs = h_s/|t|, rd = h_d/|t|)
//     L_n  = sum_{n'=|m|}^{p-1}  (-1)^m rd^(n+1) rs^n'     K^m_{n,n'} M_n'
//
// with  G^m_{n,n'} = sqrt( C(n-m, n-n') C(n+m, n-n') )   (from r_{n-n'}, eq. 19)
//       K^m_{n,n'} = sqrt( C(n+n', n-m) C(n+n', n+m) )   (from s_{n+n'}, eq. 19)
// (C = binomial coefficient).  The sign (-1)^m of S|R is not in eq. (18):
// that equation holds for the complex basis (10); going to (11) removes the
// factors i^-|m| (alpha) and i^|m| (beta), which cancel for S|S and R|R but
// not for S|R.  K is the "unit" S|R matrix of eq. (35) in this
// basis, and the powers of rd, rs are its diagonal rescalings Lambda; with
// rd, rs, rho, tau < 1 every stored number is O(1), for any box size.
//
// Coax matrix layout for (p_out, p_in): for m = 0 .. min(p_out,p_in)-1 a
// dense block, rows n = m..p_out-1 (output degree), columns n' = m..p_in-1
// (input degree), row-major, blocks consecutive.  laplace_coax_size gives the
// length.  Precomputation uses double internally (exact binomial recurrences)
// whatever T is.
//
// The translation operators are  out += A^T B^T Coax B A in  (eq. 33, see
// rotation.hpp), with flip for the mirrored direction (eq. 34).
#pragma once

#include "fmm/laplace/rotation.hpp"

namespace gpufmm {

// Length of a coax matrix for (p_out, p_in).
GPUFMM_HD constexpr int laplace_coax_size(int p_out, int p_in) {
  int s = 0;
  for (int m = 0; m < p_out && m < p_in; ++m) s += (p_out - m) * (p_in - m);
  return s;
}

// Work (in T) needed by the *_apply functions: 2 max(p_in, p_out)^2.
GPUFMM_HD constexpr int laplace_apply_work_size(int p) { return 2 * p * p; }

// Scratch (in T) needed by the all-in-one laplace_m2m / laplace_m2l /
// laplace_l2l with truncation numbers <= p.
GPUFMM_HD constexpr int laplace_translate_scratch_size(int p) {
  return laplace_rotation_size(p) + laplace_rotation_scratch_size(p) + 9 +
         laplace_coax_size(p, p) + laplace_apply_work_size(p);
}

// Direction of a translation vector t: |t| and the angles (a, b) of eq. (33)
// as cosines and sines (t along +-z gives a = 0).
template <class T>
struct LaplaceDirection {
  T dist;
  T cos_a, sin_a;  // azimuth
  T cos_b, sin_b;  // polar angle, sin_b >= 0
};

template <class T>
GPUFMM_HD inline LaplaceDirection<T> laplace_direction(T tx, T ty, T tz) {
  using laplace_detail::hd_sqrt;
  LaplaceDirection<T> d;
  const T rho2 = tx * tx + ty * ty;
  const T rho = hd_sqrt(rho2);
  d.dist = hd_sqrt(rho2 + tz * tz);
  if (rho > T(0)) {
    d.cos_a = tx / rho;
    d.sin_a = ty / rho;
  } else {
    d.cos_a = T(1);
    d.sin_a = T(0);
  }
  if (d.dist > T(0)) {
    d.cos_b = tz / d.dist;
    d.sin_b = rho / d.dist;
  } else {
    d.cos_b = T(1);
    d.sin_b = T(0);
  }
  return d;
}

// ---------------------------------------------------------------------------
// Coax matrices (precomputation; O(p^3), one sqrt per entry).

// S|S (M2M) for truncation p: tau = |t|/h_parent, rho = h_child/h_parent.
template <class T>
GPUFMM_HD inline void laplace_coax_ss(int p, double tau, double rho, T* mat) {
  using laplace_detail::hd_sqrt;
  double rp[kMaxP];  // rho^n
  rp[0] = 1.0;
  for (int i = 1; i < p; ++i) rp[i] = rp[i - 1] * rho;
  int off = 0;
  for (int m = 0; m < p; ++m) {
    const int w = p - m;
    for (int n = m; n < p; ++n) {
      T* row = mat + off + (n - m) * w - m;  // row[n'] for n' in [m, p)
      for (int np = n + 1; np < p; ++np) row[np] = T(0);
      // k = n - n' from 0 up: G(k+1) = G(k) sqrt((n-m-k)(n+m-k))/(k+1).
      double g = 1.0, mt = 1.0;  // G^m_{n,n-k} and (-tau)^k
      for (int k = 0; n - k >= m; ++k) {
        row[n - k] = T(mt * g * rp[n - k]);
        g *= hd_sqrt(double(n - m - k) * double(n + m - k)) / double(k + 1);
        mt *= -tau;
      }
    }
    off += w * w;
  }
}

// R|R (L2L) for truncation p: tau = |t|/h_parent, rho = h_child/h_parent.
template <class T>
GPUFMM_HD inline void laplace_coax_rr(int p, double tau, double rho, T* mat) {
  using laplace_detail::hd_sqrt;
  int off = 0;
  for (int m = 0; m < p; ++m) {
    const int w = p - m;
    double rp = rho;
    for (int np = 0; np < m; ++np) rp *= rho;  // rho^(m+1)
    for (int n = m; n < p; ++n) {
      T* row = mat + off + (n - m) * w - m;
      for (int np = m; np < n; ++np) row[np] = T(0);
      // n' = n + k: G^m_{n+k, n} = sqrt(C(n+k-m, k) C(n+k+m, k)),
      // ratio G(k+1)/G(k) = sqrt((n+k+1-m)(n+k+1+m))/(k+1).
      double g = 1.0, mt = 1.0;
      for (int k = 0; n + k < p; ++k) {
        row[n + k] = T(mt * g * rp);
        g *= hd_sqrt(double(n + k + 1 - m) * double(n + k + 1 + m)) / double(k + 1);
        mt *= -tau;
      }
      rp *= rho;
    }
    off += w * w;
  }
}

// S|R (M2L) for (p_out, p_in): rd = h_dst/|t|, rs = h_src/|t|.  With
// rd = rs = 1 this is the unit matrix (S|R)(1) of eq. (35): the table for
// (rd, rs) is it with row n scaled by rd^(n+1) and column n' by rs^n'.
template <class T>
GPUFMM_HD inline void laplace_coax_sr(int p_out, int p_in, double rd, double rs, T* mat) {
  using laplace_detail::hd_sqrt;
  int off = 0;
  for (int m = 0; m < p_out && m < p_in; ++m) {
    const int w = p_in - m;
    // K^m_{m,m} = 1; K^m_{n+1,m} = K^m_{n,m} sqrt((n+1+m)/(n+1-m));
    // K^m_{n,n'+1} = K^m_{n,n'} (n+n'+1)/sqrt((n'+1-m)(n'+1+m)).
    // The (-1)^m: eq. (18) holds for the Epton-Dembart basis (10); in the
    // real basis (11) alpha and beta lose the factors i^-|m| and i^|m|, which
    // cancel in S|S and R|R but leave (-1)^m in S|R.
    double k0 = (m & 1) ? -1.0 : 1.0;
    double rdp = rd;
    for (int i = 0; i < m; ++i) rdp *= rd;  // rd^(m+1)
    for (int n = m; n < p_out; ++n) {
      T* row = mat + off + (n - m) * w - m;
      double k = k0;
      double rsp = 1.0;
      for (int i = 0; i < m; ++i) rsp *= rs;  // rs^m
      for (int np = m; np < p_in; ++np) {
        row[np] = T(rdp * k * rsp);
        k *= double(n + np + 1) / hd_sqrt(double(np + 1 - m) * double(np + 1 + m));
        rsp *= rs;
      }
      k0 *= hd_sqrt(double(n + 1 + m) / double(n + 1 - m));
      rdp *= rd;
    }
    off += (p_out - m) * w;
  }
}

// ---------------------------------------------------------------------------
// Coax application.

// Offset of the order-m block in a coax matrix for (p_out, p_in):
// sum_{k<m} (p_out - k)(p_in - k), in closed form (the GPU kernels take it
// per coefficient).
GPUFMM_HD constexpr int laplace_coax_offset(int p_out, int p_in, int m) {
  return m * p_out * p_in - (p_out + p_in) * (m * (m - 1) / 2) + (m - 1) * m * (2 * m - 1) / 6;
}

// Degree-n, order-m output (m in -n..n, n < p_out) of Coax in: the row of the
// order-|m| block dotted with in's order-m coefficients of degrees |m|..p_in-1
// in increasing order (as laplace_coax_apply).  Zero when |m| >= p_in.
// block = mat + laplace_coax_offset(p_out, p_in, |m|).  TB, TV: as in
// laplace_rotate_y_elem.
template <class TB, class TV>
GPUFMM_HD inline TV laplace_coax_elem(int p_in, const TB* block, const TV* in, int n, int m) {
  const int am = m < 0 ? -m : m;
  TV acc = TV(TB(0));
  if (am >= p_in) return acc;
  const TB* row = block + (n - am) * (p_in - am) - am;  // row[n'] for n' in [am, p_in)
  for (int np = am; np < p_in; ++np) acc += row[np] * in[np * np + np + m];
  return acc;
}

// out = Coax in: in has p_in^2 coefficients, out gets p_out^2 (all written).
template <class T>
GPUFMM_HD inline void laplace_coax_apply(int p_out, int p_in, const T* mat, const T* in, T* out) {
  for (int i = 0; i < p_out * p_out; ++i) out[i] = T(0);
  int off = 0;
  for (int m = 0; m < p_out && m < p_in; ++m) {
    for (int n = m; n < p_out; ++n) {
      out[n * n + n + m] = laplace_coax_elem(p_in, mat + off, in, n, m);
      if (m > 0) out[n * n + n - m] = laplace_coax_elem(p_in, mat + off, in, n, -m);
    }
    off += (p_out - m) * (p_in - m);
  }
}

// ---------------------------------------------------------------------------
// Translations with precomputed data (what a plan / GPU kernel calls).
//
//   out += A^T B^T Coax B A in         (flip == false)
//   out += A^T F B Coax B^T F A in     (flip == true, direction -(a, b), eq. 34)
// B: table of laplace_rotation_precompute for p_B >= max(p_in, p_out);
// coax: matrix for (p_out, p_in); work: laplace_apply_work_size(max(p_in,p_out)).
template <class T>
GPUFMM_HD inline void laplace_rcr_apply(int p_in, int p_out, T cos_a, T sin_a, const T* B,
                                        bool flip, const T* coax, const T* in, T* out, T* work) {
  const int pm = p_in > p_out ? p_in : p_out;
  T* w1 = work;
  T* w2 = work + pm * pm;
  laplace_rotate_forward(p_in, cos_a, sin_a, B, flip, in, w2, w1);
  laplace_coax_apply(p_out, p_in, coax, w2, w1);
  laplace_rotate_back(p_out, cos_a, sin_a, B, flip, w1, out, w2, true);
}

// M2M: M_parent += (S|S)(t) M_child, t = c_parent - c_child; coax from
// laplace_coax_ss(p, |t|/h_parent, h_child/h_parent).
template <class T>
GPUFMM_HD inline void laplace_m2m_apply(int p, T cos_a, T sin_a, const T* B, bool flip,
                                        const T* coax_ss, const T* M_child, T* M_parent, T* work) {
  laplace_rcr_apply(p, p, cos_a, sin_a, B, flip, coax_ss, M_child, M_parent, work);
}

// M2L: L_dst (p_out^2) += (S|R)(t) M_src (first p_in^2 coefficients),
// t = c_dst - c_src; coax from laplace_coax_sr(p_out, p_in, h_dst/|t|,
// h_src/|t|).  With p_out = p_in = p' < p this is the reduced translation of
// eq. (24).
template <class T>
GPUFMM_HD inline void laplace_m2l_apply(int p_in, int p_out, T cos_a, T sin_a, const T* B,
                                        bool flip, const T* coax_sr, const T* M_src, T* L_dst,
                                        T* work) {
  laplace_rcr_apply(p_in, p_out, cos_a, sin_a, B, flip, coax_sr, M_src, L_dst, work);
}

// L2L: L_child += (R|R)(t) L_parent, t = c_child - c_parent; coax from
// laplace_coax_rr(p, |t|/h_parent, h_child/h_parent).
template <class T>
GPUFMM_HD inline void laplace_l2l_apply(int p, T cos_a, T sin_a, const T* B, bool flip,
                                        const T* coax_rr, const T* L_parent, T* L_child, T* work) {
  laplace_rcr_apply(p, p, cos_a, sin_a, B, flip, coax_rr, L_parent, L_child, work);
}

// ---------------------------------------------------------------------------
// All-in-one translations (tests, simple users): compute the rotation and
// coax data for this t in `scratch` (laplace_translate_scratch_size(p) T's,
// p = the largest truncation number involved), then apply.  O(p^3) each.

namespace laplace_detail {

template <class T>
struct TranslateScratch {
  T* B;
  T* rot;
  T* coax;
  T* work;
  GPUFMM_HD TranslateScratch(int p, T* s)
      : B(s),
        rot(s + laplace_rotation_size(p)),
        coax(rot + laplace_rotation_scratch_size(p) + 9),
        work(coax + laplace_coax_size(p, p)) {}
};

// The RCR steps of one all-in-one translation from centre `from` to centre
// `to` with truncation pm = max(p_in, p_out): the direction of to - from,
// the rotation tables for it, the coaxial coefficients (coax(|t|, out)),
// then rotate - coaxial - rotate back (laplace_rcr_apply).
template <class T, class Coax>
GPUFMM_HD inline void rcr_translate(int p_in, int p_out, const T* from, const T* to, Coax coax, const T* in,
                                    T* out, T* scratch) {
  const int pm = p_in > p_out ? p_in : p_out;
  const LaplaceDirection<T> d = laplace_direction(to[0] - from[0], to[1] - from[1], to[2] - from[2]);
  TranslateScratch<T> s(pm, scratch);
  laplace_rotation_precompute(pm, d.cos_b, d.sin_b, s.B, s.rot);
  coax(d.dist, s.coax);
  laplace_rcr_apply(p_in, p_out, d.cos_a, d.sin_a, s.B, false, s.coax, in, out, s.work);
}

}  // namespace laplace_detail

// M_parent += M2M(M_child); both truncated at p.
template <class T>
GPUFMM_HD inline void laplace_m2m(int p, T h_child, const T* c_child, const T* M_child,
                                  T h_parent, const T* c_parent, T* M_parent, T* scratch) {
  laplace_detail::rcr_translate(
      p, p, c_child, c_parent,
      [&](T dist, T* coax) { laplace_coax_ss(p, double(dist / h_parent), double(h_child / h_parent), coax); },
      M_child, M_parent, scratch);
}

// L_dst (p_out^2) += M2L(M_src truncated at p_in).  scratch sized for
// max(p_in, p_out).
template <class T>
GPUFMM_HD inline void laplace_m2l(int p_in, int p_out, T h_src, const T* c_src, const T* M_src,
                                  T h_dst, const T* c_dst, T* L_dst, T* scratch) {
  laplace_detail::rcr_translate(
      p_in, p_out, c_src, c_dst,
      [&](T dist, T* coax) { laplace_coax_sr(p_out, p_in, double(h_dst / dist), double(h_src / dist), coax); },
      M_src, L_dst, scratch);
}

// L_child += L2L(L_parent); both truncated at p.
template <class T>
GPUFMM_HD inline void laplace_l2l(int p, T h_parent, const T* c_parent, const T* L_parent,
                                  T h_child, const T* c_child, T* L_child, T* scratch) {
  laplace_detail::rcr_translate(
      p, p, c_parent, c_child,
      [&](T dist, T* coax) { laplace_coax_rr(p, double(dist / h_parent), double(h_child / h_parent), coax); },
      L_parent, L_child, scratch);
}

}  // namespace gpufmm
