// gpufmm tree: builds an octree on a generated point set and prints boxes per
// level, points per leaf, list lengths and the build time of each phase.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "cli.hpp"
#include "gpufmm.h"

namespace {

using gpufmm_cli::parse_int;

void usage(FILE* out) {
  std::fprintf(out,
               "usage: gpufmm tree --n N [--m M] [--dist uniform|ellipsoid|plummer|clusters]\n"
               "                   [--smax S | --lmax L] [--adaptive] [--seed K] [--repeat R] [--cpu|--gpu]\n"
               "  --n       number of sources (required)\n"
               "  --m       number of receivers: a second, independent set (default: the\n"
               "            receivers are the sources)\n"
               "  --smax    points per finest box (default 64); --lmax fixes the depth instead\n"
               "  --adaptive  leaves of variable depth: a box is split while it holds more\n"
               "            than s_max points (default: every leaf at one depth)\n"
               "  --repeat  builds to time (default 3; the fastest is shown), after one warm-up\n"
               "  --cpu / --gpu  backend (default: the first GPU if any, else the CPU)\n");
}

int fail(const char* what) {
  std::fprintf(stderr, "gpufmm tree: %s: %s\n", what, gpufmm_last_error_message());
  return 1;
}

void list_cell(const gpufmm_tree_list_stats_t& s) {
  if (!s.built || s.rows == 0)
    std::printf(" %7s %4s", "-", "-");
  else
    std::printf(" %7.1f %4lld", s.mean, static_cast<long long>(s.max));
}

int run_tree(const std::vector<std::string>& args) {
  if (!gpufmm_cli::check_known(args, {"--n", "--m", "--dist", "--smax", "--lmax", "--seed", "--repeat"},
                               {"--cpu", "--gpu", "--adaptive"})) {
    usage(stderr);
    return 2;
  }
  long long n = -1, m = -1, smax = 64, lmax = -1, seed = 1, repeat = 3;
  const std::string ns = gpufmm_cli::option_value(args, "--n", "");
  if (ns.empty() || !parse_int(ns, n) || n < 0) {
    usage(stderr);
    return 2;
  }
  const std::string ms = gpufmm_cli::option_value(args, "--m", "");
  if (!ms.empty() && (!parse_int(ms, m) || m < 0)) {
    usage(stderr);
    return 2;
  }
  if (!parse_int(gpufmm_cli::option_value(args, "--smax", "64"), smax) ||
      !parse_int(gpufmm_cli::option_value(args, "--lmax", "-1"), lmax) ||
      !parse_int(gpufmm_cli::option_value(args, "--seed", "1"), seed) ||
      !parse_int(gpufmm_cli::option_value(args, "--repeat", "3"), repeat) || repeat < 1) {
    usage(stderr);
    return 2;
  }
  gpufmm_test::Dist dist;
  if (!gpufmm_test::parse_dist(gpufmm_cli::option_value(args, "--dist", "uniform"), dist)) {
    usage(stderr);
    return 2;
  }
  int device;
  if (!gpufmm_cli::parse_device(args, device)) {
    usage(stderr);
    return 2;
  }

  gpufmm_context_t ctx = nullptr;
  if (gpufmm_context_create(device, &ctx) != GPUFMM_SUCCESS) return fail("context");
  gpufmm_device_info_t info;
  gpufmm_context_device_info(ctx, &info);

  const std::vector<double> src = gpufmm_test::make_points(dist, n, static_cast<uint64_t>(seed));
  std::vector<double> recv;
  if (m >= 0) recv = gpufmm_test::make_points(dist, m, static_cast<uint64_t>(seed) + 1000);
  const double dummy = 0;
  const double* rp = m >= 0 ? (recv.empty() ? &dummy : recv.data()) : nullptr;

  gpufmm_tree_options_t opt;
  gpufmm_tree_options_init(&opt);
  opt.s_max = static_cast<int>(smax);
  opt.l_max = static_cast<int>(lmax);
  if (gpufmm_cli::has_flag(args, "--adaptive")) opt.kind = GPUFMM_TREE_ADAPTIVE;

  gpufmm_tree_stats_t best;
  bool have = false;
  for (long long r = 0; r <= repeat; ++r) {  // r = 0: warm-up
    gpufmm_tree_t tree = nullptr;
    if (gpufmm_tree_build(ctx, &opt, n, src.data(), m >= 0 ? m : n, rp, &tree) != GPUFMM_SUCCESS) {
      gpufmm_context_destroy(ctx);
      return fail("build");
    }
    gpufmm_tree_stats_t st;
    if (gpufmm_tree_stats(tree, &st) != GPUFMM_SUCCESS) {
      gpufmm_tree_destroy(tree);
      gpufmm_context_destroy(ctx);
      return fail("stats");
    }
    gpufmm_tree_destroy(tree);
    if (r > 0 && (!have || st.time_total < best.time_total)) {
      best = st;
      have = true;
    }
  }
  const gpufmm_tree_stats_t& s = best;

  std::printf("gpufmm tree: %s, %lld sources, %s receivers, %s\n", gpufmm_test::dist_name(dist), n,
              m >= 0 ? std::to_string(m).c_str() : "the same", info.name);
  std::printf("cube: centre (%.6g, %.6g, %.6g), side %.6g; %s l_max = %d%s\n", s.cube_center[0],
              s.cube_center[1], s.cube_center[2], s.cube_side, opt.kind == GPUFMM_TREE_ADAPTIVE ? "adaptive," : "uniform,",
              s.l_max, lmax >= 0 ? " (given)" : (" (from s_max = " + std::to_string(smax) + ")").c_str());
  std::printf("\n%5s %10s %10s | %12s | %12s | %12s | %12s\n", "level", "src boxes", "recv boxes",
              "neighbours", "M2L", "M2L type 1", "M2L type 2");
  std::printf("%5s %10s %10s | %7s %4s | %7s %4s | %7s %4s | %7s %4s\n", "", "", "", "mean", "max",
              "mean", "max", "mean", "max", "mean", "max");
  for (int l = 0; l <= s.l_max; ++l) {
    std::printf("%5d %10lld %10lld |", l, static_cast<long long>(s.source_boxes[l]),
                static_cast<long long>(s.receiver_boxes[l]));
    for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) {
      gpufmm_tree_list_stats_t ls = s.list_levels[k][l];
      const bool defined = (k == GPUFMM_TREE_NEIGHBORS) || ((k == GPUFMM_TREE_M2L || k == GPUFMM_TREE_M2L_TYPE1) && l >= 2) ||
                           (k == GPUFMM_TREE_M2L_TYPE2 && l >= 1 && l < s.l_max);
      if (!defined) ls.built = 0;
      list_cell(ls);
      std::printf(k + 1 < GPUFMM_TREE_NUM_LISTS ? " |" : "\n");
    }
  }
  std::printf("%5s %10lld %10lld |", "all", static_cast<long long>(s.total_source_boxes),
              static_cast<long long>(s.total_receiver_boxes));
  for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) {
    list_cell(s.lists[k]);
    std::printf(k + 1 < GPUFMM_TREE_NUM_LISTS ? " |" : "\n");
  }
  std::printf("\npoints per leaf: sources min %lld / mean %.1f / max %lld", static_cast<long long>(s.source_leaf_min),
              s.source_leaf_mean, static_cast<long long>(s.source_leaf_max));
  if (!s.same_sets)
    std::printf("; receivers min %lld / mean %.1f / max %lld", static_cast<long long>(s.receiver_leaf_min),
                s.receiver_leaf_mean, static_cast<long long>(s.receiver_leaf_max));
  std::printf("\nlist entries: neighbours %lld, M2L %lld, type 1 %lld, type 2 %lld\n",
              static_cast<long long>(s.lists[0].entries), static_cast<long long>(s.lists[1].entries),
              static_cast<long long>(s.lists[2].entries), static_cast<long long>(s.lists[3].entries));
  std::printf("\nbuild time (best of %lld, ms): upload %.3f  keys %.3f  sort %.3f  hierarchy %.3f  lists %.3f"
              "  | total %.3f\n",
              repeat, 1e3 * s.time_upload, 1e3 * s.time_keys, 1e3 * s.time_sort, 1e3 * s.time_hierarchy,
              1e3 * s.time_lists, 1e3 * s.time_total);
  gpufmm_context_destroy(ctx);
  return 0;
}

}  // namespace

GPUFMM_SUBCOMMAND(tree, "tree", "build an octree on generated points; boxes, lists, build times", run_tree,
                  usage);
