// gpufmm_laplace_direct on the CPU backend: against a plain double loop
// written here (not the library's P2P math), for charges, dipoles and both,
// targets separate and at the sources, every output combination, in double
// and float; then every bad-input path, checking the status, that the message
// names the argument, and that the outputs are untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpufmm.h"

namespace {

struct Problem {
  int64_t ns = 0, nt = 0;
  std::vector<double> src, q, d, trg;  // trg empty: at the sources
};

std::vector<double> uniform(std::mt19937_64& g, size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

// n points of a jittered lattice: the cells of a k^3 grid over [lo, hi]^3
// (k^3 >= n, cells taken in a random order), each point uniform within 0.3 of
// a cell's side from the cell centre: no two points closer than 0.4 cells.
std::vector<double> jittered_lattice(std::mt19937_64& g, int64_t n, double lo, double hi) {
  int64_t k = 1;
  while (k * k * k < n) ++k;
  std::vector<int64_t> cells(k * k * k);
  for (int64_t c = 0; c < k * k * k; ++c) cells[c] = c;
  std::shuffle(cells.begin(), cells.end(), g);
  const double h = (hi - lo) / k;
  std::uniform_real_distribution<double> jitter(-0.3, 0.3);
  std::vector<double> x(3 * n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c[3] = {cells[i] % k, (cells[i] / k) % k, cells[i] / (k * k)};
    for (int a = 0; a < 3; ++a) x[3 * i + a] = lo + h * (c[a] + 0.5 + jitter(g));
  }
  return x;
}

// ns sources in the unit cube with charges and dipoles in [-1, 1]; nt targets
// in a slightly larger cube (some outside the sources' box), or none (nt < 0):
// at the sources. Source 1 duplicates source 0 (a coincident pair).
//
// Points are uniform at random, except with `lattice` (for float): a
// jittered lattice. In float, the rounding of the coordinates themselves
// (relative 6e-8 of the coordinate) is an error of order 6e-8 / r in the
// pair terms (dipole gradients ~ 1/r^4 amplify it 4x), so a few random
// pairs at r ~ 1e-3 alone can push the relative L2 error past 1e-5 whatever
// the arithmetic; the lattice (sources and targets in disjoint cells of one
// lattice over the unit cube) keeps every pair >= 0.4 cells apart, so that
// the test measures the float arithmetic.
Problem make_problem(uint64_t seed, int64_t ns, int64_t nt, bool lattice = false) {
  std::mt19937_64 g(seed);
  Problem p;
  p.ns = ns;
  p.nt = nt >= 0 ? nt : ns;
  if (lattice) {  // sources and targets: disjoint cells of one lattice
    const auto x = jittered_lattice(g, ns + std::max<int64_t>(nt, 0), 0.0, 1.0);
    p.src.assign(x.begin(), x.begin() + 3 * ns);
    if (nt >= 0) p.trg.assign(x.begin() + 3 * ns, x.end());
  } else {
    p.src = uniform(g, 3 * ns, 0.0, 1.0);
    if (nt >= 0) p.trg = uniform(g, 3 * nt, -0.2, 1.2);
  }
  if (ns > 1)
    for (int k = 0; k < 3; ++k) p.src[3 + k] = p.src[k];
  p.q = uniform(g, ns, -1.0, 1.0);
  p.d = uniform(g, 3 * ns, -1.0, 1.0);
  return p;
}

// The reference: phi = sum q/r + d.R/r^3, grad = sum -q R/r^3 + d/r^3 - 3 (d.R) R/r^5,
// R = y - x, pairs with r = 0 skipped.
void reference(const Problem& p, bool use_q, bool use_d, std::vector<double>& pot, std::vector<double>& grad) {
  const std::vector<double>& trg = p.trg.empty() ? p.src : p.trg;
  pot.assign(p.nt, 0.0);
  grad.assign(3 * p.nt, 0.0);
  for (int64_t i = 0; i < p.nt; ++i) {
    for (int64_t j = 0; j < p.ns; ++j) {
      const double R[3] = {trg[3 * i] - p.src[3 * j], trg[3 * i + 1] - p.src[3 * j + 1],
                           trg[3 * i + 2] - p.src[3 * j + 2]};
      const double r = std::sqrt(R[0] * R[0] + R[1] * R[1] + R[2] * R[2]);
      if (r == 0) continue;
      const double r3 = r * r * r, r5 = r3 * r * r;
      if (use_q) {
        pot[i] += p.q[j] / r;
        for (int k = 0; k < 3; ++k) grad[3 * i + k] -= p.q[j] * R[k] / r3;
      }
      if (use_d) {
        const double dR = p.d[3 * j] * R[0] + p.d[3 * j + 1] * R[1] + p.d[3 * j + 2] * R[2];
        pot[i] += dR / r3;
        for (int k = 0; k < 3; ++k) grad[3 * i + k] += p.d[3 * j + k] / r3 - 3 * dR * R[k] / r5;
      }
    }
  }
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  double e = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    e += (a[i] - ref[i]) * (a[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  return std::sqrt(e / n);
}

class LaplaceDirect : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS); }
  void TearDown() override { EXPECT_EQ(gpufmm_context_destroy(ctx), GPUFMM_SUCCESS); }

  // Runs every input / output combination of one problem against the reference.
  void check_problem(const Problem& p, int precision, double tol) {
    const double* trg = p.trg.empty() ? nullptr : p.trg.data();
    for (int inputs = 1; inputs <= 3; ++inputs) {
      const bool use_q = inputs & 1, use_d = inputs & 2;
      std::vector<double> rpot, rgrad;
      reference(p, use_q, use_d, rpot, rgrad);
      for (int outputs = 1; outputs <= 3; ++outputs) {
        const bool want_pot = outputs & 1, want_grad = outputs & 2;
        SCOPED_TRACE("charges " + std::to_string(use_q) + " dipoles " + std::to_string(use_d) + " pot " +
                     std::to_string(want_pot) + " grad " + std::to_string(want_grad) + " precision " +
                     std::to_string(precision) + (trg ? " separate targets" : " at the sources"));
        // Outputs start as garbage: they must be overwritten, not accumulated.
        std::vector<double> pot(p.nt, 7.0), grad(3 * p.nt, -7.0);
        ASSERT_EQ(gpufmm_laplace_direct(ctx, precision, p.ns, p.src.data(), use_q ? p.q.data() : nullptr,
                                        use_d ? p.d.data() : nullptr, p.nt, trg, want_pot ? pot.data() : nullptr,
                                        want_grad ? grad.data() : nullptr),
                  GPUFMM_SUCCESS)
            << gpufmm_last_error_message();
        if (want_pot) EXPECT_LE(rel_l2(pot, rpot), tol);
        else for (double v : pot) ASSERT_EQ(v, 7.0);
        if (want_grad) EXPECT_LE(rel_l2(grad, rgrad), tol);
        else for (double v : grad) ASSERT_EQ(v, -7.0);
      }
    }
  }

  gpufmm_context_t ctx = nullptr;
};

TEST_F(LaplaceDirect, SeparateTargetsDouble) { check_problem(make_problem(9001, 1100, 900), GPUFMM_FLOAT64, 1e-13); }

TEST_F(LaplaceDirect, AtSourcesDouble) { check_problem(make_problem(9002, 1300, -1), GPUFMM_FLOAT64, 1e-13); }

TEST_F(LaplaceDirect, SeparateTargetsFloat) {
  check_problem(make_problem(9003, 1000, 1200, true), GPUFMM_FLOAT32, 1e-5);
}

TEST_F(LaplaceDirect, AtSourcesFloat) { check_problem(make_problem(9004, 900, -1, true), GPUFMM_FLOAT32, 1e-5); }

// Two tight clusters (side 1e-6), coordinates near 0 and 1: the close pairs
// need differences of the coordinates as given. Shifting them to the
// bounding box's centre first (as float does) rounds a coordinate near 0 by
// up to 3e-17 absolute, 3e-11 relative to the pair distances here.
TEST_F(LaplaceDirect, TightClustersDouble) {
  std::mt19937_64 g(9005);
  Problem p;
  p.ns = p.nt = 600;
  const double c[2][3] = {{0.011, 0.7, 0.023}, {0.9, 0.031, 0.95}};
  p.src = uniform(g, 3 * p.ns, 0.0, 1e-6);
  for (int64_t i = 0; i < p.ns; ++i)
    for (int k = 0; k < 3; ++k) p.src[3 * i + k] += c[i % 2][k];
  p.q = uniform(g, p.ns, -1.0, 1.0);
  p.d = uniform(g, 3 * p.ns, -1.0, 1.0);
  check_problem(p, GPUFMM_FLOAT64, 1e-13);
}

// Sizes that are not multiples of any block or tile, and the smallest cases.
TEST_F(LaplaceDirect, OddSizes) {
  for (int64_t ns : {1, 2, 3, 31, 1025, 2049})
    for (int64_t nt : {1, 33, 257}) {
      SCOPED_TRACE("ns " + std::to_string(ns) + " nt " + std::to_string(nt));
      check_problem(make_problem(9100 + ns * 7 + nt, ns, nt), GPUFMM_FLOAT64, 1e-13);
    }
}

// A target on a source gets no self term, also with separate targets.
TEST_F(LaplaceDirect, CoincidentTargetSkipsThatSource) {
  const double src[6] = {0, 0, 0, 1, 0, 0}, q[2] = {5, 2}, trg[3] = {0, 0, 0};
  double pot = 0, grad[3] = {0, 0, 0};
  ASSERT_EQ(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, 2, src, q, nullptr, 1, trg, &pot, grad), GPUFMM_SUCCESS);
  EXPECT_DOUBLE_EQ(pot, 2.0);                // only the source at distance 1
  EXPECT_DOUBLE_EQ(grad[0], 2.0);            // -q R / r^3 with R = (-1, 0, 0)
  EXPECT_EQ(grad[1], 0.0);
  EXPECT_EQ(grad[2], 0.0);
}

TEST_F(LaplaceDirect, EmptySets) {
  const double src[3] = {0.5, 0.5, 0.5}, q[1] = {1}, trg[6] = {0, 0, 0, 1, 1, 1};
  double pot[2] = {9, 9}, grad[6] = {9, 9, 9, 9, 9, 9};
  // No sources: zero field.
  ASSERT_EQ(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, 0, nullptr, q, nullptr, 2, trg, pot, grad), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  for (double v : pot) EXPECT_EQ(v, 0.0);
  for (double v : grad) EXPECT_EQ(v, 0.0);
  // No targets: nothing written.
  pot[0] = 9;
  ASSERT_EQ(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, 1, src, q, nullptr, 0, trg, pot, grad), GPUFMM_SUCCESS);
  EXPECT_EQ(pot[0], 9.0);
  // At the sources, ntrg is ignored (even when negative).
  ASSERT_EQ(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT32, 1, src, q, nullptr, -5, nullptr, pot, nullptr),
            GPUFMM_SUCCESS);
  EXPECT_EQ(pot[0], 0.0);  // a lone source: no self term
  EXPECT_EQ(pot[1], 0.0);  // (left from the first call)
}

// ---------------------------------------------------------------------------
// Bad inputs: status, message naming the argument, outputs untouched.

class LaplaceDirectErrors : public LaplaceDirect {
 protected:
  static constexpr int64_t ns = 20, nt = 10;
  void SetUp() override {
    LaplaceDirect::SetUp();
    std::mt19937_64 g(9200);
    src = uniform(g, 3 * ns, 0, 1);
    q = uniform(g, ns, -1, 1);
    d = uniform(g, 3 * ns, -1, 1);
    trg = uniform(g, 3 * nt, 0, 1);
    pot.assign(ns, 123.0);
    grad.assign(3 * ns, 456.0);
  }
  // Calls with the current members (each argument overridable) and checks the
  // status, the message and that pot / grad kept their sentinels.
  void expect_error(gpufmm_status_t want, const std::string& word, gpufmm_context_t c, int precision, int64_t n_s,
                    const double* s, const double* qq, const double* dd, int64_t n_t, const double* t, double* p,
                    double* gr) {
    EXPECT_EQ(gpufmm_laplace_direct(c, precision, n_s, s, qq, dd, n_t, t, p, gr), want);
    const std::string msg = gpufmm_last_error_message();
    EXPECT_NE(msg.find("gpufmm_laplace_direct"), std::string::npos) << msg;
    EXPECT_NE(msg.find(word), std::string::npos) << "message '" << msg << "' does not mention '" << word << "'";
    for (double v : pot) ASSERT_EQ(v, 123.0);
    for (double v : grad) ASSERT_EQ(v, 456.0);
  }
  std::vector<double> src, q, d, trg, pot, grad;
};

TEST_F(LaplaceDirectErrors, Handles) {
  expect_error(GPUFMM_ERROR_INVALID_HANDLE, "ctx", nullptr, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr, nt,
               trg.data(), pot.data(), grad.data());
  gpufmm_context_t dead = nullptr;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &dead), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_context_destroy(dead), GPUFMM_SUCCESS);
  expect_error(GPUFMM_ERROR_INVALID_HANDLE, "ctx", dead, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr, nt,
               trg.data(), pot.data(), grad.data());
}

TEST_F(LaplaceDirectErrors, Precision) {
  for (int prec : {int(GPUFMM_INT32), int(GPUFMM_INT64), int(GPUFMM_COMPLEX64), int(GPUFMM_COMPLEX128), -1, 42})
    expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "precision", ctx, prec, ns, src.data(), q.data(), nullptr, nt,
                 trg.data(), pot.data(), grad.data());
}

TEST_F(LaplaceDirectErrors, Counts) {
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "nsrc", ctx, GPUFMM_FLOAT64, -1, src.data(), q.data(), nullptr, nt,
               trg.data(), pot.data(), grad.data());
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "ntrg", ctx, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr, -3,
               trg.data(), pot.data(), grad.data());
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "nsrc", ctx, GPUFMM_FLOAT64, std::numeric_limits<int64_t>::max(),
               src.data(), q.data(), nullptr, nt, trg.data(), pot.data(), grad.data());
}

TEST_F(LaplaceDirectErrors, NullPointers) {
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "sources", ctx, GPUFMM_FLOAT64, ns, nullptr, q.data(), nullptr, nt,
               trg.data(), pot.data(), grad.data());
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "charges", ctx, GPUFMM_FLOAT64, ns, src.data(), nullptr, nullptr, nt,
               trg.data(), pot.data(), grad.data());
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "dipoles", ctx, GPUFMM_FLOAT64, ns, src.data(), nullptr, nullptr,
               nt, nullptr, pot.data(), grad.data());
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "pot", ctx, GPUFMM_FLOAT64, ns, src.data(), q.data(), d.data(), nt,
               trg.data(), nullptr, nullptr);
  expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "grad", ctx, GPUFMM_FLOAT32, ns, src.data(), q.data(), d.data(), nt,
               nullptr, nullptr, nullptr);
}

TEST_F(LaplaceDirectErrors, NonFiniteValuesNamedWithIndex) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  {
    auto s = src;
    s[3 * 7 + 1] = nan;
    expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "point 7", ctx, GPUFMM_FLOAT64, ns, s.data(), q.data(), nullptr,
                 nt, trg.data(), pot.data(), grad.data());
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("sources"), std::string::npos);
  }
  {
    auto s = src;
    s[3 * 19 + 2] = -inf;  // the last point, at the sources
    expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "point 19", ctx, GPUFMM_FLOAT32, ns, s.data(), q.data(), nullptr,
                 0, nullptr, pot.data(), grad.data());
  }
  {
    auto t = trg;
    t[3 * 4] = inf;
    expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "point 4", ctx, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr,
                 nt, t.data(), pot.data(), grad.data());
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("targets"), std::string::npos);
  }
  {
    auto c = q;
    c[11] = nan;
    expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "charge 11", ctx, GPUFMM_FLOAT64, ns, src.data(), c.data(),
                 d.data(), nt, trg.data(), pot.data(), grad.data());
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("charges"), std::string::npos);
  }
  {
    auto dd = d;
    dd[3 * 5 + 2] = -inf;
    expect_error(GPUFMM_ERROR_INVALID_ARGUMENT, "dipole 5", ctx, GPUFMM_FLOAT32, ns, src.data(), q.data(),
                 dd.data(), nt, trg.data(), pot.data(), grad.data());
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("dipoles"), std::string::npos);
  }
}

// A failed call leaves the previous results in place; the next good call works.
TEST_F(LaplaceDirectErrors, RecoversAfterError) {
  EXPECT_EQ(gpufmm_laplace_direct(ctx, 99, ns, src.data(), q.data(), nullptr, nt, trg.data(), pot.data(), nullptr),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, ns, src.data(), q.data(), nullptr, nt, trg.data(), pot.data(),
                                  nullptr),
            GPUFMM_SUCCESS);
  EXPECT_NE(pot[0], 123.0);
  EXPECT_EQ(pot[nt], 123.0);  // beyond the nt targets: untouched
}

}  // namespace
