// Morton (bit-interleaved) keys and the bounding-cube quantisation shared by
// the OpenMP tree builder and the CUDA kernels (one set of math: every function
// here is GPUFMM_HD, allocates nothing and throws nothing).
//
// Conventions (docs/tree.md):
//  - 21 bits per axis, so levels 0..kMaxLevel = 21. A point's key is a 63-bit
//    integer (bit 63 is always 0): bit 3k holds bit k of the x cell index,
//    bit 3k+1 of y, bit 3k+2 of z, where the cell index is the point's cell at
//    level 21.
//  - The key of a box at level l is the key of any point inside it shifted
//    right by 3*(21-l); it is also interleave(ix, iy, iz) of the box's integer
//    coordinates at that level (each in [0, 2^l)).
//  - Rounding: every floating-point expression here is either a single
//    operation or an explicit fma, so host and device give identical bits
//    (no compiler contraction can change a result).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"

namespace gpufmm {
namespace tree {

constexpr int kMaxLevel = 21;                       // deepest supported level
constexpr int kBitsPerAxis = 21;
constexpr uint32_t kCellsPerAxis = 1u << kBitsPerAxis;  // 2^21 cells at level 21
constexpr double kCellsPerAxisD = 2097152.0;            // 2^21

// Spreads the low 21 bits of v so that bit k lands on bit 3k.
GPUFMM_HD_INLINE uint64_t morton_split3(uint32_t v) {
  uint64_t x = v & 0x1fffffu;
  x = (x | x << 32) & 0x1f00000000ffffull;
  x = (x | x << 16) & 0x1f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

// Inverse of morton_split3: gathers bits 0, 3, 6, ... into the low 21 bits.
GPUFMM_HD_INLINE uint32_t morton_compact3(uint64_t x) {
  x &= 0x1249249249249249ull;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
  x = (x ^ (x >> 8)) & 0x1f0000ff0000ffull;
  x = (x ^ (x >> 16)) & 0x1f00000000ffffull;
  x = (x ^ (x >> 32)) & 0x1fffffull;
  return static_cast<uint32_t>(x);
}

GPUFMM_HD_INLINE uint64_t morton_encode(uint32_t ix, uint32_t iy, uint32_t iz) {
  return morton_split3(ix) | (morton_split3(iy) << 1) | (morton_split3(iz) << 2);
}

GPUFMM_HD_INLINE void morton_decode(uint64_t key, int32_t& ix, int32_t& iy, int32_t& iz) {
  ix = static_cast<int32_t>(morton_compact3(key));
  iy = static_cast<int32_t>(morton_compact3(key >> 1));
  iz = static_cast<int32_t>(morton_compact3(key >> 2));
}

// Shift that turns a point key into the key of its box at level l.
GPUFMM_HD_INLINE int level_shift(int level) { return 3 * (kMaxLevel - level); }

GPUFMM_HD_INLINE int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return x == 0 ? 64 : __builtin_clzll(x);
#endif
}

// Number of levels l >= 1 at which two point keys lie in the same box:
// 21 for equal keys, 0 when they already differ at level 1. Two points share
// their level-l box iff common_levels(a, b) >= l.
GPUFMM_HD_INLINE int common_levels(uint64_t a, uint64_t b) {
  const uint64_t d = a ^ b;
  if (d == 0) return kMaxLevel;
  const int high_bit = 63 - clz64(d);  // 0..62
  return kMaxLevel - 1 - high_bit / 3;
}

// ---------------------------------------------------------------- rounding helpers
// Single correctly rounded operations that nvcc may not fuse into an fma.
GPUFMM_HD_INLINE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUFMM_HD_INLINE double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUFMM_HD_INLINE double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
GPUFMM_HD_INLINE double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// ---------------------------------------------------------------- bounding cube
// The cube [corner, corner + side]^3 that the octree subdivides; scale =
// 2^21 / side converts a distance into level-21 cells.
struct Cube {
  double center[3];
  double side;
  double corner[3];
  double scale;
};

// Side of the computed cube: the largest bounding-box extent enlarged by
// 2^-12 (so that no point lies on the cube's faces), or 1 when the extent is
// 0 or too small to invert (all points identical, or a single point).
constexpr double kCubeEnlarge = 1.000244140625;  // 1 + 2^-12
constexpr double kMinCubeSide = 1e-290;

// Completes a cube from its centre and side (side > 0, finite).
GPUFMM_HD_INLINE Cube cube_from_center(const double c[3], double side) {
  Cube q;
  for (int k = 0; k < 3; ++k) {
    q.center[k] = c[k];
    q.corner[k] = fma_rn(-0.5, side, c[k]);
  }
  q.side = side;
  q.scale = kCellsPerAxisD / side;
  return q;
}

// Position of coordinate x along axis k in level-21 cells (may lie outside
// [0, 2^21] for a point outside the cube; NaN for NaN input).
GPUFMM_HD_INLINE double cube_cells(const Cube& q, int k, double x) {
  return mul_rn(sub_rn(x, q.corner[k]), q.scale);
}

// True when a cell position is inside the closed cube.
GPUFMM_HD_INLINE bool cells_inside(double cells) {
  return cells >= 0.0 && cells <= kCellsPerAxisD;
}

// The computed cube around a bounding box lo..hi (lo <= hi componentwise).
// Far from the origin (a centre more than ~2^38 extents away) rounding the
// centre and the corner, half an ulp of their magnitude each, can exceed the
// 2^-13 margin of the enlargement and leave a point outside the cube (issue
// 14); the side then grows, by a margin that doubles each time, until the
// cube holds the bounding box. Nearer the origin the first cube holds it.
GPUFMM_HD_INLINE Cube cube_from_bbox(const double lo[3], const double hi[3]) {
  double c[3], ext = 0.0;
  for (int k = 0; k < 3; ++k) {
    c[k] = mul_rn(add_rn(lo[k], hi[k]), 0.5);
    const double e = sub_rn(hi[k], lo[k]);
    ext = e > ext ? e : ext;
  }
  double side = mul_rn(ext, kCubeEnlarge);
  if (!(side >= kMinCubeSide)) side = 1.0;  // an overflowing extent stays inf (rejected by the caller)
  Cube q = cube_from_center(c, side);
  double grow = mul_rn(side, kCubeEnlarge - 1.0);
  for (int it = 0; it < 64; ++it) {
    bool holds = true;
    for (int k = 0; k < 3; ++k)
      holds = holds && cells_inside(cube_cells(q, k, lo[k])) && cells_inside(cube_cells(q, k, hi[k]));
    if (holds || !(q.side < 1e300)) break;
    q = cube_from_center(c, add_rn(q.side, grow));
    grow = mul_rn(grow, 2.0);
  }
  return q;
}

// Level-21 cell index from a cell position: clamped into [0, 2^21 - 1]
// (points on the upper faces go to the last cell; NaN goes to 0).
GPUFMM_HD_INLINE uint32_t cell_index(double cells) {
  if (!(cells >= 0.0)) return 0u;
  if (cells >= kCellsPerAxisD) return kCellsPerAxis - 1u;
  return static_cast<uint32_t>(cells);
}

// The 63-bit key of point (x, y, z).
GPUFMM_HD_INLINE uint64_t point_key(const Cube& q, double x, double y, double z) {
  return morton_encode(cell_index(cube_cells(q, 0, x)), cell_index(cube_cells(q, 1, y)),
                       cell_index(cube_cells(q, 2, z)));
}

// Size of a box at level l.
GPUFMM_HD_INLINE double box_size(const Cube& q, int level) {
  return mul_rn(q.side, 1.0 / static_cast<double>(1ull << level));  // exact scaling by 2^-l
}

// Centre of the level-l box with integer coordinates i (one axis).
GPUFMM_HD_INLINE double box_center(const Cube& q, int k, int level, int32_t i) {
  return fma_rn(static_cast<double>(i) + 0.5, box_size(q, level), q.corner[k]);
}

// ---------------------------------------------------------------- box frames
// Coordinates relative to a box centre for expansions (the FMM's P2M and
// L2P, issue 14). box_center rounds the centre to a double, i.e. by up to
// half an ulp of its magnitude: for a cube far from the origin (1e15 + [0, 1])
// or a deep level that is a sizeable part of the box (0.06 of a box of
// 1/16), and an expansion about a centre that is not where the translations
// assume it is. Here the centre is never rounded: corner + (2i + 1) half is
// kept as the unevaluated sum of three doubles (an exact product and an
// exact sum), and the offset of the box is subtracted from the point first,
// exactly (Sterbenz: the point and the centre are close), so the result is
// within a few ulps of the box size, wherever the box is and whatever its
// level.
struct LevelFrame {
  double corner[3];  // the cube's corner
  double half;       // half the box size at the level (exact: side * 2^-(level+1))
};

GPUFMM_HD_INLINE LevelFrame level_frame(const Cube& q, int level) {
  LevelFrame f;
  for (int k = 0; k < 3; ++k) f.corner[k] = q.corner[k];
  f.half = box_size(q, level + 1);
  return f;
}

// x - (corner[k] + (2i + 1) half) for the box with integer coordinate i
// along axis k.
GPUFMM_HD_INLINE double box_relative(const LevelFrame& f, int k, int32_t i, double x) {
  const double m = 2.0 * static_cast<double>(i) + 1.0;  // exact (i < 2^21)
  const double p = mul_rn(m, f.half);
  const double pe = fma_rn(m, f.half, -p);  // m * half = p + pe exactly
  const double c = f.corner[k];
  const double s = add_rn(c, p);  // c + p = s + se exactly (two-sum)
  const double bp = sub_rn(s, c);
  const double se = add_rn(sub_rn(c, sub_rn(s, bp)), sub_rn(p, bp));
  return sub_rn(sub_rn(sub_rn(x, s), se), pe);
}

// The point xyz[0..2] relative to the centre of the box with key `key` (at
// the frame's level).
GPUFMM_HD_INLINE void box_relative3(const LevelFrame& f, uint64_t key, const double* xyz, double r[3]) {
  int32_t i[3];
  morton_decode(key, i[0], i[1], i[2]);
  for (int k = 0; k < 3; ++k) r[k] = box_relative(f, k, i[k], xyz[k]);
}

}  // namespace tree
}  // namespace gpufmm
