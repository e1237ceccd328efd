// Host+device geometry and interpolation of the treecode (plan.hpp): the
// box of a cluster, the MAC (papers/001 eq. 13), the proxy points, the
// contribution of one source point to a cluster's modified charges (eq. 12,
// in the product form of eqs. 14-15) and the interpolation of a target
// cluster's proxy potentials at one point with its exact gradient. The
// OpenMP evaluate and the CUDA kernels call these same functions.
#pragma once

#include <cmath>

#include "approx/chebyshev.hpp"
#include "core/hd.hpp"
#include "tree/hierarchy.hpp"

namespace gpufmm {
namespace treecode {

// The (widened) bounding box of a cluster's or batch's points.
struct Box {
  double c[3];  // centre
  double h[3];  // half-widths, > 0
  double r;     // radius for the MAC: max(|h|, sqrt(2) max_d h_d)
};

// The box of tight bounds b. A flat side (all points in a plane or on a
// line) is widened to 1e-3 of the longest half-width, and every side to at
// least 1e-13 of the box's coordinates (and 1e-200). So the interpolation
// nodes of any degree up to 30 stay 2 ulp or more apart in double. The
// first widening changes the radius by at most 1e-6 relative. The second
// touches only boxes narrower than 1e-13 of their distance from the
// origin, whose proxies would otherwise round onto each other (points at
// 1e15 with a unit extent gave NaN).
// The radius: the interpolation error at distance R follows the longest
// half-width h_max over R, while the MAC compares r / R with theta. |h| is
// sqrt(3) h_max for a cube and sqrt(2) h_max for a flat square, the shapes
// of the error table's distributions (params.cpp); an elongated box has
// less, down to h_max for a line, and so passed the MAC with a larger
// error. r = max(|h|, sqrt(2) h_max) keeps cubes and squares as they were
// and gives elongated boxes the square's. Measured (CPU, theta 0.8,
// degree 8, leaves 500, docs/treecode.md "Method"): the 0.5 x 1 x 0.5
// column of an MPI rank among 4 had 15x the error of the same sources in
// one tree, and 4 ranks 4.6x the error of one process; now 1.7x and 1.07x.
GPUFMM_HD_INLINE Box make_box(const tree::Bounds& b) {
  Box x;
  double hm = 0, cm = 0;
  for (int d = 0; d < 3; ++d) {
    x.c[d] = 0.5 * (b.lo[d] + b.hi[d]);
    x.h[d] = 0.5 * (b.hi[d] - b.lo[d]);
    hm = fmax(hm, x.h[d]);
    cm = fmax(cm, fabs(x.c[d]));
  }
  const double hmin = fmax(hm > 0 ? 1e-3 * hm : 0.0, fmax(1e-13 * cm, 1e-200));
  double r2 = 0;
  for (int d = 0; d < 3; ++d) {
    x.h[d] = fmax(x.h[d], hmin);
    r2 += x.h[d] * x.h[d];
  }
  x.r = fmax(sqrt(r2), 1.4142135623730951 * fmax(x.h[0], fmax(x.h[1], x.h[2])));
  return x;
}

// The MAC's geometric part: (r_a + r_b) < theta R.
GPUFMM_HD_INLINE bool well_separated(const Box& a, const Box& b, double theta) {
  const double dx = a.c[0] - b.c[0], dy = a.c[1] - b.c[1], dz = a.c[2] - b.c[2];
  const double R = sqrt(dx * dx + dy * dy + dz * dz);
  return a.r + b.r < theta * R;
}

// Coordinates of proxy k (0 .. (n+1)^3 - 1) of box x; u: approx::cheb_units(n).
GPUFMM_HD_INLINE void proxy_point(int n, const double* u, const Box& x, int k, double* xyz) {
  const int n1 = n + 1;
  const int k3 = k % n1, k2 = (k / n1) % n1, k1 = k / (n1 * n1);
  const int kk[3] = {k1, k2, k3};
  for (int d = 0; d < 3; ++d) xyz[d] = n == 0 ? x.c[d] : x.c[d] + x.h[d] * u[kk[d]];
}

// The 1D Lagrange values of point y on box x, axis by axis: L[d*(n+1) + k]
// (and dL likewise when not null).
GPUFMM_HD_INLINE void lagrange3(int n, const double* u, const Box& x, const double* y, double* L, double* dL) {
  for (int d = 0; d < 3; ++d)
    approx::lagrange<double>(n, u, x.c[d], x.h[d], y[d], L + d * (n + 1), dL ? dL + d * (n + 1) : nullptr);
}

// qhat[k] += q L_k1(y1) L_k2(y2) L_k3(y3) for every proxy k (eq. 12), from
// the values of lagrange3.
GPUFMM_HD_INLINE void add_modified_charges(int n, const double* L, double q, double* qhat) {
  const int n1 = n + 1;
  for (int k1 = 0; k1 < n1; ++k1) {
    const double a = q * L[k1];
    for (int k2 = 0; k2 < n1; ++k2) {
      const double b = a * L[n1 + k2];
      double* out = qhat + (k1 * n1 + k2) * n1;
      for (int k3 = 0; k3 < n1; ++k3) out[k3] += b * L[2 * n1 + k3];
    }
  }
}

// The interpolant of the proxy values phi at the point of lagrange3's L and
// dL: v += sum_k L_k phi_k and, when g is not null, g += its gradient.
GPUFMM_HD_INLINE void interpolate(int n, const double* L, const double* dL, const double* phi, double& v,
                                  double* g) {
  const int n1 = n + 1;
  double s = 0, sx = 0, sy = 0, sz = 0;
  for (int k1 = 0; k1 < n1; ++k1) {
    double t = 0, ty = 0, tz = 0;  // sums over k2, k3 at fixed k1
    for (int k2 = 0; k2 < n1; ++k2) {
      const double* f = phi + (k1 * n1 + k2) * n1;
      double w = 0, wz = 0;
      for (int k3 = 0; k3 < n1; ++k3) {
        w += L[2 * n1 + k3] * f[k3];
        if (g) wz += dL[2 * n1 + k3] * f[k3];
      }
      t += L[n1 + k2] * w;
      if (g) {
        ty += dL[n1 + k2] * w;
        tz += L[n1 + k2] * wz;
      }
    }
    s += L[k1] * t;
    if (g) {
      sx += dL[k1] * t;
      sy += L[k1] * ty;
      sz += L[k1] * tz;
    }
  }
  v += s;
  if (g) {
    g[0] += sx;
    g[1] += sy;
    g[2] += sz;
  }
}

}  // namespace treecode
}  // namespace gpufmm
