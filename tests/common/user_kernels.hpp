// User kernels of the tests (GPUFMM_KERNEL_USER, issue 15 item 3), each in
// both forms (CPU functions, GPU expressions), and the runs that compare a
// user kernel with a built-in one: the same direct sum and the same
// treecode plan (theta, degree, leaf sizes set) on one context.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "common/rel_l2.hpp"
#include "common/treecode_check.hpp"
#include "gpufmm.h"

namespace gpufmm_test {

struct Sums {
  std::vector<double> pot, grad;
};

// status is want and the last error message contains `what`.
inline void expect_error(gpufmm_status_t status, gpufmm_status_t want, const std::string& what) {
  EXPECT_EQ(status, want) << what;
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
}

// Two results agree to tol in relative L2 (potential and gradient).
inline void expect_close(const Sums& a, const Sums& b, double tol, const char* what) {
  EXPECT_LE(rel_l2(a.pot, b.pot), tol) << what << ": potential";
  EXPECT_LE(rel_l2(a.grad, b.grad), tol) << what << ": gradient";
}

// exp(-kappa r) / r, kappa = p[0]: the built-in Yukawa kernel.
inline double user_yukawa(double r, const double* p) { return std::exp(-p[0] * r) / r; }
inline double user_yukawa_dr(double r, const double* p) {
  return -std::exp(-p[0] * r) * (1 + p[0] * r) / (r * r);
}
// exp(-r^2 / p[0]^2): finite at r = 0.
inline double user_gaussian(double r, const double* p) { return std::exp(-(r * r) / (p[0] * p[0])); }
inline double user_gaussian_dr(double r, const double* p) {
  return -2 * r / (p[0] * p[0]) * std::exp(-(r * r) / (p[0] * p[0]));
}
// sqrt(r^2 + p[0]^2): the multiquadric.
inline double user_multiquadric(double r, const double* p) { return std::sqrt(r * r + p[0] * p[0]); }
inline double user_multiquadric_dr(double r, const double* p) { return r / std::sqrt(r * r + p[0] * p[0]); }

struct UserCase {
  std::string name;
  double param;
  const char *value_expr, *deriv_expr;
  gpufmm_radial_fn_t value_fn, deriv_fn;
  int r0;
};

inline UserCase user_case(const std::string& name) {
  if (name == "gaussian")
    return {name, 0.7, "exp(-(r * r) / (p[0] * p[0]))", "-2 * r / (p[0] * p[0]) * exp(-(r * r) / (p[0] * p[0]))",
            user_gaussian, user_gaussian_dr, GPUFMM_KERNEL_R0_INCLUDED};
  if (name == "multiquadric")
    return {name, 0.1, "sqrt(r * r + p[0] * p[0])", "r / sqrt(r * r + p[0] * p[0])", user_multiquadric,
            user_multiquadric_dr, GPUFMM_KERNEL_R0_INCLUDED};
  return {"yukawa", 0.5, "exp(-p[0] * r) / r", "-exp(-p[0] * r) * (1 + p[0] * r) / (r * r)", user_yukawa,
          user_yukawa_dr, GPUFMM_KERNEL_R0_LEFT_OUT};
}

// The kernel of case c with its CPU form (cpu) and/or its GPU form (gpu).
inline gpufmm_kernel_t user_kernel(const UserCase& c, bool cpu, bool gpu) {
  gpufmm_kernel_t k;
  EXPECT_EQ(gpufmm_kernel_init_user(&k, 1, &c.param, gpu ? c.value_expr : nullptr, gpu ? c.deriv_expr : nullptr,
                                    cpu ? c.value_fn : nullptr, cpu ? c.deriv_fn : nullptr, c.r0),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  return k;
}

// The built-in Yukawa kernel with kappa = user_case("yukawa").param.
inline gpufmm_kernel_t builtin_yukawa() {
  gpufmm_kernel_t k;
  const double kappa = user_case("yukawa").param;
  EXPECT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_YUKAWA, 1, &kappa), GPUFMM_SUCCESS);
  return k;
}

// Points and charges of one comparison.
struct UserProblem {
  int64_t ns = 0, nt = 0;  // nt = 0: at the sources
  std::vector<double> src, trg, q;
  int64_t targets() const { return nt > 0 ? nt : ns; }
};

inline UserProblem user_problem(Dist d, int64_t ns, int64_t nt, uint64_t seed) {
  UserProblem p;
  p.ns = ns;
  p.nt = nt;
  p.src = make_points(d, ns, seed);
  p.trg = make_points(d, nt, seed + 1);
  Rng rng(seed + 2);
  p.q.resize(size_t(ns));
  for (auto& v : p.q) v = 2 * rng.uniform() - 1;
  return p;
}

inline Sums direct_sums(gpufmm_context_t ctx, const gpufmm_kernel_t& k, int precision, const UserProblem& p) {
  Sums s{std::vector<double>(size_t(p.targets())), std::vector<double>(size_t(3 * p.targets()))};
  EXPECT_EQ(gpufmm_direct(ctx, &k, precision, p.ns, p.src.data(), p.q.data(), p.nt,
                          p.nt > 0 ? p.trg.data() : nullptr, s.pot.data(), s.grad.data()),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  return s;
}

// One treecode plan with fixed parameters (theta 0.7, degree 5, leaves of
// 200) and one evaluate; the plan must use its approximations.
inline Sums treecode_sums(gpufmm_context_t ctx, const gpufmm_kernel_t& k, int type, int precision,
                          const UserProblem& p) {
  Sums s{std::vector<double>(size_t(p.targets())), std::vector<double>(size_t(3 * p.targets()))};
  gpufmm_treecode_options_t o;
  EXPECT_EQ(gpufmm_treecode_options_init(&o), GPUFMM_SUCCESS);
  o.kernel = k;
  o.theta = 0.7;
  o.degree = 5;
  o.leaf_size = o.batch_size = 200;
  o.type = type;
  o.precision = precision;
  gpufmm_treecode_plan_t plan = nullptr;
  EXPECT_EQ(gpufmm_treecode_plan_create(ctx, &o, p.ns, p.src.data(), p.nt, p.nt > 0 ? p.trg.data() : nullptr, &plan),
            GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  if (plan == nullptr) return s;
  EXPECT_EQ(gpufmm_treecode_evaluate(plan, p.q.data(), s.pot.data(), s.grad.data()), GPUFMM_SUCCESS)
      << gpufmm_last_error_message();
  gpufmm_treecode_info_t info;
  EXPECT_EQ(gpufmm_treecode_plan_info(plan, &info), GPUFMM_SUCCESS);
  EXPECT_GT(info.approx_interactions, 0) << "no approximation was used";
  EXPECT_EQ(gpufmm_treecode_plan_destroy(plan), GPUFMM_SUCCESS);
  return s;
}

// A treecode accuracy case (common/treecode_check.hpp) of user kernel k,
// named name, on Plummer points: n sources, leaves of `leaf`; CP with
// separate targets, PC and CC at the sources.
inline TreecodeCase user_treecode_case(const std::string& name, const gpufmm_kernel_t& k, int type, double eps,
                                       int64_t n, int leaf) {
  TreecodeCase c;
  c.kernel.name = name;
  c.user = &k;
  c.type = type;
  c.dist = Dist::Plummer;
  c.eps = eps;
  c.n = n;
  c.leaf = leaf;
  c.at_sources = type != GPUFMM_TREECODE_CP;
  return c;
}

// The inputs of a bad-input test (the Yukawa case, n uniform points) and
// outputs that must stay untouched.
struct BadInput {
  static constexpr double kPoison = -7.0;
  UserCase c = user_case("yukawa");
  UserProblem p;
  std::vector<double> pot, grad;
  explicit BadInput(int64_t n)
      : p(user_problem(Dist::Uniform, n, 0, 3)), pot(size_t(n), kPoison), grad(size_t(3 * n), kPoison) {}
  void expect_untouched() const {
    for (double v : pot) ASSERT_EQ(v, kPoison) << "an output was written";
    for (double v : grad) ASSERT_EQ(v, kPoison) << "an output was written";
  }
};

}  // namespace gpufmm_test
