// Plan-creation time of the Laplace FMM (issue 5), phase by phase
// (LaplacePlan::plan_times): argument checks, translation tables, the cost
// model's keys and depth scan, the tree, the sorted coordinates, the plan
// statistics and the GPU set-up (of which: tables to the device, grouped
// M2L lists), and the calibration of p (issue 19 item 2; of which: the
// references' direct sums, the set-ups at each p tried, the test evaluates,
// the error estimates). Every case creates `--repeat` plans of the
// same points and prints each (the first plan of a (p, precision) builds the
// tables, later ones find them in the process-wide cache).
//
//   bench_laplace_plan [--device cpu|0] [--sizes 1e6] [--eps 1e-6,1e-3]
//                      [--precisions double,float] [--dists uniform]
//                      [--distinct] [--repeat 3] [--csv PATH]
//
// --eps 1e-6 with double and 1e-3 with float are the defaults' pairs: each
// precision runs every eps given. --distinct: targets != sources (a second
// point set of the same size).
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "common/distributions.hpp"
#include "core/context.hpp"
#include "fmm/laplace/plan.hpp"
#include "gpufmm.h"

int main(int argc, char** argv) {
  using bench::option;
  using bench::split;
  const std::string dev = option(argc, argv, "--device", "cpu");
  const int device = dev == "cpu" ? GPUFMM_DEVICE_CPU : std::atoi(dev.c_str());
  const int repeat = std::atoi(option(argc, argv, "--repeat", "3").c_str());
  const bool distinct = bench::flag(argc, argv, "--distinct");
  const std::string csv = option(argc, argv, "--csv", "");
  std::vector<double> sizes, epss;
  for (const auto& s : split(option(argc, argv, "--sizes", "1e6"))) sizes.push_back(std::atof(s.c_str()));
  for (const auto& s : split(option(argc, argv, "--eps", "1e-6,1e-3"))) epss.push_back(std::atof(s.c_str()));
  const auto precs = split(option(argc, argv, "--precisions", "double,float"));
  const auto dists = split(option(argc, argv, "--dists", "uniform"));

  gpufmm_context_t ctx = nullptr;
  CHECK(gpufmm_context_create(device, &ctx));
  FILE* out = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (out)
    std::fprintf(out,
                 "device,threads,dist,n,distinct,precision,eps,p,l_max,rep,total_ms,check_ms,tables_ms,"
                 "upload_ms,depth_keys_ms,depth_scan_ms,tree_ms,coords_ms,stats_ms,setup_ms,setup_tables_ms,setup_groups_ms,"
                 "calibrate_ms,cal_reference_ms,cal_setup_ms,cal_evaluate_ms,cal_estimate_ms\n");
  std::printf("device %s, %d OpenMP threads\n", dev.c_str(), omp_get_max_threads());
  std::printf("%-9s %8s %4s %6s %7s %2s %2s %3s | %7s | %6s %6s %6s %6s %6s %6s %6s %6s %6s (%6s %6s) %7s (%6s %6s %6s %6s)\n",
              "dist", "n", "set", "prec", "eps", "p", "L", "rep", "total", "check", "tables", "upload", "dkeys", "dscan",
              "tree", "coords", "stats", "setup", "s.tab", "s.grp", "calib", "c.ref", "c.set", "c.eval", "c.est");
  for (const auto& dname : dists) {
    gpufmm_test::Dist d;
    if (!gpufmm_test::parse_dist(dname, d)) {
      std::fprintf(stderr, "unknown distribution %s\n", dname.c_str());
      return 2;
    }
    for (double nd : sizes) {
      const int64_t n = static_cast<int64_t>(nd);
      const std::vector<double> src = gpufmm_test::make_points(d, n, 1);
      std::vector<double> trg;
      if (distinct) trg = gpufmm_test::make_points(d, n, 2);
      for (const auto& pr : precs)
        for (double eps : epss) {
          gpufmm_laplace_options_t o;
          CHECK(gpufmm_laplace_options_init(&o));
          o.eps = eps;
          o.precision = pr == "float" ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
          for (int r = 0; r < repeat; ++r) {
            gpufmm_laplace_plan_t plan = nullptr;
            const double t0 = bench::now();
            CHECK(gpufmm_laplace_plan_create(ctx, &o, n, src.data(), distinct ? n : 0,
                                             distinct ? trg.data() : nullptr, &plan));
            const double wall = bench::now() - t0;
            const auto& P = *gpufmm::checked_laplace_plan(plan)->plan;
            const auto& t = P.plan_times;
            const double ms = 1e3;
            std::printf(
                "%-9s %8lld %4s %6s %7.0e %2d %2d %3d | %7.2f | %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f "
                "(%6.2f %6.2f) %7.2f (%6.2f %6.2f %6.2f %6.2f)\n",
                dname.c_str(), static_cast<long long>(n), distinct ? "dist" : "same", pr.c_str(), eps, P.p, P.l_max, r,
                ms * wall, ms * t.check, ms * t.tables, ms * t.upload, ms * t.depth_keys, ms * t.depth_scan, ms * t.tree,
                ms * t.coords, ms * t.stats, ms * t.setup, ms * t.setup_tables, ms * t.setup_groups, ms * t.calibrate,
                ms * t.cal_reference, ms * t.cal_setup, ms * t.cal_evaluate, ms * t.cal_estimate);
            if (out)
              std::fprintf(out,
                           "%s,%d,%s,%lld,%d,%s,%g,%d,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,"
                           "%.4f,%.4f,%.4f,%.4f,%.4f\n",
                           dev.c_str(), omp_get_max_threads(), dname.c_str(), static_cast<long long>(n),
                           distinct ? 1 : 0, pr.c_str(), eps, P.p, P.l_max, r, ms * wall, ms * t.check,
                           ms * t.tables, ms * t.upload, ms * t.depth_keys, ms * t.depth_scan, ms * t.tree, ms * t.coords,
                           ms * t.stats, ms * t.setup, ms * t.setup_tables, ms * t.setup_groups, ms * t.calibrate,
                           ms * t.cal_reference, ms * t.cal_setup, ms * t.cal_evaluate, ms * t.cal_estimate);
            CHECK(gpufmm_laplace_plan_destroy(plan));
          }
        }
    }
  }
  if (out) std::fclose(out);
  CHECK(gpufmm_context_destroy(ctx));
  return 0;
}
