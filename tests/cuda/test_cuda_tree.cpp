// Octree on the CUDA backend: the GPU tree must equal the CPU tree bit for bit
// (keys, permutations, boxes, centres, leaf flags, tight bounds, every list
// with classes and ratios; uniform and adaptive trees)
// for the same input, pass the independent checks of tests/common/tree_check.hpp
// (brute-force lists, counting through the standard and modified stencils),
// and fail on bad input exactly like the CPU. Skips without a device.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <ostream>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/tree_check.hpp"
#include "core/context.hpp"
#include "gpufmm.h"
#include "tree/tree.hpp"

namespace {

using gpufmm_test::Dist;
namespace gt = gpufmm::tree;

class GpuTree : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (gpufmm_device_count(&n) != GPUFMM_SUCCESS || n == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(gpufmm_context_create(0, &gpu_), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &cpu_), GPUFMM_SUCCESS);
  }
  void TearDown() override {
    if (gpu_) EXPECT_EQ(gpufmm_context_destroy(gpu_), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    if (cpu_) EXPECT_EQ(gpufmm_context_destroy(cpu_), GPUFMM_SUCCESS);
  }
  gpufmm::Context& ctx(gpufmm_context_t c) { return *gpufmm::checked_context(c); }

  gpufmm_test::HostTree build(gpufmm_context_t c, const gpufmm_test::TreeOptions& o, const std::vector<double>& src,
                     const std::vector<double>* recv) {
    return gpufmm_test::build_host(ctx(c), o, src.data(), static_cast<int64_t>(src.size() / 3),
                                   recv ? recv->data() : nullptr,
                                   recv ? static_cast<int64_t>(recv->size() / 3) : 0);
  }

  gpufmm_context_t gpu_ = nullptr, cpu_ = nullptr;
};

struct Case {
  Dist dist;
  bool same;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << gpufmm_test::dist_name(c.dist) << (c.same ? ", sources = receivers" : ", distinct sets");
}

class GpuTreeDistributions : public GpuTree, public ::testing::WithParamInterface<Case> {};

// Small trees: GPU == CPU, and the GPU tree passes every independent check.
TEST_P(GpuTreeDistributions, SmallTreeEqualsCpuAndPassesAllChecks) {
  const Case c = GetParam();
  const std::vector<double> src = gpufmm_test::make_points(c.dist, c.same ? 20000 : 12000, 31);
  const std::vector<double> recv = gpufmm_test::make_points(c.dist, 8000, 32);
  gpufmm_test::TreeOptions o;
  o.s_max = 24;
  const gpufmm_test::HostTree g = build(gpu_, o, src, c.same ? nullptr : &recv);
  const gpufmm_test::HostTree h = build(cpu_, o, src, c.same ? nullptr : &recv);
  EXPECT_EQ(gpufmm_test::compare_trees(g, h), "");
  EXPECT_EQ(gpufmm_test::check_tree(g, src, recv), "");
}

// Large trees: GPU == CPU, plus the counting check (no O(B^2) brute force).
TEST_P(GpuTreeDistributions, LargeTreeEqualsCpuAndCountsEverySourceOnce) {
  const Case c = GetParam();
  const std::vector<double> src = gpufmm_test::make_points(c.dist, 400000, 41);
  const std::vector<double> recv = gpufmm_test::make_points(c.dist, 250000, 42);
  gpufmm_test::TreeOptions o;
  o.s_max = 64;
  const gpufmm_test::HostTree g = build(gpu_, o, src, c.same ? nullptr : &recv);
  const gpufmm_test::HostTree h = build(cpu_, o, src, c.same ? nullptr : &recv);
  EXPECT_EQ(gpufmm_test::compare_trees(g, h), "");
  EXPECT_EQ(gpufmm_test::counting_check(g, false), "");
  EXPECT_EQ(gpufmm_test::counting_check(g, true), "");
  EXPECT_EQ(gpufmm_test::check_boxes(g, g.src), "");
  EXPECT_EQ(gpufmm_test::check_points(g, g.src, src), "");
}

INSTANTIATE_TEST_SUITE_P(
    AllDistributions, GpuTreeDistributions,
    ::testing::Values(Case{Dist::Uniform, true}, Case{Dist::Uniform, false},
                      Case{Dist::Ellipsoid, true}, Case{Dist::Ellipsoid, false},
                      Case{Dist::Plummer, true}, Case{Dist::Plummer, false},
                      Case{Dist::Clusters, true}, Case{Dist::Clusters, false}),
    [](const ::testing::TestParamInfo<Case>& i) {
      return std::string(gpufmm_test::dist_name(i.param.dist)) + (i.param.same ? "_same" : "_distinct");
    });

TEST_F(GpuTree, MillionPointsGivenDepthAndGivenCube) {
  const std::vector<double> p = gpufmm_test::uniform_cube(1000000, 5);
  gpufmm_test::TreeOptions o;
  o.l_max = 5;
  o.cube_given = true;
  o.cube_center[0] = o.cube_center[1] = o.cube_center[2] = 0.5;
  o.cube_side = 1.0 + 1e-9;
  const gpufmm_test::HostTree g = build(gpu_, o, p, nullptr), h = build(cpu_, o, p, nullptr);
  EXPECT_EQ(g.l_max, 5);
  EXPECT_EQ(gpufmm_test::compare_trees(g, h), "");
  EXPECT_EQ(gpufmm_test::counting_check(g, true), "");
}

TEST_F(GpuTree, DuplicatesClusteringAndListSubsets) {
  // Many equal keys (stability), depth capped by max_level.
  gpufmm_test::Rng r(3);
  const std::vector<double> base = gpufmm_test::uniform_cube(7, 5);
  std::vector<double> p;
  for (int i = 0; i < 30000; ++i) {
    const size_t j = static_cast<size_t>(r.next() % 7);
    p.insert(p.end(), base.begin() + 3 * j, base.begin() + 3 * j + 3);
  }
  gpufmm_test::TreeOptions o;
  o.s_max = 1;
  o.max_level = 12;
  EXPECT_EQ(gpufmm_test::compare_trees(build(gpu_, o, p, nullptr), build(cpu_, o, p, nullptr)), "");
  // Extreme clustering: depth 21.
  std::vector<double> q;
  for (int i = 0; i < 5000; ++i)
    for (int k = 0; k < 3; ++k) q.push_back(0.25 + 1e-12 * r.uniform());
  q.insert(q.end(), {0, 0, 0, 1, 1, 1});
  gpufmm_test::TreeOptions o2;
  o2.s_max = 4;
  const gpufmm_test::HostTree g = build(gpu_, o2, q, nullptr);
  EXPECT_EQ(g.l_max, gt::kMaxLevel);
  EXPECT_EQ(gpufmm_test::compare_trees(g, build(cpu_, o2, q, nullptr)), "");
  EXPECT_EQ(gpufmm_test::check_tree(g, q, q), "");
  // Only some lists.
  for (unsigned mask : {0u, 1u, 2u, 4u, 8u, 6u, 9u}) {
    gpufmm_test::TreeOptions o3;
    o3.s_max = 16;
    o3.lists = mask;
    const std::vector<double> s = gpufmm_test::plummer(20000, 9), t = gpufmm_test::uniform_cube(7000, 10);
    EXPECT_EQ(gpufmm_test::compare_trees(build(gpu_, o3, s, &t), build(cpu_, o3, s, &t)), "")
        << "lists mask " << mask;
  }
}

// Adaptive trees: GPU == CPU bit for bit (keys, boxes, leaf flags, bounds,
// lists) on four distributions, fresh seeds, and the GPU tree passes the
// adaptive invariants.
TEST_F(GpuTree, AdaptiveEqualsCpu) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (Dist d : {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer, Dist::Clusters}) {
    const std::vector<double> s = gpufmm_test::make_points(d, 30000, seed), r = gpufmm_test::make_points(d, 9000, seed + 1);
    for (int same = 0; same < 2; ++same) {
      gpufmm_test::TreeOptions o;
      o.kind = gt::Kind::Adaptive;
      o.s_max = 24;
      const gpufmm_test::HostTree g = build(gpu_, o, s, same ? nullptr : &r), h = build(cpu_, o, s, same ? nullptr : &r);
      EXPECT_EQ(gpufmm_test::compare_trees(g, h), "") << gpufmm_test::dist_name(d) << " same " << same;
      EXPECT_EQ(gpufmm_test::check_adaptive_tree(g, s, r, o.s_max, o.max_level), "")
          << gpufmm_test::dist_name(d) << " same " << same;
    }
  }
}

TEST_F(GpuTree, EmptySets) {
  const std::vector<double> p = gpufmm_test::uniform_cube(3000, 3), none;
  gpufmm_test::TreeOptions o;
  o.s_max = 10;
  for (int which = 0; which < 3; ++which) {
    // (N = 0, M > 0), (N > 0, M = 0), (N = M = 0), distinct sets.
    const std::vector<double>& s = which == 1 ? p : none;
    const std::vector<double>& rr = which == 0 ? p : none;
    const double dummy = 0;
    auto mk = [&](gpufmm_context_t c) {
      return gpufmm_test::build_host(ctx(c), o, s.empty() ? nullptr : s.data(),
                                     static_cast<int64_t>(s.size() / 3), rr.empty() ? &dummy : rr.data(),
                                     static_cast<int64_t>(rr.size() / 3));
    };
    const gpufmm_test::HostTree g = mk(gpu_), h = mk(cpu_);
    EXPECT_EQ(gpufmm_test::compare_trees(g, h), "") << "case " << which;
    EXPECT_EQ(gpufmm_test::check_tree(g, s, rr), "") << "case " << which;
  }
  gpufmm_tree_t t = nullptr;
  ASSERT_EQ(gpufmm_tree_build(gpu_, nullptr, 0, nullptr, 0, nullptr, &t), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  gpufmm_tree_destroy(t);
}

TEST_F(GpuTree, BadInputFailsLikeTheCpu) {
  std::vector<double> p = gpufmm_test::uniform_cube(100000, 3), q = gpufmm_test::uniform_cube(800, 4);
  p[3 * 41717 + 1] = std::numeric_limits<double>::quiet_NaN();
  p[3 * 90300] = std::numeric_limits<double>::infinity();
  q[3 * 12 + 2] = -std::numeric_limits<double>::infinity();
  for (gpufmm_context_t c : {gpu_, cpu_}) {
    gpufmm_tree_t t = nullptr;
    EXPECT_EQ(gpufmm_tree_build(c, nullptr, 100000, p.data(), 800, q.data(), &t),
              GPUFMM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("source point 41717"), std::string::npos)
        << gpufmm_last_error_message();
    EXPECT_EQ(t, nullptr);
  }
  p[3 * 41717 + 1] = 0.5;
  p[3 * 90300] = 0.5;
  for (gpufmm_context_t c : {gpu_, cpu_}) {
    gpufmm_tree_t t = nullptr;
    EXPECT_EQ(gpufmm_tree_build(c, nullptr, 100000, p.data(), 800, q.data(), &t),
              GPUFMM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("receiver point 12"), std::string::npos)
        << gpufmm_last_error_message();
  }
  q[3 * 12 + 2] = 0.5;
  gpufmm_tree_options_t o;
  gpufmm_tree_options_init(&o);
  o.cube_given = 1;
  o.cube_center[0] = o.cube_center[1] = o.cube_center[2] = 0.5;
  o.cube_side = 1.0;
  p[3 * 777] = 1.25;
  p[3 * 999] = -0.25;
  for (gpufmm_context_t c : {gpu_, cpu_}) {
    gpufmm_tree_t t = nullptr;
    EXPECT_EQ(gpufmm_tree_build(c, &o, 100000, p.data(), 800, q.data(), &t),
              GPUFMM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("source point 777"), std::string::npos)
        << gpufmm_last_error_message();
  }
  // The context is still usable after the errors.
  p[3 * 777] = p[3 * 999] = 0.5;
  gpufmm_tree_t t = nullptr;
  ASSERT_EQ(gpufmm_tree_build(gpu_, &o, 100000, p.data(), 800, q.data(), &t), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  gpufmm_tree_destroy(t);
}

TEST_F(GpuTree, DeviceArraysAndStats) {
  const std::vector<double> src = gpufmm_test::ellipsoid_surface(300000, 1);
  const std::vector<double> recv = gpufmm_test::plummer(200000, 2);
  const int64_t ds[2] = {3, 300000}, dr[2] = {3, 200000};
  gpufmm_array_t a = nullptr, b = nullptr;
  ASSERT_EQ(gpufmm_array_create(gpu_, GPUFMM_FLOAT64, 2, ds, &a), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(gpu_, GPUFMM_FLOAT64, 2, dr, &b), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(a, src.data(), 900000), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(b, recv.data(), 600000), GPUFMM_SUCCESS);
  gpufmm_tree_t tg = nullptr, tc = nullptr;
  ASSERT_EQ(gpufmm_tree_build_arrays(gpu_, nullptr, a, b, &tg), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  ASSERT_EQ(gpufmm_tree_build(cpu_, nullptr, 300000, src.data(), 200000, recv.data(), &tc), GPUFMM_SUCCESS);
  const gpufmm_test::HostTree g = gpufmm_test::host_tree(tg);
  const gpufmm_test::HostTree h = gpufmm_test::host_tree(tc);
  EXPECT_EQ(gpufmm_test::compare_trees(g, h), "");
  gpufmm_tree_stats_t sg, sc;
  ASSERT_EQ(gpufmm_tree_stats(tg, &sg), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_tree_stats(tc, &sc), GPUFMM_SUCCESS);
  EXPECT_EQ(sg.backend, GPUFMM_BACKEND_CUDA);
  EXPECT_EQ(sg.l_max, sc.l_max);
  EXPECT_EQ(sg.total_source_boxes, sc.total_source_boxes);
  for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) {
    EXPECT_EQ(sg.lists[k].entries, sc.lists[k].entries);
    EXPECT_EQ(sg.lists[k].max, sc.lists[k].max);
  }
  EXPECT_EQ(sg.time_upload, 0.0);  // device input: nothing uploaded
  EXPECT_GT(sg.time_sort, 0.0);
  EXPECT_GT(sg.time_lists, 0.0);
  // Accessors copy from the device.
  std::vector<uint64_t> keys(300000);
  ASSERT_EQ(gpufmm_tree_get_points(tg, GPUFMM_TREE_SOURCES, 300000, keys.data(), nullptr, nullptr),
            GPUFMM_SUCCESS);
  EXPECT_EQ(keys, h.src.keys);
  EXPECT_EQ(gpufmm_tree_destroy(tg), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_tree_destroy(tc), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_array_destroy(b), GPUFMM_SUCCESS);
}

}  // namespace
