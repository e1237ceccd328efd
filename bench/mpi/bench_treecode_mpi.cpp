// The treecode across MPI ranks (issue 16): one row per run, under mpirun
// with the number of ranks to measure. Prints a table (rank 0) and appends
// CSV.
//
//   mpirun -np P bench_treecode_mpi [--n N | --n-per-rank M] [--dist uniform|plummer]
//        [--kernel coulomb|yukawa] [--kappa K] [--eps E] [--type pc|cp|cc]
//        [--theta T --degree D] [--leaf L] [--batch B]
//        [--gpu] [--repeat R] [--check K] [--csv PATH] [--label TEXT]
//   bench_treecode_mpi --dump PATH [--n N] [--dist D]
//       writes the benchmark's points and charges for a peer (BaryTree's
//       point-file driver): x, y, z, q per point, little-endian doubles,
//       no header; then exits.
//
// N points in all (strong scaling; default 4e6), or M per rank (weak
// scaling), sources = targets, Coulomb (or Yukawa exp(-kappa r)/r, kappa
// 0.5 unless --kappa), potential and gradient. The points
// are one global set (a fixed seed); rank r passes the slice [r N/P,
// (r+1) N/P) of it, which is spread over the whole domain, so the RCB and
// the redistribution do their full work. --gpu: each rank on GPU (rank mod
// GPUs), ranks sharing one when there are fewer GPUs than ranks.
//
// Columns: times are the maximum over the ranks (create phases as
// gpufmm_treecode_info_t names them; local: the rest of the create, i.e. the
// argument checks and the rank's plan over its own points before the LET;
// evaluate: the best of R, with its
// route, exchange, modified charges, near field and downward parts); LET:
// the largest and the mean over the ranks of the remote points and clusters
// a rank's lists use, and of the bytes it gets; balance: the largest owned
// count over the mean. err: relative L2 error of potential and gradient at
// K targets (taken from rank 0's points) against the direct sum in double,
// computed as each rank's partial sums over its own sources, added up
// (MPI_Allreduce); 0: no check.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "common/distributions.hpp"
#include "gpufmm_mpi.h"
#include "mpi_bench.hpp"

namespace {

int rank = 0, size = 1;

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  using bench::flag;
  using bench::max_over_ranks;
  using bench::mean_over_ranks;
  using bench::option;
  const bool weak = option(argc, argv, "--n-per-rank", "").size() > 0;
  const int64_t n = weak ? int64_t(std::stod(option(argc, argv, "--n-per-rank", "1e6"))) * size
                         : int64_t(std::stod(option(argc, argv, "--n", "4e6")));
  const std::string dist_s = option(argc, argv, "--dist", "uniform");
  gpufmm_test::Dist dist;
  if (!gpufmm_test::parse_dist(dist_s, dist) || n < size) {
    if (rank == 0) std::fprintf(stderr, "bench_treecode_mpi: bad --dist or N < ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const bool gpu = flag(argc, argv, "--gpu");
  const int repeat = std::max(1, std::stoi(option(argc, argv, "--repeat", "3")));
  const int64_t check = std::stoll(option(argc, argv, "--check", "200"));
  const std::string type_s = option(argc, argv, "--type", "pc");
  const std::string csv = option(argc, argv, "--csv", "");
  const std::string label = option(argc, argv, "--label", "");

  const std::string kernel_s = option(argc, argv, "--kernel", "coulomb");
  if (kernel_s != "coulomb" && kernel_s != "yukawa") {
    if (rank == 0) std::fprintf(stderr, "bench_treecode_mpi: --kernel must be coulomb or yukawa\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const double kappa = std::stod(option(argc, argv, "--kappa", "0.5"));
  gpufmm_treecode_options_t o;
  gpufmm_treecode_options_init(&o);
  if (kernel_s == "yukawa") CHECK(gpufmm_kernel_init(&o.kernel, GPUFMM_KERNEL_YUKAWA, 1, &kappa));
  o.eps = std::stod(option(argc, argv, "--eps", "1e-6"));
  o.type = type_s == "cp" ? GPUFMM_TREECODE_CP : type_s == "cc" ? GPUFMM_TREECODE_CC : GPUFMM_TREECODE_PC;
  o.theta = std::stod(option(argc, argv, "--theta", "0"));
  o.degree = std::stoi(option(argc, argv, "--degree", "-1"));
  o.leaf_size = std::stoi(option(argc, argv, "--leaf", "0"));
  o.batch_size = std::stoi(option(argc, argv, "--batch", std::to_string(o.leaf_size)));

  // The rank's slice of the global set, and charges in (-1, 1).
  const int64_t b = n * rank / size, e = n * (rank + 1) / size, nl = e - b;
  std::vector<double> xyz, q(static_cast<size_t>(nl));
  {
    const std::vector<double> all = gpufmm_test::make_points(dist, n, 20261125);
    xyz.assign(all.begin() + 3 * b, all.begin() + 3 * e);
  }
  auto charge = [](int64_t i) { return std::sin(1.0 + 0.7 * double(i)); };
  for (int64_t i = 0; i < nl; ++i) q[i] = charge(b + i);
  const std::string dump = option(argc, argv, "--dump", "");
  if (!dump.empty()) {
    if (rank == 0) {
      const std::vector<double> all = gpufmm_test::make_points(dist, n, 20261125);
      FILE* f = std::fopen(dump.c_str(), "wb");
      if (f == nullptr) MPI_Abort(MPI_COMM_WORLD, 1);
      for (int64_t i = 0; i < n; ++i) {
        const double rec[4] = {all[3 * i], all[3 * i + 1], all[3 * i + 2], charge(i)};
        std::fwrite(rec, sizeof rec, 1, f);
      }
      std::fclose(f);
      std::fprintf(stderr, "bench_treecode_mpi: wrote %lld points to %s\n", (long long)n, dump.c_str());
    }
    MPI_Finalize();
    return 0;
  }

  int ndev = 0;
  gpufmm_device_count(&ndev);
  gpufmm_context_t ctx = nullptr;
  CHECK(gpufmm_context_create(gpu && ndev > 0 ? rank % ndev : GPUFMM_DEVICE_CPU, &ctx));
  if (rank == 0)
    std::fprintf(stderr, "bench_treecode_mpi: %d rank(s), N = %lld %s, %s: plan...\n", size, (long long)n,
                 dist_s.c_str(), gpu && ndev > 0 ? "GPU" : "CPU");
  MPI_Barrier(MPI_COMM_WORLD);
  gpufmm_treecode_plan_t plan = nullptr;
  CHECK(gpufmm_treecode_plan_create_mpi(ctx, MPI_COMM_WORLD, &o, nl, xyz.data(), 0, nullptr, &plan));
  gpufmm_treecode_info_t plan_info;
  CHECK(gpufmm_treecode_plan_info(plan, &plan_info));
  std::vector<double> pot(static_cast<size_t>(nl)), grad(size_t(3 * nl));
  gpufmm_treecode_info_t best{};
  best.t_total = 1e300;
  for (int r = 0; r < repeat; ++r) {
    if (rank == 0) std::fprintf(stderr, "bench_treecode_mpi: evaluate %d of %d\n", r + 1, repeat);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(gpufmm_treecode_evaluate(plan, q.data(), pot.data(), grad.data()));
    gpufmm_treecode_info_t info;
    CHECK(gpufmm_treecode_plan_info(plan, &info));
    info.t_total = max_over_ranks(info.t_total);
    if (info.t_total < best.t_total) best = info;
  }

  // The check: K of rank 0's points against partial direct sums.
  double err_pot = 0, err_grad = 0;
  if (check > 0) {
    int64_t k = std::min<int64_t>(check, nl);
    MPI_Bcast(&k, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    std::vector<double> y(size_t(3 * k)), tp(static_cast<size_t>(k)), tg(size_t(3 * k));
    if (rank == 0)
      for (int64_t i = 0; i < k; ++i) {
        const int64_t t = i * (nl / k);
        for (int d = 0; d < 3; ++d) y[3 * i + d] = xyz[3 * t + d];
        tp[i] = pot[t];
        for (int d = 0; d < 3; ++d) tg[3 * i + d] = grad[3 * t + d];
      }
    MPI_Bcast(y.data(), int(3 * k), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    std::vector<double> rp(static_cast<size_t>(k), 0.0), rg(size_t(3 * k), 0.0);
    if (nl > 0)
      CHECK(gpufmm_direct(ctx, &o.kernel, GPUFMM_FLOAT64, nl, xyz.data(), q.data(), k, y.data(), rp.data(), rg.data()));
    MPI_Allreduce(MPI_IN_PLACE, rp.data(), int(k), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, rg.data(), int(3 * k), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
      double e1 = 0, n1 = 0, e3 = 0, n3 = 0;
      for (int64_t i = 0; i < k; ++i) {
        e1 += (tp[i] - rp[i]) * (tp[i] - rp[i]);
        n1 += rp[i] * rp[i];
        for (int d = 0; d < 3; ++d) {
          e3 += (tg[3 * i + d] - rg[3 * i + d]) * (tg[3 * i + d] - rg[3 * i + d]);
          n3 += rg[3 * i + d] * rg[3 * i + d];
        }
      }
      err_pot = std::sqrt(e1 / n1);
      err_grad = std::sqrt(e3 / n3);
    }
  }

  // Maxima and means over the ranks.
  const gpufmm_treecode_info_t& I = plan_info;
  const double plan_s = max_over_ranks(I.plan_seconds), rcb = max_over_ranks(I.t_rcb),
               redist = max_over_ranks(I.t_redistribute), local = max_over_ranks(I.plan_seconds - I.t_rcb - I.t_redistribute - I.t_let_tree - I.t_let_data),
               let_tree = max_over_ranks(I.t_let_tree), let_data = max_over_ranks(I.t_let_data);
  const double route = max_over_ranks(best.t_route), exch = max_over_ranks(best.t_exchange),
               up = max_over_ranks(best.t_precompute), nf = max_over_ranks(best.t_compute),
               down = max_over_ranks(best.t_downward);
  const double lp_max = max_over_ranks(double(I.let_points)), lp_mean = mean_over_ranks(double(I.let_points));
  const double lc_max = max_over_ranks(double(I.let_clusters)), lc_mean = mean_over_ranks(double(I.let_clusters));
  const double mb_plan = max_over_ranks(double(I.let_bytes_plan)) / 1e6,
               mb_eval = max_over_ranks(double(I.let_bytes_evaluate)) / 1e6;
  const double own_max = max_over_ranks(double(I.nsrc_owned)), own_mean = mean_over_ranks(double(I.nsrc_owned));
  if (rank == 0) {
    const char* be = I.backend == GPUFMM_BACKEND_CUDA ? (ndev < size ? "gpu-shared" : "gpu") : "cpu";
    std::printf("%-7s %-5s %9s %-10s %5s %3s %5s | %7s %6s %6s %6s %6s %6s | %8s %6s %6s %7s %8s %7s | %9s %9s %7s %7s %7s %7s "
                "| %6s | %8s %8s\n",
                "kernel", "ranks", "N", "backend", "theta", "n", "leaf", "plan_s", "rcb", "redist", "local", "lettree",
                "letdata", "eval_s", "route", "exch", "upward", "nearfld", "downwd", "letpt_max", "letpt_avg",
                "letcl_mx", "letcl_av", "MBplan", "MBeval", "bal", "err_pot", "err_grad");
    std::printf("%-7s %-5d %9lld %-10s %5.2f %3d %5d | %7.3f %6.3f %6.3f %6.3f %6.3f %6.3f | %8.4f %6.4f %6.4f %7.4f %8.4f "
                "%7.4f | %9.0f %9.0f %7.0f %7.0f %7.1f %7.2f | %6.3f | %8.2e %8.2e\n",
                kernel_s.c_str(), size, (long long)n, be, I.theta, I.degree, I.leaf_size, plan_s, rcb, redist, local, let_tree, let_data,
                best.t_total, route, exch, up, nf, down, lp_max, lp_mean, lc_max, lc_mean, mb_plan, mb_eval,
                own_max / own_mean, err_pot, err_grad);
    if (FILE* f = bench::csv_append(csv, "label,kernel,ranks,n,dist,backend,type,theta,degree,leaf,plan_s,rcb_s,redistribute_s,local_s,"
                                         "let_tree_s,let_data_s,eval_s,route_s,exchange_s,upward_s,nearfield_s,downward_s,"
                                         "let_points_max,let_points_mean,let_clusters_max,let_clusters_mean,let_mb_plan_max,"
                                         "let_mb_eval_max,balance,err_pot,err_grad\n")) {
      std::fprintf(f, "%s,%s,%d,%lld,%s,%s,%s,%.2f,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
                      "%.0f,%.0f,%.0f,%.0f,%.4g,%.4g,%.4f,%.3e,%.3e\n",
                   label.c_str(), kernel_s.c_str(), size, (long long)n, dist_s.c_str(), be, type_s.c_str(), I.theta, I.degree,
                   I.leaf_size, plan_s, rcb, redist, local, let_tree, let_data, best.t_total, route, exch, up, nf,
                   down, lp_max, lp_mean, lc_max, lc_mean, mb_plan, mb_eval, own_max / own_mean, err_pot, err_grad);
      std::fclose(f);
    }
  }
  CHECK(gpufmm_treecode_plan_destroy(plan));
  CHECK(gpufmm_context_destroy(ctx));
  MPI_Finalize();
  return 0;
}
