// Laplace FMM math, part 2: particle <-> expansion operators.
//
//   P2M  sources -> multipole (S) expansion          eqs. (13)-(14)
//   M2P  multipole expansion -> potential, gradient  eq. (13) + Kelvin transform
//   P2L  sources -> local (R) expansion              eq. (14), roles swapped
//   L2P  local expansion -> potential, gradient      eqs. (13), (25)
//
// Conventions (see basis.hpp for the basis and the box scaling):
//   kernel 1/r (no 1/(4 pi));
//   phi(y) = sum_j q_j / |y - x_j|  +  sum_j d_j . (y - x_j) / |y - x_j|^3,
//   i.e. the dipole term is d . grad_x (1/|y - x|) at x = x_j;
//   gradients are grad_y phi.
// Points are interleaved xyz (x0,y0,z0,x1,...).  Charge or dipole pointers may
// be null (that kind of source is absent); pot or grad pointers may be null
// (not wanted).  All operators ACCUMULATE into their outputs.
#pragma once

#include "fmm/laplace/basis.hpp"

namespace gpufmm {

namespace laplace_detail {

// How an accumulator adds a value to coefficient k of `out`: plainly here; a
// GPU kernel may pass a functor that first reduces over the lanes of a warp
// (every lane walks the coefficients in the same order).
struct PlainAdd {
  template <class T>
  GPUFMM_HD void operator()(T* out, int k, T v) const {
    out[k] += v;
  }
};

// Accumulates  out_n^m += sgn_n (q Rh_n^m + d . grad Rh_n^m)  (sgn_n = (-1)^n
// when alternate is set).  Used by P2M (alternate) and P2L (not).
template <class T, class Add = PlainAdd>
struct SourceAccum {
  T* out;
  T q;
  T d[3];
  bool alternate;
  Add add{};
  // The terms of coefficient (n, +-m) of one source (q, d) into out.
  GPUFMM_HD static void terms(Add& add, T* out, bool alternate, T q, int n, int m, T rc, T rs) {
    const T s = (alternate && (n & 1)) ? -q : q;
    add(out, n * n + n + m, s * rc);
    if (m > 0) add(out, n * n + n - m, s * rs);
  }
  GPUFMM_HD static void terms(Add& add, T* out, bool alternate, T q, const T* d, int n, int m, T rc, T rs,
                              const T* gc, const T* gs) {
    const T s = (alternate && (n & 1)) ? T(-1) : T(1);
    add(out, n * n + n + m, s * (q * rc + d[0] * gc[0] + d[1] * gc[1] + d[2] * gc[2]));
    if (m > 0) add(out, n * n + n - m, s * (q * rs + d[0] * gs[0] + d[1] * gs[1] + d[2] * gs[2]));
  }
  GPUFMM_HD void operator()(int n, int m, T rc, T rs) { terms(add, out, alternate, q, n, m, rc, rs); }
  GPUFMM_HD void operator()(int n, int m, T rc, T rs, const T* gc, const T* gs) {
    terms(add, out, alternate, q, d, n, m, rc, rs, gc, gs);
  }
};

// SourceAccum of ND densities on one source: density k's charge q[k],
// dipole d[k] into out + k * stride (one walk of the basis serves all).
template <class T, class Add, int ND>
struct SourceAccumNd {
  using One = SourceAccum<T, Add>;
  T* out;
  long long stride;
  T q[ND];
  T d[ND][3];
  bool alternate;
  Add add{};
  GPUFMM_HD void operator()(int n, int m, T rc, T rs) {
    for (int k = 0; k < ND; ++k) One::terms(add, out + k * stride, alternate, q[k], n, m, rc, rs);
  }
  GPUFMM_HD void operator()(int n, int m, T rc, T rs, const T* gc, const T* gs) {
    for (int k = 0; k < ND; ++k) One::terms(add, out + k * stride, alternate, q[k], d[k], n, m, rc, rs, gc, gs);
  }
};

// Accumulates v = sum sgn_n c_n^m Rh_n^m (sgn_n = (-1)^n when alternate is
// set: a multipole's Kelvin walk, M2P).
template <class T>
struct EvalAccum {
  const T* c;
  bool alternate;
  T v;
  // The terms of coefficient (n, +-m) of c into v.
  GPUFMM_HD static void terms(const T* c, bool alternate, T& v, int n, int m, T rc, T rs) {
    T a = c[n * n + n + m] * rc;
    if (m > 0) a += c[n * n + n - m] * rs;
    v += (alternate && (n & 1)) ? -a : a;
  }
  GPUFMM_HD void operator()(int n, int m, T rc, T rs) { terms(c, alternate, v, n, m, rc, rs); }
};

// EvalAccum of ND expansions (c + k * stride) at one point: one walk of the
// basis serves all.
template <class T, int ND>
struct EvalAccumNd {
  using One = EvalAccum<T>;
  const T* c;
  long long stride;
  bool alternate;
  T v[ND];
  GPUFMM_HD void operator()(int n, int m, T rc, T rs) {
    for (int k = 0; k < ND; ++k) One::terms(c + k * stride, alternate, v[k], n, m, rc, rs);
  }
};

// Accumulates v (as EvalAccum) and g = grad v from the values of the basis alone
// (laplace_regular_walk<false>): the gradient of sum_n<p c_n^m Rh_n^m is a
// regular expansion of degree < p-1 whose coefficient at (n, +-m) combines
// c_{n+1}^{+-(m-1)}, c_{n+1}^{+-m} and c_{n+1}^{+-(m+1)} (laplace_grad_shift;
// docs/laplace_math.md "The gradient of a regular expansion"). About a third
// of the operations of differentiating the walk; the same gradient to
// rounding. p: the truncation of c; coef: the tabulated factors or null.
template <class T>
struct EvalAccumShift {
  const T* c;
  bool alternate;
  int p;
  const LaplaceWalkCoef<T>* coef;
  T v;
  T g[3];
  // The terms of degree n, orders +-m of c: the value, and the gradient from
  // degree n+1.
  GPUFMM_HD static void terms(const T* c, bool alternate, int p, const LaplaceWalkCoef<T>* coef, T& v, T* g, int n,
                              int m, T rc, T rs) {
    const T sg = (alternate && (n & 1)) ? T(-1) : T(1);  // the value as EvalAccumHess: the same bits
    v += sg * c[n * n + n + m] * rc;
    if (m > 0) v += sg * c[n * n + n - m] * rs;
    const int N = n + 1;
    if (N >= p) return;
    T fz, fm, fp;
    if (coef) {
      const LaplaceShift<T>& f = coef->shift[laplace_walk_index(N, m)];
      fz = f.fz;
      fm = f.fm;
      fp = f.fp;
    } else {
      laplace_grad_shift(N, m, fz, fm, fp);
    }
    if (alternate && (N & 1)) {  // (-1)^N of the alternating sum
      rc = -rc;
      rs = -rs;
    }
    const T* cN = c + N * N + N;  // c_N^0
    const T cz = cN[m], cp = cN[m + 1], cps = cN[-(m + 1)];
    // Column m's cosine (multiplies rc) and sine (rs) parts of each component.
    T xc = -fp * cp, yc = fp * cps;
    const T zc = fz * cz;
    if (m == 0) {
      g[0] += xc * rc;
      g[1] += yc * rc;
      g[2] += zc * rc;
      return;
    }
    const T cm = cN[m - 1];
    xc += fm * cm;
    T xs = -fp * cps;
    const T ys = -(fp * cp + fm * cm), zs = fz * cN[-m];
    if (m > 1) {  // c_N^{-(m-1)}; at m = 1 there is no sine part of order 0
      const T cms = cN[-(m - 1)];
      yc += fm * cms;
      xs += fm * cms;
    }
    g[0] += xc * rc + xs * rs;
    g[1] += yc * rc + ys * rs;
    g[2] += zc * rc + zs * rs;
  }
  GPUFMM_HD void operator()(int n, int m, T rc, T rs) { terms(c, alternate, p, coef, v, g, n, m, rc, rs); }
};

// EvalAccumShift of ND expansions (c + k * stride) at one point.
template <class T, int ND>
struct EvalAccumShiftNd {
  using One = EvalAccumShift<T>;
  const T* c;
  long long stride;
  bool alternate;
  int p;
  const LaplaceWalkCoef<T>* coef;
  T v[ND];
  T g[ND][3];
  GPUFMM_HD void operator()(int n, int m, T rc, T rs) {
    for (int k = 0; k < ND; ++k) One::terms(c + k * stride, alternate, p, coef, v[k], g[k], n, m, rc, rs);
  }
};

// EvalAccum with the Hessian h (xx, yy, zz, xy, xz, yz) as well, for
// laplace_regular_walk_hess (alternate: the sign (-1)^n of a multipole's
// Kelvin walk, M2P).
template <class T>
struct EvalAccumHess {
  const T* c;
  T v;
  T g[3];
  T h[6];
  bool alternate = false;
  GPUFMM_HD void operator()(int n, int m, T rc, T rs, const T* gc, const T* gs, const T* hc, const T* hs) {
    const T sg = (alternate && (n & 1)) ? T(-1) : T(1);
    const T cp = sg * c[n * n + n + m];
    v += cp * rc;
    for (int k = 0; k < 3; ++k) g[k] += cp * gc[k];
    for (int k = 0; k < 6; ++k) h[k] += cp * hc[k];
    if (m > 0) {
      const T cn = sg * c[n * n + n - m];
      v += cn * rs;
      for (int k = 0; k < 3; ++k) g[k] += cn * gs[k];
      for (int k = 0; k < 6; ++k) h[k] += cn * hs[k];
    }
  }
};

}  // namespace laplace_detail

// P2M: M (p*p) += multipole expansion about `center` (box scale `scale`) of
// n_src sources.  From eq. (14) in the normalised basis:
//   M_n^m += (-1)^n [ q Rh_n^m(rho) + (d/h) . (grad Rh_n^m)(rho) ],
//   rho = (x_j - c)/h.
// P2M of one source carrying ND densities (charges q[k], dipoles d + 3 k or
// d == nullptr) into M + k * stride: one walk of the basis, the terms of
// each density (SourceAccum::terms).
template <class T, int ND, class Add = laplace_detail::PlainAdd>
GPUFMM_HD inline void laplace_p2m_point_nd(int p, T inv_h, const T* r, const T* q, const T* d, T* M,
                                           long long stride, Add add = Add(),
                                           const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  laplace_detail::SourceAccumNd<T, Add, ND> acc{M, stride, {}, {}, true, add};
  const T x = r[0] * inv_h, y = r[1] * inv_h, z = r[2] * inv_h;
  for (int k = 0; k < ND; ++k) {
    acc.q[k] = q[k];
    for (int c = 0; c < 3; ++c) acc.d[k][c] = d ? d[3 * k + c] * inv_h : T(0);
  }
  if (d)
    laplace_regular_walk<true>(p, x, y, z, acc, coef);
  else
    laplace_regular_walk<false>(p, x, y, z, acc, coef);
}

// One source of P2M: r = x_j - c (relative to the box centre), inv_h = 1/h,
// d = the dipole or nullptr; adds through `add` (see PlainAdd). coef: the
// walk's tabulated coefficients (LaplaceWalkCoef: same results) or null.
template <class T, class Add = laplace_detail::PlainAdd>
GPUFMM_HD inline void laplace_p2m_point(int p, T inv_h, const T* r, T q, const T* d, T* M, Add add = Add(),
                                        const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  laplace_p2m_point_nd<T, 1, Add>(p, inv_h, r, &q, d, M, 0, add, coef);
}

template <class T>
GPUFMM_HD inline void laplace_p2m(int p, T scale, const T* center, int n_src, const T* src_xyz,
                                  laplace_detail::nd<const T>* charge,
                                  laplace_detail::nd<const T>* dipole, T* M,
                                  const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  const T inv_h = T(1) / scale;
  for (int j = 0; j < n_src; ++j) {
    const T r[3] = {src_xyz[3 * j] - center[0], src_xyz[3 * j + 1] - center[1], src_xyz[3 * j + 2] - center[2]};
    laplace_p2m_point(p, inv_h, r, charge ? charge[j] : T(0), dipole ? dipole + 3 * j : nullptr, M,
                      laplace_detail::PlainAdd(), coef);
  }
}

// P2L: L (p*p) += local expansion about `center` (scale h) of sources that lie
// outside the ball of radius |x_j - c| > |y - c| for every target y used later:
//   L_n^m += (-1)^n [ q Sh_n^m(rho) + (d/h) . (grad Sh_n^m)(rho) ].
// Via Kelvin (u = rho/|rho|^2, J = du/drho) the signs cancel and this is a
// P2M-like accumulation at u with  q' = q/|rho| - d'.rho/|rho|^3,
// d' = d/h,  d'' = J d' / |rho|.
// One source of P2L: r = x_j - c (relative to the centre), inv_h = 1/h, d =
// the dipole or nullptr; adds through `add` (see PlainAdd).
template <class T, class Add = laplace_detail::PlainAdd>
GPUFMM_HD inline void laplace_p2l_point(int p, T inv_h, const T* rel, T q, const T* dip, T* L, Add add = Add(),
                                        const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  using laplace_detail::hd_sqrt;
  const T r[3] = {rel[0] * inv_h, rel[1] * inv_h, rel[2] * inv_h};
  const T r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  const T inv_r2 = T(1) / r2;
  const T inv_r = hd_sqrt(inv_r2);
  laplace_detail::SourceAccum<T, Add> acc{L, q * inv_r, {T(0), T(0), T(0)}, false, add};
  if (dip) {
    const T d[3] = {dip[0] * inv_h, dip[1] * inv_h, dip[2] * inv_h};
    const T rd = (r[0] * d[0] + r[1] * d[1] + r[2] * d[2]) * inv_r2;
    acc.q -= rd * inv_r;  // d'.rho/|rho|^3
    for (int k = 0; k < 3; ++k) acc.d[k] = (d[k] - T(2) * r[k] * rd) * inv_r2 * inv_r;
    laplace_regular_walk<true>(p, r[0] * inv_r2, r[1] * inv_r2, r[2] * inv_r2, acc, coef);
  } else {
    laplace_regular_walk<false>(p, r[0] * inv_r2, r[1] * inv_r2, r[2] * inv_r2, acc, coef);
  }
}

template <class T>
GPUFMM_HD inline void laplace_p2l(int p, T scale, const T* center, int n_src, const T* src_xyz,
                                  laplace_detail::nd<const T>* charge,
                                  laplace_detail::nd<const T>* dipole, T* L,
                                  const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  const T inv_h = T(1) / scale;
  for (int j = 0; j < n_src; ++j) {
    const T r[3] = {src_xyz[3 * j] - center[0], src_xyz[3 * j + 1] - center[1], src_xyz[3 * j + 2] - center[2]};
    laplace_p2l_point(p, inv_h, r, charge ? charge[j] : T(0), dipole ? dipole + 3 * j : nullptr, L,
                      laplace_detail::PlainAdd(), coef);
  }
}

// L2P of ND local expansions (L + k * stride) at one point r = y - c
// (relative to the centre), inv_h = 1/h: pot[k] += phi_k(y) (pot non-null),
// grad[3 k ..] += grad phi_k(y) (grad non-null); one walk, the terms and
// scaling of laplace_l2p for each expansion.
template <class T, int ND>
GPUFMM_HD inline void laplace_l2p_point_nd(int p, T inv_h, const T* r, const T* L, long long stride, T* pot,
                                           T* grad, const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  const T x = r[0] * inv_h, y = r[1] * inv_h, z = r[2] * inv_h;
  if (grad) {
    laplace_detail::EvalAccumShiftNd<T, ND> acc{L, stride, false, p, coef, {}, {}};
    for (int k = 0; k < ND; ++k) acc.v[k] = acc.g[k][0] = acc.g[k][1] = acc.g[k][2] = T(0);
    laplace_regular_walk<false>(p, x, y, z, acc, coef);
    const T s = inv_h * inv_h;
    for (int k = 0; k < ND; ++k) {
      for (int c = 0; c < 3; ++c) grad[3 * k + c] += acc.g[k][c] * s;
      if (pot) pot[k] += acc.v[k] * inv_h;
    }
    return;
  }
  laplace_detail::EvalAccumNd<T, ND> acc{L, stride, false, {}};
  for (int k = 0; k < ND; ++k) acc.v[k] = T(0);
  laplace_regular_walk<false>(p, x, y, z, acc, coef);
  if (pot)
    for (int k = 0; k < ND; ++k) pot[k] += acc.v[k] * inv_h;
}

// L2P: for each target i, pot[i] += phi(y_i), grad[3i..3i+2] += grad phi(y_i)
// with phi(y) = (1/h) sum L_n^m Rh_n^m((y-c)/h)  (eq. 13) and
// grad phi = (1/h^2) sum L_n^m (grad Rh_n^m)(rho)  (eq. 25: the gradient is
// a regular expansion of one degree less, laplace_detail::EvalAccumShift);
// with hess (non-null), also hess[6i..6i+5] += the second derivatives
// (1/h^3) sum L_n^m (D^2 Rh_n^m)(rho), order xx, yy, zz, xy, xz, yz
// (laplace_regular_walk_hess; grad must then be non-null too).
template <class T>
GPUFMM_HD inline void laplace_l2p(int p, T scale, const T* center, const T* L, int n_trg,
                                  const T* trg_xyz, laplace_detail::nd<T>* pot,
                                  laplace_detail::nd<T>* grad,
                                  const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr,
                                  laplace_detail::nd<T>* hess = nullptr) {
  const T inv_h = T(1) / scale;
  for (int i = 0; i < n_trg; ++i) {
    const T r[3] = {trg_xyz[3 * i] - center[0], trg_xyz[3 * i + 1] - center[1], trg_xyz[3 * i + 2] - center[2]};
    if (hess) {
      laplace_detail::EvalAccumHess<T> acc{L, T(0), {T(0), T(0), T(0)}, {T(0), T(0), T(0), T(0), T(0), T(0)}};
      laplace_regular_walk_hess(p, r[0] * inv_h, r[1] * inv_h, r[2] * inv_h, acc, coef);
      const T s2 = inv_h * inv_h, s3 = s2 * inv_h;
      for (int k = 0; k < 3; ++k) grad[3 * i + k] += acc.g[k] * s2;
      for (int k = 0; k < 6; ++k) hess[6 * i + k] += acc.h[k] * s3;
      if (pot) pot[i] += acc.v * inv_h;
      continue;
    }
    laplace_l2p_point_nd<T, 1>(p, inv_h, r, L, 0, pot ? pot + i : nullptr, grad ? grad + 3 * i : nullptr, coef);
  }
}

// M2P at one target: r = y - c (relative to the centre), inv_h = 1/h;
// *pot += phi(y), grad[0..2] += grad phi(y) (grad non-null), hess[0..5] +=
// its second derivatives, xx, yy, zz, xy, xz, yz (hess non-null; grad must
// then be non-null too), with phi(y) = (1/h) sum M_n^m Sh_n^m(rho),
// rho = r/h. Kelvin transform: phi = v(u)/(h|rho|), v = sum (-1)^n M Rh(u),
// u = rho/|rho|^2; the derivatives of v come from the walk (orders 1, 2),
// those of u and 1/|rho| by the chain rule (J = du/drho = I/r2 - 2 rho
// rho^T/r2^2, symmetric).
template <class T>
GPUFMM_HD inline void laplace_m2p_point(int p, T inv_h, const T* rel, const T* M, T* pot, T* grad, T* hess,
                                        const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr) {
  using laplace_detail::hd_sqrt;
  const T r[3] = {rel[0] * inv_h, rel[1] * inv_h, rel[2] * inv_h};
  const T r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  const T inv_r2 = T(1) / r2;
  const T inv_r = hd_sqrt(inv_r2);
  const T u[3] = {r[0] * inv_r2, r[1] * inv_r2, r[2] * inv_r2};
  if (hess) {
    laplace_detail::EvalAccumHess<T> acc{M, T(0), {T(0), T(0), T(0)}, {T(0), T(0), T(0), T(0), T(0), T(0)}, true};
    laplace_regular_walk_hess(p, u[0], u[1], u[2], acc, coef);
    constexpr int hi[6] = {0, 1, 2, 0, 0, 1};
    constexpr int hj[6] = {0, 1, 2, 1, 2, 2};
    T H[3][3], J[3][3];
    for (int k = 0; k < 6; ++k) H[hi[k]][hj[k]] = H[hj[k]][hi[k]] = acc.h[k];
    const T inv_r4 = inv_r2 * inv_r2;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) J[a][b] = (a == b ? inv_r2 : T(0)) - T(2) * r[a] * r[b] * inv_r4;
    const T gr = r[0] * acc.g[0] + r[1] * acc.g[1] + r[2] * acc.g[2];
    T G[3];  // grad_rho of v(u(rho)) = J g
    for (int a = 0; a < 3; ++a) G[a] = acc.g[a] * inv_r2 - T(2) * r[a] * gr * inv_r4;
    T HJ[3][3];  // H J
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) HJ[a][b] = H[a][0] * J[0][b] + H[a][1] * J[1][b] + H[a][2] * J[2][b];
    const T inv_r3 = inv_r * inv_r2, inv_r5 = inv_r3 * inv_r2;
    const T s2 = inv_h * inv_h, s3 = s2 * inv_h;
    for (int k = 0; k < 6; ++k) {
      const int a = hi[k], b = hj[k];
      const T jhj = J[a][0] * HJ[0][b] + J[a][1] * HJ[1][b] + J[a][2] * HJ[2][b];
      const T dj = T(-2) * (acc.g[a] * r[b] + acc.g[b] * r[a] + (a == b ? gr : T(0))) * inv_r4 +
                   T(8) * gr * r[a] * r[b] * inv_r4 * inv_r2;
      const T f = -(r[b] * G[a] + r[a] * G[b]) * inv_r3 + (jhj + dj) * inv_r +
                  acc.v * (T(3) * r[a] * r[b] * inv_r5 - (a == b ? inv_r3 : T(0)));
      hess[k] += f * s3;
    }
    for (int a = 0; a < 3; ++a) grad[a] += (G[a] - acc.v * r[a] * inv_r2) * inv_r * s2;
    if (pot) *pot += acc.v * inv_r * inv_h;
    return;
  }
  if (grad) {
    laplace_detail::EvalAccumShift<T> acc{M, true, p, coef, T(0), {T(0), T(0), T(0)}};
    laplace_regular_walk<false>(p, u[0], u[1], u[2], acc, coef);
    const T rg = (r[0] * acc.g[0] + r[1] * acc.g[1] + r[2] * acc.g[2]) * inv_r2;
    const T s = inv_h * inv_h * inv_r;
    for (int k = 0; k < 3; ++k) grad[k] += ((acc.g[k] - T(2) * r[k] * rg) * inv_r2 - acc.v * r[k] * inv_r2) * s;
    if (pot) *pot += acc.v * inv_r * inv_h;
    return;
  }
  laplace_detail::EvalAccum<T> acc{M, true, T(0)};
  laplace_regular_walk<false>(p, u[0], u[1], u[2], acc, coef);
  if (pot) *pot += acc.v * inv_r * inv_h;
}

// M2P: evaluates the multipole expansion, phi(y) = (1/h) sum M_n^m Sh_n^m(rho),
// and its gradient (and Hessian, hess non-null) at targets outside the
// sources' ball (laplace_m2p_point).
template <class T>
GPUFMM_HD inline void laplace_m2p(int p, T scale, const T* center, const T* M, int n_trg,
                                  const T* trg_xyz, laplace_detail::nd<T>* pot,
                                  laplace_detail::nd<T>* grad,
                                  const laplace_detail::nd<LaplaceWalkCoef<T>>* coef = nullptr,
                                  laplace_detail::nd<T>* hess = nullptr) {
  const T inv_h = T(1) / scale;
  for (int i = 0; i < n_trg; ++i) {
    const T r[3] = {trg_xyz[3 * i] - center[0], trg_xyz[3 * i + 1] - center[1], trg_xyz[3 * i + 2] - center[2]};
    laplace_m2p_point(p, inv_h, r, M, pot ? pot + i : nullptr, grad ? grad + 3 * i : nullptr,
                      hess ? hess + 6 * i : nullptr, coef);
  }
}

}  // namespace gpufmm
