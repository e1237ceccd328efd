// The cost model of the Laplace FMM (papers/000 eqs. 26-29 with measured box
// and pair counts instead of the uniform estimate; docs/laplace_fmm.md and,
// for the GPU constants, docs/laplace_gpu.md): the constants of each backend
// and the depth choice. The scan itself is in fmm/laplace/depth_scan.hpp
// (host and device counting, one arithmetic) and cost.cpp.
#pragma once

#include <cstdint>
#include <vector>

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
// (laplace_pipeline_impl.hpp) up to this p, and translates one at a time
// above it (the lane copies of the tables would outgrow the caches).
constexpr int kBatchedM2LMaxP = 32;
// Per-core constants measured for the OpenMP pipeline (docs/laplace_fmm.md).
LaplaceCostConstants laplace_cost_constants_cpu(bool single_precision);
// Whole-device constants measured for the CUDA driver (docs/laplace_gpu.md).
LaplaceCostConstants laplace_cost_constants_gpu(bool single_precision);

struct LaplaceDepthChoice {
  int l_max = 0;
  std::vector<double> cost;       // modelled seconds per candidate depth 0..(scanned)
  std::vector<double> p2p_pairs;  // near-field pairs per candidate depth
  std::vector<double> m2l;        // M2L translations (cumulative) per candidate depth
};

// Chooses l_max minimising the modelled cost from the sorted Morton keys of
// the sources and targets (trg_keys == nullptr: targets are the sources).
template <class T>
LaplaceDepthChoice laplace_choose_depth(const uint64_t* src_keys, int64_t nsrc,
                                        const uint64_t* trg_keys, int64_t ntrg, bool modified,
                                        const LaplaceTables<T>& tables,
                                        const LaplaceCostConstants& c);

}  // namespace fmm
}  // namespace gpufmm
