// What every FMM plan has, whatever its expansion (issue 51): the tree and
// its lists, the sorted coordinates, the far field's schedule, the sizes and
// times that plan_info reports, the depth scan's result, the calibration's
// state and the GPU driver's handle. An FMM's plan derives from PlanCore
// and adds its options, its expansion's tables and its workspaces
// (fmm/laplace/plan.hpp); the drivers (fmm/pipeline.hpp on the CPU) read
// only what is here and what the expansion gives them.
//
// Expansions, box layout. Box b of level l holds expansion::ncoef(l)
// coefficients; a level's boxes are consecutive (tree level_offset), so the
// coefficients of every box are one array with a base offset per level
// (CoefLayout). An expansion whose count is the same at every level (the
// Laplace FMM: p^2) gets b * ncoef for box b.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/context.hpp"
#include "core/gpufmm_types.h"
#include "lists/adaptive.hpp"
#include "lists/lists.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {

// Wall seconds of the stages of the last evaluate (papers/000 Table 8).
struct StageTimes {
  double p2m = 0, upward = 0, downward = 0, l2p = 0, p2p = 0, total = 0;
};

// Wall seconds of the phases of a plan's creation (bench_laplace_plan).
struct PlanTimes {
  double check = 0;       // argument checks (finite coordinates; on the device for the CUDA driver: in upload)
  double tables = 0;      // translation tables (build or cache copy)
  double upload = 0;      // coordinates to the device (CUDA driver)
  double depth_keys = 0;  // cost model: sorted keys (keys-only tree, download)
  double depth_scan = 0;  // cost model: the depth scan
  double tree = 0;        // the tree (coordinates upload on a GPU context included)
  double coords = 0;      // sorted coordinates
  double stats = 0;       // near-field and translation statistics
  double setup = 0;       // the CUDA driver's set-up (GPU context), of which:
  double setup_tables = 0;  //   translation tables to the device
  double setup_groups = 0;  //   grouped M2L entry lists
  double calibrate = 0;     // the calibration, of which:
  double cal_reference = 0;  //   samples and the references' direct sums
  double cal_setup = 0;      //   the plan made ready at each candidate (tables, device set-up)
  double cal_evaluate = 0;   //   the test evaluates
  double cal_estimate = 0;   //   the errors estimated from their results
};

// The depth scan's result (the cost model of the plan's expansion).
struct DepthChoice {
  int l_max = 0;
  std::vector<double> cost;       // modelled seconds per candidate depth 0..(scanned)
  std::vector<double> p2p_pairs;  // near-field pairs per candidate depth
  std::vector<double> m2l;        // M2L translations (cumulative) per candidate depth
};

// Which boxes the CPU pipeline's far field computes (issue 14, defect 7).
// In sparse or forced-deep trees isolated points sit at the bottom of long
// chains of single-child boxes, and multipoles went up and locals came down
// through every level of them although nothing interacts there (N = 300,
// l_max = 21: 5673 boxes for 300 points, twice the work of l_max = 8). Now:
//  - a source box's multipole is computed only when it is an M2L source or
//    its parent is formed from its children; it is formed from its own
//    points (P2M at its level) when no box below it is an M2L source, else
//    from its children (M2M);
//  - a receiver box's local is evaluated at its targets (L2P at its level)
//    when no box below it receives an M2L entry, and nothing below it is
//    touched; leaves are such boxes.
// M2M and L2L are exact for the truncated expansions, so this is the same
// sum, computed with fewer translations; for trees where every box interacts
// (the cost model's) it is the full schedule. Built on the host tree at plan
// creation (far_schedule); the CUDA driver runs the full levels.
struct FarSchedule {
  static constexpr uint8_t kNone = 0, kP2M = 1, kM2M = 2;  // source boxes (levels >= 2)
  static constexpr uint8_t kLocal = 1, kTerminal = 2;      // receiver boxes (kNone: not touched)
  std::vector<uint8_t> m, l;            // per source box, per receiver box
  std::vector<int32_t> p2m, l2p;        // the kP2M / kTerminal boxes, finest level first
  std::vector<int8_t> p2m_level, l2p_level;
  int64_t max_points = 0;               // most points of a p2m or l2p box
  int64_t m2m = 0, l2l = 0;             // translations per evaluate
};

// Per-evaluate arrays of the CPU pipeline for an expansion of coefficient
// type C and value type V (densities and results); X: the expansion's own
// per-plan scratch (the Laplace FMM: its tables repeated per SIMD lane).
template <class C, class V, class X>
struct Workspace {
  std::vector<C> M, L;                         // multipoles, locals (CoefLayout)
  std::vector<V> q, d, pot, grad, hess;        // every density (nd of them), sorted order
  std::vector<uint8_t> has_local;
  X ext;
};

// Where box b's coefficients start: base[l] + (b - level_offset[l]) * n[l].
struct CoefLayout {
  std::vector<int64_t> base, n;  // per level 0..l_max, then base[l_max + 1] = the total
  template <class NCoef>
  void build(const tree::PointSet& X, int l_max, const NCoef& ncoef) {
    base.assign(size_t(l_max) + 2, 0);
    n.assign(size_t(l_max) + 1, 0);
    for (int l = 0; l <= l_max; ++l) {
      n[size_t(l)] = ncoef(l);
      base[size_t(l) + 1] = base[size_t(l)] + (X.level_offset[l + 1] - X.level_offset[l]) * n[size_t(l)];
    }
    for (int l = 0; l <= l_max; ++l) base[size_t(l)] -= X.level_offset[l] * n[size_t(l)];
  }
  int64_t total(const tree::PointSet& X, int l_max) const {
    return l_max < 0 ? 0 : base[size_t(l_max)] + X.level_offset[l_max + 1] * n[size_t(l_max)];
  }
  int64_t at(int64_t b, int l) const { return base[size_t(l)] + b * n[size_t(l)]; }
};

class PlanCore : public ContextChild {  // ctx: the user's context
 public:
  explicit PlanCore(Context& c) : ContextChild(c) {}
  ~PlanCore();  // the GPU data, the lists, then the tree
  PlanCore(const PlanCore&) = delete;
  PlanCore& operator=(const PlanCore&) = delete;

  int l_max = 0;
  bool same_sets = false;
  bool modified = true;  // the modified stencil (papers/000 sec. 2.2.3), else the standard one
  int64_t nsrc = 0, ntrg = 0;
  // Issue 19: an adaptive tree (leaves at any level, tree::Kind::Adaptive):
  // the same-level lists (V) in `lists` and the U, W, X lists of
  // lists/adaptive.hpp in `alists` (host; the CUDA driver uploads them).
  bool adaptive = false;
  // While the calibration's test evaluates run: the GPU driver's automatic
  // strategies may then take cheaper set-ups (fmm/laplace/create.cpp).
  bool calibrating = false;
  std::unique_ptr<tree::Tree> tree;
  std::unique_ptr<lists::Lists> lists;  // over tree
  std::unique_ptr<lists::AdaptiveLists> alists;
  // Sorted, 3 x n; trg_xyz empty when same_sets. Host copies for the CPU
  // pipeline only: a plan evaluated by the CUDA driver keeps them on the
  // device and leaves both empty.
  std::vector<double> src_xyz, trg_xyz;
  // During plan creation on a GPU context only (null otherwise): the user's
  // coordinates in device memory, user order (targets null when same_sets).
  const double* dev_sources = nullptr;
  const double* dev_targets = nullptr;
  DepthChoice depth;  // the cost model's scan (empty when not used)
  // A uniform tree's cube against the points' own (1 for an adaptive tree).
  double cube_padding = 1;

  // sizes (plan_info)
  int64_t src_boxes = 0, trg_boxes = 0;
  int64_t m2l_translations = 0;  // M2L translations per evaluate
  int64_t p2p_pairs = 0;         // near-field source-target pairs (self pairs included)
  int64_t max_near_sources = 0;  // max over target leaves of the sources in its neighbours
  int64_t max_leaf_points = 0;   // max points of a source or target leaf
  double plan_seconds = 0;
  PlanTimes plan_times;  // phases of plan_seconds
  // The calibration: test evaluates run and the error they measured at the
  // chosen truncation (0, 0 when it was not calibrated).
  int calibration_evaluates = 0;
  double measured_eps = 0;

  FarSchedule far;   // CPU pipeline (far_schedule)
  StageTimes last;   // of the last evaluate
  // The GPU driver's device data (tables, coordinates, workspace, streams),
  // freed by its own deleter. Null on the CPU.
  std::shared_ptr<void> gpu;

  bool cpu_pipeline() const { return !ctx.on_gpu(); }  // evaluate runs the OpenMP pipeline
  const tree::PointSet& sources() const { return tree->src; }
  const tree::PointSet& targets() const { return tree->receivers(); }
  const double* target_xyz() const { return same_sets ? src_xyz.data() : trg_xyz.data(); }
};

// The far field's schedule of a plan's host tree and lists (PlanCore::far).
void far_schedule(PlanCore& P);

// One evaluate's arguments. Pointers are in the user's order. dtype:
// GPUFMM_FLOAT64 (host API) or the plan's precision (arrays). on_context:
// pointers are in the context's memory (device memory on a GPU context)
// rather than host memory. charges/dipoles may be null (not both), pot/grad
// may be null (not both). Outputs are overwritten, and only on success.
// nd densities on one geometry (gpufmm_laplace_evaluate_nd): value c of
// point j of density k at [k + nd * (c + per * j)], per = 1 (charges, pot),
// 3 (dipoles, grad), 6 (hess: xx, yy, zz, xy, xz, yz); nd = 1 is the plain
// layout.
struct EvalArgs {
  gpufmm_dtype_t dtype = GPUFMM_FLOAT64;
  bool on_context = false;
  bool nd_api = false;  // called as gpufmm_*_evaluate_nd* (names 'hess' in messages)
  int nd = 1;
  const void* charges = nullptr;
  const void* dipoles = nullptr;
  void* pot = nullptr;
  void* grad = nullptr;
  void* hess = nullptr;
};

// GPUFMM_ERROR_ACCURACY: the potential (pot) or gradient (grad, null when
// not computed) at user target `target` is not finite, i.e. the sum
// overflowed the plan's precision (single: float) (issue 14). Both drivers
// check their results before writing any output.
[[noreturn]] void fail_nonfinite_result(bool single, int64_t target, double pot, const double* grad);

// The instruction set the running CPU gives the OpenMP driver
// (fmm/pipeline.hpp): 0 generic, 1 AVX2 + FMA, 2 AVX-512 (F, VL, DQ, BW);
// and its name ("generic", "avx2", "avx512").
int cpu_pipeline_isa_level();
const char* cpu_pipeline_isa();

}  // namespace fmm
}  // namespace gpufmm
