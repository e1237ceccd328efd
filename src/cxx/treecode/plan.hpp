// The barycentric Lagrange treecode (papers/001; issue 15): options, the
// parameters chosen from eps, and the plan of gpufmm_treecode_plan_t, shared
// by the OpenMP evaluate (evaluate_cpu.cpp) and the CUDA one
// (src/cuda/treecode/). The user guide is docs/treecode.md.
//
// ===========================================================================
// Method
// ===========================================================================
// Source clusters are the boxes of an adaptive octree of the sources (leaves
// of at most N_L points, tree/tree.hpp), each with the minimal bounding box
// of its points (widened where it is flat, geometry.hpp); target batches are
// the leaves of an adaptive octree of the targets (at most N_B points; the
// same tree when the targets are the sources and N_B = N_L). A cluster with
// more than (n+1)^3 points carries (n+1)^3 proxy points, the tensor
// Chebyshev points of the second kind on its box (approx/chebyshev.hpp).
//
// Three compute types (BaryTree's):
//   PC (particle-cluster, the BLTC of the paper): batches against source
//      clusters; an accepted cluster acts through its proxies carrying the
//      modified charges (eq. 12, computed as eqs. 14-15), eq. 11;
//   CP (cluster-particle): target clusters collect the potential of source
//      leaves at their proxies, then interpolate it to their targets;
//   CC (cluster-cluster): both; accepted pairs of big clusters go proxy to
//      proxy.
// One traversal serves the three: from start pairs (PC: every
// batch with the source root; CP: the target root with every source leaf;
// CC: the two roots) a pair (t, s) is accepted when (r_t + r_s) < theta R
// (eq. 13, R the distance of the centres); then each side acts through its
// proxies when it has them (and the type allows) and through its points
// otherwise. A pair not accepted splits a side that may split (PC: sources
// only; CP: targets only; CC: the larger radius), or, when neither may, is
// a direct interaction of the points. Its steps are host+device functions
// (traverse.hpp): the CPU plan runs it depth first on the host (plan.cpp),
// the CUDA plan level by level on the device (src/cuda/treecode/plan.cu),
// and both sort each row's columns, so they build the same list.
//
// ===========================================================================
// Data layout (flat arrays; the CPU evaluate reads the host ones, the CUDA
// plan builds the same on the device: src/cuda/treecode/plan.cu)
// ===========================================================================
// Combined point arrays, double, 3 x n:
//   sxyz = [sorted sources (nsrc) | proxies of source clusters (nsprox x np3)]
//   txyz = [sorted targets (ntrg) | proxies of target clusters (ntprox x np3)]
//   np3 = (n+1)^3; proxy k = (k1 (n+1) + k2)(n+1) + k3 of cluster c at
//   offset c*np3, coordinates centre + half * cos(pi k_d / n) per axis.
// Source sets (columns of the near field): [0, nsbox) the points of source
//   box b; [nsbox, nsbox + nsprox) the proxies of source cluster p.
// Target sets (rows): [0, nbatch) the points of batch i; [nbatch, nbatch +
//   ntprox) the proxies of target cluster p. One row per target set, so
//   every target point and proxy belongs to exactly one row.
// The near field (nearfield/, the FMM's P2P) sums, for every row, its
//   targets against the concatenated points of its columns: the direct
//   interactions (eq. 9) and the approximations (eq. 11, the same form).
// Charges per evaluate: q = [sorted charges | modified charges of each
//   source cluster's proxies]; potentials at the target proxies are
//   interpolated to the targets of the cluster (downward pass, CP and CC):
//   phi(x) += sum_k L_k(x) phi_k, grad phi(x) += sum_k grad L_k(x) phi_k,
//   the exact gradient of the interpolant.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/context.hpp"
#include "core/gpufmm_types.h"
#include "kernels/kernel.hpp"
#include "tree/tree.hpp"
#include "treecode/geometry.hpp"

namespace gpufmm {
namespace treecode {

// Values equal those of gpufmm_treecode_type_t.
enum class Type : int { kPC = 0, kCP = 1, kCC = 2 };
inline const char* type_name(Type t) {
  return t == Type::kPC ? "particle-cluster" : t == Type::kCP ? "cluster-particle" : "cluster-cluster";
}

struct Options {
  kernels::KernelDesc kernel;
  double eps = 1e-6;   // relative L2 error asked for (when theta or degree are left to the plan)
  double theta = 0;    // MAC parameter in (0, 1); 0: from eps
  int degree = -1;     // interpolation degree n in 0..approx::kMaxDegree; -1: from eps
  int leaf_size = 0;   // N_L >= 1; 0: from the cost model
  int batch_size = 0;  // N_B >= 1; 0: from the cost model
  Type type = Type::kPC;
  gpufmm_dtype_t precision = GPUFMM_FLOAT64;
  bool grad = true;    // eps holds for the gradient too (else the potential only)
  bool calibrate = false;  // theta, n from eps: from this plan's measured error (calibrate.cpp)
};

// The smallest eps a float plan accepts.
constexpr double kMinFloatEps = 2e-5;

// Throws INVALID_ARGUMENT naming the field (as gpufmm_treecode_options_t names it).
void validate(const Options& o);

// What the plan runs with.
struct Params {
  double theta = 0.7;
  int degree = 8;
  int leaf_size = 2000;
  int batch_size = 2000;
};

// theta and n from eps (the calibration table of params.cpp) unless set;
// N_L and N_B from the backend's cost model unless set.
Params choose_params(const Options& o, bool gpu, int64_t nsrc, int64_t ntrg);

// Predicted relative L2 error of (theta, n) for the potential (grad false)
// or the gradient (params.cpp: the largest measured over clustered points).
double predicted_error(double theta, int degree, bool grad);
// The work per target that choose_params compares: ~ (n+1)^3 proxies of
// ~ 1/theta^3 clusters.
double predicted_work(double theta, int degree);
// Every (theta, n) of the error table's grid.
std::vector<std::pair<double, int>> table_candidates();

// A calibrated plan's measured error lands within eps / kCalibrationMargin.
// The error of other charges than the reference sets' differs: with charges
// uniform in (-1, 1) the error over every target was up to 2.0x the measured
// one (CPU, 12000 points, 48 plans over the distributions and kernels of
// the tests), so the margin is twice that.
constexpr double kCalibrationMargin = 4.0;

// Box arrays of one point set (host copies, from the tree).
struct Boxes {
  int64_t n = 0;
  std::vector<Box> box;
  std::vector<int32_t> parent, child_begin, child_end, point_begin, point_end;
  std::vector<uint8_t> leaf;
  int32_t count(int64_t b) const { return point_end[b] - point_begin[b]; }
};

// Per box: its proxy cluster index (clusters with more than np3 points,
// numbered in box order), or -1; none on the side the type does not use
// (sources: CP; targets: PC). `proxy_box` gets each cluster's box.
std::vector<int32_t> proxy_clusters(const Boxes& b, Type type, bool source_side, int np3,
                                    std::vector<int32_t>* proxy_box = nullptr);

struct Timings {  // seconds
  double tree = 0, lists = 0, setup = 0, plan = 0;  // plan create
  double upward = 0, nearfield = 0, downward = 0, total = 0;  // last evaluate
};

struct Stats {
  int64_t approx_pairs = 0;     // interactions through proxies (target x source points of accepted entries)
  int64_t direct_pairs = 0;     // interactions of points with points
  int64_t list_entries = 0;
  int64_t source_proxies = 0, target_proxies = 0;  // clusters with proxies
  int64_t batches = 0, source_clusters = 0, target_clusters = 0;
};

struct CudaPlan;  // src/cuda/treecode (GPU contexts)
struct CudaPlanDeleter {
  void operator()(CudaPlan* g) const;
};

class Plan : public ContextChild {
 public:
  Plan(Context& c, const Options& o) : ContextChild(c), options(o) {}
  ~Plan();  // the CUDA plan before the trees

  Options options;
  Params par;
  int64_t nsrc = 0, ntrg = 0;
  int np1 = 0, np3 = 0;  // n + 1, (n + 1)^3

  std::unique_ptr<tree::Tree> stree, ttree;  // ttree null: targets use stree's receivers
  const tree::PointSet& S() const { return stree->src; }
  const tree::PointSet& R() const { return ttree ? ttree->src : stree->receivers(); }

  Boxes sbox, tbox;                        // host copies of the box arrays
  std::vector<int32_t> sprox, tprox;       // per box: its proxy cluster index, or -1
  std::vector<int32_t> sprox_box, tprox_box;  // per proxy cluster: its box
  std::vector<int32_t> batch_box;          // per batch: its leaf box
  std::vector<int32_t> batch_index;        // per target box: its batch, or -1
  int32_t batch_of(int32_t leaf_box) const;
  // Host arrays of the CPU evaluate (a GPU plan builds them on the device and
  // leaves these empty, but for the sorted sources that an MPI plan shares:
  // src_perm and sxyz's first nsrc points, plan_build's host_points).
  std::vector<int32_t> src_perm, trg_perm;  // sorted -> user index
  std::vector<int32_t> trg_leaf;           // sorted target -> its leaf box
  // A GPU plan: the user's coordinates on the device (user order; targets
  // null at the sources), from plan_build to the set-up, which frees them.
  const double *dev_sources = nullptr, *dev_targets = nullptr;
  std::shared_ptr<void> dev_points;

  // Sets and the list (see the layout above).
  int64_t nbatch = 0, nsets_t = 0, nsets_s = 0;
  // Sources of other MPI ranks (src/mpi/; append_remote): source sets
  // [nsets_s_local, nsets_s) over the points [nq_local, nq_local +
  // nq_remote) of sxyz and of the charges, after the local ones (nq_local =
  // nsrc + source proxies x np3). remote_proxy: per remote set, whether it is
  // a cluster's proxies. Each evaluate calls `exchange` once, collectively,
  // between the modified charges and the near field: it gets the local
  // charges (nq_local, double) and writes the remote ones (nq_remote).
  int64_t nsets_s_local = 0, nq_local = 0, nq_remote = 0;
  std::vector<uint8_t> remote_proxy;
  std::function<void(const double* local_q, double* remote_q)> exchange;
  // (target set, source set) pairs of the traversals until finish() makes the
  // list (a GPU plan: only the pairs of other ranks' sources; the set-up
  // adds those of its own traversal on the device).
  std::vector<std::pair<int32_t, int32_t>> pairs;
  std::vector<int32_t> tset_begin, tset_end, sset_begin, sset_end;
  std::vector<double> tset_center;  // 3 per target set
  std::vector<int64_t> list_offsets;  // [nsets_t + 1] (host: the CPU plan)
  std::vector<int32_t> list_index;
  std::vector<double> sxyz, txyz;   // combined coordinates (host: the CPU plan)
  std::vector<int64_t> row_sources;  // per target set: source points of its row (CPU plan)
  int64_t max_row_sources = 0;
  // Work units of the modified charges: (source proxy cluster, first point) of
  // chunks of at most kChunk points, cluster-major.
  static constexpr int32_t kChunk = 4096;
  std::vector<int32_t> chunk_cluster, chunk_begin, chunk_end;

  Stats stats;
  Timings times;
  double plan_seconds = 0;
  int calibration_evaluates = 0;  // test evaluates of options.calibrate (0: none)
  double measured_eps = 0;      // the error they measured for par (0: not measured)
  std::mutex mutex;  // evaluate / info run one at a time per plan
  std::unique_ptr<CudaPlan, CudaPlanDeleter> gpu;
};

// Checks, trees, geometry, lists; backend set-up. sources / targets: 3 x n
// doubles in host memory; targets NULL: at the sources (ntrg ignored).
// It is plan_build, then finish, then calibrate.
std::unique_ptr<Plan> plan_create(Context& ctx, const Options& o, int64_t nsrc, const double* sources,
                                  int64_t ntrg, const double* targets);

// The parts of plan_create, for the MPI plan (src/mpi/), which adds the
// sources of other ranks in between. plan_build: checks, trees, proxies,
// sets; on the CPU also the traversal of the local sources (into pairs) and
// the coordinates; par is used as given when not null (every rank runs with
// the same); host_points: src_perm and the sorted sources in sxyz on a GPU
// plan too. finish: on the CPU the list from the pairs and its statistics;
// on a GPU the set-up (setup_cuda: the traversal, the list, coordinates and
// work units on the device).
std::unique_ptr<Plan> plan_build(Context& ctx, const Options& o, int64_t nsrc, const double* sources,
                                 int64_t ntrg, const double* targets, const Params* par = nullptr,
                                 bool host_points = false);
void finish(Plan& P);

// The start pairs of the traversal of the local sources (PC: every batch
// with the source root; CP: the target root with every source leaf; CC: the
// roots), as (target box, source box).
std::vector<std::pair<int32_t, int32_t>> start_pairs(const Plan& P, const Boxes& S);
// With options.calibrate and theta or n from eps: replaces P by the plan of
// the cheapest (theta, n) whose error, measured by evaluates on reference
// charges at sampled targets against the direct sum, is within eps /
// kCalibrationMargin (calibrate.cpp); else nothing. P's arguments again.
void calibrate(std::unique_ptr<Plan>& P, const double* sources, const double* targets);

// A source tree of another rank as the local targets see it.
struct RemoteSources {
  Boxes boxes;                // its box arrays
  int64_t nsrc = 0;           // its points; its charges are [nsrc sorted | proxies x np3]
  std::vector<int32_t> prox, prox_box;  // proxy_clusters of its boxes, and each cluster's box
  // Filled by remote_lists: the source sets (in its numbering: box b's
  // points, or boxes.n + p for proxy cluster p) the local targets interact
  // with, ascending, and the (local target set, index into sets) pairs.
  std::vector<int32_t> sets;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  // [begin, end) of set k's values in the rank's charge (or point) array.
  int64_t set_begin(const Plan& P, size_t k) const;
  int64_t set_end(const Plan& P, size_t k) const;
};
// The traversal of the local targets against R's tree (start pairs as for
// the local tree: the roots, or R's leaves for CP).
void remote_lists(const Plan& P, RemoteSources& R);
// Appends the sets of every R to P: points of a point set from xyz[r]
// (3 per point, the sets' points in set order), proxies from R's boxes;
// and their pairs. Before finish.
void append_remote(Plan& P, const std::vector<RemoteSources>& R, const std::vector<std::vector<double>>& xyz);

// One evaluate. charges[nsrc], pot[ntrg], grad[3 ntrg] (pot or grad NULL when
// not wanted, not both): double host arrays (on_context false), or arrays of
// the plan's precision in the context's memory (on_context true). Outputs
// are overwritten in the user's order; unchanged on failure.
struct EvalArgs {
  const void* charges = nullptr;
  void* pot = nullptr;
  void* grad = nullptr;
  bool on_context = false;
};
void evaluate(Plan& p, const EvalArgs& a);

namespace detail {
void evaluate_cpu(Plan& p, const EvalArgs& a);
#ifdef GPUFMM_HAVE_CUDA
void setup_cuda(Plan& p);
void evaluate_cuda(Plan& p, const EvalArgs& a);
#endif
}  // namespace detail

}  // namespace treecode
}  // namespace gpufmm

struct gpufmm_treecode_plan_s;  // a handle: an id (core/handles.hpp)

namespace gpufmm {
namespace treecode {
// This rank's view of a plan over MPI ranks: what the plan information
// (gpufmm_treecode_info_t) reports in place of the local plan's counts and
// times, and its MPI fields (bindings/c/treecode.cpp copies them).
struct RankInfo {
  int64_t nsrc = 0, ntrg = 0;  // the rank's own arguments
  int nranks = 1, rank = 0;
  int64_t nsrc_owned = 0, ntrg_owned = 0;    // points this rank owns after the RCB
  int64_t nsrc_global = 0, ntrg_global = 0;  // points of all ranks
  int64_t let_boxes = 0, let_clusters = 0, let_points = 0;
  int64_t let_bytes_plan = 0, let_bytes_evaluate = 0;
  double plan_seconds = 0;  // the whole collective create
  double t_rcb = 0, t_redistribute = 0, t_let_tree = 0, t_let_data = 0;
  double t_route = 0, t_exchange = 0, t_total = 0;  // last evaluate (t_total: the whole collective one)
};

// A plan over MPI ranks (src/mpi/treecode_mpi.cpp, library gpufmm_mpi): the
// C thunks of gpufmm_treecode_plan_t call it for the evaluate and the info;
// both are collective, and so is its destruction.
class Distributed {
 public:
  virtual ~Distributed() = default;
  // Host arrays in the user's local order (EvalArgs::on_context false).
  virtual void evaluate(const EvalArgs& a) = 0;
  // The rank's view (local counts) and the MPI fields.
  virtual RankInfo info() const = 0;
};

// The object behind gpufmm_treecode_plan_t: `plan` the (rank's) plan, and
// `dist` when it is an MPI plan (destroyed first).
struct PlanObject {
  std::unique_ptr<Plan> plan;
  std::unique_ptr<Distributed> dist;
  ~PlanObject() { dist.reset(); }
};
}  // namespace treecode
}  // namespace gpufmm
