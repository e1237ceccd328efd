// Input checks and host copies shared by the plans (plan/checks.hpp).
#include "plan/checks.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpufmm {
namespace plan {

#if defined(GPUFMM_HAVE_CUDA)
void parallel_copy(void* dst, const void* src, size_t bytes) {
  const int nt = bytes >= (size_t(1) << 20) ? omp_get_max_threads() : 1;
#pragma omp parallel num_threads(nt)
  {
    const size_t T = static_cast<size_t>(omp_get_num_threads()), t = static_cast<size_t>(omp_get_thread_num());
    const size_t b = bytes * t / T / 64 * 64, e = t + 1 == T ? bytes : bytes * (t + 1) / T / 64 * 64;
    if (e > b) std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  }
}
#endif

void check_count(int64_t n, const char* name) {
  require(n >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' = ", n, " is negative");
  require(n <= kMaxPoints, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' = ", n,
          " is larger than ", kMaxPoints, " (int32 indices)");
}

void check_points_pointer(const double* xyz, int64_t n, const char* name) {
  require(xyz != nullptr || n == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name,
          "' is NULL but holds ", n, " points");
}

// bad < n: point `bad` of xyz (host) has a NaN or Inf coordinate.
void fail_if_bad_point(const double* xyz, int64_t bad, int64_t n, const char* name) {
  if (bad >= n) return;
  const double x = xyz[3 * bad], y = xyz[3 * bad + 1], z = xyz[3 * bad + 2];
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': point ", bad,
       " (0-based) has a NaN or Inf coordinate (", x, ", ", y, ", ", z, ")");
}

void check_points(const double* xyz, int64_t n, const char* name) {
  check_points_pointer(xyz, n, name);
  // The first bad point (the smallest index): a parallel min over chunks,
  // each counted branch-free first (a double is NaN or Inf iff its exponent
  // bits, all in the high 32-bit word, are all ones).
  int64_t bad = n;
  const int64_t m = 3 * n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (m >= (int64_t(1) << 16))
  for (int64_t c = 0; c < m; c += 4096) {
    const int64_t e = std::min(m, c + 4096);
    uint32_t nonfinite = 0;
    for (int64_t k = c; k < e; ++k) {
      uint64_t bits;
      std::memcpy(&bits, xyz + k, sizeof bits);
      nonfinite += (static_cast<uint32_t>(bits >> 32) & 0x7ff00000u) == 0x7ff00000u ? 1u : 0u;
    }
    if (nonfinite == 0) continue;
    for (int64_t k = c; k < e; ++k)
      if (!std::isfinite(xyz[k])) {
        bad = std::min(bad, k / 3);
        break;
      }
  }
  fail_if_bad_point(xyz, bad, n, name);
}

void check_values_fit_float(const double* v, int64_t n, int per, const char* name, const char* what) {
  if (v == nullptr) return;
  const int64_t m = n * per;
  const double lo = std::numeric_limits<float>::min(), hi = std::numeric_limits<float>::max();
  int64_t bad = m;
#pragma omp parallel for schedule(static) reduction(min : bad) if (m >= (int64_t(1) << 16))
  for (int64_t k = 0; k < m; ++k) {
    const double a = std::fabs(v[k]);
    if (a > hi || (a != 0 && a < lo)) bad = std::min(bad, k);
  }
  if (bad == m) return;
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", bad / per, " (0-based)",
       per == 1 ? "" : (bad % per == 0 ? ", x component," : bad % per == 1 ? ", y component," : ", z component,"),
       " = ", v[bad], " does not fit single precision (magnitudes ", lo, " .. ", hi,
       ", or 0): scale the ", name, " (the sums are linear in them), or use precision GPUFMM_FLOAT64");
}

void fail_if_tiny_point(const double* xyz, int64_t bad, int64_t n, const char* name) {
  if (bad >= n) return;
  const double x = xyz[3 * bad], y = xyz[3 * bad + 1], z = xyz[3 * bad + 2];
  fail(GPUFMM_ERROR_ACCURACY, "argument '", name, "': point ", bad, " (0-based) = (", x, ", ", y, ", ", z,
       ") has a nonzero coordinate below ", kMinNonzeroCoordinate,
       " (2^-458) in magnitude: squared distances of such points can underflow double, so no accuracy can be "
       "promised (the coordinates span more orders of magnitude than double holds); set such coordinates to 0, "
       "or shift or scale the points");
}

void check_points_resolvable(const double* xyz, int64_t n, const char* name) {
  int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n >= (int64_t(1) << 15))
  for (int64_t i = 0; i < n; ++i)
    if (!point_resolvable(xyz + 3 * i)) bad = std::min(bad, i);
  fail_if_tiny_point(xyz, bad, n, name);
}

}  // namespace plan
}  // namespace gpufmm
