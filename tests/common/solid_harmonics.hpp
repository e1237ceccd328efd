// A second FMM expansion for the tests of the driver (issue 51), host +
// device: the Laplace kernel in complex solid harmonics, written from the
// textbook addition theorems, independently of fmm/laplace/*.hpp. Used by
// tests/cxx/test_fmm_driver_toy.cpp (the CPU driver) and
// tests/cuda/test_cuda_fmm_driver_toy.cu (the CUDA driver).
//
// Regular R_n^m(v) = r^n P_n^m(cos t) e^{i m phi} / (n + m)! and irregular
// I_n^m(v) = (n - m)! P_n^m(cos t) e^{i m phi} / r^{n + 1} (Condon-Shortley
// phase; R_n^{-m} = (-1)^m conj R_n^m, the same for I), so that
//   1/|x - y| = sum conj(R_n^m(y)) I_n^m(x)                  (|y| < |x|)
//   R_n^m(a + b) = sum_{k,l} R_k^l(a) R_{n-k}^{m-l}(b)
//   I_n^m(x - y) = sum_{k,l} conj(R_k^l(y)) I_{n+k}^{m+l}(x)   (|y| < |x|).
// Expansions about c: multipole M_n^m = sum q conj(R_n^m(x - c)),
// phi = sum M I(y - c); local phi(y) = sum L_n^m conj(R_n^m(y - c)).
#pragma once

#include <cmath>
#include <vector>

#include "core/hd.hpp"

namespace toy_fmm {

// Degrees up to kMaxDeg in an expansion; translations read up to twice that.
constexpr int kMaxDeg = 12;
constexpr int kMaxTerms = (2 * kMaxDeg + 1) * (2 * kMaxDeg + 1);

struct Cx {
  double re = 0, im = 0;
  GPUFMM_HD Cx() {}
  GPUFMM_HD Cx(double r, double i = 0) : re(r), im(i) {}  // NOLINT: implicit from a real, as C(0)
  GPUFMM_HD Cx& operator+=(const Cx& o) {
    re += o.re;
    im += o.im;
    return *this;
  }
  friend GPUFMM_HD Cx operator*(const Cx& a, const Cx& b) { return Cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
  friend GPUFMM_HD Cx operator*(double s, const Cx& a) { return Cx(s * a.re, s * a.im); }
  friend GPUFMM_HD Cx conj(const Cx& a) { return Cx(a.re, -a.im); }
};

GPUFMM_HD inline int idx(int n, int m) { return n * n + n + m; }
GPUFMM_HD inline int nterms(int p) { return (p + 1) * (p + 1); }
GPUFMM_HD inline double sgn(int n) { return n % 2 ? -1.0 : 1.0; }

GPUFMM_HD inline void negative_orders(int p, Cx* out) {
  for (int n = 1; n <= p; ++n)
    for (int m = 1; m <= n; ++m) out[idx(n, -m)] = sgn(m) * conj(out[idx(n, m)]);
}

GPUFMM_HD inline void regular(int p, const double* v, Cx* out) {
  const double x = v[0], y = v[1], z = v[2], r2 = x * x + y * y + z * z;
  out[0] = Cx(1);
  for (int m = 0; m <= p; ++m) {
    if (m > 0) out[idx(m, m)] = Cx(-x / (2 * m), -y / (2 * m)) * out[idx(m - 1, m - 1)];
    if (m + 1 <= p) out[idx(m + 1, m)] = z * out[idx(m, m)];
    for (int n = m + 2; n <= p; ++n) {
      const Cx a = (double(2 * n - 1) * z) * out[idx(n - 1, m)], b = r2 * out[idx(n - 2, m)];
      out[idx(n, m)] = (1.0 / double((n + m) * (n - m))) * Cx(a.re - b.re, a.im - b.im);
    }
  }
  negative_orders(p, out);
}

GPUFMM_HD inline void irregular(int p, const double* v, Cx* out) {
  const double x = v[0], y = v[1], z = v[2], r2 = x * x + y * y + z * z;
  out[0] = Cx(1 / sqrt(r2));
  for (int m = 0; m <= p; ++m) {
    if (m > 0) out[idx(m, m)] = (double(2 * m - 1) / r2) * (Cx(-x, -y) * out[idx(m - 1, m - 1)]);
    if (m + 1 <= p) out[idx(m + 1, m)] = (double(2 * m + 1) * z / r2) * out[idx(m, m)];
    for (int n = m + 2; n <= p; ++n) {
      const Cx a = (double(2 * n - 1) * z) * out[idx(n - 1, m)], b = double((n - 1) * (n - 1) - m * m) * out[idx(n - 2, m)];
      out[idx(n, m)] = (1.0 / r2) * Cx(a.re - b.re, a.im - b.im);
    }
  }
  negative_orders(p, out);
}

// M += q conj(R(rel)), degrees <= p; w: nterms(p) scratch.
GPUFMM_HD inline void p2m(int p, const double* rel, double q, Cx* M, Cx* w) {
  regular(p, rel, w);
  for (int k = 0; k < nterms(p); ++k) M[k] += q * conj(w[k]);
}
// L += the local of charge q at rel (source minus centre).
GPUFMM_HD inline void p2l(int p, const double* rel, double q, Cx* L, Cx* w) {
  const double v[3] = {-rel[0], -rel[1], -rel[2]};
  irregular(p, v, w);
  for (int n = 0; n <= p; ++n)
    for (int m = -n; m <= n; ++m) L[idx(n, m)] += (sgn(n) * q) * w[idx(n, m)];
}
// The local L at rel (target minus centre).
GPUFMM_HD inline double l2p(int p, const Cx* L, const double* rel, Cx* w) {
  regular(p, rel, w);
  double s = 0;
  for (int k = 0; k < nterms(p); ++k) s += (L[k] * conj(w[k])).re;
  return s;
}
// The multipole M at rel (target minus centre).
GPUFMM_HD inline double m2p(int p, const Cx* M, const double* rel, Cx* w) {
  irregular(p, rel, w);
  double s = 0;
  for (int k = 0; k < nterms(p); ++k) s += (M[k] * w[k]).re;
  return s;
}
// M about a child (degrees pc) into its parent's (pp) at shift v = child
// centre - parent centre: sum M_k^j conj(R_{n-k}^{m-j}(v)).
GPUFMM_HD inline void m2m(int pc, int pp, const double* v, const Cx* child, Cx* parent, Cx* w) {
  regular(pp, v, w);
  for (int n = 0; n <= pp; ++n)
    for (int m = -n; m <= n; ++m)
      for (int k = 0; k <= (n < pc ? n : pc); ++k)
        for (int j = -k; j <= k; ++j)
          if (m - j <= n - k && j - m <= n - k) parent[idx(n, m)] += child[idx(k, j)] * conj(w[idx(n - k, m - j)]);
}
// L about a parent (degrees pp) into its child's (pc) at v = child centre -
// parent centre: sum_{j >= k} L_j^i conj(R_{j-k}^{i-m}(v)).
GPUFMM_HD inline void l2l(int pp, int pc, const double* v, const Cx* parent, Cx* child, Cx* w) {
  regular(pp, v, w);
  for (int k = 0; k <= pc; ++k)
    for (int m = -k; m <= k; ++m)
      for (int j = k; j <= pp; ++j)
        for (int i = -j; i <= j; ++i)
          if (i - m <= j - k && m - i <= j - k) child[idx(k, m)] += parent[idx(j, i)] * conj(w[idx(j - k, i - m)]);
}
// M (degrees pm) into L (pl) at v = receiver centre - source centre:
// L_j^i += (-1)^j sum M_k^a I_{k+j}^{a+i}(v); w: nterms(pm + pl) scratch.
GPUFMM_HD inline void m2l(int pm, int pl, const double* v, const Cx* M, Cx* L, Cx* w) {
  irregular(pm + pl, v, w);
  for (int j = 0; j <= pl; ++j)
    for (int i = -j; i <= j; ++i) {
      Cx s;
      for (int k = 0; k <= pm; ++k)
        for (int a = -k; a <= k; ++a) s += M[idx(k, a)] * w[idx(k + j, a + i)];
      L[idx(j, i)] += sgn(j) * s;
    }
}

// The reference of the toy tests: the double direct sum of the potential of
// charges q at x (3 x n) at the targets y (3 x m), without self terms.
inline std::vector<double> direct_potential(const std::vector<double>& x, const std::vector<double>& q,
                                            const std::vector<double>& y) {
  std::vector<double> pot(y.size() / 3, 0.0);
  for (size_t i = 0; i < pot.size(); ++i)
    for (size_t j = 0; j < q.size(); ++j) {
      const double dx = y[3 * i] - x[3 * j], dy = y[3 * i + 1] - x[3 * j + 1], dz = y[3 * i + 2] - x[3 * j + 2];
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 > 0) pot[i] += q[j] / std::sqrt(r2);
    }
  return pot;
}

}  // namespace toy_fmm
