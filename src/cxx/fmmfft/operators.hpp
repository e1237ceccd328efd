// The FMM-FFT's operator entries (papers/002 sec. 4), host+device: the CPU
// stages (execute_cpu.cpp) and the CUDA kernels (src/cuda/fmmfft/) call
// these, always in double (the float transform rounds the entries once).
//
// The P - 1 FMMs apply the cotangent kernel matrices
//   [C~_p]_{mn} = cot(pi/M (n - m) + pi p / N),   1 <= p < P,
// to the p-th decimated input x_p[n] = x[p + P n] (n = 0..M-1), periodic in
// n - m with period M. Boxes of level l hold M / 2^l consecutive indices;
// box b's points map to [-1, 1] as s_m = -1 + (2m + 1) / M_L at the leaves
// (sec. 4.4), Chebyshev points of the first kind are the expansion nodes
// (approx/chebyshev.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "approx/chebyshev.hpp"
#include "core/hd.hpp"

namespace gpufmm {
namespace fmmfft {

// cot(pi x) for |x| < 1, x != 0.
GPUFMM_HD_INLINE double cot_pi(double x) {
  const double a = M_PI * x;
  return cos(a) / sin(a);
}

// The S2T (near field) entry of FMM p for index offset k = n - m
// (sec. 4.6): cot(pi (p + P k) / N). Callers keep |p + P k| < N / 2 (the
// near field spans three leaves of M_L points and 2^L >= 4 leaves), so the
// integer ratio needs no reduction.
GPUFMM_HD_INLINE double s2t_entry(int64_t N, int64_t P, int64_t p, int64_t k) {
  return cot_pi(double(p + P * k) / double(N));
}

// The M2L entry of level l between target node i and source node j of
// boxes s apart, for FMM p (1-based: p = 1..P-1) (sec. 4.7):
//   cot(A + a),  A = pi / 2^l ((z_j - z_i) / 2 + s),  a = pi p / N,
// as cot(A + a) = (cot A - tan a) / (1 + cot A tan a): cot A depends on the
// level only (a table of ns Q^2 per level), tan a on p only. Far boxes keep
// |cot A tan a| < 1 / M_L, so the form loses nothing.
GPUFMM_HD_INLINE double m2l_cot(int level, double zi, double zj, int s) {
  double x = ((zj - zi) * 0.5 + double(s)) / double(int64_t(1) << level);
  x -= rint(x);  // cot(pi x) has period 1
  return cot_pi(x);
}
GPUFMM_HD_INLINE double shift_tan(int64_t N, int64_t p) { return tan(M_PI * double(p) / double(N)); }
GPUFMM_HD_INLINE double m2l_shifted(double cot_a, double tan_b) { return (cot_a - tan_b) / (1.0 + cot_a * tan_b); }

// The M2L box offsets s of level l (sec. 4.7), index si = 0..m2l_count-1:
// the base level B interacts with every box 2..2^B-2 away (cyclic); a level
// below it with {-3, -2, 2, 3} (s = -3 for odd boxes only, 3 for even ones).
GPUFMM_HD_INLINE int m2l_count(int level, bool base) { return base ? (1 << level) - 3 : 4; }
GPUFMM_HD_INLINE int m2l_offset(int si, bool base) { return base ? si + 2 : (si < 2 ? si - 3 : si); }
GPUFMM_HD_INLINE bool m2l_applies(int s, int64_t b, bool base) { return base || (b & 1 ? s != 3 : s != -3); }

// The POST factor rho_p = exp(sign i pi p / P) sin(pi p / P) / M of FMM p
// (sec. 3): sign -1 for the forward transform, +1 for the inverse (whose
// matrices are the complex conjugates). z_p = rho_p (T_p - sign i r_p).
struct Rho {
  double re, im;
};
GPUFMM_HD_INLINE Rho post_factor(int64_t P, int64_t M, int64_t p, int sign) {
  const double a = M_PI * double(p) / double(P);
  const double s = sin(a) / double(M);
  return Rho{cos(a) * s, double(sign) * sin(a) * s};
}

// POST of one output: z = rho (t - sign i r) for the FMM's output t and its
// sum r, both complex (re, im).
struct Cplx {
  double re, im;
};
GPUFMM_HD_INLINE Cplx post_apply(Rho rho, double t_re, double t_im, double r_re, double r_im, int sign) {
  const double a = t_re + sign * r_im, b = t_im - sign * r_re;  // t - sign i r
  return Cplx{rho.re * a - rho.im * b, rho.re * b + rho.im * a};
}

// Leaf point m of M_L mapped to [-1, 1] (sec. 4.4).
GPUFMM_HD_INLINE double leaf_point(int ml, int m) { return -1.0 + double(2 * m + 1) / double(ml); }

}  // namespace fmmfft
}  // namespace gpufmm
