// What every plan checks and copies, whatever the algorithm: point counts,
// coordinate and value arrays (NaN / Inf named with the first bad index),
// and the host side of the staged device copies.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "core/hd.hpp"

namespace gpufmm {
namespace plan {

// Largest point count of a set (int32 indices in the trees and lists).
constexpr int64_t kMaxPoints = std::numeric_limits<int32_t>::max() - 1;

// INVALID_ARGUMENT naming `name` when n < 0 or n > kMaxPoints.
void check_count(int64_t n, const char* name);
// INVALID_ARGUMENT when xyz is NULL but n > 0.
void check_points_pointer(const double* xyz, int64_t n, const char* name);
// bad < n: INVALID_ARGUMENT, point `bad` of xyz (3 x n, host) has a NaN or
// Inf coordinate (named with its index and value). bad >= n: nothing.
void fail_if_bad_point(const double* xyz, int64_t bad, int64_t n, const char* name);
// check_points_pointer, then the first point with a NaN or Inf coordinate
// (host memory, parallel) fails.
void check_points(const double* xyz, int64_t n, const char* name);

// Dynamic range of coordinates (issue 14). A pair sum needs the squared
// distance of two distinct points in double: it underflows (to a subnormal
// or 0, and the pair is lost or wrong) only when some coordinate is nonzero
// and below 2^-458 in magnitude (two distinct doubles of at least that
// magnitude differ by at least 2^-510 where they differ, and (2^-510)^2 is
// normal). Plans that sum over pairs refuse such points with
// GPUFMM_ERROR_ACCURACY: the requested accuracy cannot be met.
constexpr double kMinNonzeroCoordinate = 0x1p-458;  // 1.3e-138
// True when every coordinate of the point is 0 or at least
// kMinNonzeroCoordinate in magnitude (false for NaN: checked before).
GPUFMM_HD_INLINE bool point_resolvable(const double* p) {
  bool ok = true;
  for (int k = 0; k < 3; ++k) ok = ok && (p[k] == 0.0 || !(p[k] < kMinNonzeroCoordinate && p[k] > -kMinNonzeroCoordinate));
  return ok;
}
// The largest side of the points' bounding cube for pair sums in double:
// two points of a cube of side D are at most sqrt(3) D apart, and squared
// distances up to 3 * 2^1000 hold in double (GPUFMM_ERROR_ACCURACY above).
constexpr double kMaxSpanDouble = 0x1p500;  // 3.3e150
// bad < n: GPUFMM_ERROR_ACCURACY, point `bad` of xyz (host) has a coordinate
// below kMinNonzeroCoordinate (named with its index and value).
void fail_if_tiny_point(const double* xyz, int64_t bad, int64_t n, const char* name);
// The first point of xyz (host, 3 x n, finite) that is not
// point_resolvable fails (fail_if_tiny_point).
void check_points_resolvable(const double* xyz, int64_t n, const char* name);

// INVALID_ARGUMENT at the first NaN or Inf of v[0 .. n*per) (per = 1: a
// scalar per point, 3: a vector), named "argument 'name': what i ...".
template <class V>
void check_values(const V* v, int64_t n, int per, const char* name, const char* what) {
  if (v == nullptr) return;
  const int64_t m = n * per;
  int64_t bad = -1;
  for (int64_t i = 0; i < m; ++i)
    if (!std::isfinite(v[i])) {
      bad = i;
      break;
    }
  if (bad < 0) return;
  const int64_t i = bad / per;
  if (per == 1)
    fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i,
         " (0-based) is NaN or Inf (", double(v[i]), ")");
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i,
       " (0-based) has a NaN or Inf component (", double(v[per * i]), ", ", double(v[per * i + 1]),
       ", ", double(v[per * i + 2]), ")");
}

// INVALID_ARGUMENT at the first value of v[0 .. n*per) (finite) that does
// not fit single precision: a magnitude above FLT_MAX (3.4e38, it would be
// Inf) or nonzero below FLT_MIN (1.2e-38, it would lose its digits to a
// subnormal or be 0); named as check_values names it (issue 14).
void check_values_fit_float(const double* v, int64_t n, int per, const char* name, const char* what);

#if defined(GPUFMM_HAVE_CUDA)
// memcpy by the OpenMP threads (1 MB and more): the host side of the staged
// device copies (cuda::staged_upload / _download, cuda/common/staging.hpp).
void parallel_copy(void* dst, const void* src, size_t bytes);
#endif

}  // namespace plan
}  // namespace gpufmm
