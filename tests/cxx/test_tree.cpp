// Octree tests on the CPU backend: keys, stable sort and permutations, box
// hierarchy, every list against its brute-force geometric definition, the
// counting check (standard and modified stencils) on four distributions with
// equal and distinct source/receiver sets, statistics, the C API and bad
// input. Sizes are kept small (N <= 2e4) so the file runs in seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <ostream>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/tree_check.hpp"
#include "core/context.hpp"
#include "gpufmm.h"
#include "tree/morton.hpp"
#include "tree/stencil.hpp"
#include "tree/tree.hpp"

namespace {

using gpufmm_test::Dist;
namespace gt = gpufmm::tree;

class CpuContext : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx_), GPUFMM_SUCCESS); }
  void TearDown() override { EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_SUCCESS); }
  gpufmm::Context& ctx() { return *gpufmm::checked_context(ctx_); }

  gpufmm_test::HostTree build_host(const gpufmm_test::TreeOptions& o, const std::vector<double>& src,
                          const std::vector<double>* recv) {
    return gpufmm_test::build_host(ctx(), o, src.data(), static_cast<int64_t>(src.size() / 3),
                                   recv ? recv->data() : nullptr,
                                   recv ? static_cast<int64_t>(recv->size() / 3) : 0);
  }

  gpufmm_context_t ctx_ = nullptr;
};

// ---------------------------------------------------------------- building blocks

TEST(TreeMorton, EncodeDecodeAndCommonLevels) {
  gpufmm_test::Rng r(7);
  for (int i = 0; i < 2000; ++i) {
    const uint32_t x = static_cast<uint32_t>(r.next() & 0x1fffff), y = static_cast<uint32_t>(r.next() & 0x1fffff),
                   z = static_cast<uint32_t>(r.next() & 0x1fffff);
    const uint64_t k = gt::morton_encode(x, y, z);
    EXPECT_EQ(k, gpufmm_test::naive_morton(x, y, z, 21));
    int32_t a, b, c;
    gt::morton_decode(k, a, b, c);
    EXPECT_EQ(static_cast<uint32_t>(a), x);
    EXPECT_EQ(static_cast<uint32_t>(b), y);
    EXPECT_EQ(static_cast<uint32_t>(c), z);
    const uint64_t k2 = gt::morton_encode(static_cast<uint32_t>(r.next() & 0x1fffff), y, z);
    int want = 0;
    while (want < 21 && (k >> (3 * (20 - want))) == (k2 >> (3 * (20 - want)))) ++want;
    EXPECT_EQ(gt::common_levels(k, k2), want);
  }
  EXPECT_EQ(gt::common_levels(5, 5), 21);
  EXPECT_EQ(gt::common_levels(0, uint64_t(1) << 62), 0);
}

// The computed cube holds its bounding box wherever the box is (issue 14):
// far from the origin the rounding of centre and corner exceeded the 2^-13
// margin and left 12 % of these boxes partly outside (their points were
// clamped into boundary cells, outside their own boxes). Near the origin
// the cube is the plain enlarged bounding box, as before.
TEST(TreeMorton, ComputedCubeHoldsTheBoundingBoxFarFromTheOrigin) {
  gpufmm_test::Rng r(9);
  for (int t = 0; t < 20000; ++t) {
    const double off = std::pow(10.0, 8 + 8 * r.uniform()) * (r.uniform() < 0.5 ? -1 : 1);
    const double ext = std::pow(10.0, -2 + 4 * r.uniform());
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      lo[k] = off + ext * r.uniform();
      hi[k] = lo[k] + ext * r.uniform();
    }
    const gt::Cube q = gt::cube_from_bbox(lo, hi);
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(gt::cells_inside(gt::cube_cells(q, k, lo[k])) && gt::cells_inside(gt::cube_cells(q, k, hi[k])))
          << "box " << t << " axis " << k << ": [" << lo[k] << ", " << hi[k] << "], cube corner " << q.corner[k]
          << " side " << q.side;
    }
    const double span = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    ASSERT_LE(q.side, span > 0 ? 2 * span + 1e-15 * std::fabs(off) : 1.0);  // grown by ulps, not more
  }
  const double lo[3] = {-1, 0, 2}, hi[3] = {1, 0.5, 2.25};
  const gt::Cube q = gt::cube_from_bbox(lo, hi);
  EXPECT_EQ(q.side, 2 * gt::kCubeEnlarge);
  EXPECT_EQ(q.center[0], 0.0);
  EXPECT_EQ(q.center[2], 2.125);
}

// The stencil of papers/000 sec. 2.2.3 from its geometric definition: exactly
// 80 type-2 positions among the 216 children of the parent's neighbours, 189
// standard and 109 type-1 entries per child, all within eta*.
TEST(TreeStencil, TypeTwoPositionsAndCounts) {
  const double s3 = std::sqrt(3.0), eta_star = s3 / (4 - s3), d_star = s3 / 2 + s3 / eta_star;
  int type2 = 0;
  for (int ex = -5; ex <= 5; ex += 2)
    for (int ey = -5; ey <= 5; ey += 2)
      for (int ez = -5; ez <= 5; ez += 2) {
        // Not adjacent to any child (centres at +-0.5): some |e/2| = 2.5.
        const bool outer = std::max({std::abs(ex), std::abs(ey), std::abs(ez)}) == 5;
        const double dist = 0.5 * std::sqrt(double(ex * ex + ey * ey + ez * ez));
        const bool geo = outer && dist >= d_star;
        EXPECT_EQ(gt::is_type2(ex, ey, ez), geo) << ex << " " << ey << " " << ez;
        if (!geo) continue;
        ++type2;
        bool tp = false;
        double off[3], eta = 0;
        ASSERT_TRUE(gt::decode_class(gt::parent_class(ex, ey, ez), tp, off, eta));
        EXPECT_TRUE(tp);
        EXPECT_DOUBLE_EQ(off[0], 0.5 * ex);
        EXPECT_NEAR(eta, s3 / (dist - s3 / 2), 1e-14);
        EXPECT_LE(eta, eta_star);
      }
  EXPECT_EQ(type2, 80);
  for (int child = 0; child < 8; ++child) {
    const int c[3] = {child & 1, (child >> 1) & 1, (child >> 2) & 1};  // child coords in 0..1
    int m2l = 0, t1 = 0;
    for (int x = -2; x < 4; ++x)
      for (int y = -2; y < 4; ++y)
        for (int z = -2; z < 4; ++z) {
          const int dx = x - c[0], dy = y - c[1], dz = z - c[2];
          if (gt::adjacent(dx, dy, dz)) continue;
          ++m2l;
          const double eta = gt::same_level_eta(dx, dy, dz);
          EXPECT_LE(eta, eta_star * (1 + 1e-15));
          if (!gt::is_type2(2 * x - 1, 2 * y - 1, 2 * z - 1)) ++t1;
        }
    EXPECT_EQ(m2l, 189);
    EXPECT_EQ(t1, 109);
  }
  EXPECT_NEAR(gt::same_level_eta(2, 0, 0), eta_star, 1e-15);
}

TEST(TreeStencil, ClassInfoThroughTheCApi) {
  int same = 0, parent = 0;
  for (int32_t c = -3; c < GPUFMM_TREE_NUM_CLASSES + 3; ++c) {
    int tp = -1;
    double off[3], eta;
    const gpufmm_status_t st = gpufmm_tree_m2l_class_info(c, &tp, off, &eta);
    if (st != GPUFMM_SUCCESS) {
      EXPECT_EQ(st, GPUFMM_ERROR_INVALID_ARGUMENT);
      continue;
    }
    (tp ? parent : same)++;
    EXPECT_GT(eta, 0);
    EXPECT_LT(eta, 0.77);
    if (!tp) EXPECT_EQ(gt::same_level_class(int(off[0]), int(off[1]), int(off[2])), c);
    else EXPECT_EQ(gt::parent_class(int(2 * off[0]), int(2 * off[1]), int(2 * off[2])), c);
  }
  EXPECT_EQ(same, 316);
  EXPECT_EQ(parent, 80);
  EXPECT_EQ(gpufmm_tree_m2l_class_info(0, nullptr, nullptr, nullptr), GPUFMM_SUCCESS);
}

// ---------------------------------------------------------------- whole trees

struct Case {
  Dist dist;
  bool same;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << gpufmm_test::dist_name(c.dist) << (c.same ? ", sources = receivers" : ", distinct sets");
}

class TreeDistributions : public CpuContext, public ::testing::WithParamInterface<Case> {};

TEST_P(TreeDistributions, ListsMatchBruteForceAndEverySourceSeenOnce) {
  const Case c = GetParam();
  const int64_t n = c.same ? 20000 : 12000, m = 8000;
  const std::vector<double> src = gpufmm_test::make_points(c.dist, n, 11);
  const std::vector<double> recv = gpufmm_test::make_points(c.dist, m, 12);
  gpufmm_test::TreeOptions o;
  o.s_max = 24;
  const gpufmm_test::HostTree t = build_host(o, src, c.same ? nullptr : &recv);
  EXPECT_GE(t.l_max, 2);
  EXPECT_EQ(gpufmm_test::check_tree(t, src, recv), "");
}

// Four distributions x (same, distinct sets).
const Case kAllCases[] = {{Dist::Uniform, true},   {Dist::Uniform, false},  {Dist::Ellipsoid, true},
                          {Dist::Ellipsoid, false}, {Dist::Plummer, true},  {Dist::Plummer, false},
                          {Dist::Clusters, true},  {Dist::Clusters, false}};

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(gpufmm_test::dist_name(i.param.dist)) + (i.param.same ? "_same" : "_distinct");
}

INSTANTIATE_TEST_SUITE_P(AllDistributions, TreeDistributions, ::testing::ValuesIn(kAllCases), case_name);

// Adaptive trees: the invariants of check_adaptive_tree on four
// distributions, equal and distinct sets, fresh seeds (printed on failure).
class AdaptiveTreeDistributions : public CpuContext, public ::testing::WithParamInterface<Case> {};

TEST_P(AdaptiveTreeDistributions, InvariantsBoundsAndLists) {
  const Case c = GetParam();
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> src = gpufmm_test::make_points(c.dist, c.same ? 12000 : 8000, seed);
  const std::vector<double> recv = gpufmm_test::make_points(c.dist, 5000, seed + 1);
  for (int s_max : {1, 16, 40}) {
    gpufmm_test::TreeOptions o;
    o.kind = gt::Kind::Adaptive;
    o.s_max = s_max;
    o.max_level = s_max == 1 ? 9 : gt::kMaxLevel;
    const gpufmm_test::HostTree t = build_host(o, src, c.same ? nullptr : &recv);
    EXPECT_GE(t.l_max, 2);
    EXPECT_EQ(gpufmm_test::check_adaptive_tree(t, src, recv, o.s_max, o.max_level), "") << "s_max " << s_max;
  }
}

INSTANTIATE_TEST_SUITE_P(AllDistributions, AdaptiveTreeDistributions, ::testing::ValuesIn(kAllCases),
                         case_name);

// Adaptive trees: identical points stop at max_level; small sets are one
// leaf; the C option selects the kind (default uniform) and l_max must be -1.
TEST_F(CpuContext, AdaptiveEdgeCasesAndCOption) {
  std::vector<double> p;
  for (int i = 0; i < 300; ++i) p.insert(p.end(), {0.3, -2.0, 7.0});
  const std::vector<double> q = gpufmm_test::uniform_cube(200, 5);
  p.insert(p.end(), q.begin(), q.end());
  gpufmm_test::TreeOptions o;
  o.kind = gt::Kind::Adaptive;
  o.s_max = 8;
  o.max_level = 12;
  const gpufmm_test::HostTree t = build_host(o, p, nullptr);
  EXPECT_EQ(t.l_max, 12);
  EXPECT_EQ(gpufmm_test::check_adaptive_tree(t, p, p, 8, 12), "");
  o.s_max = 1000;
  const gpufmm_test::HostTree one = build_host(o, p, nullptr);
  EXPECT_EQ(one.l_max, 0);
  EXPECT_EQ(one.src.nboxes(), 1);
  EXPECT_EQ(gpufmm_test::check_adaptive_tree(one, p, p, 1000, 12), "");

  gpufmm_tree_options_t c;
  ASSERT_EQ(gpufmm_tree_options_init(&c), GPUFMM_SUCCESS);
  EXPECT_EQ(c.kind, GPUFMM_TREE_UNIFORM);
  c.kind = GPUFMM_TREE_ADAPTIVE;
  c.s_max = 8;
  c.max_level = 12;
  const int64_t n = static_cast<int64_t>(p.size() / 3);
  gpufmm_tree_t h = nullptr;
  ASSERT_EQ(gpufmm_tree_build(ctx_, &c, n, p.data(), n, nullptr, &h), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  EXPECT_EQ(gpufmm_test::compare_trees(gpufmm_test::host_tree(h), t), "");
  gpufmm_tree_stats_t st;
  ASSERT_EQ(gpufmm_tree_stats(h, &st), GPUFMM_SUCCESS);
  EXPECT_EQ(st.source_leaf_max, 300);  // the identical points
  EXPECT_EQ(gpufmm_tree_destroy(h), GPUFMM_SUCCESS);
  c.l_max = 3;
  EXPECT_EQ(gpufmm_tree_build(ctx_, &c, n, p.data(), n, nullptr, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("l_max"), std::string::npos);
  c.l_max = -1;
  c.kind = 7;
  EXPECT_EQ(gpufmm_tree_build(ctx_, &c, n, p.data(), n, nullptr, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("kind"), std::string::npos);
}

// A full 16^3 grid at level 4: interior boxes have exactly 27 neighbours,
// 189 standard and 109 type-1 entries; interior level-3 boxes 80 type-2.
TEST_F(CpuContext, FullGridHasTheFullStencil) {
  std::vector<double> p;
  for (int z = 0; z < 16; ++z)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) {
        p.push_back((x + 0.5) / 16);
        p.push_back((y + 0.5) / 16);
        p.push_back((z + 0.5) / 16);
      }
  gpufmm_test::TreeOptions o;
  o.l_max = 4;
  o.cube_given = true;
  o.cube_center[0] = o.cube_center[1] = o.cube_center[2] = 0.5;
  o.cube_side = 1.0;
  const gpufmm_test::HostTree t = build_host(o, p, nullptr);
  ASSERT_EQ(t.l_max, 4);
  EXPECT_EQ(t.src.level_offset, (std::vector<int64_t>{0, 1, 9, 73, 585, 4681}));
  int64_t interior4 = 0, interior3 = 0;
  for (int64_t b = 0; b < t.src.nboxes(); ++b) {
    const int l = gpufmm_test::level_of(t.src.level_offset, b);
    int32_t x, y, z;
    gt::morton_decode(t.src.box_key[b], x, y, z);
    const int n = 1 << l;
    auto len = [&](int k) { return t.lists[k].offsets[b + 1] - t.lists[k].offsets[b]; };
    // Interior: the parent's neighbours all exist.
    const bool inner = l >= 2 && (x >> 1) >= 1 && (y >> 1) >= 1 && (z >> 1) >= 1 &&
                       (x >> 1) <= n / 2 - 2 && (y >> 1) <= n / 2 - 2 && (z >> 1) <= n / 2 - 2;
    if (l == 4 && inner) {
      ++interior4;
      EXPECT_EQ(len(0), 27);
      EXPECT_EQ(len(1), 189);
      EXPECT_EQ(len(2), 109);
    }
    if (l == 3 && x >= 1 && y >= 1 && z >= 1 && x <= n - 2 && y <= n - 2 && z <= n - 2) {
      ++interior3;
      EXPECT_EQ(len(3), 80);
    }
  }
  EXPECT_EQ(interior4, 12 * 12 * 12);  // parents 1..6 of 8 per axis, 2 children each
  EXPECT_EQ(interior3, 6 * 6 * 6);
  EXPECT_EQ(gpufmm_test::check_tree(t, p, p), "");
}

TEST_F(CpuContext, StableSortKeepsInputOrderOfEqualKeys) {
  // 3000 points drawn from 7 distinct locations: many equal keys.
  gpufmm_test::Rng r(3);
  const std::vector<double> base = gpufmm_test::uniform_cube(7, 5);
  std::vector<double> p;
  for (int i = 0; i < 3000; ++i) {
    const size_t j = static_cast<size_t>(r.next() % 7);
    p.insert(p.end(), base.begin() + 3 * j, base.begin() + 3 * j + 3);
  }
  gpufmm_test::TreeOptions o;
  o.s_max = 1;  // unreachable: the depth is capped
  o.max_level = 9;
  const gpufmm_test::HostTree t = build_host(o, p, nullptr);
  EXPECT_EQ(t.l_max, 9);
  EXPECT_EQ(t.src.level_offset[10] - t.src.level_offset[9], 7);
  EXPECT_EQ(gpufmm_test::check_tree(t, p, p), "");
}

TEST_F(CpuContext, DepthFromSmaxAndGivenLmax) {
  const std::vector<double> p = gpufmm_test::uniform_cube(5000, 21);
  for (int s : {1, 8, 64, 5000, 100000}) {
    gpufmm_test::TreeOptions o;
    o.s_max = s;
    const gpufmm_test::HostTree t = build_host(o, p, nullptr);
    // Smallest depth with at most s points per leaf (and never deeper than needed).
    auto max_per_box = [&](int l) {
      int64_t mx = 0;
      for (int64_t b = t.src.level_offset[l]; b < t.src.level_offset[l + 1]; ++b)
        mx = std::max<int64_t>(mx, t.src.point_end[b] - t.src.point_begin[b]);
      return mx;
    };
    EXPECT_LE(max_per_box(t.l_max), s);
    if (t.l_max > 0) EXPECT_GT(max_per_box(t.l_max - 1), s);
    if (s >= 5000) EXPECT_EQ(t.l_max, 0);
  }
  gpufmm_test::TreeOptions o;
  o.l_max = 3;
  const gpufmm_test::HostTree t = build_host(o, p, nullptr);
  EXPECT_EQ(t.l_max, 3);
  EXPECT_EQ(gpufmm_test::check_tree(t, p, p), "");
  o.l_max = 0;
  EXPECT_EQ(gpufmm_test::check_tree(build_host(o, p, nullptr), p, p), "");
}

TEST_F(CpuContext, DeterministicAndSubsetOfLists) {
  const std::vector<double> p = gpufmm_test::plummer(4000, 8), q = gpufmm_test::uniform_cube(3000, 9);
  gpufmm_test::TreeOptions o;
  o.s_max = 16;
  const gpufmm_test::HostTree a = build_host(o, p, &q), b = build_host(o, p, &q);
  EXPECT_EQ(gpufmm_test::compare_trees(a, b), "");
  o.lists = 1u << gpufmm::lists::kType2;
  const gpufmm_test::HostTree c = build_host(o, p, &q);
  EXPECT_FALSE(c.lists[gpufmm::lists::kNeighbors].built);
  EXPECT_FALSE(c.lists[gpufmm::lists::kM2L].built);
  ASSERT_TRUE(c.lists[gpufmm::lists::kType2].built);
  EXPECT_EQ(c.lists[gpufmm::lists::kType2].index, a.lists[gpufmm::lists::kType2].index);
  EXPECT_EQ(c.lists[gpufmm::lists::kType2].offsets, a.lists[gpufmm::lists::kType2].offsets);
}

TEST_F(CpuContext, ExtremeClusteringIsCappedAndValid) {
  // 2000 points within 1e-12 of each other plus two far away: depth 21.
  std::vector<double> p;
  gpufmm_test::Rng r(4);
  for (int i = 0; i < 2000; ++i)
    for (int k = 0; k < 3; ++k) p.push_back(0.25 + 1e-12 * r.uniform());
  p.insert(p.end(), {0, 0, 0, 1, 1, 1});
  gpufmm_test::TreeOptions o;
  o.s_max = 4;
  const gpufmm_test::HostTree t = build_host(o, p, nullptr);
  EXPECT_EQ(t.l_max, gt::kMaxLevel);
  EXPECT_EQ(gpufmm_test::check_tree(t, p, p), "");
}

// The checkers themselves must catch a corrupted tree ("validation that
// cannot be fooled"): a swapped M2L entry, a dropped type-2 entry, a broken
// sort stability and a wrong eta are each reported.
TEST_F(CpuContext, ChecksDetectCorruptedTrees) {
  std::vector<double> p = gpufmm_test::uniform_cube(4000, 6);
  p.insert(p.end(), p.begin(), p.begin() + 300);  // 100 duplicated points: equal keys
  gpufmm_test::TreeOptions o;
  o.s_max = 16;
  const gpufmm_test::HostTree t = build_host(o, p, nullptr);
  ASSERT_EQ(gpufmm_test::check_tree(t, p, p), "");
  auto drop = [](gpufmm_test::HostList& l, size_t i) {
    l.index.erase(l.index.begin() + static_cast<long>(i));
    if (!l.cls.empty()) l.cls.erase(l.cls.begin() + static_cast<long>(i));
    if (!l.eta.empty()) l.eta.erase(l.eta.begin() + static_cast<long>(i));
    for (auto& o : l.offsets)
      if (o > static_cast<int64_t>(i)) --o;
  };
  {  // An M2L entry replaced by another box of the same level.
    gpufmm_test::HostTree bad = t;
    auto& l = bad.lists[gpufmm::lists::kM2L];
    const size_t i = l.index.size() / 2;
    l.index[i] = l.index[i] + 1 < bad.src.level_offset[bad.l_max + 1] ? l.index[i] + 1 : l.index[i] - 1;
    EXPECT_NE(gpufmm_test::counting_check(bad, false), "");
    EXPECT_NE(gpufmm_test::check_lists(bad), "");
    EXPECT_EQ(gpufmm_test::counting_check(bad, true), "");  // the modified stencil is untouched
  }
  {  // A type-2 entry dropped.
    gpufmm_test::HostTree bad = t;
    ASSERT_FALSE(bad.lists[gpufmm::lists::kType2].index.empty());
    drop(bad.lists[gpufmm::lists::kType2], bad.lists[gpufmm::lists::kType2].index.size() / 3);
    EXPECT_NE(gpufmm_test::counting_check(bad, true), "");
    EXPECT_NE(gpufmm_test::check_lists(bad), "");
  }
  {  // Two points with equal keys swapped: the sort is no longer stable.
    gpufmm_test::HostTree bad = t;
    size_t i = 1;
    while (i < bad.src.keys.size() && bad.src.keys[i] != bad.src.keys[i - 1]) ++i;
    ASSERT_LT(i, bad.src.keys.size());
    std::swap(bad.src.perm[i], bad.src.perm[i - 1]);
    std::swap(bad.src.iperm[bad.src.perm[i]], bad.src.iperm[bad.src.perm[i - 1]]);
    EXPECT_NE(gpufmm_test::check_points(bad, bad.src, p), "");
  }
  {  // A wrong ratio.
    gpufmm_test::HostTree bad = t;
    bad.lists[gpufmm::lists::kType1].eta[7] *= 1.01;
    EXPECT_NE(gpufmm_test::check_lists(bad), "");
  }
}

// ---------------------------------------------------------------- C API

class TreeCApi : public CpuContext {};

TEST_F(TreeCApi, BuildStatsAndAccessors) {
  const std::vector<double> src = gpufmm_test::ellipsoid_surface(6000, 1);
  const std::vector<double> recv = gpufmm_test::uniform_cube(2500, 2);
  gpufmm_tree_options_t opt;
  ASSERT_EQ(gpufmm_tree_options_init(&opt), GPUFMM_SUCCESS);
  EXPECT_EQ(opt.l_max, -1);
  EXPECT_EQ(opt.s_max, 64);
  EXPECT_EQ(opt.lists, GPUFMM_TREE_LISTS_ALL);
  opt.s_max = 20;
  gpufmm_tree_t tree = nullptr;
  ASSERT_EQ(gpufmm_tree_build(ctx_, &opt, 6000, src.data(), 2500, recv.data(), &tree), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_ERROR_INVALID_ARGUMENT)  // the tree holds it
      << "a context with a live tree must refuse destruction";

  gpufmm_test::TreeOptions o;
  o.s_max = 20;
  const gpufmm_test::HostTree h = build_host(o, src, &recv);

  gpufmm_tree_stats_t st;
  ASSERT_EQ(gpufmm_tree_stats(tree, &st), GPUFMM_SUCCESS);
  EXPECT_EQ(st.l_max, h.l_max);
  EXPECT_EQ(st.same_sets, 0);
  EXPECT_EQ(st.backend, GPUFMM_BACKEND_CPU);
  EXPECT_EQ(st.num_sources, 6000);
  EXPECT_EQ(st.num_receivers, 2500);
  EXPECT_EQ(st.cube_side, h.cube.side);
  int64_t total = 0, leaf_min = 1 << 30, leaf_max = 0;
  for (int l = 0; l <= h.l_max; ++l) {
    EXPECT_EQ(st.source_boxes[l], h.src.level_offset[l + 1] - h.src.level_offset[l]);
    EXPECT_EQ(st.receiver_boxes[l], h.recv.level_offset[l + 1] - h.recv.level_offset[l]);
    total += st.source_boxes[l];
  }
  for (int l = h.l_max + 1; l <= GPUFMM_TREE_MAX_LEVEL; ++l) EXPECT_EQ(st.source_boxes[l], 0);
  EXPECT_EQ(st.total_source_boxes, total);
  for (int64_t b = h.src.level_offset[h.l_max]; b < h.src.nboxes(); ++b) {
    leaf_min = std::min<int64_t>(leaf_min, h.src.point_end[b] - h.src.point_begin[b]);
    leaf_max = std::max<int64_t>(leaf_max, h.src.point_end[b] - h.src.point_begin[b]);
  }
  EXPECT_EQ(st.source_leaf_min, leaf_min);
  EXPECT_EQ(st.source_leaf_max, leaf_max);
  EXPECT_LE(st.source_leaf_max, 20);
  EXPECT_NEAR(st.source_leaf_mean,
              6000.0 / double(h.src.level_offset[h.l_max + 1] - h.src.level_offset[h.l_max]), 1e-9);
  for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) {
    EXPECT_EQ(st.lists[k].built, 1);
    int64_t mx = 0, sum = 0;
    for (int l = 0; l <= h.l_max; ++l) sum += st.list_levels[k][l].entries;
    EXPECT_EQ(sum, static_cast<int64_t>(h.lists[k].index.size()));
    for (size_t r = 0; r + 1 < h.lists[k].offsets.size(); ++r)
      mx = std::max<int64_t>(mx, h.lists[k].offsets[r + 1] - h.lists[k].offsets[r]);
    EXPECT_EQ(st.lists[k].max, mx);
  }
  EXPECT_LE(st.lists[GPUFMM_TREE_NEIGHBORS].max, 27);
  EXPECT_LE(st.lists[GPUFMM_TREE_M2L].max, 189);
  EXPECT_LE(st.lists[GPUFMM_TREE_M2L_TYPE1].max, 109);
  EXPECT_LE(st.lists[GPUFMM_TREE_M2L_TYPE2].max, 80);
  EXPECT_GE(st.time_total, st.time_keys);
  EXPECT_EQ(st.time_upload, 0.0);

  // Accessors reproduce the C++ view.
  std::vector<int64_t> lo(static_cast<size_t>(h.l_max) + 2);
  EXPECT_EQ(gpufmm_tree_level_offsets(tree, GPUFMM_TREE_RECEIVERS, h.l_max + 1, lo.data()),
            GPUFMM_ERROR_SIZE_MISMATCH);
  ASSERT_EQ(gpufmm_tree_level_offsets(tree, GPUFMM_TREE_RECEIVERS, h.l_max + 2, lo.data()), GPUFMM_SUCCESS);
  EXPECT_EQ(lo, h.recv.level_offset);
  std::vector<uint64_t> keys(6000);
  std::vector<int32_t> perm(6000), iperm(6000);
  EXPECT_EQ(gpufmm_tree_get_points(tree, GPUFMM_TREE_SOURCES, 5999, keys.data(), nullptr, nullptr),
            GPUFMM_ERROR_SIZE_MISMATCH);
  ASSERT_EQ(gpufmm_tree_get_points(tree, GPUFMM_TREE_SOURCES, 6000, keys.data(), perm.data(), iperm.data()),
            GPUFMM_SUCCESS);
  EXPECT_EQ(keys, h.src.keys);
  EXPECT_EQ(perm, h.src.perm);
  EXPECT_EQ(iperm, h.src.iperm);
  const int64_t nb = h.recv.nboxes();
  std::vector<uint64_t> bk(nb);
  std::vector<int32_t> par(nb), ch(nb + 1), pb(nb), pe(nb);
  std::vector<double> cen(3 * nb);
  ASSERT_EQ(gpufmm_tree_get_boxes(tree, GPUFMM_TREE_RECEIVERS, nb, bk.data(), par.data(), ch.data(),
                                  pb.data(), pe.data(), cen.data()),
            GPUFMM_SUCCESS);
  EXPECT_EQ(bk, h.recv.box_key);
  EXPECT_EQ(par, h.recv.parent);
  EXPECT_EQ(ch, h.recv.child_offset);
  EXPECT_EQ(pb, h.recv.point_begin);
  EXPECT_EQ(pe, h.recv.point_end);
  EXPECT_EQ(cen, h.recv.center);
  for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) {
    int64_t rows = -1, entries = -1;
    ASSERT_EQ(gpufmm_tree_list_size(tree, gpufmm_tree_list_t(k), &rows, &entries), GPUFMM_SUCCESS);
    EXPECT_EQ(rows, nb);
    std::vector<int64_t> off(rows + 1);
    std::vector<int32_t> idx(entries), cls(entries);
    std::vector<double> eta(entries);
    const bool m2l = k != GPUFMM_TREE_NEIGHBORS;
    ASSERT_EQ(gpufmm_tree_get_list(tree, gpufmm_tree_list_t(k), rows, entries, off.data(), idx.data(),
                                   m2l ? cls.data() : nullptr, m2l ? eta.data() : nullptr),
              GPUFMM_SUCCESS);
    EXPECT_EQ(off, h.lists[k].offsets);
    EXPECT_EQ(idx, h.lists[k].index);
    if (m2l) {
      EXPECT_EQ(cls, h.lists[k].cls);
      EXPECT_EQ(eta, h.lists[k].eta);
    } else {
      EXPECT_EQ(gpufmm_tree_get_list(tree, gpufmm_tree_list_t(k), rows, entries, nullptr, nullptr,
                                     cls.data(), nullptr),
                GPUFMM_ERROR_INVALID_ARGUMENT);
    }
    EXPECT_EQ(gpufmm_tree_get_list(tree, gpufmm_tree_list_t(k), rows + 1, entries, nullptr, nullptr,
                                   nullptr, nullptr),
              GPUFMM_ERROR_SIZE_MISMATCH);
  }
  EXPECT_EQ(gpufmm_tree_list_size(tree, gpufmm_tree_list_t(4), nullptr, nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_tree_get_points(tree, gpufmm_tree_set_t(2), 0, nullptr, nullptr, nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_tree_destroy(tree), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_tree_destroy(tree), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_tree_stats(tree, &st), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_tree_destroy(nullptr), GPUFMM_SUCCESS);
}

TEST_F(TreeCApi, BuildFromArraysEqualsBuildFromHostPointers) {
  const std::vector<double> src = gpufmm_test::two_clusters(3000, 4);
  const int64_t dims[2] = {3, 3000};
  gpufmm_array_t a = nullptr;
  ASSERT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 2, dims, &a), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(a, src.data(), 9000), GPUFMM_SUCCESS);
  gpufmm_tree_t t1 = nullptr, t2 = nullptr;
  ASSERT_EQ(gpufmm_tree_build_arrays(ctx_, nullptr, a, nullptr, &t1), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  ASSERT_EQ(gpufmm_tree_build(ctx_, nullptr, 3000, src.data(), 3000, nullptr, &t2), GPUFMM_SUCCESS);
  const gpufmm_test::HostTree h1 = gpufmm_test::host_tree(t1);
  const gpufmm_test::HostTree h2 = gpufmm_test::host_tree(t2);
  EXPECT_TRUE(h1.same_sets);
  EXPECT_EQ(gpufmm_test::compare_trees(h1, h2), "");
  // Wrong shapes and types.
  const int64_t bad_dims[2] = {2, 10};
  gpufmm_array_t b = nullptr, c = nullptr;
  ASSERT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 2, bad_dims, &b), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT32, 2, dims, &c), GPUFMM_SUCCESS);
  gpufmm_tree_t t3 = nullptr;
  EXPECT_EQ(gpufmm_tree_build_arrays(ctx_, nullptr, b, nullptr, &t3), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_EQ(gpufmm_tree_build_arrays(ctx_, nullptr, c, nullptr, &t3), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_tree_build_arrays(ctx_, nullptr, a, c, &t3), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_tree_build_arrays(ctx_, nullptr, nullptr, nullptr, &t3), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(t3, nullptr);
  EXPECT_EQ(gpufmm_tree_destroy(t1), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_tree_destroy(t2), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_array_destroy(b), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_array_destroy(c), GPUFMM_SUCCESS);
}

// ---------------------------------------------------------------- bad input

class TreeBadInput : public CpuContext {
 protected:
  gpufmm_status_t build(const gpufmm_tree_options_t* o, int64_t n, const double* s, int64_t m,
                        const double* r) {
    gpufmm_tree_t t = nullptr;
    const gpufmm_status_t st = gpufmm_tree_build(ctx_, o, n, s, m, r, &t);
    if (st == GPUFMM_SUCCESS) {
      EXPECT_NE(t, nullptr);
      gpufmm_tree_destroy(t);
    } else {
      EXPECT_EQ(t, nullptr) << "the output must stay untouched on failure";
    }
    return st;
  }
  std::string msg() const { return gpufmm_last_error_message(); }
};

TEST_F(TreeBadInput, EmptySetsGiveValidEmptyTrees) {
  const std::vector<double> p = gpufmm_test::uniform_cube(500, 3);
  gpufmm_tree_options_t o;
  gpufmm_tree_options_init(&o);
  o.s_max = 10;
  const double dummy = 0;
  // N = 0 (no sources, 500 receivers), M = 0, and both 0.
  for (int which = 0; which < 3; ++which) {
    const int64_t n = which == 0 ? 0 : 500, m = which == 1 ? 0 : (which == 0 ? 500 : 0);
    const double* s = n ? p.data() : nullptr;
    const double* r = m ? p.data() : &dummy;
    gpufmm_tree_t t = nullptr;
    ASSERT_EQ(gpufmm_tree_build(ctx_, &o, n, s, m, r, &t), GPUFMM_SUCCESS) << msg();
    gpufmm_tree_stats_t st;
    ASSERT_EQ(gpufmm_tree_stats(t, &st), GPUFMM_SUCCESS);
    EXPECT_EQ(st.num_sources, n);
    EXPECT_EQ(st.num_receivers, m);
    EXPECT_EQ(st.total_source_boxes == 0, n == 0);
    EXPECT_EQ(st.total_receiver_boxes == 0, m == 0);
    for (int k = 0; k < GPUFMM_TREE_NUM_LISTS; ++k) EXPECT_EQ(st.lists[k].entries, 0);
    const gpufmm_test::HostTree h = gpufmm_test::host_tree(t);
    const std::vector<double> none;
    EXPECT_EQ(gpufmm_test::check_tree(h, n ? p : none, m ? p : none), "");
    gpufmm_tree_destroy(t);
  }
  // Same sets, N = 0: unit cube at the origin.
  gpufmm_tree_t t = nullptr;
  ASSERT_EQ(gpufmm_tree_build(ctx_, nullptr, 0, nullptr, 0, nullptr, &t), GPUFMM_SUCCESS) << msg();
  gpufmm_tree_stats_t st;
  ASSERT_EQ(gpufmm_tree_stats(t, &st), GPUFMM_SUCCESS);
  EXPECT_EQ(st.l_max, 0);
  EXPECT_EQ(st.cube_side, 1.0);
  EXPECT_EQ(st.cube_center[0], 0.0);
  gpufmm_tree_destroy(t);
}

TEST_F(TreeBadInput, NonFiniteCoordinatesNameTheFirstIndex) {
  std::vector<double> p = gpufmm_test::uniform_cube(1000, 3), q = gpufmm_test::uniform_cube(800, 4);
  p[3 * 417 + 1] = std::numeric_limits<double>::quiet_NaN();
  p[3 * 903] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(build(nullptr, 1000, p.data(), 1000, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("source point 417"), std::string::npos) << msg();
  p[3 * 417 + 1] = 0.5;
  EXPECT_EQ(build(nullptr, 1000, p.data(), 800, q.data()), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("source point 903"), std::string::npos) << msg();
  p[3 * 903] = 0.5;
  q[3 * 12 + 2] = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(build(nullptr, 1000, p.data(), 800, q.data()), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("receiver point 12"), std::string::npos) << msg();
}

TEST_F(TreeBadInput, IdenticalPointsStopAtTheDepthCap) {
  std::vector<double> p;
  for (int i = 0; i < 5000; ++i) p.insert(p.end(), {0.3, -2.0, 7.0});
  gpufmm_tree_options_t o;
  gpufmm_tree_options_init(&o);
  o.s_max = 1;
  gpufmm_tree_t t = nullptr;
  ASSERT_EQ(gpufmm_tree_build(ctx_, &o, 5000, p.data(), 5000, nullptr, &t), GPUFMM_SUCCESS) << msg();
  gpufmm_tree_stats_t st;
  ASSERT_EQ(gpufmm_tree_stats(t, &st), GPUFMM_SUCCESS);
  EXPECT_EQ(st.l_max, GPUFMM_TREE_MAX_LEVEL);
  EXPECT_EQ(st.source_leaf_max, 5000);
  EXPECT_EQ(st.cube_side, 1.0);
  for (int l = 0; l <= st.l_max; ++l) EXPECT_EQ(st.source_boxes[l], 1);
  const gpufmm_test::HostTree h = gpufmm_test::host_tree(t);
  EXPECT_EQ(gpufmm_test::check_tree(h, p, p), "");
  gpufmm_tree_destroy(t);
  o.max_level = 6;
  ASSERT_EQ(gpufmm_tree_build(ctx_, &o, 5000, p.data(), 5000, nullptr, &t), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_tree_stats(t, &st), GPUFMM_SUCCESS);
  EXPECT_EQ(st.l_max, 6);
  gpufmm_tree_destroy(t);
}

TEST_F(TreeBadInput, OptionsOutOfRange) {
  const std::vector<double> p = gpufmm_test::uniform_cube(100, 3);
  gpufmm_tree_options_t o;
  gpufmm_tree_options_init(&o);
  o.s_max = 0;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("s_max"), std::string::npos) << msg();
  o.s_max = -5;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  gpufmm_tree_options_init(&o);
  o.l_max = GPUFMM_TREE_MAX_LEVEL + 1;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("l_max"), std::string::npos) << msg();
  o.l_max = -2;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  o.l_max = GPUFMM_TREE_MAX_LEVEL;  // the maximum itself is fine
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_SUCCESS) << msg();
  gpufmm_tree_options_init(&o);
  o.max_level = 22;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  gpufmm_tree_options_init(&o);
  o.lists = 16;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  gpufmm_tree_options_init(&o);
  o.cube_given = 1;
  o.cube_side = 0;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("cube_side"), std::string::npos) << msg();
  o.cube_side = 1;
  o.cube_center[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  // Points outside the given cube.
  o.cube_center[0] = o.cube_center[1] = o.cube_center[2] = 0.5;
  o.cube_side = 1.0;
  EXPECT_EQ(build(&o, 100, p.data(), 100, nullptr), GPUFMM_SUCCESS) << msg();
  std::vector<double> q = p;
  q[3 * 42 + 2] = 1.5;
  EXPECT_EQ(build(&o, 100, q.data(), 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("source point 42"), std::string::npos) << msg();
  EXPECT_NE(msg().find("outside"), std::string::npos) << msg();
}

TEST_F(TreeBadInput, BadPointersCountsAndHandles) {
  const std::vector<double> p = gpufmm_test::uniform_cube(100, 3);
  gpufmm_tree_t t = nullptr;
  EXPECT_EQ(build(nullptr, 100, nullptr, 100, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("src"), std::string::npos) << msg();
  EXPECT_EQ(build(nullptr, 100, p.data(), 5, nullptr), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_EQ(build(nullptr, -1, p.data(), -1, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(build(nullptr, 100, p.data(), -3, p.data()), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_tree_build(ctx_, nullptr, 100, p.data(), 100, nullptr, nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_tree_build(nullptr, nullptr, 100, p.data(), 100, nullptr, &t),
            GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_tree_build(reinterpret_cast<gpufmm_context_t>(&t), nullptr, 100, p.data(), 100,
                              nullptr, &t),
            GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_tree_stats(reinterpret_cast<gpufmm_tree_t>(&t), nullptr), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_tree_options_init(nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
}

}  // namespace
