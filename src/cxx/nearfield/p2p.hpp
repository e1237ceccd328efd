// The CPU near field: one target against a run of sources, for any pair
// kernel (kernels/kernel.hpp). The OpenMP direct sum (nearfield/direct_cpu.cpp)
// and the FMM's P2P (fmm/pipeline_impl.hpp) both call sum_sources;
// the CUDA kernels (src/cuda/nearfield) call the same kernel structs.
//
// Sources are structure of arrays: coordinates in X (double in the FMM,
// where they are the user's coordinates and each difference is one
// correctly rounded subtraction in double, only then rounded to T: exact
// for close pairs, as in the double direct sum, and in float close pairs
// keep their relative accuracy; T in the direct sum), charges and dipoles in
// T. The arrays are padded to a multiple of kLanes, and each lane keeps its
// own partial sums, so that the loop vectorises for any ISA without
// reassociating a floating-point reduction. The direct sum pads with zeros
// (charge 0, dipole 0, at coordinate 0: 0 times a finite value, or the
// r == 0 rule of the singular kernels). A run that ends inside a lane group
// (the FMM's P2P) has that last group computed with its unused lanes
// discarded, whatever the padding holds: with the user's coordinates a
// padding source at 0 could sit next to a target near the origin, where
// 1/r^3 overflows and 0 * Inf is NaN.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel.hpp"

namespace gpufmm {
namespace nearfield {

constexpr int kLanes = 16;

template <class X, class T>
struct Sources {
  std::vector<X> x, y, z;
  std::vector<T> q, dx, dy, dz;
  Sources() = default;
  explicit Sources(int64_t n) { resize(n); }
  void resize(int64_t n) {
    const size_t m = static_cast<size_t>(n);
    x.assign(m, X(0));
    y.assign(m, X(0));
    z.assign(m, X(0));
    q.assign(m, T(0));
    dx.assign(m, T(0));
    dy.assign(m, T(0));
    dz.assign(m, T(0));
  }
};

// Rounds n up to a multiple of kLanes (the padded length of a source run).
inline int64_t padded(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// The sum over sources [j0, j1) of kernel k at the target (tx, ty, tz): v,
// gx, gy, gz are SET (not accumulated). The arrays hold at least j0 +
// padded(j1 - j0) finite entries.
template <bool kC, bool kD, bool kG, class K, class X, class T>
inline void sum_sources(const K& k, X tx, X ty, X tz, int64_t j0, int64_t j1, const Sources<X, T>& s, T& v,
                        T& gx, T& gy, T& gz) {
  const X* __restrict sx = s.x.data();
  const X* __restrict sy = s.y.data();
  const X* __restrict sz = s.z.data();
  const T* __restrict sq = s.q.data();
  const T* __restrict sdx = s.dx.data();
  const T* __restrict sdy = s.dy.data();
  const T* __restrict sdz = s.dz.data();
  T av[kLanes], ax[kLanes], ay[kLanes], az[kLanes];
  for (int l = 0; l < kLanes; ++l) av[l] = ax[l] = ay[l] = az[l] = T(0);
  const int64_t jf = j0 + (j1 - j0) / kLanes * kLanes;  // the whole lane groups
  for (int64_t b = j0; b < jf; b += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const int64_t j = b + l;
      k.template accumulate<kC, kD, kG>(T(tx - sx[j]), T(ty - sy[j]), T(tz - sz[j]), kC ? sq[j] : T(0),
                                        kD ? sdx[j] : T(0), kD ? sdy[j] : T(0), kD ? sdz[j] : T(0), av[l], ax[l],
                                        ay[l], az[l]);
    }
  }
  if (jf < j1) {  // the last, partial group: unused lanes computed and discarded
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const int64_t j = jf + l;
      T tv = T(0), tgx = T(0), tgy = T(0), tgz = T(0);
      k.template accumulate<kC, kD, kG>(T(tx - sx[j]), T(ty - sy[j]), T(tz - sz[j]), kC ? sq[j] : T(0),
                                        kD ? sdx[j] : T(0), kD ? sdy[j] : T(0), kD ? sdz[j] : T(0), tv, tgx,
                                        tgy, tgz);
      const bool used = j < j1;
      av[l] += used ? tv : T(0);
      ax[l] += used ? tgx : T(0);
      ay[l] += used ? tgy : T(0);
      az[l] += used ? tgz : T(0);
    }
  }
  T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
  for (int l = 0; l < kLanes; ++l) {
    s0 += av[l];
    s1 += ax[l];
    s2 += ay[l];
    s3 += az[l];
  }
  v = s0;
  gx = s1;
  gy = s2;
  gz = s3;
}

// sum_sources with the Hessian (the Laplace kernel's accumulate_hess): o[0]
// = phi, o[1..3] = grad phi, o[4..9] = xx, yy, zz, xy, xz, yz, SET. Same
// lanes, order and handling of a last partial group as sum_sources.
template <bool kC, bool kD, class K, class X, class T>
inline void sum_sources_hess(const K& k, X tx, X ty, X tz, int64_t j0, int64_t j1, const Sources<X, T>& s,
                             T* o) {
  constexpr int kOut = 10;
  const X* __restrict sx = s.x.data();
  const X* __restrict sy = s.y.data();
  const X* __restrict sz = s.z.data();
  const T* __restrict sq = s.q.data();
  const T* __restrict sdx = s.dx.data();
  const T* __restrict sdy = s.dy.data();
  const T* __restrict sdz = s.dz.data();
  T a[kOut][kLanes];
  for (int c = 0; c < kOut; ++c)
    for (int l = 0; l < kLanes; ++l) a[c][l] = T(0);
  auto lane = [&](int l) {
    return kernels::HessRef<T>{a[0][l], a[1][l], a[2][l], a[3][l], a[4][l], a[5][l], a[6][l], a[7][l], a[8][l], a[9][l]};
  };
  const int64_t jf = j0 + (j1 - j0) / kLanes * kLanes;  // the whole lane groups
  for (int64_t b = j0; b < jf; b += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const int64_t j = b + l;
      k.template accumulate_hess<kC, kD>(T(tx - sx[j]), T(ty - sy[j]), T(tz - sz[j]), kC ? sq[j] : T(0),
                                         kD ? sdx[j] : T(0), kD ? sdy[j] : T(0), kD ? sdz[j] : T(0), lane(l));
    }
  }
  if (jf < j1) {  // the last, partial group: unused lanes computed and discarded
    for (int l = 0; l < kLanes; ++l) {
      const int64_t j = jf + l;
      T t[kOut] = {T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0)};
      k.template accumulate_hess<kC, kD>(T(tx - sx[j]), T(ty - sy[j]), T(tz - sz[j]), kC ? sq[j] : T(0),
                                         kD ? sdx[j] : T(0), kD ? sdy[j] : T(0), kD ? sdz[j] : T(0),
                                         kernels::hess_ref(t));
      if (j < j1)
        for (int c = 0; c < kOut; ++c) a[c][l] += t[c];
    }
  }
  for (int c = 0; c < kOut; ++c) {
    T sum = T(0);
    for (int l = 0; l < kLanes; ++l) sum += a[c][l];
    o[c] = sum;
  }
}

template <class T>
struct NoDeduce {
  using type = T;
};
template <class T>
using nd = typename NoDeduce<T>::type;  // nullable pointer arguments accept nullptr

// Plain loops for small sums and tests: n_trg targets (interleaved xyz)
// against n_src sources (charges q and/or dipoles d, NULL when absent);
// pot[i] and grad[3i..3i+2] ACCUMULATE (NULL when not wanted).
template <class T, class K>
void p2p(const K& k, int n_trg, const T* trg, int n_src, nd<const T*> src, nd<const T*> q, nd<const T*> d,
         nd<T*> pot, nd<T*> grad) {
  kernels::with_sources<K::kDipoles>(q != nullptr, d != nullptr, grad != nullptr, [&](auto c_, auto d_, auto g_) {
    constexpr bool kC = decltype(c_)::value, kD = decltype(d_)::value, kG = decltype(g_)::value;
    for (int i = 0; i < n_trg; ++i) {
      T v = T(0), gx = T(0), gy = T(0), gz = T(0);
      for (int j = 0; j < n_src; ++j)
        k.template accumulate<kC, kD, kG>(trg[3 * i] - src[3 * j], trg[3 * i + 1] - src[3 * j + 1],
                                          trg[3 * i + 2] - src[3 * j + 2], kC ? q[j] : T(0),
                                          kD ? d[3 * j] : T(0), kD ? d[3 * j + 1] : T(0), kD ? d[3 * j + 2] : T(0),
                                          v, gx, gy, gz);
      if (pot) pot[i] += v;
      if (kG) {
        grad[3 * i] += gx;
        grad[3 * i + 1] += gy;
        grad[3 * i + 2] += gz;
      }
    }
  });
}

// One target y (3 values): *pot += phi, grad[0..2] += grad phi.
template <class T, class K>
void p2p(const K& k, const T* y, int n_src, nd<const T*> src, nd<const T*> q, nd<const T*> d, nd<T*> pot,
         nd<T*> grad) {
  p2p<T>(k, 1, y, n_src, src, q, d, pot, grad);
}

}  // namespace nearfield
}  // namespace gpufmm
