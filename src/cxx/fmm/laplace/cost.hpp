// The cost model of the Laplace FMM (papers/000 sec. 2.4, eqs. 26-29, with
// measured box and pair counts instead of the uniform estimate;
// docs/laplace_fmm.md and, for the GPU constants, docs/laplace_gpu.md), its
// one home: the constants of each backend, the modelled seconds (host+device
// formulas below), and the depth scan, in two parts so that the counting of
// each candidate depth runs on the host (HostDepthLevels, cost.cpp) or on the
// device (src/cuda/fmm/laplace/cost.cu, on the keys a GPU plan already holds
// there) with the same arithmetic:
//   depth_parent         the counts of one target box at level l-1: its
//                        children's near-field pairs, same-level and type-2
//                        translations (the stencil tables below);
//   laplace_depth_scan   the driver: modelled cost per depth, the best one,
//                        the stopping rules; it asks a DepthLevels for the
//                        counts of level 0, 1, ... in order.
#pragma once

#include <cstdint>
#include <vector>

#include "core/context.hpp"
#include "core/hd.hpp"
#include "fmm/plan_core.hpp"
#include "tree/morton.hpp"
#include "tree/stencil.hpp"

namespace gpufmm {
namespace fmm {

template <class T>
struct LaplaceTables;

// Modelled seconds of one evaluate:
//   cost = c_pair * (near-field pairs)
//        + sum over translations of (c_rcr3 p_op^3 + c_rcr2 p_op^2 + c_rcr0)
//        + c_point * p^2 * (nsrc + ntrg)        (P2M + L2P, when l_max >= 2)
struct LaplaceCostConstants {
  double c_pair = 0;   // seconds per source-target pair (charges, potential + gradient)
  double c_rcr3 = 0;   // seconds per p^3 of one RCR translation
  double c_rcr2 = 0;   // seconds per p^2 of one RCR translation
  double c_point = 0;  // seconds per p^2 per point (P2M, L2P with gradient)
  double scalar_factor = 1;  // CPU: translation cost factor when p > kBatchedM2LMaxP
  double c_rcr0 = 0;   // seconds per RCR translation whatever p (GPU: the steps' latency)
};

// The CPU pipeline batches M2L translations of one class over SIMD lanes
// (fmm/pipeline_impl.hpp) up to this p, and translates one at a time
// above it (the lane copies of the tables would outgrow the caches).
constexpr int kBatchedM2LMaxP = 32;
// Per-core constants measured for the OpenMP pipeline (docs/laplace_fmm.md).
LaplaceCostConstants laplace_cost_constants_cpu(bool single_precision);
// Whole-device constants measured for the CUDA driver (docs/laplace_gpu.md).
LaplaceCostConstants laplace_cost_constants_gpu(bool single_precision);

// Modelled seconds of one RCR translation of truncation number q in a plan of
// truncation number p (translated one at a time above kBatchedM2LMaxP).
GPUFMM_HD inline double laplace_translation_seconds(const LaplaceCostConstants& c, int p, int q) {
  const double f = p > kBatchedM2LMaxP ? c.scalar_factor : 1.0;
  return f * (c.c_rcr3 * q * q * q + c.c_rcr2 * q * q + c.c_rcr0);
}
// Modelled seconds of P2M + L2P (nsrc + ntrg points).
GPUFMM_HD inline double laplace_point_seconds(const LaplaceCostConstants& c, int p, int64_t nsrc, int64_t ntrg) {
  return c.c_point * p * p * double(nsrc + ntrg);
}
// Modelled seconds of one evaluate at depth l: near-field pairs, the
// translations' seconds (far), P2M + L2P (point, when l >= 2).
GPUFMM_HD inline double laplace_evaluate_seconds(const LaplaceCostConstants& c, int l, double pairs, double far,
                                                 double point) {
  return c.c_pair * pairs + far + (l >= 2 ? point : 0.0);
}


// Chooses l_max minimising the modelled cost from the sorted Morton keys of
// the sources and targets (trg_keys == nullptr: targets are the sources).
template <class T>
DepthChoice laplace_choose_depth(const uint64_t* src_keys, int64_t nsrc,
                                        const uint64_t* trg_keys, int64_t ntrg, bool modified,
                                        const LaplaceTables<T>& tables,
                                        const LaplaceCostConstants& c);

// The source boxes at level l that matter to the children of a target box P
// at level l-1 are the children (child octant oc) of the source boxes at the
// 27 stencil slots k around P. To a child b of P (octant ob) such a box is
// a neighbour (P2P), a same-level translation of class cls (type 1 when
// modified, the M2L list when standard) or nothing (modified: type 2,
// translated to P). The tables depend on (k, ob, oc) only; the sums over the
// children present (an 8-bit occupancy mask per slot) are tabulated too.
constexpr int16_t kDepthNear = -2;
constexpr int16_t kDepthSkip = -1;
struct DepthStencil {
  bool modified = false;   // type-2 translations (modified stencil)
  int16_t same[27][8][8];  // [k][ob][oc]: kDepthNear, kDepthSkip or the same-level class
  int16_t up[27][8];       // [k][oc]: the type-2 class to P, or kDepthSkip
  int8_t near_k[8][27];    // [ob]: the 27 (slot k, child octant oc) adjacent to b
  int8_t near_oc[8][27];
  // Over the children in an occupancy mask m (modelled seconds and count),
  // the same-level ones for the 8 octants ob side by side:
  std::vector<double> w_same;   // [(k*256+m)*8+ob]
  std::vector<int32_t> n_same;  // [(k*256+m)*8+ob]
  std::vector<double> w_up;     // [k*256+m]
  std::vector<int32_t> n_up;    // [k*256+m]
};

// w_op[op]: modelled seconds of one translation of class op.
void depth_stencil_tables(bool modified, const std::vector<double>& w_op, DepthStencil& t);

// The tables as plain arrays (host or device copies).
struct DepthStencilView {
  const double* w_same = nullptr;
  const int32_t* n_same = nullptr;
  const double* w_up = nullptr;
  const int32_t* n_up = nullptr;
  const int8_t* near_k = nullptr;   // [ob * 27 + j]
  const int8_t* near_oc = nullptr;  // [ob * 27 + j]
};

// Target box P at level l-1 (key pk) and its children at level l, whose keys
// and point counts are b_key[b0..b1), b_count[b0..b1). find(x, y, z): the
// index q of the level-(l-1) source box at those coordinates, or -1; q's
// children hold q_cnt[8 q + oc] points (0: absent), q_mask[q] their octants.
// Adds the children's near-field pairs to pairs (integers: exact in any
// order below 2^53), their same-level translations and P's type-2 ones
// (with_up) to far (modelled seconds) and m2l (count).
template <class Find, class Mask>
GPUFMM_HD inline void depth_parent(const DepthStencilView& st, uint64_t pk, const Find& find,
                                   const int64_t* q_cnt, const Mask* q_mask, const uint64_t* b_key,
                                   const int64_t* b_count, int64_t b0, int64_t b1, bool with_far, bool with_up,
                                   double& pairs, double& far, int64_t& m2l) {
  const int64_t no_children[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int32_t px, py, pz;
  tree::morton_decode(pk, px, py, pz);
  const int64_t* cnt[27];
  unsigned mask[27];
  for (int k = 0; k < 27; ++k) {
    int dx, dy, dz;
    tree::stencil27(k, dx, dy, dz);
    const int64_t q = find(px + dx, py + dy, pz + dz);
    cnt[k] = q < 0 ? no_children : q_cnt + 8 * q;
    mask[k] = q < 0 ? 0u : static_cast<unsigned>(q_mask[q]);
  }
  if (with_up)  // type-2 translations from level l to P
    for (int k = 0; k < 27; ++k) {
      far += st.w_up[k * 256 + mask[k]];
      m2l += st.n_up[k * 256 + mask[k]];
    }
  // Same-level translations of the 8 possible children at once.
  double w8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int32_t n8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (with_far)
    for (int k = 0; k < 27; ++k) {
      const int64_t e = (int64_t(k) * 256 + mask[k]) * 8;
      for (int ob = 0; ob < 8; ++ob) {
        w8[ob] += st.w_same[e + ob];
        n8[ob] += st.n_same[e + ob];
      }
    }
  for (int64_t b = b0; b < b1; ++b) {
    const unsigned ob = static_cast<unsigned>(b_key[b] & 7u);
    int64_t near = 0;
    for (int j = 0; j < 27; ++j) near += cnt[st.near_k[ob * 27 + j]][st.near_oc[ob * 27 + j]];
    pairs += double(near) * double(b_count[b]);
    far += w8[ob];
    m2l += n8[ob];
  }
}

// Counts of one candidate depth l: boxes of both sets at level l; for l >= 1
// the near-field pairs at depth l, the M2L translations into level l (and,
// modified, the type-2 ones from level l into l-1) and their modelled
// seconds (M2M / L2L are added by the driver). Level 0: pairs = ns nt.
struct DepthLevel {
  int64_t src_boxes = 0, trg_boxes = 0;
  double pairs = 0, far = 0;
  int64_t m2l = 0;
};

class DepthLevels {
 public:
  virtual ~DepthLevels() = default;
  // Called for l = 0, 1, 2, ... in order, until the driver stops.
  virtual DepthLevel level(int l, const DepthStencil& st) = 0;
};

// The driver (see laplace_choose_depth): ns, nt > 0.
template <class T>
DepthChoice laplace_depth_scan(int64_t ns, int64_t nt, bool modified, const LaplaceTables<T>& tab,
                                      const LaplaceCostConstants& c, DepthLevels& levels);

#if defined(GPUFMM_HAVE_CUDA)
namespace cuda {
// laplace_choose_depth on the device (src/cuda/fmm/laplace/cost.cu):
// src_keys / trg_keys are the sorted point keys in ctx's device memory
// (trg_keys == nullptr: targets are the sources). Same counts as the host
// scan; the modelled seconds differ only in the order of their sums.
template <class T>
DepthChoice laplace_choose_depth_device(Context& ctx, const uint64_t* src_keys, int64_t nsrc,
                                               const uint64_t* trg_keys, int64_t ntrg, bool modified,
                                               const LaplaceTables<T>& tables, const LaplaceCostConstants& c);
}  // namespace cuda
#endif

}  // namespace fmm
}  // namespace gpufmm
