// Options of a Laplace FMM plan: what gpufmm_laplace_options_t says, plus
// the tuning knobs of the CUDA driver that only the benchmarks and the tests
// set (docs/laplace_gpu.md). Every knob is a field here; nothing is read from
// the environment.
#pragma once

#include <optional>
#include <string>

#include "fmm/laplace/cost.hpp"
#include "core/gpufmm_types.h"

namespace gpufmm {
namespace fmm {

// Kernel strategy per stage of the CUDA driver (gpufmm_laplace_strategy_t; the
// kernels are described in docs/laplace_gpu.md):
//   p2m  : TPB thread per leaf box (sources walked serially into M)
//          WPB warp per leaf box (lanes over sources, each coefficient summed
//              over the warp by shuffles)
//          BPB warp(s) per leaf box, tiles of 32 sources summed per
//              coefficient in source order (the default)
//   m2m  : TPB thread per parent; GPB 8 threads per parent (one per child
//          slot); BPB block per parent, cooperative RCR (the default)
//   m2l  : TPB thread per receiver box (row entries serially, level by
//          level); WPB warp per receiver box; BPB block per receiver box,
//          cooperative RCR, level by level; GRP every level in one launch,
//          block per group of receivers, entries of one class 8 at a time
//          as lane vectors; GEMM every level at once as dense products, one
//          per operator class and group of receivers, on cuBLAS (the
//          operators built by the GRP kernel: m2l_gemm.cuh); AUTO (the
//          default) GEMM where p <= 24 and its operators take at most
//          1/32 of the device's memory, else GRP. GRP and GEMM need GRP's
//          work vectors in shared memory; beyond, BPB
//   l2l  : TPB thread per child; BPB cooperative RCR (the default)
//   l2p  : TPB thread per leaf box; TPT thread per target (the default);
//          BPB block per leaf box, L_b in shared memory
//   p2p  : BPB block per work unit of a target leaf, source tiles in shared
//          memory (the default); TPT thread per target
//   p2p_mutual: with p2p = BPB, on a uniform tree with sources = targets
//          and charges alone (one density, no Hessian), each unordered
//          pair of neighbouring leaves once, both directions from one
//          distance (nearfield/p2p_mutual.cuh): on, off (BPB as everywhere
//          else), or automatic (the default: on when its passes average at
//          least 4 blocks per SM)
//   overlap: near field on a second stream (default) or serialised after
//          the far field
//   graph: the device work of an evaluate captured once into a CUDA graph
//          and replayed by later evaluates with the same arguments (the
//          default), or every kernel launched one by one
// Tuning (benchmarks and tests only, not in the C API):
//   p2m_warps   p2m = BPB: warps per leaf, 0 automatic, 1, 2 or 4
//   work_smem   the 2 p^2 work vectors of every TPB/WPB/GPB translation in
//               shared memory when they fit (true) or in a global slab
//   bpb_slots   translations per BpB batch (0: automatic)
//   m2l_group   receivers per group of the grouped M2L (0: automatic)
//   m2l_lanes   lanes per batch of the grouped M2L, 4 or 8 (0: 8 for groups
//               of >= 8 receivers, else 4)
//   p2p_mutual_lanes points of A per lane of the mutual near field, 1, 2
//               or 4 (blocks of 8, 4 or 2 warps)
//   p2p_mutual_flow the mutual near field's passes in one launch of n
//               blocks per SM taking the leaf pairs in turn, each pair
//               waiting only for its own leaves (n >= 1), or one launch per
//               pass (off); auto (the default): n = the blocks an SM holds
//               less one, where the passes' largest blocks hold them up
//               (nf::mutual_flow_pays). The same bits either way
//   p2p_low_priority the near field's stream at the least priority, below
//               the far field's (on), or at the same (off); auto (the
//               default): on for adaptive plans and uniform ones of depth
//               >= 6 (setup.cu)
//   m2l_threads threads per block of the grouped M2L, 256, 320, 384 or 512
//               (0: the fewest that hold p^2, 512 beyond)
//   m2l_gemm_mb m2l = GEMM: MB of each of its two buffers (the gathered
//               multipoles and the products), which bounds the entries of
//               one chunk (0: 1024, at most 1/32 of the device's memory)
//   m2l_rcr     m2l = GEMM: each class's operator as its three RCR factors
//               (rotation, coaxial, rotation back; ~2 p'^3 multiply-adds
//               per translation instead of p'^4), each a set of small
//               products in one grouped cuBLAS call (on; two more
//               buffers, each (2p-1)/p times m2l_gemm_mb), or the dense
//               p'^2 x p'^2 operator (off); auto (the default): on for
//               p > 36 (m2l_rcr_auto, src/cuda/fmm/laplace/setup.cu)
struct LaplaceGpuKernels {
  // Defaults: the fastest measured on an H100 (docs/laplace_gpu.md).
  gpufmm_laplace_strategy_t p2m = GPUFMM_STRATEGY_BPB, m2m = GPUFMM_STRATEGY_AUTO, m2l = GPUFMM_STRATEGY_AUTO,
                          l2l = GPUFMM_STRATEGY_BPB, l2p = GPUFMM_STRATEGY_TPT, p2p = GPUFMM_STRATEGY_BPB;
  int p2p_mutual = -1;  // -1 automatic, 0 off, 1 on
  bool overlap = true;
  bool graph = true;
  int p2m_warps = 0;
  bool work_smem = true;
  int bpb_slots = 0;
  int m2l_group = 0;
  int m2l_lanes = 0;
  int m2l_threads = 0;
  int m2l_gemm_mb = 0;
  int p2p_mutual_lanes = 4;
  int p2p_mutual_flow = -1;   // -1 automatic, 0 off, n >= 1 blocks per SM
  int p2p_low_priority = -1;  // -1 automatic, 0 off, 1 on
  int p2p_after_up = -1;      // near field forked after the upward pass: -1 automatic, 0 off (at the start), 1 on
  int m2l_rcr = -1;           // m2l = GEMM as RCR factors: -1 automatic, 0 off (dense operators), 1 on
  bool operator==(const LaplaceGpuKernels& o) const {
    return p2m == o.p2m && m2m == o.m2m && m2l == o.m2l && l2l == o.l2l && l2p == o.l2p && p2p == o.p2p &&
           p2p_mutual == o.p2p_mutual && overlap == o.overlap && graph == o.graph && p2m_warps == o.p2m_warps && work_smem == o.work_smem &&
           bpb_slots == o.bpb_slots && m2l_group == o.m2l_group && m2l_lanes == o.m2l_lanes &&
           m2l_threads == o.m2l_threads && m2l_gemm_mb == o.m2l_gemm_mb && p2p_mutual_lanes == o.p2p_mutual_lanes &&
           p2p_mutual_flow == o.p2p_mutual_flow && p2p_low_priority == o.p2p_low_priority &&
           p2p_after_up == o.p2p_after_up && m2l_rcr == o.m2l_rcr;
  }
};

struct LaplaceOptions {
  double eps = 1e-6;
  gpufmm_dtype_t precision = GPUFMM_FLOAT64;
  int p = 0;       // 0: from eps
  int l_max = -1;  // -1: cost model (or s_max)
  int s_max = -1;  // -1: cost model; >= 1: tree depth from max points per box
  int stencil = GPUFMM_STENCIL_MODIFIED;
  int tree = GPUFMM_LAPLACE_TREE_AUTO;  // gpufmm_laplace_tree_t
  // A uniform tree's cube against the points' own (issue 19: leaves between
  // two depths): 0: chosen by the cost model, among 2^(k/6), k = 0..5, where
  // it chooses the depth (else 1; float plans with distinct targets: 1); a
  // factor in [1, 2): that cube, sharing the points' cube's lower corner
  // (create.cpp, kCubePaddingSteps).
  double cube_padding = 0;
  bool variable_truncation = true;
  // p = 0: p from test evaluates of the plan (calibrate.cpp), else from the
  // worst-case model (error.hpp).
  bool calibrate = true;
  int densities = GPUFMM_LAPLACE_DENSITIES_ANY;  // gpufmm_laplace_densities_t
  // Translation tables from the process-wide (and per-device) caches (true),
  // or built for this plan alone.
  bool table_cache = true;
  // Adaptive trees: W (M2P) and X (P2L) boxes with at most this many points
  // on their side go to the direct sum (lists/adaptive.hpp); -1: p^2 on the
  // CPU, 16 p^2 on the GPU (create.cpp; tests set 0 to send every one through
  // M2P and P2L).
  int64_t adaptive_direct_max = -1;
  // Adaptive trees: a same-level translation whose receiver box holds n_t
  // targets and whose source box n_s sources goes to the direct sum when
  // n_t n_s c_pair < adaptive_v_direct x the translation's modelled seconds
  // (the backend's cost constants; lists::move_to_direct); 0: none; -1: the
  // backend's factor (create.cpp: 1 on the CPU, 0.5 on the GPU).
  double adaptive_v_direct = -1;
  LaplaceGpuKernels gpu;  // CUDA driver only
  // The cost model's constants instead of the measured ones of the backend
  // (calibration runs).
  std::optional<LaplaceCostConstants> cost;
};

// Throws INVALID_ARGUMENT naming the field (as gpufmm_laplace_options_t
// names it).
void validate_options(const LaplaceOptions& o);

// Sets the strategies of k from the ints of the C options, in the order
// p2m, m2m, m2l, l2l, l2p, p2p; each is checked as an int before it becomes
// a gpufmm_laplace_strategy_t (INVALID_ARGUMENT naming the gpu_* field).
constexpr int kNumGpuStages = 6;
void set_gpu_strategies(LaplaceGpuKernels& k, const int (&values)[kNumGpuStages]);

// Parses "p2p=bpb,m2l=tpb,..." (keys p2m m2m m2l l2l l2p p2p p2p_mutual
// overlap graph work p2m_warps bpb_slots m2l_group m2l_lanes m2l_threads
// m2l_gemm_mb p2p_mutual_lanes; values as laplace_gpu_kernels_string writes them) into k. Returns false, leaving the
// fields it did not understand as they were, when something was not
// understood.
bool laplace_gpu_parse_kernels(const char* s, LaplaceGpuKernels& k);
// "p2m=bpb,m2m=bpb,...": the strategies of k (tuning knobs when set).
std::string laplace_gpu_kernels_string(const LaplaceGpuKernels& k);

// Truncation number for eps (both potential and gradient within eps, eq. 36):
// the larger of laplace_p_for_eps(eps, single, false/true).
int laplace_p_from_eps(double eps, bool single_precision);
// True when the error model of error.hpp puts potential and gradient
// within eps at truncation p. When the p of laplace_p_from_eps does not (it
// was capped), plan creation switches variable truncation off.
bool laplace_p_certifies(int p, double eps);

}  // namespace fmm
}  // namespace gpufmm
