// The M2L stencils of papers/000 (sec. 2.2.3, 2.2.4) as host+device helpers:
// the translation classes stored with every M2L list entry, the distance
// ratio eta of eq. (20), eta* of eq. (22) and the acceptance distance of
// eq. (23) (the one home of these formulas: fmm/laplace/error.hpp calls them),
// the type-2 test, and the sorted-key box lookup of the list builders.
//
// Class codes (docs/tree.md), all in [0, kNumClasses):
//  * same level (standard M2L list and type-1 list): the source box s and the
//    receiver box b are at the same level l; d = coords(s) - coords(b), each
//    component in -3..3 (max |d_k| >= 2), and
//        cls = (dx+3) + 7*(dy+3) + 49*(dz+3)                 in [0, 343);
//    centre(s) = centre(b) + d * h_l.
//    eta = (sqrt(3)/2) / (|d| - sqrt(3)/2)   (R1 = R2 = sqrt(3)/2 h_l, D = |d| h_l).
//  * to the parent (type-2 list): s at level l, receiver P at level l-1;
//    e = 2*coords(s) - 4*coords(P) - 1, each component odd in -5..5, so that
//    centre(s) = centre(P) + (e/2) * h_l, and
//        cls = 343 + (ex+5)/2 + 6*(ey+5)/2 + 36*(ez+5)/2     in [343, 559);
//    eta = sqrt(3) / (|e|/2 - sqrt(3)/2)   (R1 = sqrt(3)/2 h_l, R2 = sqrt(3) h_l).
//  A position e is of type 2 iff max |e_k| = 5 (the box touches none of P's
//  eight children) and |e|/2 >= D* = R1 + R2/eta* = 4 - sqrt(3)/2 (eq. 23
//  with eta* = sqrt(3)/(4 - sqrt(3)), eq. 22), i.e. |e|^2 >= 40 in integers
//  (|e|^2 = 39.28 at the bound; the integers |e|^2 next to it are 35 and 43).
//  Exactly 80 of the 216 positions are of type 2; the other 109 non-adjacent
//  ones of each child form its type-1 list.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "tree/morton.hpp"

namespace gpufmm {
namespace tree {

constexpr int kNumSameLevelClasses = 343;
constexpr int kNumClasses = 343 + 216;  // 559
constexpr double kSqrt3 = 1.7320508075688772935;
constexpr double kHalfSqrt3 = 0.86602540378443864676;
// eq. (22): eta* = sqrt(3) / (4 - sqrt(3)), eta of unit boxes one box apart.
constexpr double kEtaStar = 0.76370794079042370;

// eq. (20): eta = max(R1, R2) / (D - min(R1, R2)) for source / receiver balls
// of radii r_src, r_dst whose centres are dist apart (dist > r_src + r_dst).
// The subtraction is rounded as written (no contraction), so that host and
// device give the same bits.
GPUFMM_HD_INLINE double ball_eta(double r_src, double r_dst, double dist) {
  const double rmax = r_src > r_dst ? r_src : r_dst;
  const double rmin = r_src > r_dst ? r_dst : r_src;
  return rmax / sub_rn(dist, rmin);
}

// eq. (23): the smallest centre distance D* = min(R1, R2) + max(R1, R2) / eta*
// at which a source ball of radius r_src may be translated to a receiver ball
// of radius r_dst within eta_star.
GPUFMM_HD_INLINE constexpr double acceptance_distance(double r_src, double r_dst,
                                                      double eta_star = kEtaStar) {
  return (r_src > r_dst ? r_dst : r_src) + (r_src > r_dst ? r_src : r_dst) / eta_star;
}

// The type-2 bound in integers: a child-level box at doubled offset e from the
// parent's centre (R1 = sqrt(3)/2, R2 = sqrt(3) in child units) is far enough
// when |e|/2 >= D*, i.e. |e|^2 >= 4 D*^2 = 39.28; the integers next to it are
// 35 and 43, so the test is |e|^2 >= 40.
constexpr double kType2Dist = acceptance_distance(kHalfSqrt3, kSqrt3);
constexpr int kType2MinNormSquared = static_cast<int>(4.0 * kType2Dist * kType2Dist) + 1;
static_assert(kType2MinNormSquared == 40, "eq. (23) in integers");

GPUFMM_HD_INLINE int iabs(int v) { return v < 0 ? -v : v; }
GPUFMM_HD_INLINE int imax3(int a, int b, int c) {
  const int m = a > b ? a : b;
  return m > c ? m : c;
}

// True when two boxes of one level (integer offset d) touch or coincide.
GPUFMM_HD_INLINE bool adjacent(int dx, int dy, int dz) {
  return imax3(iabs(dx), iabs(dy), iabs(dz)) <= 1;
}

GPUFMM_HD_INLINE int32_t same_level_class(int dx, int dy, int dz) {
  return (dx + 3) + 7 * (dy + 3) + 49 * (dz + 3);
}

GPUFMM_HD_INLINE int32_t parent_class(int ex, int ey, int ez) {
  return kNumSameLevelClasses + (ex + 5) / 2 + 6 * ((ey + 5) / 2) + 36 * ((ez + 5) / 2);
}

// Offset of a level-l box with coordinates s from the centre of the level-(l-1)
// box with coordinates p, in doubled level-l box units (odd integers).
GPUFMM_HD_INLINE int parent_offset2(int32_t s, int32_t p) { return 2 * s - 4 * p - 1; }

GPUFMM_HD_INLINE bool is_type2(int ex, int ey, int ez) {
  return imax3(iabs(ex), iabs(ey), iabs(ez)) == 5 &&
         ex * ex + ey * ey + ez * ez >= kType2MinNormSquared;
}

// eta of a same-level class (units of the box size).
GPUFMM_HD_INLINE double same_level_eta(int dx, int dy, int dz) {
  return ball_eta(kHalfSqrt3, kHalfSqrt3, sqrt(static_cast<double>(dx * dx + dy * dy + dz * dz)));
}

// eta of a to-parent class (units of the source box size; e = doubled offset).
GPUFMM_HD_INLINE double parent_eta(int ex, int ey, int ez) {
  return ball_eta(kHalfSqrt3, kSqrt3, 0.5 * sqrt(static_cast<double>(ex * ex + ey * ey + ez * ez)));
}

// Decodes a class code. Returns false for codes outside [0, kNumClasses), for
// same-level offsets of adjacent boxes and for parent positions that are not
// of type 2 (codes that no list ever holds). offset = source centre minus
// receiver (or parent) centre in units of the source box size.
GPUFMM_HD_INLINE bool decode_class(int32_t cls, bool& to_parent, double offset[3], double& eta) {
  if (cls < 0 || cls >= kNumClasses) return false;
  if (cls < kNumSameLevelClasses) {
    const int dx = cls % 7 - 3, dy = (cls / 7) % 7 - 3, dz = cls / 49 - 3;
    if (adjacent(dx, dy, dz)) return false;
    to_parent = false;
    offset[0] = dx; offset[1] = dy; offset[2] = dz;
    eta = same_level_eta(dx, dy, dz);
    return true;
  }
  const int c = cls - kNumSameLevelClasses;
  const int ex = 2 * (c % 6) - 5, ey = 2 * ((c / 6) % 6) - 5, ez = 2 * (c / 36) - 5;
  if (!is_type2(ex, ey, ez)) return false;
  to_parent = true;
  offset[0] = 0.5 * ex; offset[1] = 0.5 * ey; offset[2] = 0.5 * ez;
  eta = parent_eta(ex, ey, ez);
  return true;
}

// First index in the ascending array keys[0..n) whose key is >= key (n if none).
GPUFMM_HD_INLINE int64_t lower_bound_key(const uint64_t* keys, int64_t n, uint64_t key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    if (keys[mid] < key) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Index of `key` in the ascending array keys[0..n), or -1.
GPUFMM_HD_INLINE int64_t find_key(const uint64_t* keys, int64_t n, uint64_t key) {
  const int64_t lo = lower_bound_key(keys, n, key);
  return (lo < n && keys[lo] == key) ? lo : -1;
}

// The neighbour offset for stencil slot k in 0..26 (dx fastest).
GPUFMM_HD_INLINE void stencil27(int k, int& dx, int& dy, int& dz) {
  dx = k % 3 - 1;
  dy = (k / 3) % 3 - 1;
  dz = k / 9 - 1;
}

// Global index of the box at `level` with coordinates (x, y, z) in a set whose
// level-l box keys are keys[off .. off+n), or -1 when absent or off the grid.
GPUFMM_HD_INLINE int32_t find_box(const uint64_t* box_keys, int64_t off, int64_t n, int level,
                                  int32_t x, int32_t y, int32_t z) {
  const int32_t lim = static_cast<int32_t>(1u << level);
  if (x < 0 || y < 0 || z < 0 || x >= lim || y >= lim || z >= lim) return -1;
  const int64_t i = find_key(box_keys + off, n,
                             morton_encode(static_cast<uint32_t>(x), static_cast<uint32_t>(y),
                                           static_cast<uint32_t>(z)));
  return i < 0 ? -1 : static_cast<int32_t>(off + i);
}

}  // namespace tree
}  // namespace gpufmm
