// The treecode across MPI ranks (treecode_mpi.hpp).
#include "mpi/treecode_mpi.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <type_traits>

#include "mpi/collective.hpp"
#include "plan/checks.hpp"

namespace gpufmm {
namespace mpi {

namespace {

using treecode::Boxes;
using treecode::Plan;
using treecode::RemoteSources;

// One box of a source tree as the tree window exposes it.
struct PackedBox {
  treecode::Box box;
  int32_t parent, child_begin, child_end, point_begin, point_end, leaf;
};
static_assert(std::is_trivially_copyable<PackedBox>::value, "the tree window holds raw bytes");

// Disjoint ascending ranges [begin, end) of an array, and where each lies
// in their concatenation.
struct Ranges {
  std::vector<int64_t> begin, end, at;
  int64_t total = 0;
  static Ranges of(std::vector<std::pair<int64_t, int64_t>> r) {
    std::sort(r.begin(), r.end());
    Ranges u;
    for (const auto& x : r) {
      if (x.second <= x.first) continue;
      if (!u.end.empty() && x.first <= u.end.back()) {
        u.end.back() = std::max(u.end.back(), x.second);
      } else {
        u.begin.push_back(x.first);
        u.end.push_back(x.second);
      }
    }
    for (size_t i = 0; i < u.begin.size(); ++i) {
      u.at.push_back(u.total);
      u.total += u.end[i] - u.begin[i];
    }
    return u;
  }
  // Position of element x (inside a range) in the concatenation.
  int64_t position(int64_t x) const {
    const size_t i = size_t(std::upper_bound(begin.begin(), begin.end(), x) - begin.begin()) - 1;
    return at[i] + (x - begin[i]);
  }
};

MPI_Win create_window(void* base, int64_t bytes, MPI_Comm comm) {
  MPI_Win w = MPI_WIN_NULL;
  check(MPI_Win_create(bytes > 0 ? base : nullptr, MPI_Aint(bytes), 1, MPI_INFO_NULL, comm, &w), "MPI_Win_create");
  check(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  return w;
}

// The options as numbers, with the names gpufmm_treecode_options_t gives
// them, to compare across ranks.
std::vector<std::pair<const char*, double>> option_fields(const treecode::Options& o, bool same) {
  std::vector<std::pair<const char*, double>> f = {
      {"eps", o.eps},
      {"theta", o.theta},
      {"degree", o.degree},
      {"leaf_size", o.leaf_size},
      {"batch_size", o.batch_size},
      {"type", double(int(o.type))},
      {"precision", double(int(o.precision))},
      {"grad", o.grad ? 1.0 : 0.0},
      {"kernel.type", double(int(o.kernel.type))},
      {"kernel (kappa)", o.kernel.kappa},
      {"kernel (delta)", o.kernel.delta},
      {"kernel.nparams", o.kernel.user.nparams},
      {"kernel (r0_included)", o.kernel.user.r0_included ? 1.0 : 0.0},
      {"kernel.value_expr", double(std::hash<std::string>()(o.kernel.user.value_expr) >> 11)},
      {"kernel.deriv_expr", double(std::hash<std::string>()(o.kernel.user.deriv_expr) >> 11)},
      {"targets (NULL: at the sources)", same ? 1.0 : 0.0}};
  for (int k = 0; k < kernels::kMaxUserParams; ++k) f.push_back({"kernel.params", o.kernel.user.params[k]});
  return f;
}

// Step 1 of the create, after the C thunk's early error: the checks (the
// options, counts and points of each rank), the options equal on every
// rank, the global counts; returns rank 0's parameters.
treecode::Params check_and_agree(TreecodeMpiPlan& D, Context& ctx, const treecode::Options& o, int64_t nsrc,
                                 const double* sources, int64_t ntrg, const double* targets) {
  MPI_Comm comm = D.comm;
  collective(comm, [&] {
    treecode::validate(o);
    kernels::validate_for_backend(o.kernel, ctx.on_gpu());
    plan::check_count(nsrc, "nsrc");
    plan::check_points(sources, nsrc, "sources");
    if (!D.same) {
      plan::check_count(ntrg, "ntrg");
      plan::check_points(targets, ntrg, "targets");
    }
  });
  agree_options(comm, option_fields(o, D.same));
  int64_t counts[2] = {nsrc, D.same ? 0 : ntrg};
  check(MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce (counts)");
  D.nsrc_global = counts[0];
  D.ntrg_global = D.same ? counts[0] : counts[1];
  treecode::Params par;
  if (D.rank == 0) par = treecode::choose_params(o, ctx.on_gpu(), D.nsrc_global, D.ntrg_global);
  check(MPI_Bcast(&par, int(sizeof par), MPI_BYTE, 0, comm), "MPI_Bcast (parameters)");
  return par;
}

// Step 2: RCB, and the points to their owners (D.own_src, D.own_trg).
void redistribute(TreecodeMpiPlan& D, int64_t nsrc, const double* sources, int64_t ntrg, const double* targets) {
  MPI_Comm comm = D.comm;
  double t = MPI_Wtime();
  std::vector<const double*> sets{sources};
  std::vector<int64_t> ns{nsrc};
  if (!D.same) {
    sets.push_back(targets);
    ns.push_back(ntrg);
  }
  const auto owners = rcb_owners(comm, sets, ns);
  D.times.rcb = MPI_Wtime() - t;
  t = MPI_Wtime();
  D.src_route = make_route(comm, owners[0]);
  D.own_src.resize(size_t(3 * D.src_route.nrecv));
  route_forward(comm, D.src_route, sources, D.own_src.data(), 3, D.route_buf);
  if (!D.same) {
    D.trg_route = make_route(comm, owners[1]);
    D.own_trg.resize(size_t(3 * D.trg_route.nrecv));
    route_forward(comm, D.trg_route, targets, D.own_trg.data(), 3, D.route_buf);
  }
  D.times.redistribute = MPI_Wtime() - t;
}

// The source tree of a rank as its tree window exposed it.
Boxes unpack_boxes(const std::vector<PackedBox>& got) {
  Boxes B;
  const int64_t nb = int64_t(got.size());
  B.n = nb;
  B.box.resize(size_t(nb));
  B.parent.resize(size_t(nb));
  B.child_begin.resize(size_t(nb));
  B.child_end.resize(size_t(nb));
  B.point_begin.resize(size_t(nb));
  B.point_end.resize(size_t(nb));
  B.leaf.resize(size_t(nb));
  for (int64_t b = 0; b < nb; ++b) {
    const PackedBox& x = got[size_t(b)];
    B.box[b] = x.box;
    B.parent[b] = x.parent;
    B.child_begin[b] = x.child_begin;
    B.child_end[b] = x.child_end;
    B.point_begin[b] = x.point_begin;
    B.point_end[b] = x.point_end;
    B.leaf[b] = uint8_t(x.leaf);
  }
  return B;
}

// Step 4, LET, step one: every other rank's box arrays (the tree window),
// their proxies and the remote lists; by rank.
std::vector<RemoteSources> let_tree(TreecodeMpiPlan& D, Plan& P) {
  MPI_Comm comm = D.comm;
  const int rank = D.rank, size = D.size;
  std::vector<PackedBox> tree(static_cast<size_t>(P.sbox.n));
  for (int64_t b = 0; b < P.sbox.n; ++b)
    tree[b] = {P.sbox.box[b],         P.sbox.parent[b],      P.sbox.child_begin[b], P.sbox.child_end[b],
               P.sbox.point_begin[b], P.sbox.point_end[b], P.sbox.leaf[b]};
  std::vector<int64_t> sizes(size_t(2 * size));
  const int64_t mine[2] = {P.sbox.n, P.nsrc};
  check(MPI_Allgather(mine, 2, MPI_INT64_T, sizes.data(), 2, MPI_INT64_T, comm), "MPI_Allgather (tree sizes)");
  std::vector<RemoteSources> R(static_cast<size_t>(size));
  MPI_Win tree_win = create_window(tree.data(), int64_t(tree.size() * sizeof(PackedBox)), comm);
  std::vector<std::vector<PackedBox>> got(static_cast<size_t>(size));
  collective(comm, [&] {
    check(MPI_Win_lock_all(0, tree_win), "MPI_Win_lock_all (tree window)");
    for (int q = 0; q < size; ++q) {
      const int64_t nb = sizes[2 * q];
      if (q == rank || nb == 0 || P.ntrg == 0) continue;
      got[q].resize(size_t(nb));
      get_ranges(got[q].data(), {0}, {nb}, int64_t(sizeof(PackedBox)), q, tree_win);
      D.volume.let_boxes += nb;
      D.volume.let_bytes_tree += nb * int64_t(sizeof(PackedBox));
    }
    check(MPI_Win_unlock_all(tree_win), "MPI_Win_unlock_all (tree window)");
  });
  check(MPI_Win_free(&tree_win), "MPI_Win_free (tree window)");
  collective(comm, [&] {
    for (int q = 0; q < size; ++q) {
      if (got[q].empty()) continue;
      RemoteSources& S = R[q];
      S.boxes = unpack_boxes(got[q]);
      S.nsrc = sizes[2 * q + 1];
      S.prox = treecode::proxy_clusters(S.boxes, P.options.type, true, P.np3, &S.prox_box);
      treecode::remote_lists(P, S);
      got[q] = {};
    }
  });
  return R;
}

// Step 5, LET, step two: the points of the remote point sets R's lists name
// (the point window, one get per rank), each rank's in set order.
std::vector<std::vector<double>> let_points(TreecodeMpiPlan& D, Plan& P, const std::vector<RemoteSources>& R) {
  MPI_Comm comm = D.comm;
  const int size = D.size;
  std::vector<std::vector<double>> xyz(static_cast<size_t>(size));
  MPI_Win pts_win = create_window(P.sxyz.data(), int64_t(sizeof(double)) * 3 * P.nsrc, comm);
  collective(comm, [&] {
    check(MPI_Win_lock_all(0, pts_win), "MPI_Win_lock_all (point window)");
    std::vector<std::vector<double>> staged(static_cast<size_t>(size));
    std::vector<Ranges> used(static_cast<size_t>(size));
    for (int q = 0; q < size; ++q) {
      const RemoteSources& S = R[q];
      std::vector<std::pair<int64_t, int64_t>> r;
      for (size_t k = 0; k < S.sets.size(); ++k)
        if (S.sets[k] < S.boxes.n) r.push_back({S.set_begin(P, k), S.set_end(P, k)});
      if (r.empty()) continue;
      used[q] = Ranges::of(r);
      staged[q].resize(size_t(3 * used[q].total));
      get_ranges(staged[q].data(), used[q].begin, used[q].end, 3 * int64_t(sizeof(double)), q, pts_win);
      D.volume.let_points += used[q].total;
      D.volume.let_bytes_points += int64_t(sizeof(double)) * 3 * used[q].total;
    }
    check(MPI_Win_unlock_all(pts_win), "MPI_Win_unlock_all (point window)");
    // The points of each point set, in set order: where each set's points
    // lie in what was got, then the copies over the threads.
    for (int q = 0; q < size; ++q) {
      const RemoteSources& S = R[q];
      std::vector<std::array<int64_t, 3>> copies;  // from (in staged), to, length; points
      int64_t total = 0;
      for (size_t k = 0; k < S.sets.size(); ++k) {
        if (S.sets[k] >= S.boxes.n) continue;
        const int64_t len = S.set_end(P, k) - S.set_begin(P, k);
        copies.push_back({used[q].position(S.set_begin(P, k)), total, len});
        total += len;
      }
      xyz[q].resize(size_t(3 * total));
      const int64_t nc = int64_t(copies.size());
      const double* from = staged[q].data();
      double* to = xyz[q].data();
#pragma omp parallel for schedule(dynamic, 64)
      for (int64_t c = 0; c < nc; ++c) {
        const auto& e = copies[size_t(c)];
        std::copy(from + 3 * e[0], from + 3 * (e[0] + e[2]), to + 3 * e[1]);
      }
    }
  });
  check(MPI_Win_free(&pts_win), "MPI_Win_free (point window)");
  return xyz;
}

// The remote sets (the ranks with any, R and xyz by rank) appended to the
// plan; the charge ranges each evaluate gets and where they go (D.fetch,
// D.gather); the exchange hook; the plan finished.
void append_remote_sets(TreecodeMpiPlan& D, Plan& P, std::vector<RemoteSources>& R,
                        std::vector<std::vector<double>>& xyz) {
  std::vector<RemoteSources> others;
  std::vector<std::vector<double>> others_xyz;
  std::vector<int> others_rank;
  for (int q = 0; q < D.size; ++q)
    if (!R[q].sets.empty()) {
      others.push_back(std::move(R[q]));
      others_xyz.push_back(std::move(xyz[q]));
      others_rank.push_back(q);
    }
  std::vector<Ranges> charge_ranges(others.size());
  collective(D.comm, [&] {
    treecode::append_remote(P, others, others_xyz);
    int64_t dst = 0;
    for (size_t i = 0; i < others.size(); ++i) {
      const RemoteSources& S = others[i];
      std::vector<std::pair<int64_t, int64_t>> r;
      for (size_t k = 0; k < S.sets.size(); ++k) {
        r.push_back({S.set_begin(P, k), S.set_end(P, k)});
        if (S.sets[k] >= S.boxes.n) ++D.volume.let_clusters;
      }
      D.volume.let_sets += int64_t(S.sets.size());
      charge_ranges[i] = Ranges::of(r);
      TreecodeMpiPlan::Fetch f;
      f.rank = others_rank[i];
      f.dst = dst;
      f.begin = charge_ranges[i].begin;
      f.end = charge_ranges[i].end;
      D.fetch.push_back(f);
      dst += charge_ranges[i].total;
      D.volume.let_bytes_evaluate += int64_t(sizeof(double)) * charge_ranges[i].total;
    }
    // remote_q[j] = staged[gather[j]]: the remote sets in appended order.
    D.gather.reserve(size_t(P.nq_remote));
    for (size_t i = 0; i < others.size(); ++i) {
      const RemoteSources& S = others[i];
      for (size_t k = 0; k < S.sets.size(); ++k) {
        const int64_t at = D.fetch[i].dst + charge_ranges[i].position(S.set_begin(P, k));
        for (int64_t j = 0; j < S.set_end(P, k) - S.set_begin(P, k); ++j) D.gather.push_back(at + j);
      }
    }
    D.staged.resize(size_t(dst));
    TreecodeMpiPlan* self = &D;
    P.exchange = [self](const double* local_q, double* remote_q) { self->exchange(local_q, remote_q); };
    treecode::finish(P);
  });
}

}  // namespace

std::unique_ptr<treecode::PlanObject> treecode_plan_create(Context* ctxp, MPI_Comm user_comm,
                                                           const treecode::Options& o, std::exception_ptr early,
                                                           int64_t nsrc, const double* sources, int64_t ntrg,
                                                           const double* targets) {
  check_comm(user_comm);

  const double t0 = MPI_Wtime();
  auto obj = std::make_unique<treecode::PlanObject>();
  auto owner = std::make_unique<TreecodeMpiPlan>();
  TreecodeMpiPlan& D = *owner;
  check(MPI_Comm_dup(user_comm, &D.comm), "MPI_Comm_dup");
  MPI_Comm comm = D.comm;
  check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(comm, &D.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &D.size), "MPI_Comm_size");
  obj->dist = std::move(owner);  // frees the communicator on any error below
  D.same = targets == nullptr;
  if (D.same) ntrg = nsrc;
  D.nlocal_src = nsrc;
  D.nlocal_trg = ntrg;

  // 1. Checks, the options equal on every rank, rank 0's parameters.
  double t = MPI_Wtime();
  collective(comm, [&] {
    if (early) std::rethrow_exception(early);
  });
  Context& ctx = *ctxp;
  const treecode::Params par = check_and_agree(D, ctx, o, nsrc, sources, ntrg, targets);
  D.times.checks = MPI_Wtime() - t;

  // 2. RCB, and the points to their owners.
  redistribute(D, nsrc, sources, ntrg, targets);

  // 3. The rank's plan over its own points.
  t = MPI_Wtime();
  collective(comm, [&] {
    static const double none[3] = {0, 0, 0};
    const double* own_t = D.same ? nullptr : D.own_trg.empty() ? none : D.own_trg.data();
    obj->plan = treecode::plan_build(ctx, o, D.src_route.nrecv, D.own_src.data(), D.same ? 0 : D.trg_route.nrecv,
                                     own_t, &par, /*host_points=*/true);  // the window below shares them
  });
  Plan& P = *obj->plan;
  D.P = &P;
  D.times.local = MPI_Wtime() - t;

  // 4. LET, step one: every other rank's box arrays, the remote lists.
  t = MPI_Wtime();
  std::vector<RemoteSources> R = let_tree(D, P);
  D.times.let_tree = MPI_Wtime() - t;

  // 5. LET, step two: the points of the remote point sets; then the sets.
  t = MPI_Wtime();
  std::vector<std::vector<double>> xyz = let_points(D, P, R);
  append_remote_sets(D, P, R, xyz);
  D.q_buf.resize(size_t(P.nq_local));
  D.q_win = create_window(D.q_buf.data(), int64_t(sizeof(double)) * P.nq_local, comm);
  D.times.let_data = MPI_Wtime() - t;
  D.times.total = MPI_Wtime() - t0;
  return obj;
}

TreecodeMpiPlan::~TreecodeMpiPlan() {
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  if (q_win != MPI_WIN_NULL) MPI_Win_free(&q_win);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

void TreecodeMpiPlan::exchange(const double* local_q, double* remote_q) {
  exchanged = true;
  agree(comm, GPUFMM_SUCCESS, "");  // every rank got here (evaluate)
  const double t = MPI_Wtime();
  check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, q_win), "MPI_Win_lock (charge window)");
  if (!q_buf.empty()) std::copy(local_q, local_q + q_buf.size(), q_buf.begin());
  check(MPI_Win_unlock(rank, q_win), "MPI_Win_unlock (charge window)");
  check(MPI_Barrier(comm), "MPI_Barrier (charge window)");
  check(MPI_Win_lock_all(0, q_win), "MPI_Win_lock_all (charge window)");
  for (const Fetch& f : fetch) get_ranges(staged.data() + f.dst, f.begin, f.end, int64_t(sizeof(double)), f.rank, q_win);
  check(MPI_Win_unlock_all(q_win), "MPI_Win_unlock_all (charge window)");
  const int64_t ng = int64_t(gather.size());
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < ng; ++j) remote_q[j] = staged[size_t(gather[size_t(j)])];
  // Nobody writes its window again before every rank has read.
  check(MPI_Barrier(comm), "MPI_Barrier (charge window)");
  times.ev_exchange = MPI_Wtime() - t;
}

void TreecodeMpiPlan::evaluate(const treecode::EvalArgs& a) {
  const double t0 = MPI_Wtime();
  require(!a.on_context, GPUFMM_ERROR_NOT_SUPPORTED, "an MPI plan evaluates host arrays (gpufmm_treecode_evaluate)");
  const double* charges = static_cast<const double*>(a.charges);
  int want[2] = {a.pot != nullptr, a.grad != nullptr};
  collective(comm, [&] {
    require(charges != nullptr || nlocal_src == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charges' is NULL");
    require(nlocal_trg == 0 || want[0] || want[1], GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'pot' and 'grad' are both NULL: nothing to compute");
    plan::check_values(charges, nlocal_src, 1, "charges", "charge");
  });
  // (A collective call inside a step would meet another rank's agreement.)
  check(MPI_Allreduce(MPI_IN_PLACE, want, 2, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (outputs)");
  require(want[0] || want[1], GPUFMM_ERROR_INVALID_ARGUMENT,
          "arguments 'pot' and 'grad' are NULL on every rank: nothing to compute");
  double t = MPI_Wtime();
  const Route& tr = same ? src_route : trg_route;
  // The owned points' buffers live in the plan: a reused plan touches no
  // new pages (at 1e7 points a rank they are 400 MB).
  double* q = grown(own_q, size_t(std::max<int64_t>(1, src_route.nrecv)));
  route_forward(comm, src_route, charges, q, 1, route_buf);
  double route_time = MPI_Wtime() - t;
  double* pot = want[0] ? grown(own_pot, size_t(std::max<int64_t>(1, tr.nrecv))) : nullptr;
  double* grad = want[1] ? grown(own_grad, size_t(std::max<int64_t>(1, 3 * tr.nrecv))) : nullptr;
  treecode::EvalArgs la;
  la.charges = q;
  la.pot = pot;
  la.grad = grad;
  exchanged = false;
  collective(comm, [&] {
    try {
      treecode::evaluate(*P, la);
    } catch (const AgreedError&) {
      throw;
    } catch (...) {
      // The other ranks wait in the exchange's agreement: tell them.
      const std::exception_ptr e = std::current_exception();
      if (!exchanged) collective(comm, [&] { std::rethrow_exception(e); });
      throw;
    }
  });
  // Back to the ranks that gave the targets; every rank takes part in each
  // transfer that any rank wants.
  t = MPI_Wtime();
  std::vector<double> scratch;
  if (want[0]) {
    double* out = static_cast<double*>(a.pot);
    if (out == nullptr) {
      scratch.resize(size_t(nlocal_trg));
      out = scratch.data();
    }
    route_back(comm, tr, pot, out, 1, route_buf);
  }
  if (want[1]) {
    double* out = static_cast<double*>(a.grad);
    if (out == nullptr) {
      scratch.resize(size_t(3 * nlocal_trg));
      out = scratch.data();
    }
    route_back(comm, tr, grad, out, 3, route_buf);
  }
  times.ev_route = route_time + MPI_Wtime() - t;
  times.ev_total = MPI_Wtime() - t0;
}

treecode::RankInfo TreecodeMpiPlan::info() const {
  treecode::RankInfo r;
  r.nsrc = nlocal_src;
  r.ntrg = nlocal_trg;
  r.nranks = size;
  r.rank = rank;
  r.nsrc_owned = P->nsrc;
  r.ntrg_owned = P->ntrg;
  r.nsrc_global = nsrc_global;
  r.ntrg_global = ntrg_global;
  r.let_boxes = volume.let_boxes;
  r.let_clusters = volume.let_clusters;
  r.let_points = volume.let_points;
  r.let_bytes_plan = volume.let_bytes_tree + volume.let_bytes_points;
  r.let_bytes_evaluate = volume.let_bytes_evaluate;
  r.plan_seconds = times.total;
  r.t_rcb = times.rcb;
  r.t_redistribute = times.redistribute;
  r.t_let_tree = times.let_tree;
  r.t_let_data = times.let_data;
  r.t_route = times.ev_route;
  r.t_exchange = times.ev_exchange;
  r.t_total = times.ev_total;
  return r;
}

}  // namespace mpi
}  // namespace gpufmm
