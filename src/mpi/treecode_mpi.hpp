// The treecode across MPI ranks (issue 16; papers/001 sec. 3.1), library
// gpufmm_mpi, behind gpufmm_treecode_plan_create_mpi (gpufmm_mpi.h; user
// guide docs/treecode_mpi.md).
//
// Plan create (every step collective, each ending in an error agreement):
//  1. checks: the options, counts and points of each rank; the options (and
//     whether targets are the sources) equal on every rank; the parameters
//     (theta, degree, N_L, N_B) are rank 0's;
//  2. RCB (partition.hpp) of all sources and targets together; the points go
//     to their owners (MPI_Alltoallv);
//  3. each rank's plan over its own points (treecode::plan_build): its
//     source tree, target batches, the lists against its own sources;
//  4. LET, tree arrays: each rank exposes its source tree's boxes in an MPI
//     window; every rank gets the box arrays of every other rank (passive
//     target: MPI_Win_lock_all, MPI_Get, MPI_Win_unlock_all) and runs the
//     same traversal of its targets against them (treecode::remote_lists);
//  5. LET, data: the points of the remote leaves its lists name are got from
//     the owners' point windows (one MPI_Get per rank, an hindexed datatype
//     over exactly those ranges); remote proxies are computed from the
//     boxes; treecode::append_remote adds them as source sets, finish makes
//     the lists and sets up the backend.
// Evaluate (collective): charges to their owners (MPI_Alltoallv); each
// rank's modified charges; the exchange (Plan::exchange): each rank writes
// its charges and modified charges into its charge window, and gets the
// ranges its remote sets need (one MPI_Get per rank, the datatype built at
// plan time); the rank's near field and downward pass; potentials and
// gradients back to the ranks that gave the targets, in their order.
#pragma once

#include <mpi.h>

#include <exception>
#include <memory>
#include <vector>

#include "mpi/partition.hpp"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace mpi {

struct TreecodeMpiTimes {  // seconds
  double checks = 0, rcb = 0, redistribute = 0, local = 0, let_tree = 0, let_data = 0, finish = 0, total = 0;
  double ev_route = 0, ev_exchange = 0, ev_total = 0;  // last evaluate
};

struct TreecodeMpiVolume {  // of this rank
  int64_t let_boxes = 0, let_bytes_tree = 0;            // remote box arrays got
  int64_t let_sets = 0, let_clusters = 0;  // remote sets in the lists, of them proxy clusters
  int64_t let_points = 0;                  // distinct remote points got
  int64_t let_bytes_points = 0;                        // coordinates got (plan)
  int64_t let_bytes_evaluate = 0;                      // charges got per evaluate
};

class TreecodeMpiPlan : public treecode::Distributed {
 public:
  TreecodeMpiPlan() = default;
  ~TreecodeMpiPlan() override;
  void evaluate(const treecode::EvalArgs& a) override;
  treecode::RankInfo info() const override;

  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the user's
  int rank = 0, size = 1;
  treecode::Plan* P = nullptr;    // the rank's plan over its own points (PlanObject::plan)
  bool same = true;               // targets are the sources
  int64_t nlocal_src = 0, nlocal_trg = 0;  // the user's points on this rank
  int64_t nsrc_global = 0, ntrg_global = 0;
  Route src_route, trg_route;     // user's points -> owners
  std::vector<double> own_src, own_trg;  // owned points (3 x n), received order
  // Evaluate: the owned points' charges, potentials and gradients, and the
  // routes' packing buffer (kept from one evaluate to the next).
  std::vector<double> own_q, own_pot, own_grad, route_buf;

  // The charge window (nq_local doubles) and, per rank, the ranges of it
  // this rank gets each evaluate (get_ranges, collective.hpp).
  MPI_Win q_win = MPI_WIN_NULL;
  std::vector<double> q_buf;
  struct Fetch {  // charges [begin[i], end[i]) of `rank`, concatenated at staged[dst]
    int rank = 0;
    int64_t dst = 0;
    std::vector<int64_t> begin, end;
  };
  std::vector<Fetch> fetch;
  std::vector<double> staged;   // what the fetches got
  std::vector<int64_t> gather;  // remote charge j = staged[gather[j]]
  void exchange(const double* local_q, double* remote_q);
  bool exchanged = false;  // in the current evaluate

  TreecodeMpiTimes times;
  TreecodeMpiVolume volume;
};

// Builds the plan (collective over comm; see above). sources / targets: the
// rank's points, 3 x n host doubles; targets NULL (on every rank): at the
// sources. `early`, when set, is this rank's error in its arguments before
// the call (ctx then may be null): every rank fails with it.
std::unique_ptr<treecode::PlanObject> treecode_plan_create(Context* ctx, MPI_Comm comm, const treecode::Options& o,
                                                           std::exception_ptr early, int64_t nsrc,
                                                           const double* sources, int64_t ntrg,
                                                           const double* targets);

}  // namespace mpi
}  // namespace gpufmm
