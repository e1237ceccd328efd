// Tests of the Laplace FMM math headers (src/cxx/fmm/laplace/*.hpp).
//
// Every operator is checked against direct evaluation with random inputs
// (std::mt19937_64, fixed but different seeds), in double and float.  The
// whole file runs in a few seconds; the calibration sweep behind
// laplace_p_for_eps is tests/cxx/test_laplace_math_calibration_long.cpp
// (label long).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "fmm/laplace/math.hpp"
#include "nearfield/p2p.hpp"

namespace {

using namespace gpufmm;

template <class T>
double tol_of() {
  return sizeof(T) == 4 ? 1e-5 : 1e-13;
}

// Random points in the cube centre c, side h (interleaved xyz), as doubles.
std::vector<double> points_in_box(std::mt19937_64& g, int n, const double* c, double h) {
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<double> x(3 * n);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) x[3 * i + k] = c[k] + h * u(g);
  return x;
}

std::vector<double> uniform(std::mt19937_64& g, int n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& a : v) a = u(g);
  return v;
}

template <class T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// Direct potential and gradient in double (the reference).
void direct(const std::vector<double>& trg, const std::vector<double>& src,
            const std::vector<double>* q, const std::vector<double>* d, std::vector<double>& pot,
            std::vector<double>& grad) {
  const int nt = int(trg.size() / 3);
  pot.assign(nt, 0.0);
  grad.assign(3 * nt, 0.0);
  nearfield::p2p<double>(kernels::Laplace<double>{}, nt, trg.data(), int(src.size() / 3), src.data(), q ? q->data() : nullptr,
                      d ? d->data() : nullptr, pot.data(), grad.data());
}

template <class T>
double rel_l2(const std::vector<T>& a, const std::vector<double>& ref) {
  double e = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    e += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]);
    n += ref[i] * ref[i];
  }
  return std::sqrt(e / n);
}

template <class T>
double max_abs_diff(const std::vector<T>& a, const std::vector<double>& ref) {
  double e = 0;
  for (size_t i = 0; i < ref.size(); ++i) e = std::max(e, std::abs(double(a[i]) - ref[i]));
  return e;
}

// Rigorous truncation bound for a p-term expansion of charges and dipoles
// inside radius a, evaluated at distance r > a (or, for a local expansion,
// sources beyond r and targets inside a):  sum_{n>=p} of
// |q| a^n / r^(n+1)  and  |d| sqrt(2) n a^(n-1) / r^(n+1)  (Bernstein).
double truncation_bound(int p, double a, double r, double sum_q, double sum_d) {
  double b = 0;
  for (int n = p; n < p + 400; ++n)
    b += sum_q * std::pow(a, n) / std::pow(r, n + 1) +
         sum_d * std::sqrt(2.0) * n * std::pow(a, n - 1) / std::pow(r, n + 1);
  return b;
}

// Closed form of the normalised regular basis (fmm/laplace/basis.hpp):
// Rh_n^m = (-1)^n r^n sqrt(eps_m (n-|m|)!/(n+|m|)!) P_n^|m|(cos t) {cos |m| phi, -sin |m| phi}
// with P the associated Legendre function WITHOUT the Condon-Shortley phase
// (std::assoc_legendre), i.e. eqs. (7), (8), (11), (12) renormalised.
double rh_closed_form(int n, int m, double x, double y, double z) {
  const double r = std::sqrt(x * x + y * y + z * z);
  const double ct = z / r, ph = std::atan2(y, x);
  const int am = std::abs(m);
  const double norm = std::sqrt((m == 0 ? 1.0 : 2.0) * std::tgamma(n - am + 1.0) / std::tgamma(n + am + 1.0));
  const double ang = m >= 0 ? std::cos(am * ph) : -std::sin(am * ph);
  return ((n & 1) ? -1.0 : 1.0) * std::pow(r, n) * norm * std::assoc_legendre(n, am, ct) * ang;
}

// ---------------------------------------------------------------------------
// Basis (eqs. 7-15)

TEST(LaplaceBasis, RegularMatchesClosedForm) {
  std::mt19937_64 g(101);
  const int p = 20;
  std::vector<double> R(p * p);
  for (int t = 0; t < 5; ++t) {
    auto x = uniform(g, 3, -0.8, 0.8);
    laplace_regular_basis(p, x[0], x[1], x[2], R.data());
    for (int n = 0; n < p; ++n)
      for (int m = -n; m <= n; ++m)
        EXPECT_NEAR(R[laplace_index(n, m)], rh_closed_form(n, m, x[0], x[1], x[2]), 1e-13)
            << n << " " << m;
  }
  // The first functions of eq. (15), renormalised: Rh_1 = (y, -z, -x) for m = -1, 0, 1.
  laplace_regular_basis(3, 0.3, -0.7, 0.2, R.data());
  EXPECT_DOUBLE_EQ(R[0], 1.0);
  EXPECT_DOUBLE_EQ(R[laplace_index(1, -1)], -0.7);
  EXPECT_DOUBLE_EQ(R[laplace_index(1, 0)], -0.2);
  EXPECT_DOUBLE_EQ(R[laplace_index(1, 1)], -0.3);
}

TEST(LaplaceBasis, SingularMatchesKelvinOfClosedForm) {
  std::mt19937_64 g(102);
  const int p = 16;
  std::vector<double> S(p * p);
  for (int t = 0; t < 5; ++t) {
    auto x = uniform(g, 3, -2.0, 2.0);
    laplace_singular_basis(p, x[0], x[1], x[2], S.data());
    const double r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2], r = std::sqrt(r2);
    for (int n = 0; n < p; ++n)
      for (int m = -n; m <= n; ++m) {
        // Sh_n^m = r^(-n-1) * angular part of Rh_n^m * (-1)^n
        const double ref = ((n & 1) ? -1.0 : 1.0) *
                           rh_closed_form(n, m, x[0] / r2, x[1] / r2, x[2] / r2) / r;
        EXPECT_NEAR(S[laplace_index(n, m)], ref, 1e-13 * std::pow(r, -n - 1) + 1e-300);
      }
  }
}

TEST(LaplaceBasis, GradientsMatchFiniteDifferences) {
  std::mt19937_64 g(103);
  const int p = 12;
  const int nc = p * p;
  std::vector<double> R(nc), Rx(nc), Ry(nc), Rz(nc), S(nc), Sx(nc), Sy(nc), Sz(nc);
  std::vector<double> Rp(nc), Rm(nc), Sp(nc), Sm(nc);
  const double h = 1e-5;
  for (int t = 0; t < 3; ++t) {
    auto x = uniform(g, 3, -1.0, 1.0);
    if (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] < 0.5) x[2] += 1.0;  // keep Sh moderate
    laplace_regular_basis_grad(p, x[0], x[1], x[2], R.data(), Rx.data(), Ry.data(), Rz.data());
    laplace_singular_basis_grad(p, x[0], x[1], x[2], S.data(), Sx.data(), Sy.data(), Sz.data());
    const double* gr[3] = {Rx.data(), Ry.data(), Rz.data()};
    const double* gs[3] = {Sx.data(), Sy.data(), Sz.data()};
    for (int k = 0; k < 3; ++k) {
      auto xp = x, xm = x;
      xp[k] += h;
      xm[k] -= h;
      laplace_regular_basis(p, xp[0], xp[1], xp[2], Rp.data());
      laplace_regular_basis(p, xm[0], xm[1], xm[2], Rm.data());
      laplace_singular_basis(p, xp[0], xp[1], xp[2], Sp.data());
      laplace_singular_basis(p, xm[0], xm[1], xm[2], Sm.data());
      for (int i = 0; i < nc; ++i) {
        EXPECT_NEAR(gr[k][i], (Rp[i] - Rm[i]) / (2 * h), 1e-7) << k << " " << i;
        EXPECT_NEAR(gs[k][i], (Sp[i] - Sm[i]) / (2 * h), 1e-6 * (1 + std::abs(gs[k][i]))) << k << " " << i;
      }
    }
    // Values of the gradient variants equal the plain ones.
    laplace_regular_basis(p, x[0], x[1], x[2], Rp.data());
    for (int i = 0; i < nc; ++i) EXPECT_DOUBLE_EQ(R[i], Rp[i]);
  }
}

// The walk with the tabulated coefficients (LaplaceWalkCoef, what P2M and
// L2P use) gives bit for bit the walk without them: values and gradients,
// double and float, every p up to kMaxP.
template <class T>
void check_walk_table(uint64_t seed) {
  std::mt19937_64 g(seed);
  LaplaceWalkCoef<T> coef;
  laplace_walk_coef_fill(coef);
  for (int p : {1, 2, 7, 22, kMaxP})
    for (int t = 0; t < 20; ++t) {
      const auto x = uniform(g, 3, -1.5, 1.5);
      const int nc = p * p;
      std::vector<T> R0(nc), X0(nc), Y0(nc), Z0(nc), R1(nc), X1(nc), Y1(nc), Z1(nc);
      laplace_detail::BasisStore<T> s0{R0.data(), X0.data(), Y0.data(), Z0.data(), T(1), T(1)};
      laplace_detail::BasisStore<T> s1{R1.data(), X1.data(), Y1.data(), Z1.data(), T(1), T(1)};
      laplace_regular_walk<true>(p, T(x[0]), T(x[1]), T(x[2]), s0);
      laplace_regular_walk<true>(p, T(x[0]), T(x[1]), T(x[2]), s1, &coef);
      ASSERT_EQ(R0, R1) << "p " << p;
      ASSERT_EQ(X0, X1) << "p " << p;
      ASSERT_EQ(Y0, Y1) << "p " << p;
      ASSERT_EQ(Z0, Z1) << "p " << p;
      laplace_detail::BasisStore<T> v0{R0.data(), nullptr, nullptr, nullptr, T(1), T(1)};
      laplace_detail::BasisStore<T> v1{R1.data(), nullptr, nullptr, nullptr, T(1), T(1)};
      laplace_regular_walk<false>(p, T(x[0]), T(x[1]), T(x[2]), v0);
      laplace_regular_walk<false>(p, T(x[0]), T(x[1]), T(x[2]), v1, &coef);
      ASSERT_EQ(R0, R1) << "p " << p;
    }
}

TEST(LaplaceBasis, WalkTableGivesTheSameBits) {
  check_walk_table<double>(105);
  check_walk_table<float>(106);
}

// The gradient of an expansion from the walk's values and the shifted
// coefficients (EvalAccumShift, what L2P and M2P use) equals the sum of the
// coefficients times the differentiated walk's gradients, relative to the
// sum of the terms' magnitudes; with the tabulated factors, the same bits as
// without. Alternating signs too (M2P).
template <class T>
void check_grad_shift(uint64_t seed) {
  std::mt19937_64 g(seed);
  LaplaceWalkCoef<T> coef;
  laplace_walk_coef_fill(coef);
  for (int p : {1, 2, 3, 7, 22, kMaxP})
    for (int t = 0; t < 12; ++t) {
      const bool alternate = t & 1;
      const auto x = uniform(g, 3, -0.9, 0.9);
      const int nc = p * p;
      const std::vector<T> c = cast<T>(uniform(g, nc, -1.0, 1.0));
      std::vector<double> R(nc), X(nc), Y(nc), Z(nc);
      laplace_regular_basis_grad(p, x[0], x[1], x[2], R.data(), X.data(), Y.data(), Z.data());
      double ref[4] = {0, 0, 0, 0}, mag[4] = {0, 0, 0, 0};
      for (int n = 0; n < p; ++n)
        for (int m = -n; m <= n; ++m) {
          const int i = n * n + n + m;
          const double s = (alternate && (n & 1)) ? -double(c[i]) : double(c[i]);
          const double* b[4] = {R.data(), X.data(), Y.data(), Z.data()};
          for (int k = 0; k < 4; ++k) {
            ref[k] += s * b[k][i];
            mag[k] += std::abs(s * b[k][i]);
          }
        }
      laplace_detail::EvalAccumShift<T> a0{c.data(), alternate, p, nullptr, T(0), {T(0), T(0), T(0)}};
      laplace_detail::EvalAccumShift<T> a1{c.data(), alternate, p, &coef, T(0), {T(0), T(0), T(0)}};
      laplace_regular_walk<false>(p, T(x[0]), T(x[1]), T(x[2]), a0);
      laplace_regular_walk<false>(p, T(x[0]), T(x[1]), T(x[2]), a1, &coef);
      const T got[4] = {a0.v, a0.g[0], a0.g[1], a0.g[2]};
      for (int k = 0; k < 4; ++k)
        EXPECT_NEAR(double(got[k]), ref[k], 4 * tol_of<T>() * (mag[k] + 1e-300))
            << "p " << p << " component " << k << " alternate " << alternate;
      EXPECT_EQ(a0.v, a1.v);
      for (int k = 0; k < 3; ++k) EXPECT_EQ(a0.g[k], a1.g[k]) << "p " << p;
    }
}

TEST(LaplaceBasis, GradientFromShiftedCoefficients) {
  check_grad_shift<double>(107);
  check_grad_shift<float>(108);
}

TEST(LaplaceBasis, AdditionTheoremEq14) {
  // 1/|r - r0| = sum (-1)^n Rh(r0) Sh(r) = sum (-1)^n Sh(r0) Rh(r) (roles swapped).
  std::mt19937_64 g(104);
  const int p = kMaxP;
  std::vector<double> R(p * p), S(p * p);
  for (int t = 0; t < 4; ++t) {
    auto a = uniform(g, 3, -0.3, 0.3);
    auto b = uniform(g, 3, 1.0, 2.0);
    const double ex = 1.0 / std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                                      (a[2] - b[2]) * (a[2] - b[2]));
    laplace_regular_basis(p, a[0], a[1], a[2], R.data());
    laplace_singular_basis(p, b[0], b[1], b[2], S.data());
    double s = 0;
    for (int n = 0; n < p; ++n)
      for (int m = -n; m <= n; ++m)
        s += ((n & 1) ? -1.0 : 1.0) * R[laplace_index(n, m)] * S[laplace_index(n, m)];
    EXPECT_NEAR(s, ex, 1e-14 * ex);
  }
}

TEST(LaplaceBasis, FloatAtMaxPIsFiniteAndAccurate) {
  // No factorials in the normalised basis: nothing under/overflows in float.
  const int p = kMaxP;
  std::vector<float> Rf(p * p), Sf(p * p);
  std::vector<double> Rd(p * p), Sd(p * p);
  const double x = 0.5, y = -0.5, z = 0.5;  // a corner of the unit box
  laplace_regular_basis<float>(p, x, y, z, Rf.data());
  laplace_regular_basis<double>(p, x, y, z, Rd.data());
  laplace_singular_basis<float>(p, 2 * x, 2 * y, 2 * z, Sf.data());
  laplace_singular_basis<double>(p, 2 * x, 2 * y, 2 * z, Sd.data());
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m) {
      const int i = laplace_index(n, m);
      ASSERT_TRUE(std::isfinite(Rf[i]) && std::isfinite(Sf[i]));
      EXPECT_LE(std::abs(Rd[i]), std::sqrt(2.0) * std::pow(std::sqrt(0.75), n) * (1 + 1e-12));
      const double rscale = std::pow(std::sqrt(0.75), n), sscale = std::pow(std::sqrt(3.0), -n - 1);
      EXPECT_NEAR(Rf[i], Rd[i], 1e-5 * rscale);
      EXPECT_NEAR(Sf[i], Sd[i], 1e-5 * sscale);
    }
}

// ---------------------------------------------------------------------------
// P2P

TEST(LaplaceP2P, ChargeDipoleFormulasAndSelfSkip) {
  const double src[6] = {0.1, 0.2, 0.3, 1.0, -1.0, 0.5};
  const double q[2] = {2.0, -1.5};
  const double d[6] = {0.3, -0.2, 0.7, 0.0, 1.0, 0.0};
  const double y[3] = {0.1, 0.2, 0.3};  // coincides with source 0
  double pot = 0, grad[3] = {0, 0, 0};
  nearfield::p2p<double>(kernels::Laplace<double>{}, y, 2, src, q, d, &pot, grad);
  // Only source 1 contributes.
  const double R[3] = {y[0] - 1.0, y[1] + 1.0, y[2] - 0.5};
  const double r = std::sqrt(R[0] * R[0] + R[1] * R[1] + R[2] * R[2]);
  const double dr = d[3] * R[0] + d[4] * R[1] + d[5] * R[2];
  EXPECT_NEAR(pot, q[1] / r + dr / (r * r * r), 1e-15);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(grad[k],
                -q[1] * R[k] / std::pow(r, 3) + d[3 + k] / std::pow(r, 3) - 3 * dr * R[k] / std::pow(r, 5),
                1e-15);
  // Null outputs / inputs are allowed.
  nearfield::p2p<double>(kernels::Laplace<double>{}, y, 2, src, nullptr, d, nullptr, grad);
  nearfield::p2p<double>(kernels::Laplace<double>{}, y, 2, src, q, nullptr, &pot, nullptr);
  // Float: self skipped too.
  float pf = 0, gf[3] = {0, 0, 0};
  const float sf[3] = {0.25f, 0.5f, 0.75f}, qf = 1.0f, df[3] = {1.0f, 1.0f, 1.0f};
  nearfield::p2p<float>(kernels::Laplace<float>{}, sf, 1, sf, &qf, df, &pf, gf);
  EXPECT_EQ(pf, 0.0f);
  EXPECT_EQ(gf[0], 0.0f);
}

TEST(LaplaceP2P, DipoleIsDerivativeOfChargeKernelAndGradientIsGradient) {
  std::mt19937_64 g(105);
  const int ns = 7;
  const double c0[3] = {0, 0, 0};
  auto src = points_in_box(g, ns, c0, 1.0);
  auto q = uniform(g, ns, -1, 1);
  auto d = uniform(g, 3 * ns, -1, 1);
  const double y[3] = {1.3, -0.9, 1.1};
  const double h = 1e-5;
  // dipole term = d . grad_x (1/|y-x|): finite difference in the source position
  double pd = 0;
  nearfield::p2p<double>(kernels::Laplace<double>{}, y, ns, src.data(), nullptr, d.data(), &pd, nullptr);
  double fd = 0;
  for (int j = 0; j < ns; ++j)
    for (int k = 0; k < 3; ++k) {
      auto sp = src, sm = src;
      sp[3 * j + k] += h;
      sm[3 * j + k] -= h;
      double a = 0, b = 0;
      const double one = 1.0;
      nearfield::p2p<double>(kernels::Laplace<double>{}, y, 1, sp.data() + 3 * j, &one, nullptr, &a, nullptr);
      nearfield::p2p<double>(kernels::Laplace<double>{}, y, 1, sm.data() + 3 * j, &one, nullptr, &b, nullptr);
      fd += d[3 * j + k] * (a - b) / (2 * h);
    }
  EXPECT_NEAR(pd, fd, 1e-8);
  // gradient = grad_y of the potential
  double g0[3] = {0, 0, 0};
  nearfield::p2p<double>(kernels::Laplace<double>{}, y, ns, src.data(), q.data(), d.data(), nullptr, g0);
  for (int k = 0; k < 3; ++k) {
    double yp[3] = {y[0], y[1], y[2]}, ym[3] = {y[0], y[1], y[2]};
    yp[k] += h;
    ym[k] -= h;
    double a = 0, b = 0;
    nearfield::p2p<double>(kernels::Laplace<double>{}, yp, ns, src.data(), q.data(), d.data(), &a, nullptr);
    nearfield::p2p<double>(kernels::Laplace<double>{}, ym, ns, src.data(), q.data(), d.data(), &b, nullptr);
    EXPECT_NEAR(g0[k], (a - b) / (2 * h), 1e-8);
  }
}

// ---------------------------------------------------------------------------
// P2M / M2P, P2L / L2P against direct evaluation, with the truncation bound.

template <class T>
void check_p2m_m2p(int p, unsigned seed) {
  std::mt19937_64 g(seed);
  const double c[3] = {0.3, -0.2, 0.1};
  const double h = 0.5;  // box side
  const int ns = 30, nt = 20;
  auto src = points_in_box(g, ns, c, h);
  auto q = uniform(g, ns, -1, 1);
  auto d = uniform(g, 3 * ns, -1, 1);
  // targets on a shell at distance 2h..3h from c
  std::vector<double> trg(3 * nt);
  for (int i = 0; i < nt; ++i) {
    auto v = uniform(g, 3, -1, 1);
    const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double rr = h * (2.0 + uniform(g, 1, 0, 1)[0]);
    for (int k = 0; k < 3; ++k) trg[3 * i + k] = c[k] + v[k] / n * rr;
  }
  std::vector<double> pe, ge;
  direct(trg, src, &q, &d, pe, ge);
  std::vector<T> M(p * p, T(0));
  const T cT[3] = {T(c[0]), T(c[1]), T(c[2])};
  auto srcT = cast<T>(src), qT = cast<T>(q), dT = cast<T>(d), trgT = cast<T>(trg);
  laplace_p2m<T>(p, T(h), cT, ns, srcT.data(), qT.data(), dT.data(), M.data());
  std::vector<T> pot(nt, T(0)), grad(3 * nt, T(0));
  laplace_m2p<T>(p, T(h), cT, M.data(), nt, trgT.data(), pot.data(), grad.data());
  double sq = 0, sd = 0;
  for (int j = 0; j < ns; ++j) {
    sq += std::abs(q[j]);
    sd += std::sqrt(d[3 * j] * d[3 * j] + d[3 * j + 1] * d[3 * j + 1] + d[3 * j + 2] * d[3 * j + 2]);
  }
  const double a = h * std::sqrt(3.0) / 2;
  const double bound = truncation_bound(p, a, 2 * h, sq, sd);
  const double fp = sizeof(T) == 4 ? 3e-6 * (sq + sd) / h : 0.0;  // float roundoff allowance
  EXPECT_LE(max_abs_diff(pot, pe), bound + fp) << "p=" << p;
  // gradient: bound of the derivative series (one more power of n / r)
  double gb = 0;
  for (int n = p; n < p + 400; ++n)
    gb += (sq * (n + 1) + sd * std::sqrt(2.0) * n * (n + 2) / a) * std::pow(a, n) / std::pow(2 * h, n + 2);
  EXPECT_LE(max_abs_diff(grad, ge), gb + fp / h) << "p=" << p;
}

TEST(LaplaceExpansion, P2MThenM2PMatchesDirectWithinBound) {
  for (int p : {2, 4, 8, 12, 16, 24}) check_p2m_m2p<double>(p, 200 + p);
  for (int p : {2, 4, 8, 12}) check_p2m_m2p<float>(p, 300 + p);
}

template <class T>
void check_p2l_l2p(int p, unsigned seed) {
  std::mt19937_64 g(seed);
  const double c[3] = {-0.4, 0.25, 0.6};
  const double h = 0.25;
  const int ns = 25, nt = 30;
  // sources on a shell at distance 2h..3h, targets in the box
  std::vector<double> src(3 * ns);
  for (int i = 0; i < ns; ++i) {
    auto v = uniform(g, 3, -1, 1);
    const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double rr = h * (2.0 + uniform(g, 1, 0, 1)[0]);
    for (int k = 0; k < 3; ++k) src[3 * i + k] = c[k] + v[k] / n * rr;
  }
  auto q = uniform(g, ns, -1, 1);
  auto d = uniform(g, 3 * ns, -1, 1);
  auto trg = points_in_box(g, nt, c, h);
  std::vector<double> pe, ge;
  direct(trg, src, &q, &d, pe, ge);
  std::vector<T> L(p * p, T(0));
  const T cT[3] = {T(c[0]), T(c[1]), T(c[2])};
  auto srcT = cast<T>(src), qT = cast<T>(q), dT = cast<T>(d), trgT = cast<T>(trg);
  laplace_p2l<T>(p, T(h), cT, ns, srcT.data(), qT.data(), dT.data(), L.data());
  std::vector<T> pot(nt, T(0)), grad(3 * nt, T(0));
  laplace_l2p<T>(p, T(h), cT, L.data(), nt, trgT.data(), pot.data(), grad.data());
  double sq = 0, sd = 0;
  for (int j = 0; j < ns; ++j) {
    sq += std::abs(q[j]);
    sd += std::sqrt(d[3 * j] * d[3 * j] + d[3 * j + 1] * d[3 * j + 1] + d[3 * j + 2] * d[3 * j + 2]);
  }
  const double a = h * std::sqrt(3.0) / 2, r = 2 * h;
  // local expansion: sum_{n>=p} |q| a^n/r^(n+1), dipole: sqrt(2)(n+1) a^n / r^(n+2)
  double bound = 0, gb = 0;
  for (int n = p; n < p + 400; ++n) {
    bound += (sq + sd * std::sqrt(2.0) * (n + 1) / r) * std::pow(a, n) / std::pow(r, n + 1);
    gb += (sq + sd * std::sqrt(2.0) * (n + 1) / r) * std::sqrt(2.0) * n * std::pow(a, n - 1) /
          std::pow(r, n + 1);
  }
  const double fp = sizeof(T) == 4 ? 3e-6 * (sq + sd / h) / h : 0.0;
  EXPECT_LE(max_abs_diff(pot, pe), bound + fp) << "p=" << p;
  EXPECT_LE(max_abs_diff(grad, ge), gb + fp / h) << "p=" << p;
}

TEST(LaplaceExpansion, P2LThenL2PMatchesDirectWithinBound) {
  for (int p : {2, 4, 8, 12, 16, 24}) check_p2l_l2p<double>(p, 400 + p);
  for (int p : {2, 4, 8, 12}) check_p2l_l2p<float>(p, 500 + p);
}

TEST(LaplaceExpansion, TruncationErrorDecaysLikeBound) {
  // Error of P2M+M2P for charges in a unit box at distance 2 decays at least
  // like (a/r)^p (the ratio of eq. 20 for a point target): fit on p = 4..20.
  std::mt19937_64 g(601);
  const double c[3] = {0, 0, 0};
  auto src = points_in_box(g, 40, c, 1.0);
  auto q = uniform(g, 40, 0, 1);
  std::vector<double> trg = {2.0, 0.1, -0.2, -0.3, 2.1, 0.4, 0.5, 0.5, -2.2};
  std::vector<double> pe, ge;
  direct(trg, src, &q, nullptr, pe, ge);
  const double a = std::sqrt(3.0) / 2, r = 2.0;
  double prev = 1e300;
  for (int p = 4; p <= 20; p += 4) {
    std::vector<double> M(p * p, 0.0), pot(3, 0.0);
    laplace_p2m<double>(p, 1.0, c, 40, src.data(), q.data(), nullptr, M.data());
    laplace_m2p<double>(p, 1.0, c, M.data(), 3, trg.data(), pot.data(), nullptr);
    const double err = max_abs_diff(pot, pe);
    EXPECT_LE(err, 40.0 / (r - a) * std::pow(a / r, p)) << p;
    EXPECT_LT(err, prev) << p;  // monotone decay
    prev = err;
  }
}

// ---------------------------------------------------------------------------
// Rotations (eqs. 33-34)

TEST(LaplaceRotation, BetaThenMinusBetaIsIdentityAndBlocksOrthogonal) {
  std::mt19937_64 g(701);
  const int p = kMaxP;
  std::vector<double> B(laplace_rotation_size(p)), Bm(laplace_rotation_size(p));
  std::vector<double> scratch(laplace_rotation_scratch_size(p) + 9);
  for (double beta : {0.3, 1.2345, 2.9, M_PI / 2, M_PI}) {
    laplace_rotation_precompute(p, std::cos(beta), std::sin(beta), B.data(), scratch.data());
    // B(-beta): the recursion is fed cos, -sin directly (not via the transpose)
    laplace_rotation_precompute(p, std::cos(beta), -std::sin(beta), Bm.data(), scratch.data());
    for (size_t i = 0; i < B.size(); ++i) ASSERT_TRUE(std::isfinite(B[i]));
    auto v = uniform(g, p * p, -1, 1);
    std::vector<double> w(p * p), u(p * p), wt(p * p);
    laplace_rotate_y(p, B.data(), v.data(), w.data(), false);
    laplace_rotate_y(p, Bm.data(), w.data(), u.data(), false);  // rotate by beta, then by -beta
    // Ivanic-Ruedenberg loses about one digit per 10 degrees: 1e-12 at n = 49.
    EXPECT_LT(max_abs_diff(u, v), 1e-11) << beta;
    laplace_rotate_y(p, Bm.data(), v.data(), w.data(), false);  // B(-b) v == B(b)^T v
    laplace_rotate_y(p, B.data(), v.data(), wt.data(), true);
    EXPECT_LT(max_abs_diff(w, std::vector<double>(wt.begin(), wt.end())), 1e-11) << beta;
    // norm preserved (orthogonality)
    laplace_rotate_y(p, B.data(), v.data(), w.data(), false);
    for (int n = 0; n < p; ++n) {
      double a = 0, b = 0;
      for (int m = -n; m <= n; ++m) {
        a += v[laplace_index(n, m)] * v[laplace_index(n, m)];
        b += w[laplace_index(n, m)] * w[laplace_index(n, m)];
      }
      EXPECT_NEAR(a, b, 1e-12 * a) << n;
    }
  }
  // z rotation: A(a) then A(-a)
  auto v = uniform(g, p * p, -1, 1);
  std::vector<double> w(p * p), u(p * p);
  laplace_rotate_z(p, std::cos(0.7), std::sin(0.7), v.data(), w.data(), false);
  laplace_rotate_z(p, std::cos(0.7), std::sin(0.7), w.data(), u.data(), true);
  EXPECT_LT(max_abs_diff(u, v), 1e-13);
}

// Rotation matrix Rz(a) Ry(b) (row-major).
std::array<double, 9> rz_ry(double a, double b) {
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
  return {ca * cb, -sa, ca * sb, sa * cb, ca, sa * sb, -sb, 0.0, cb};
}

template <class T>
void check_rotation_preserves_field(unsigned seed) {
  // c' = B(b) A(a) c must satisfy f(Q r') = f'(r') for Q = Rz(a) Ry(b), for
  // regular (local) and singular (multipole) expansions alike.
  std::mt19937_64 g(seed);
  const int p = sizeof(T) == 4 ? 12 : 20;
  const double a = uniform(g, 1, -M_PI, M_PI)[0], b = uniform(g, 1, 0, M_PI)[0];
  auto Q = rz_ry(a, b);
  std::vector<T> B(laplace_rotation_size(p));
  std::vector<double> scratch(laplace_rotation_scratch_size(p) + 9);
  laplace_rotation_precompute(p, std::cos(b), std::sin(b), B.data(), scratch.data());
  auto cd = uniform(g, p * p, -1, 1);
  auto c = cast<T>(cd);
  std::vector<T> cr(p * p), tmp(p * p);
  laplace_rotate_forward<T>(p, T(std::cos(a)), T(std::sin(a)), B.data(), false, c.data(), cr.data(),
                            tmp.data());
  std::vector<double> Rv(p * p), Sv(p * p), Rq(p * p), Sq(p * p);
  for (int t = 0; t < 5; ++t) {
    auto r = uniform(g, 3, -1, 1);
    double qr[3];
    for (int i = 0; i < 3; ++i) qr[i] = Q[3 * i] * r[0] + Q[3 * i + 1] * r[1] + Q[3 * i + 2] * r[2];
    laplace_regular_basis(p, r[0], r[1], r[2], Rv.data());
    laplace_regular_basis(p, qr[0], qr[1], qr[2], Rq.data());
    laplace_singular_basis(p, r[0], r[1], r[2], Sv.data());
    laplace_singular_basis(p, qr[0], qr[1], qr[2], Sq.data());
    double fr = 0, fr2 = 0, fs = 0, fs2 = 0, scale_r = 0, scale_s = 0;
    for (int i = 0; i < p * p; ++i) {
      fr += cd[i] * Rq[i];
      fr2 += double(cr[i]) * Rv[i];
      fs += cd[i] * Sq[i];
      fs2 += double(cr[i]) * Sv[i];
      scale_r += std::abs(cd[i] * Rq[i]);
      scale_s += std::abs(cd[i] * Sq[i]);
    }
    EXPECT_NEAR(fr, fr2, tol_of<T>() * 10 * scale_r);
    EXPECT_NEAR(fs, fs2, tol_of<T>() * 10 * scale_s);
  }
}

TEST(LaplaceRotation, RotationPreservesFieldAtRotatedPoints) {
  for (unsigned s = 0; s < 4; ++s) check_rotation_preserves_field<double>(710 + s);
  for (unsigned s = 0; s < 2; ++s) check_rotation_preserves_field<float>(720 + s);
}

TEST(LaplaceRotation, GeneralRotationMatricesPreserveField) {
  // laplace_rotation_full for a rotation that is not of the form Rz Ry.
  std::mt19937_64 g(730);
  const int p = 10;
  // Q = Rx(0.4) * Rz(1.1) * Ry(-0.8)
  auto mul = [](const std::array<double, 9>& A, const std::array<double, 9>& Bm) {
    std::array<double, 9> C{};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k) C[3 * i + j] += A[3 * i + k] * Bm[3 * k + j];
    return C;
  };
  const double t = 0.4;
  std::array<double, 9> Rx = {1, 0, 0, 0, std::cos(t), -std::sin(t), 0, std::sin(t), std::cos(t)};
  auto Q = mul(Rx, rz_ry(1.1, -0.8));
  int total = 0;
  for (int n = 0; n < p; ++n) total += (2 * n + 1) * (2 * n + 1);
  std::vector<double> W(total), scratch(laplace_rotation_scratch_size(p) + 9);
  laplace_rotation_full(p, Q.data(), W.data(), scratch.data());
  auto c = uniform(g, p * p, -1, 1);
  std::vector<double> cr(p * p, 0.0);
  int off = 0;
  for (int n = 0; n < p; ++n) {
    const int w = 2 * n + 1;
    for (int i = -n; i <= n; ++i)
      for (int j = -n; j <= n; ++j)
        cr[laplace_index(n, i)] += W[off + (i + n) * w + (j + n)] * c[laplace_index(n, j)];
    off += w * w;
  }
  std::vector<double> Rv(p * p), Rq(p * p);
  auto r = uniform(g, 3, -1, 1);
  double qr[3];
  for (int i = 0; i < 3; ++i) qr[i] = Q[3 * i] * r[0] + Q[3 * i + 1] * r[1] + Q[3 * i + 2] * r[2];
  laplace_regular_basis(p, r[0], r[1], r[2], Rv.data());
  laplace_regular_basis(p, qr[0], qr[1], qr[2], Rq.data());
  double f1 = 0, f2 = 0;
  for (int i = 0; i < p * p; ++i) {
    f1 += c[i] * Rq[i];
    f2 += cr[i] * Rv[i];
  }
  EXPECT_NEAR(f1, f2, 1e-12);
}

// ---------------------------------------------------------------------------
// Translations

template <class T>
void check_m2m_exact(int p, unsigned seed) {
  // M2M of a truncated expansion is exact (eq. 18: S|S only maps degree n' to
  // n >= n'), so M2M(P2M at child) == P2M at parent, for all 8 children.
  std::mt19937_64 g(seed);
  const double cp[3] = {0.5, -0.25, 0.125};
  const double hp = 0.5;
  std::vector<T> scratch(laplace_translate_scratch_size(p));
  for (int ch = 0; ch < 8; ++ch) {
    const double cc[3] = {cp[0] + ((ch & 1) ? 0.25 : -0.25) * hp, cp[1] + ((ch & 2) ? 0.25 : -0.25) * hp,
                          cp[2] + ((ch & 4) ? 0.25 : -0.25) * hp};
    auto src = points_in_box(g, 10, cc, hp / 2);
    auto q = uniform(g, 10, -1, 1);
    auto d = uniform(g, 30, -1, 1);
    auto srcT = cast<T>(src), qT = cast<T>(q), dT = cast<T>(d);
    const T cpT[3] = {T(cp[0]), T(cp[1]), T(cp[2])}, ccT[3] = {T(cc[0]), T(cc[1]), T(cc[2])};
    std::vector<T> Mc(p * p, T(0)), Mp(p * p, T(0)), Mref(p * p, T(0));
    laplace_p2m<T>(p, T(hp / 2), ccT, 10, srcT.data(), qT.data(), dT.data(), Mc.data());
    laplace_m2m<T>(p, T(hp / 2), ccT, Mc.data(), T(hp), cpT, Mp.data(), scratch.data());
    laplace_p2m<T>(p, T(hp), cpT, 10, srcT.data(), qT.data(), dT.data(), Mref.data());
    double mx = 0;
    for (auto v : Mref) mx = std::max(mx, std::abs(double(v)));
    for (int i = 0; i < p * p; ++i) EXPECT_NEAR(Mp[i], Mref[i], 10 * tol_of<T>() * mx) << ch << " " << i;
  }
}

TEST(LaplaceTranslation, M2MIsExactForTruncatedExpansions) {
  check_m2m_exact<double>(12, 801);
  check_m2m_exact<double>(kMaxP, 802);
  check_m2m_exact<float>(10, 803);
}

template <class T>
void check_l2l_exact(int p, unsigned seed) {
  // L2L re-centres a polynomial: child and parent expansions agree at points.
  std::mt19937_64 g(seed);
  const double cp[3] = {0.1, 0.2, 0.3};
  const double hp = 2.0;
  auto L = cast<T>(uniform(g, p * p, -1, 1));
  for (int n = 0; n < p; ++n)  // a realistic decay of local coefficients
    for (int m = -n; m <= n; ++m) L[laplace_index(n, m)] *= T(std::pow(0.5, n));
  std::vector<T> scratch(laplace_translate_scratch_size(p));
  const T cpT[3] = {T(cp[0]), T(cp[1]), T(cp[2])};
  for (int ch = 0; ch < 8; ++ch) {
    const double cc[3] = {cp[0] + ((ch & 1) ? 0.5 : -0.5), cp[1] + ((ch & 2) ? 0.5 : -0.5),
                          cp[2] + ((ch & 4) ? 0.5 : -0.5)};
    const T ccT[3] = {T(cc[0]), T(cc[1]), T(cc[2])};
    std::vector<T> Lc(p * p, T(0));
    laplace_l2l<T>(p, T(hp), cpT, L.data(), T(hp / 2), ccT, Lc.data(), scratch.data());
    auto trg = cast<T>(points_in_box(g, 8, cc, hp / 2));
    std::vector<T> a(8, T(0)), b(8, T(0)), ga(24, T(0)), gb(24, T(0));
    laplace_l2p<T>(p, T(hp), cpT, L.data(), 8, trg.data(), a.data(), ga.data());
    laplace_l2p<T>(p, T(hp / 2), ccT, Lc.data(), 8, trg.data(), b.data(), gb.data());
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(a[i], b[i], 100 * tol_of<T>()) << ch;
    for (int i = 0; i < 24; ++i) EXPECT_NEAR(ga[i], gb[i], 100 * tol_of<T>()) << ch;
  }
}

TEST(LaplaceTranslation, L2LIsExactRecentring) {
  check_l2l_exact<double>(12, 811);
  check_l2l_exact<double>(30, 812);
  check_l2l_exact<float>(10, 813);
}

// M2L from a source box (centre cs, side hs) to a target box (ct, ht): error
// of potential and gradient against direct, and the bound of eq. (20).
template <class T>
std::array<double, 2> m2l_error(int p_in, int p_out, const double* cs, double hs, const double* ct,
                                double ht, unsigned seed, bool positive = false) {
  std::mt19937_64 g(seed);
  const int ns = 40, nt = 40;
  auto src = points_in_box(g, ns, cs, hs);
  auto q = uniform(g, ns, positive ? 0.0 : -1.0, 1);
  auto trg = points_in_box(g, nt, ct, ht);
  std::vector<double> pe, ge;
  direct(trg, src, &q, nullptr, pe, ge);
  auto srcT = cast<T>(src), qT = cast<T>(q), trgT = cast<T>(trg);
  const T csT[3] = {T(cs[0]), T(cs[1]), T(cs[2])}, ctT[3] = {T(ct[0]), T(ct[1]), T(ct[2])};
  std::vector<T> M(p_in * p_in, T(0)), L(p_out * p_out, T(0));
  std::vector<T> scratch(laplace_translate_scratch_size(std::max(p_in, p_out)));
  laplace_p2m<T>(p_in, T(hs), csT, ns, srcT.data(), qT.data(), nullptr, M.data());
  laplace_m2l<T>(p_in, p_out, T(hs), csT, M.data(), T(ht), ctT, L.data(), scratch.data());
  std::vector<T> pot(nt, T(0)), grad(3 * nt, T(0));
  laplace_l2p<T>(p_out, T(ht), ctT, L.data(), nt, trgT.data(), pot.data(), grad.data());
  return {rel_l2(pot, pe), rel_l2(grad, ge)};
}

TEST(LaplaceTranslation, M2LMatchesDirectAndDecaysAsEq20Predicts) {
  struct Geo {
    double cs[3], hs, ct[3], ht;
  };
  // unit boxes: face, edge, corner-separated (one box between), a far one, and
  // the modified stencil's child -> parent translation (sec. 2.2.3).
  const Geo geos[] = {{{0, 0, 0}, 1, {2, 0, 0}, 1},      {{0, 0, 0}, 1, {2, 2, 0}, 1},
                      {{0, 0, 0}, 1, {-2, 2, -2}, 1},    {{0, 0, 0}, 1, {1, -3, 2}, 1},
                      {{2.5, 1.5, -1.5}, 1, {0, 0, 0}, 2}, {{0, 0, 0}, 1, {0, 0, -2}, 1}};
  int gi = 0;
  for (const Geo& ge : geos) {
    const double D = std::sqrt(std::pow(ge.ct[0] - ge.cs[0], 2) + std::pow(ge.ct[1] - ge.cs[1], 2) +
                               std::pow(ge.ct[2] - ge.cs[2], 2));
    const double eta = laplace_eta(ge.hs * std::sqrt(3.0) / 2, ge.ht * std::sqrt(3.0) / 2, D);
    ASSERT_LT(eta, 0.77);
    double e_prev = 1e300;
    for (int p = 4; p <= 24; p += 4) {
      auto e = m2l_error<double>(p, p, ge.cs, ge.hs, ge.ct, ge.ht, 900 + 10 * gi);
      // eq. (20): eps_p < C eta^p; C = 1 covers these relative errors.
      EXPECT_LT(e[0], std::pow(eta, p)) << gi << " p=" << p;
      EXPECT_LT(e[1], 5 * p * std::pow(eta, p)) << gi << " p=" << p;
      EXPECT_LT(e[0], e_prev) << gi << " p=" << p;
      e_prev = e[0];
    }
    ++gi;
  }
  // p_out < p_in (the reduced truncation of eq. 24) and float.
  const double cs[3] = {0, 0, 0}, ct[3] = {3, 1, 0};
  auto e1 = m2l_error<double>(16, 10, cs, 1, ct, 1, 990);
  auto e2 = m2l_error<double>(10, 10, cs, 1, ct, 1, 990);
  EXPECT_LT(e1[0], 2 * e2[0]);
  auto ef = m2l_error<float>(10, 10, cs, 1, ct, 1, 991);
  EXPECT_LT(ef[0], 2 * e2[0] + 1e-5);
  auto ef2 = m2l_error<float>(12, 12, geos[0].cs, 1, geos[0].ct, 1, 992);
  EXPECT_LT(ef2[0], 1e-4);
  EXPECT_LT(ef2[1], 1e-3);
}

template <class T>
void check_flip_and_scaled(unsigned seed) {
  // eq. (34): the table for beta also serves the direction -t (flip), and
  // eq. (35): the per-distance S|R table is the unit one with row n scaled by
  // rd^(n+1) and column n' by rs^n'.
  std::mt19937_64 g(seed);
  const int p = sizeof(T) == 4 ? 10 : 18;
  const double t[3] = {1.0, -2.0, 2.0};
  auto dir = laplace_direction<double>(t[0], t[1], t[2]);
  std::vector<T> B(laplace_rotation_size(p)), coax(laplace_coax_size(p, p)), K(laplace_coax_size(p, p));
  std::vector<double> rs(laplace_rotation_scratch_size(p) + 9);
  laplace_rotation_precompute(p, dir.cos_b, dir.sin_b, B.data(), rs.data());
  const double hs = 1.0, hd = 1.0;
  laplace_coax_sr<T>(p, p, hd / dir.dist, hs / dir.dist, coax.data());
  laplace_coax_sr<T>(p, p, 1.0, 1.0, K.data());
  auto M = cast<T>(uniform(g, p * p, -1, 1));
  std::vector<T> work(laplace_apply_work_size(p)), scratch(laplace_translate_scratch_size(p));
  const T zero[3] = {0, 0, 0};
  for (int sgn : {1, -1}) {
    const T ct[3] = {T(sgn * t[0]), T(sgn * t[1]), T(sgn * t[2])};
    std::vector<T> Lref(p * p, T(0)), L1(p * p, T(0));
    laplace_m2l<T>(p, p, T(hs), zero, M.data(), T(hd), ct, Lref.data(), scratch.data());
    laplace_m2l_apply<T>(p, p, T(dir.cos_a), T(dir.sin_a), B.data(), sgn < 0, coax.data(), M.data(),
                         L1.data(), work.data());
    double mx = 0;
    for (auto v : Lref) mx = std::max(mx, std::abs(double(v)));
    for (int i = 0; i < p * p; ++i) {
      EXPECT_NEAR(L1[i], Lref[i], 10 * tol_of<T>() * mx) << sgn << " " << i;
    }
  }
  const double rd = hd / dir.dist, rsrc = hs / dir.dist;
  int off = 0;
  for (int m = 0; m < p; ++m) {
    const int w = p - m;
    for (int n = m; n < p; ++n)
      for (int np = m; np < p; ++np) {
        const double k = double(K[off + (n - m) * w + (np - m)]) * std::pow(rd, n + 1) * std::pow(rsrc, np);
        EXPECT_NEAR(double(coax[off + (n - m) * w + (np - m)]), k, 10 * tol_of<T>() * std::abs(k))
            << m << " " << n << " " << np;
      }
    off += w * w;
  }
}

// The closed form of laplace_coax_offset (used per coefficient by the GPU
// kernels) is the running block offset of laplace_coax_apply.
TEST(LaplaceTranslation, CoaxOffsetIsTheBlockSum) {
  for (int po = 1; po <= kMaxP; ++po)
    for (int pi = 1; pi <= kMaxP; ++pi) {
      int off = 0;
      for (int m = 0; m < po && m < pi; ++m) {
        ASSERT_EQ(laplace_coax_offset(po, pi, m), off) << po << " " << pi << " " << m;
        off += (po - m) * (pi - m);
      }
    }
}

TEST(LaplaceTranslation, FlipEq34AndScaledUnitSREq35) {
  check_flip_and_scaled<double>(1001);
  check_flip_and_scaled<float>(1002);
}

// Full chain P2M -> M2M -> M2L -> L2L -> L2P, potential and gradient, for
// charges and dipoles, at box sizes 1 and 2^-20 (no overflow; same error).
template <class T>
std::array<double, 2> chain_error(int p, double scale, unsigned seed) {
  std::mt19937_64 g(seed);
  // Source parent box at origin (side 2s), receiver parent at (4s, 2s, 0);
  // children of side s.
  const double s = scale;
  const double cps[3] = {0, 0, 0}, cpt[3] = {4 * s, 2 * s, 0};
  std::vector<T> scratch(laplace_translate_scratch_size(p));
  std::vector<T> Mp(p * p, T(0)), Lp(p * p, T(0));
  std::vector<double> all_src, all_q, all_d;
  const T cpsT[3] = {T(cps[0]), T(cps[1]), T(cps[2])}, cptT[3] = {T(cpt[0]), T(cpt[1]), T(cpt[2])};
  for (int ch = 0; ch < 8; ++ch) {
    const double cc[3] = {cps[0] + ((ch & 1) ? 0.5 : -0.5) * s, cps[1] + ((ch & 2) ? 0.5 : -0.5) * s,
                          cps[2] + ((ch & 4) ? 0.5 : -0.5) * s};
    auto src = points_in_box(g, 6, cc, s);
    auto q = uniform(g, 6, -1, 1);
    auto d = uniform(g, 18, -s, s);
    all_src.insert(all_src.end(), src.begin(), src.end());
    all_q.insert(all_q.end(), q.begin(), q.end());
    all_d.insert(all_d.end(), d.begin(), d.end());
    auto srcT = cast<T>(src), qT = cast<T>(q), dT = cast<T>(d);
    const T ccT[3] = {T(cc[0]), T(cc[1]), T(cc[2])};
    std::vector<T> Mc(p * p, T(0));
    laplace_p2m<T>(p, T(s), ccT, 6, srcT.data(), qT.data(), dT.data(), Mc.data());
    laplace_m2m<T>(p, T(s), ccT, Mc.data(), T(2 * s), cpsT, Mp.data(), scratch.data());
  }
  laplace_m2l<T>(p, p, T(2 * s), cpsT, Mp.data(), T(2 * s), cptT, Lp.data(), scratch.data());
  std::vector<double> trg;
  std::vector<T> pot, grad;
  for (int ch = 0; ch < 8; ++ch) {
    const double cc[3] = {cpt[0] + ((ch & 1) ? 0.5 : -0.5) * s, cpt[1] + ((ch & 2) ? 0.5 : -0.5) * s,
                          cpt[2] + ((ch & 4) ? 0.5 : -0.5) * s};
    const T ccT[3] = {T(cc[0]), T(cc[1]), T(cc[2])};
    std::vector<T> Lc(p * p, T(0));
    laplace_l2l<T>(p, T(2 * s), cptT, Lp.data(), T(s), ccT, Lc.data(), scratch.data());
    auto t = points_in_box(g, 5, cc, s);
    auto tT = cast<T>(t);
    std::vector<T> pc(5, T(0)), gc(15, T(0));
    laplace_l2p<T>(p, T(s), ccT, Lc.data(), 5, tT.data(), pc.data(), gc.data());
    trg.insert(trg.end(), t.begin(), t.end());
    pot.insert(pot.end(), pc.begin(), pc.end());
    grad.insert(grad.end(), gc.begin(), gc.end());
  }
  std::vector<double> pe, ge;
  direct(trg, all_src, &all_q, &all_d, pe, ge);
  for (auto v : pot) EXPECT_TRUE(std::isfinite(double(v)));
  return {rel_l2(pot, pe), rel_l2(grad, ge)};
}

TEST(LaplaceTranslation, FullChainMatchesDirectAtAnyBoxSize) {
  // Parent boxes of side 2 with centres 2*sqrt(5) apart: eta (eq. 20) = 0.632.
  for (double scale : {1.0, std::ldexp(1.0, -20)}) {
    auto e8 = chain_error<double>(8, scale, 1101);
    auto e16 = chain_error<double>(16, scale, 1101);
    auto e24 = chain_error<double>(24, scale, 1101);
    EXPECT_LT(e8[0], 1e-3);
    EXPECT_LT(e16[0], 1e-5);
    EXPECT_LT(e24[0], 1e-7);
    EXPECT_LT(e24[1], 1e-6);
    EXPECT_LT(e16[0], e8[0]);
    EXPECT_LT(e24[0], e16[0]);
    auto f8 = chain_error<float>(8, scale, 1101);
    auto f12 = chain_error<float>(12, scale, 1101);
    EXPECT_LT(f8[0], 2 * e8[0] + 1e-5);
    EXPECT_LT(f12[0], 1e-4);
    EXPECT_LT(f12[1], 1e-3);
    // scale invariance: the same configuration at another size, same error
    auto u8 = chain_error<double>(8, 1.0, 1101);
    EXPECT_NEAR(e8[0], u8[0], 1e-6 * u8[0] + 1e-12);
  }
}

// ---------------------------------------------------------------------------
// Error control (eqs. 20-24)

TEST(LaplaceError, PForEpsAndReducedP) {
  EXPECT_NEAR(kLaplaceEtaStar, std::sqrt(3.0) / (4 - std::sqrt(3.0)), 1e-15);
  int prev = 0;
  for (double eps : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-9, 1e-10, 1e-12}) {
    const int p = laplace_p_for_eps(eps);
    EXPECT_GE(p, prev);
    EXPECT_GE(p, 2);
    EXPECT_LE(p, kMaxP);
    prev = p;
  }
  EXPECT_EQ(laplace_p_for_eps(1e-30), kMaxP);
  EXPECT_LE(laplace_p_for_eps(1e-5, true), laplace_p_for_eps(1e-5));
  // Sparse trees: + kLaplaceSparseExtraP below the threshold, capped; a p
  // already at (or, when forced, above) the cap stays.
  EXPECT_EQ(laplace_p_sparse(22, kLaplaceSparseNearPerTarget), 22);
  EXPECT_EQ(laplace_p_sparse(22, 2.2), 22 + kLaplaceSparseExtraP);
  EXPECT_EQ(laplace_p_sparse(22, 0.0), 22 + kLaplaceSparseExtraP);
  EXPECT_EQ(laplace_p_sparse(kMaxP - 2, 1.0), kMaxP);
  EXPECT_EQ(laplace_p_sparse(kMaxP, 1.0), kMaxP);
  EXPECT_EQ(laplace_p_sparse(14, 1.0, true), kLaplaceMaxPFloat);
  EXPECT_EQ(laplace_p_sparse(kLaplaceMaxPFloat, 1.0, true), kLaplaceMaxPFloat);
  // eq. (24): p' <= p, decreasing with eta, == p at eta*.
  for (int p : {4, 12, 30}) {
    EXPECT_EQ(laplace_p_reduced(p, kLaplaceEtaStar, kLaplaceEtaStar, 1.0), p);
    int prevr = p;
    for (double eta : {0.7, 0.6, 0.5, 0.4, 0.3}) {
      const int r = laplace_p_reduced(p, eta);
      EXPECT_LE(r, prevr);
      EXPECT_GE(r, 1);
      prevr = r;
    }
    // without the budget term this is exactly ceil(p ln eta* / ln eta)
    EXPECT_EQ(laplace_p_reduced(p, 0.5, kLaplaceEtaStar, 1.0),
              int(std::ceil(p * std::log(kLaplaceEtaStar) / std::log(0.5) - 1e-9)));
  }
  // eq. (20) and the stencil radii of sec. 2.2.3
  EXPECT_NEAR(laplace_eta(std::sqrt(3.0) / 2, std::sqrt(3.0) / 2, 2.0), kLaplaceEtaStar, 1e-15);
  EXPECT_NEAR(laplace_eta_boxes(1.0, 1.0, 2.0), kLaplaceEtaStar, 1e-15);
}

}  // namespace
