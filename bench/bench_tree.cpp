// Octree build time (issue 3 benchmark): N = 1e5, 1e6, 1e7 points, uniform
// and ellipsoid, on the CPU (all cores) and the GPU, split into keys / sort /
// hierarchy / lists. Prints a table and writes CSV.
//
//   bench_tree [--csv PATH] [--sizes 1e5,1e6,1e7] [--dists uniform,ellipsoid]
//              [--smax 64] [--repeat 5] [--cpu-only | --gpu-only]
//
// Sources = receivers. On the GPU the coordinates are already on the device
// (gpufmm_tree_build_arrays), so the times exclude the host-to-device copy;
// the GPU phases are measured with CUDA events. Each configuration runs once
// to warm up, then `repeat` times; the median total (and its phase split) is
// reported. Target (issue 3): <= 3 ms for 1M points on an H100.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "bench_args.hpp"
#include "gpufmm.h"

namespace {

using bench::flag;
using bench::now;
using bench::option;
using bench::split;

struct Row {
  std::string backend, device, dist;
  long long n = 0;
  int l_max = 0, threads = 0;
  long long leaves = 0, entries = 0;
  double keys = 0, sort = 0, hierarchy = 0, lists = 0, total = 0;  // ms
};

bool check(gpufmm_status_t st, const char* what) {
  if (st == GPUFMM_SUCCESS) return true;
  std::fprintf(stderr, "bench_tree: %s failed: %s\n", what, gpufmm_last_error_message());
  return false;
}

// Runs one configuration; returns false on error.
bool measure(gpufmm_context_t ctx, bool gpu, const std::vector<double>& pts, int smax, int repeat,
             Row& row) {
  const long long n = static_cast<long long>(pts.size() / 3);
  gpufmm_tree_options_t opt;
  gpufmm_tree_options_init(&opt);
  opt.s_max = smax;
  gpufmm_array_t arr = nullptr;
  if (gpu) {
    const int64_t dims[2] = {3, n};
    if (!check(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 2, dims, &arr), "gpufmm_array_create")) return false;
    if (!check(gpufmm_array_upload(arr, pts.data(), 3 * n), "gpufmm_array_upload")) {
      gpufmm_array_destroy(arr);
      return false;
    }
  }
  std::vector<gpufmm_tree_stats_t> runs;
  bool ok = true;
  for (int r = 0; r <= repeat && ok; ++r) {
    gpufmm_tree_t t = nullptr;
    ok = gpu ? check(gpufmm_tree_build_arrays(ctx, &opt, arr, nullptr, &t), "gpufmm_tree_build_arrays")
             : check(gpufmm_tree_build(ctx, &opt, n, pts.data(), n, nullptr, &t), "gpufmm_tree_build");
    if (!ok) break;
    gpufmm_tree_stats_t st;
    ok = check(gpufmm_tree_stats(t, &st), "gpufmm_tree_stats");
    gpufmm_tree_destroy(t);
    if (ok && r > 0) runs.push_back(st);
  }
  if (arr) gpufmm_array_destroy(arr);
  if (!ok) return false;
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.time_total < b.time_total; });
  const gpufmm_tree_stats_t& s = runs[runs.size() / 2];
  row.n = n;
  row.l_max = s.l_max;
  row.leaves = s.source_boxes[s.l_max];
  row.entries = 0;
  for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) row.entries += s.lists[k].entries;
  row.keys = 1e3 * s.time_keys;
  row.sort = 1e3 * s.time_sort;
  row.hierarchy = 1e3 * s.time_hierarchy;
  row.lists = 1e3 * s.time_lists;
  row.total = 1e3 * s.time_total;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv = "bench_tree.csv", sizes = "1e5,1e6,1e7", dists = "uniform,ellipsoid";
  int smax = 64, repeat = 5;
  bool cpu = true, gpu = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_tree: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--csv") csv = value();
    else if (a == "--sizes") sizes = value();
    else if (a == "--dists") dists = value();
    else if (a == "--smax") smax = std::atoi(value().c_str());
    else if (a == "--repeat") repeat = std::max(1, std::atoi(value().c_str()));
    else if (a == "--cpu-only") gpu = false;
    else if (a == "--gpu-only") cpu = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_tree [--csv PATH] [--sizes 1e5,1e6,1e7] [--dists uniform,ellipsoid]\n"
                   "                  [--smax 64] [--repeat 5] [--cpu-only | --gpu-only]\n");
      return 2;
    }
  }
  int ndev = 0;
  gpufmm_device_count(&ndev);
  if (ndev == 0 && gpu) {
    std::fprintf(stderr, "bench_tree: no CUDA device; GPU rows skipped\n");
    gpu = false;
  }
  std::vector<Row> rows;
  for (int b = 0; b < 2; ++b) {
    const bool on_gpu = b == 1;
    if ((on_gpu && !gpu) || (!on_gpu && !cpu)) continue;
    gpufmm_context_t ctx = nullptr;
    if (!check(gpufmm_context_create(on_gpu ? 0 : GPUFMM_DEVICE_CPU, &ctx), "gpufmm_context_create")) return 1;
    gpufmm_device_info_t info;
    gpufmm_context_device_info(ctx, &info);
    for (const std::string& d : split(dists)) {
      gpufmm_test::Dist dist;
      if (!gpufmm_test::parse_dist(d, dist)) {
        std::fprintf(stderr, "bench_tree: unknown distribution '%s'\n", d.c_str());
        return 2;
      }
      for (const std::string& ns : split(sizes)) {
        const long long n = static_cast<long long>(std::strtod(ns.c_str(), nullptr));
        const std::vector<double> pts = gpufmm_test::make_points(dist, n, 1);
        Row r;
        r.backend = on_gpu ? "gpu" : "cpu";
        r.device = info.name;
        r.dist = d;
        r.threads = on_gpu ? 0 : omp_get_max_threads();
        if (!measure(ctx, on_gpu, pts, smax, repeat, r)) return 1;
        std::printf("%-4s %-10s N=%-9lld l_max=%-2d keys %8.3f  sort %8.3f  hier %8.3f  lists %8.3f  total %8.3f ms\n",
                    r.backend.c_str(), d.c_str(), n, r.l_max, r.keys, r.sort, r.hierarchy, r.lists, r.total);
        std::fflush(stdout);
        rows.push_back(r);
      }
    }
    gpufmm_context_destroy(ctx);
  }

  std::printf("\nOctree build time, ms (median of %d; s_max = %d; sources = receivers; GPU input on the device)\n",
              repeat, smax);
  std::printf("%-4s %-10s %10s %5s %9s %11s %9s %9s %9s %9s %9s\n", "", "dist", "N", "l_max", "leaves",
              "list ents", "keys", "sort", "hierarchy", "lists", "total");
  for (const Row& r : rows)
    std::printf("%-4s %-10s %10lld %5d %9lld %11lld %9.3f %9.3f %9.3f %9.3f %9.3f\n", r.backend.c_str(),
                r.dist.c_str(), r.n, r.l_max, r.leaves, r.entries, r.keys, r.sort, r.hierarchy, r.lists,
                r.total);
  for (const Row& r : rows)
    if (r.backend == "cpu") {
      std::printf("(cpu rows: %d OpenMP threads, %s)\n", r.threads, r.device.c_str());
      break;
    }
  for (const Row& r : rows)
    if (r.backend == "gpu") {
      std::printf("(gpu rows: %s)\n", r.device.c_str());
      break;
    }

  FILE* f = std::fopen(csv.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "bench_tree: cannot write %s\n", csv.c_str());
    return 1;
  }
  std::fprintf(f, "backend,device,threads,dist,n,s_max,l_max,leaves,list_entries,keys_ms,sort_ms,hierarchy_ms,"
                  "lists_ms,total_ms\n");
  for (const Row& r : rows)
    std::fprintf(f, "%s,\"%s\",%d,%s,%lld,%d,%d,%lld,%lld,%.4f,%.4f,%.4f,%.4f,%.4f\n", r.backend.c_str(),
                 r.device.c_str(), r.threads, r.dist.c_str(), r.n, smax, r.l_max, r.leaves, r.entries, r.keys,
                 r.sort, r.hierarchy, r.lists, r.total);
  std::fclose(f);
  std::printf("wrote %s\n", csv.c_str());
  return 0;
}
