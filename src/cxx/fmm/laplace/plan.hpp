// The Laplace FMM plan (issue 4): options, octree, precomputed translation
// data and the per-evaluate workspace of gpufmm_laplace_plan_t, shared by the
// OpenMP pipeline (pipeline.cpp) and the CUDA driver (issue 5,
// src/cuda/fmm/). Both call the same math (fmm/laplace*.hpp) on the same
// flat arrays described here. The user guide is docs/laplace_fmm.md.
//
// ===========================================================================
// Data layout (backend-neutral; everything is a flat array, indices not
// pointers, so that a driver can upload it as is)
// ===========================================================================
//
// Tree (LaplacePlan::tree, see docs/tree.md; in the tree's context memory):
//   sources = tree->src, targets = tree->receivers() (the same object when
//   same_sets); level-major non-empty boxes, global box indices; leaves are
//   the boxes of level l_max. Lists used:
//     NEIGHBORS  (P2P, rows at l_max)
//     modified stencil: M2L_TYPE1 (rows at 2..l_max, same level) and
//                       M2L_TYPE2 (rows at 1..l_max-1, sources at level l+1)
//     standard stencil: M2L      (rows at 2..l_max, same level)
//   Each M2L entry carries a class code cls in [0, 559) (tree/stencil.hpp).
//
// Expansions, box scaling.  Box b at level l has side h_l = cube.side / 2^l,
// centre tree center[3b..3b+2]. Its multipole M_b and local L_b are p*p
// coefficients (index n*n+n+m, fmm/laplace/basis.hpp) over the normalised
// basis scaled by h_l:
//     phi(y) = (1/h_l) sum M_n^m Sh_n^m((y - c_b)/h_l)    (outside b)
//     phi(y) = (1/h_l) sum L_n^m Rh_n^m((y - c_b)/h_l)    (inside b)
// so coefficients are dimensionless and ONE set of translation data serves
// every level (eq. 35 applied to boxes).
//
// Per-evaluate arrays (LaplaceWorkspace<T>, T = the plan's precision):
//   M      [nsrc_boxes * p*p]  multipoles, box b at M + b*p*p (all levels;
//                               levels >= 2 are used, leaves by P2M)
//   L      [ntrg_boxes * p*p]  locals, box b at L + b*p*p (levels >= 1 for
//                               the modified stencil, >= 2 for the standard)
//   has_local [ntrg_boxes]     1 when L_b received anything (else L_b == 0
//                               and L2L / L2P from it are skipped)
//   q      [nsrc]              charges in Morton (sorted) order
//   d      [3*nsrc]            dipoles in sorted order, xyz interleaved
//   pot    [ntrg], grad [3*ntrg]  results in sorted target order
// Sorted coordinates (LaplacePlan::src_xyz / trg_xyz, double, 3 x n, host;
//   on the device only for the CUDA driver):
//   src_xyz[3i..3i+2] = user source perm[i], as given. P2M and L2P use
//   coordinates RELATIVE TO THE LEAF'S EXACT CENTRE (tree::box_relative:
//   the centre is never rounded, so the result is within a few ulps of the
//   box size wherever the box is; issue 14), formed in double and then
//   rounded to T. In float this keeps the rounding at 6e-8 of a box size
//   instead of 6e-8 of the domain, which is what lets float reach eps =
//   1e-5. P2P takes each source-target difference of the coordinates as
//   given, one rounding in double as in the double direct sum (exact for
//   close pairs), then rounds it to T (the CUDA float P2P: coordinates
//   relative to the target leaf's exact centre, nearfield/p2p.cuh).
//   Results that are not finite (the sum overflowed T) are
//   GPUFMM_ERROR_ACCURACY, checked before any output is written.
//
// Translation data (LaplaceTables<T>), every translation is RCR (eq. 33):
//   out += A(a)^T B(b)^T Coax B(b) A(a) in     (flip = 0)
//   out += A(a)^T F B(b) Coax B(b)^T F A(a) in (flip = 1: direction -(a,b), eq. 34)
//   i.e. gpufmm::laplace_rcr_apply(p_op, p_op, cos_a, sin_a, B, flip, coax, in, out, work).
//   "Ops" are indexed by
//     op = cls                  in [0, 559)   M2L of tree class cls
//     op = kOpM2M + o           o = child octant = child key & 7 (bit 0 x,
//                               bit 1 y, bit 2 z): M2M child -> parent
//     op = kOpL2L + o           L2L parent -> child of octant o
//   and per op (arrays of kNumOps entries):
//     op_p[op]       truncation number of the translation: p' of eq. (24)
//                    (with the error budget of laplace_p_reduced) for M2L
//                    when variable_truncation, else p; 0 for class codes
//                    that no list holds
//     op_rot[op]     rotation table: B = rot + op_rot[op] * rot_stride
//                    (laplace_rotation_precompute layout, degree n < p)
//     op_flip[op]    0/1 (eq. 34); tables exist for cos(b) >= 0 only
//     op_cos_a[op], op_sin_a[op]   azimuth of the (possibly flipped) direction
//     op_coax[op]    coax matrix: coax + coax_offset[op_coax[op]], square
//                    (op_p x op_p) in the translation.hpp layout
//                    (S|S for M2M, R|R for L2L, S|R with rd, rs built in)
//   Geometry of each op (t = receiving centre - emitting centre):
//     same-level class d:  t = -d h_l,        rd = rs = 1/|d|
//     type-2 class e:      t = -(e/2) h_{l+1}, rd = 4/|e|, rs = 2/|e|
//     M2M octant o:        t = -(v/2) h_child, L2L: t = +(v/2) h_child,
//                          v = (+-1, +-1, +-1) from o; tau = sqrt(3)/4, rho = 1/2.
//
// ===========================================================================
// Evaluate
// ===========================================================================
// laplace_evaluate() checks the inputs (finite charges/dipoles, named with
// their index) and dispatches on the plan's context: the CPU pipeline
// (pipeline.cpp) or, with a GPU context and the CUDA driver built,
// cuda::laplace_evaluate. Outputs are written only after everything else
// succeeded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/context.hpp"
#include "fmm/plan_core.hpp"
#include "fmm/laplace/cost.hpp"
#include "fmm/laplace/options.hpp"
#include "core/gpufmm_types.h"
#include "lists/adaptive.hpp"
#include "lists/lists.hpp"
#include "tree/stencil.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {

// ---------------------------------------------------------------- tables

constexpr int kOpM2M = tree::kNumClasses;  // 559
constexpr int kOpL2L = kOpM2M + 8;         // 567
constexpr int kNumOps = kOpL2L + 8;        // 575

template <class T>
struct LaplaceTables {
  int p = 0;
  int rot_stride = 0;  // laplace_rotation_size(p)
  int nrot = 0;        // rotation tables
  std::vector<T> rot;  // [nrot * rot_stride]
  std::vector<int32_t> op_p, op_rot, op_coax;  // [kNumOps]
  std::vector<int8_t> op_flip;                 // [kNumOps]
  std::vector<T> op_cos_a, op_sin_a;           // [kNumOps]
  std::vector<int64_t> coax_offset;            // [ncoax + 1]
  std::vector<int32_t> coax_p;                 // [ncoax]
  std::vector<T> coax;                         // [coax_offset[ncoax]]

  int ncoax() const { return static_cast<int>(coax_p.size()); }
  const T* rotation(int op) const { return rot.data() + static_cast<size_t>(op_rot[op]) * rot_stride; }
  const T* coax_matrix(int op) const { return coax.data() + coax_offset[op_coax[op]]; }
  size_t bytes() const;
};

// Builds the tables for truncation p (double precomputation, rounded to T;
// the distinct tables in parallel, bitwise the same for any thread count).
template <class T>
void build_tables(int p, bool variable_truncation, LaplaceTables<T>& t);

// Process-wide cache of build_tables results, keyed by (p, T,
// variable_truncation) and shared by every plan (thread-safe; the least
// recently used entries beyond kLaplaceTableCacheBytes per precision are
// dropped, the newest is always kept). LaplaceOptions::table_cache = false
// bypasses it (and the CUDA driver's device cache).
constexpr size_t kLaplaceTableCacheBytes = size_t(64) << 20;
template <class T>
std::shared_ptr<const LaplaceTables<T>> laplace_tables_cached(int p, bool variable_truncation);
// The tables for (p, variable_truncation): the cached ones (shared) when
// `cache`, else built for the caller alone.
template <class T>
std::shared_ptr<const LaplaceTables<T>> laplace_tables_get(int p, bool variable_truncation, bool cache);
// Drops every cached table (tests, benchmarks).
void laplace_tables_cache_clear();

// ---------------------------------------------------------------- plan

// The Laplace FMM's CPU workspace: the generic one (fmm/plan_core.hpp) with
// the rotation and coax tables repeated once per SIMD lane (batched M2L,
// fmm/laplace/pipeline.cpp).
template <class T>
struct LaplaceLaneTables {
  std::vector<T> rot, coax;
};
template <class T>
using LaplaceWorkspace = Workspace<T, T, LaplaceLaneTables<T>>;

class LaplacePlan : public PlanCore {
 public:
  explicit LaplacePlan(Context& c) : PlanCore(c) {}

  LaplaceOptions options;             // effective options (see laplace_p_certifies)
  int p = 0;
  // Translation tables (FLOAT64 / FLOAT32 plans), shared with the
  // process-wide cache (laplace_tables_get).
  std::shared_ptr<const LaplaceTables<double>> tables_d;
  std::shared_ptr<const LaplaceTables<float>> tables_f;
  // Work of the translations per evaluate (cost model, calibration): sums of
  // p_op^3 and p_op^2 over every M2L, M2M and L2L translation.
  double rcr_p3 = 0, rcr_p2 = 0;
  // A float plan whose error at its largest p is above eps and still falls
  // with p (laplace_calibrate): create.cpp refuses it.
  bool float_truncation_miss = false;

  LaplaceWorkspace<double> ws_d;
  LaplaceWorkspace<float> ws_f;

  bool single() const { return options.precision == GPUFMM_FLOAT32; }
};

// Builds a plan: validates, checks coordinates (NaN/Inf named with the index:
// "argument 'targets': point 17 has a NaN or Inf coordinate"), chooses p and
// l_max, builds the tree and the tables. targets == nullptr: at the sources.
std::unique_ptr<LaplacePlan> laplace_plan_create(Context& ctx, const LaplaceOptions& opt,
                                                 int64_t nsrc, const double* sources,
                                                 int64_t ntrg, const double* targets);

// One evaluate (EvalArgs, fmm/plan_core.hpp).
using LaplaceEvalArgs = EvalArgs;
void laplace_evaluate(LaplacePlan& plan, const LaplaceEvalArgs& args);

// Issue 19, item 2 (calibrate.cpp): sets p to the smallest truncation number
// whose error, measured by evaluates of the plan on reference densities
// (options.densities) at sampled targets against the direct sum, is within
// options.eps / kLaplaceCalibrationMargin; fills calibration_evaluates and measured_eps. The plan
// must be ready to evaluate at its current p (the worst-case model's);
// set_p(q) makes it ready at q. sources / targets: the user's coordinates
// (host, user order; targets null when same_sets). only_up: the current p
// is the smallest allowed (sparse near fields, create.cpp), so the search
// starts there and only adds terms.
void laplace_calibrate(LaplacePlan& plan, const double* sources, const double* targets,
                       const std::function<void(int)>& set_p, bool only_up = false);

// The OpenMP pipeline (fmm/pipeline.hpp): host pointers, inputs already
// validated.
void laplace_evaluate_cpu(LaplacePlan& plan, const LaplaceEvalArgs& args);

#if defined(GPUFMM_HAVE_CUDA)

namespace cuda {
// Issue 5 (src/cuda/fmm/): evaluates on the plan's GPU context. args are in
// the user's order, host memory (on_context false) or device memory
// (on_context true, dtype = the plan's precision); inputs are validated.
// Must fill plan.last (stage times) and write the outputs only on success.
void laplace_evaluate(LaplacePlan& plan, const LaplaceEvalArgs& args);

// Plan creation on a GPU context (src/cuda/fmm/laplace/plan.cu); all on
// the context's stream.
// The plan's near-field sizes from a device tree (as near_field_stats on the
// host): source-target pairs, the largest neighbour source count of a
// target leaf, the largest leaf.
void laplace_near_field_stats(const tree::Tree& t, const lists::List& nb, int64_t& pairs, int64_t& max_near,
                              int64_t& max_leaf);
// counts[c] (c < tree::kNumClasses) = entries of class c in the lists
// lists[0..nlists) of ls (over a device tree).
void laplace_class_counts(const tree::Tree& t, const lists::Lists& ls, const int* lists, int nlists,
                          int64_t* counts);
}  // namespace cuda
#endif

}  // namespace fmm
}  // namespace gpufmm

struct gpufmm_laplace_plan_s;  // a handle: an id (core/handles.hpp)

namespace gpufmm {
namespace fmm {
// The object behind gpufmm_laplace_plan_t.
struct PlanObject {
  std::unique_ptr<LaplacePlan> plan;
  std::mutex mutex;  // one evaluate at a time per plan (shared workspace)
};

// The C handle of a plan (registered; gpufmm_laplace_plan_destroy frees it).
gpufmm_laplace_plan_s* laplace_plan_handle(std::unique_ptr<LaplacePlan> plan);
}  // namespace fmm

inline fmm::PlanObject* checked_laplace_plan(gpufmm_laplace_plan_s* p, const char* argname = "plan") {
  return checked_handle<fmm::PlanObject>(p, HandleKind::LaplacePlan, argname);
}
}  // namespace gpufmm
