// Direct summation on the CPU backend (OpenMP), and the backend dispatch of
// gpufmm::laplace_direct. The per-pair math is laplace_p2p_accumulate
// (fmm/laplace_p2p.hpp), shared with the CUDA kernel.
//
// Layout: the sources are converted once to structure-of-arrays in the
// working precision T (float or double), so that the inner loop over sources
// is a unit-stride SIMD reduction. The targets are split into blocks of
// kTargetBlock, one block per OpenMP work item; each block sweeps the sources
// in tiles of kSourceTile, which stay in L1/L2 while the block's targets use
// them. Accumulation is in T; the results are converted to double at the end.
//
// The inner loop is an `omp simd` reduction, but GCC vectorises it only with
// -fno-math-errno -fno-trapping-math for this file (errno of sqrt and the
// compare-and-select of the self term are control flow otherwise); measured
// on 2 cores: 5x in float, 2.3x in double. The build does not set them (yet),
// so the loop runs scalar there.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <vector>

#include "core/error.hpp"
#include "fmm/direct.hpp"
#include "fmm/laplace_p2p.hpp"

namespace gpufmm {

namespace {

constexpr int64_t kTargetBlock = 32;
constexpr int64_t kSourceTile = 1024;

template <class T>
struct SourcesSoA {
  std::vector<T> x, y, z, q, dx, dy, dz;
};

template <class T>
SourcesSoA<T> to_soa(const LaplaceDirectArgs& a) {
  SourcesSoA<T> s;
  const size_t n = static_cast<size_t>(a.nsrc);
  s.x.resize(n);
  s.y.resize(n);
  s.z.resize(n);
  if (a.charges) s.q.resize(n);
  if (a.dipoles) {
    s.dx.resize(n);
    s.dy.resize(n);
    s.dz.resize(n);
  }
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < a.nsrc; ++j) {
    s.x[j] = static_cast<T>(a.sources[3 * j] - a.origin[0]);
    s.y[j] = static_cast<T>(a.sources[3 * j + 1] - a.origin[1]);
    s.z[j] = static_cast<T>(a.sources[3 * j + 2] - a.origin[2]);
    if (a.charges) s.q[j] = static_cast<T>(a.charges[j]);
    if (a.dipoles) {
      s.dx[j] = static_cast<T>(a.dipoles[3 * j]);
      s.dy[j] = static_cast<T>(a.dipoles[3 * j + 1]);
      s.dz[j] = static_cast<T>(a.dipoles[3 * j + 2]);
    }
  }
  return s;
}

template <class T, bool kCharge, bool kDipole, bool kGrad>
void direct_sum(const SourcesSoA<T>& s, const LaplaceDirectArgs& a) {
  const int64_t nblocks = (a.ntrg + kTargetBlock - 1) / kTargetBlock;
  const T* __restrict__ sx = s.x.data();
  const T* __restrict__ sy = s.y.data();
  const T* __restrict__ sz = s.z.data();
  const T* __restrict__ sq = kCharge ? s.q.data() : nullptr;
  const T* __restrict__ sdx = kDipole ? s.dx.data() : nullptr;
  const T* __restrict__ sdy = kDipole ? s.dy.data() : nullptr;
  const T* __restrict__ sdz = kDipole ? s.dz.data() : nullptr;

#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t i0 = b * kTargetBlock, i1 = std::min(a.ntrg, i0 + kTargetBlock);
    const int nb = static_cast<int>(i1 - i0);
    T yx[kTargetBlock], yy[kTargetBlock], yz[kTargetBlock];
    T pv[kTargetBlock], px[kTargetBlock], py[kTargetBlock], pz[kTargetBlock];
    for (int t = 0; t < nb; ++t) {
      yx[t] = static_cast<T>(a.targets[3 * (i0 + t)] - a.origin[0]);
      yy[t] = static_cast<T>(a.targets[3 * (i0 + t) + 1] - a.origin[1]);
      yz[t] = static_cast<T>(a.targets[3 * (i0 + t) + 2] - a.origin[2]);
      pv[t] = px[t] = py[t] = pz[t] = T(0);
    }
    for (int64_t j0 = 0; j0 < a.nsrc; j0 += kSourceTile) {
      const int64_t j1 = std::min(a.nsrc, j0 + kSourceTile);
      for (int t = 0; t < nb; ++t) {
        const T tx = yx[t], ty = yy[t], tz = yz[t];
        T v = T(0), gx = T(0), gy = T(0), gz = T(0);
#pragma omp simd reduction(+ : v, gx, gy, gz)
        for (int64_t j = j0; j < j1; ++j)
          laplace_p2p_accumulate<kCharge, kDipole, kGrad>(
              tx - sx[j], ty - sy[j], tz - sz[j], kCharge ? sq[j] : T(0), kDipole ? sdx[j] : T(0),
              kDipole ? sdy[j] : T(0), kDipole ? sdz[j] : T(0), v, gx, gy, gz);
        pv[t] += v;
        px[t] += gx;
        py[t] += gy;
        pz[t] += gz;
      }
    }
    for (int t = 0; t < nb; ++t) {
      const int64_t i = i0 + t;
      if (a.pot) a.pot[i] = static_cast<double>(pv[t]);
      if (kGrad) {
        a.grad[3 * i] = static_cast<double>(px[t]);
        a.grad[3 * i + 1] = static_cast<double>(py[t]);
        a.grad[3 * i + 2] = static_cast<double>(pz[t]);
      }
    }
  }
}

template <class T, bool kGrad>
void dispatch_inputs(const SourcesSoA<T>& s, const LaplaceDirectArgs& a) {
  if (a.charges && a.dipoles)
    direct_sum<T, true, true, kGrad>(s, a);
  else if (a.charges)
    direct_sum<T, true, false, kGrad>(s, a);
  else
    direct_sum<T, false, true, kGrad>(s, a);
}

template <class T>
void run(const LaplaceDirectArgs& a) {
  const SourcesSoA<T> s = to_soa<T>(a);  // may throw bad_alloc: outputs untouched
  if (a.grad)
    dispatch_inputs<T, true>(s, a);
  else
    dispatch_inputs<T, false>(s, a);
}

}  // namespace

namespace cpu {

void laplace_direct(gpufmm_dtype_t precision, const LaplaceDirectArgs& a, LaplaceDirectTiming* timing) {
  require(precision == GPUFMM_FLOAT32 || precision == GPUFMM_FLOAT64, GPUFMM_ERROR_INVALID_ARGUMENT,
          "laplace_direct: precision ", static_cast<int>(precision), " is neither GPUFMM_FLOAT32 nor GPUFMM_FLOAT64");
  require(a.charges || a.dipoles, GPUFMM_ERROR_INVALID_ARGUMENT, "laplace_direct: no charges and no dipoles");
  require(a.pot || a.grad, GPUFMM_ERROR_INVALID_ARGUMENT, "laplace_direct: no output wanted");
  const auto t0 = std::chrono::steady_clock::now();
  if (precision == GPUFMM_FLOAT32)
    run<float>(a);
  else
    run<double>(a);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timing) {
    timing->kernel_seconds = s;
    timing->total_seconds = s;
  }
}

}  // namespace cpu

void laplace_direct_origin(const LaplaceDirectArgs& a, double origin[3]) {
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = HUGE_VAL;
    hi[k] = -HUGE_VAL;
  }
  const double* sets[2] = {a.sources, a.targets};
  const int64_t counts[2] = {a.nsrc, a.targets == a.sources && a.ntrg <= a.nsrc ? 0 : a.ntrg};
  for (int s = 0; s < 2; ++s) {
    const double* p = sets[s];
    const int64_t n = counts[s];
    double l0 = lo[0], l1 = lo[1], l2 = lo[2], h0 = hi[0], h1 = hi[1], h2 = hi[2];
#pragma omp parallel for reduction(min : l0, l1, l2) reduction(max : h0, h1, h2) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      l0 = std::min(l0, p[3 * i]);
      l1 = std::min(l1, p[3 * i + 1]);
      l2 = std::min(l2, p[3 * i + 2]);
      h0 = std::max(h0, p[3 * i]);
      h1 = std::max(h1, p[3 * i + 1]);
      h2 = std::max(h2, p[3 * i + 2]);
    }
    lo[0] = l0, lo[1] = l1, lo[2] = l2, hi[0] = h0, hi[1] = h1, hi[2] = h2;
  }
  for (int k = 0; k < 3; ++k)
    origin[k] = lo[k] <= hi[k] ? 0.5 * lo[k] + 0.5 * hi[k] : 0.0;  // halves first: no overflow
}

void laplace_direct(Context& ctx, gpufmm_dtype_t precision, const LaplaceDirectArgs& args,
                    LaplaceDirectTiming* timing) {
  LaplaceDirectArgs a = args;
  // Float: coordinates relative to the bounding box's centre (their rounding
  // to float is the dominant error of close pairs). Double: as given, so that
  // every difference is one correctly rounded subtraction; a shift would
  // round coordinates far smaller than it (6e-11 relative for pairs 1e-6
  // apart near 0 in a unit box, test TightClustersDouble).
  if (precision == GPUFMM_FLOAT32)
    laplace_direct_origin(a, a.origin);
  else
    a.origin[0] = a.origin[1] = a.origin[2] = 0.0;
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::laplace_direct(ctx, precision, a, timing);
    return;
#else
    fail(GPUFMM_ERROR_INTERNAL, "laplace_direct: a CUDA context in a build without CUDA");
#endif
  }
  cpu::laplace_direct(precision, a, timing);
}

}  // namespace gpufmm
