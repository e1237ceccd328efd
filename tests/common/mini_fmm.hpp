// Calibration of laplace_p_for_eps / laplace_p_reduced (fmm/laplace/error.hpp)
// with a small FMM built only from the math headers: a uniform octree of
// depth L over the unit cube, the modified stencil of sec. 2.2.3 (type 1
// boxes -> receiver, type 2 boxes -> receiver's parent, eq. 23), reduced
// truncation p' per translation (eq. 24 with the budget split), L2L down the
// ancestor chain, L2P + P2P, for a sample of receiver leaves whose targets are
// the sources they hold (self excluded).  The error is the relative L2 error
// of eq. (36) accumulated over the sampled receivers.
//
// Used by tests/cxx/test_laplace_math_calibration.cpp (quick checks, CI) and
// tests/cxx/test_laplace_math_calibration_long.cpp (the sweep behind the
// table in docs/laplace_math.md, label long).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "fmm/laplace/math.hpp"
#include "nearfield/p2p.hpp"

namespace mini_fmm_test {

using namespace gpufmm;

enum class Dist { kUniform, kEllipsoid, kPlummer };

struct MiniFmmError {
  double pot = 0, grad = 0;  // relative L2 errors
  double m2l_work = 0;       // sum p'^3 / sum p^3
};

template <class T>
MiniFmmError mini_fmm(Dist dist, int L, int N, unsigned seed, bool positive, int p, bool reduce,
                      int n_recv, int max_trg) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> xs(3 * N), qs(N);
  for (int i = 0; i < N; ++i) {
    if (dist == Dist::kUniform) {
      for (int k = 0; k < 3; ++k) xs[3 * i + k] = u(g);
    } else {
      double r = 1, ax[3] = {1, 1, 1};
      if (dist == Dist::kEllipsoid) {
        ax[0] = 0.49, ax[1] = 0.3, ax[2] = 0.15;
      } else {
        do r = 0.05 / std::sqrt(std::pow(u(g), -2.0 / 3) - 1); while (r > 0.45);
      }
      const double th = std::acos(2 * u(g) - 1), ph = 2 * M_PI * u(g);
      xs[3 * i] = 0.5 + ax[0] * r * std::sin(th) * std::cos(ph);
      xs[3 * i + 1] = 0.5 + ax[1] * r * std::sin(th) * std::sin(ph);
      xs[3 * i + 2] = 0.5 + ax[2] * r * std::cos(th);
    }
    qs[i] = positive ? u(g) : 2 * u(g) - 1;
  }
  // The reference uses the inputs exactly as T holds them.
  for (auto& v : xs) v = double(T(v));
  for (auto& v : qs) v = double(T(v));
  auto box_of = [&](int j, int l, int k) { return std::min(int(xs[3 * j + k] * (1 << l)), (1 << l) - 1); };
  std::map<std::array<int, 4>, std::vector<int>> members;  // (level, i, j, k) -> sources
  for (int l = 2; l <= L; ++l)
    for (int j = 0; j < N; ++j) members[{l, box_of(j, l, 0), box_of(j, l, 1), box_of(j, l, 2)}].push_back(j);
  std::vector<T> xT(xs.begin(), xs.end()), qT(qs.begin(), qs.end());

  std::map<std::array<int, 3>, std::vector<T>> rot_cache;  // by direction (beta only matters)
  auto rotation = [&](int dx, int dy, int dz, T& ca, T& sa) -> const std::vector<T>& {
    auto d = laplace_direction<double>(dx, dy, dz);
    ca = T(d.cos_a);
    sa = T(d.sin_a);
    const int gg = std::gcd(std::gcd(std::abs(dx), std::abs(dy)), std::abs(dz));
    std::array<int, 3> key{dx / gg, dy / gg, dz / gg};
    auto it = rot_cache.find(key);
    if (it != rot_cache.end()) return it->second;
    std::vector<T> B(laplace_rotation_size(p));
    std::vector<double> s(laplace_rotation_scratch_size(p) + 9);
    laplace_rotation_precompute(p, d.cos_b, d.sin_b, B.data(), s.data());
    return rot_cache[key] = B;
  };
  std::map<std::array<int, 4>, std::vector<T>> mult;
  auto multipole = [&](const std::array<int, 4>& key) -> const std::vector<T>& {
    auto it = mult.find(key);
    if (it != mult.end()) return it->second;
    const auto& m = members[key];
    std::vector<T> x(3 * m.size()), q(m.size()), M(p * p, T(0));
    for (size_t a = 0; a < m.size(); ++a) {
      for (int k = 0; k < 3; ++k) x[3 * a + k] = xT[3 * m[a] + k];
      q[a] = qT[m[a]];
    }
    const double h = 1.0 / (1 << key[0]);
    const T c[3] = {T((key[1] + 0.5) * h), T((key[2] + 0.5) * h), T((key[3] + 0.5) * h)};
    laplace_p2m<T>(p, T(h), c, int(m.size()), x.data(), q.data(), nullptr, M.data());
    return mult[key] = M;
  };

  const double s3 = std::sqrt(3.0);
  const double dstar = laplace_dstar(s3 / 2, s3);  // in child-box units
  std::vector<T> work(laplace_apply_work_size(p)), coax(laplace_coax_size(p, p));
  double e2 = 0, n2 = 0, ge2 = 0, gn2 = 0, w_red = 0, w_full = 0;
  std::uniform_int_distribution<int> pick(0, N - 1);
  std::vector<std::array<int, 3>> recv;
  for (int tries = 0; int(recv.size()) < n_recv && tries < 100 * n_recv; ++tries) {
    const int j = pick(g);
    std::array<int, 3> b{box_of(j, L, 0), box_of(j, L, 1), box_of(j, L, 2)};
    if (std::find(recv.begin(), recv.end(), b) == recv.end()) recv.push_back(b);
  }
  for (const auto& rb : recv) {
    std::vector<std::vector<T>> loc(L + 1, std::vector<T>(p * p, T(0)));
    for (int l = 2; l <= L; ++l) {
      int a[3], pa[3];
      for (int k = 0; k < 3; ++k) {
        a[k] = rb[k] >> (L - l);
        pa[k] = a[k] >> 1;
      }
      const int nl = 1 << l;
      for (int i = 2 * pa[0] - 2; i <= 2 * pa[0] + 3; ++i)
        for (int j = 2 * pa[1] - 2; j <= 2 * pa[1] + 3; ++j)
          for (int k = 2 * pa[2] - 2; k <= 2 * pa[2] + 3; ++k) {
            if (i < 0 || j < 0 || k < 0 || i >= nl || j >= nl || k >= nl) continue;
            if (std::abs(i - a[0]) <= 1 && std::abs(j - a[1]) <= 1 && std::abs(k - a[2]) <= 1) continue;
            const std::array<int, 4> key{l, i, j, k};
            if (!members.count(key)) continue;
            // offset of the source centre from the parent centre, child units
            const double o[3] = {i + 0.5 - (2 * pa[0] + 1), j + 0.5 - (2 * pa[1] + 1), k + 0.5 - (2 * pa[2] + 1)};
            const double dp = std::sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
            const bool type2 = dp >= dstar;  // eq. (23)
            int t[3];
            double D, hd;
            T* target;
            if (type2) {
              for (int q = 0; q < 3; ++q) t[q] = int(std::lround(-2 * o[q]));  // half-child units
              D = dp;
              hd = 2;
              target = loc[l - 1].data();
            } else {
              t[0] = a[0] - i, t[1] = a[1] - j, t[2] = a[2] - k;
              D = std::sqrt(double(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]));
              hd = 1;
              target = loc[l].data();
            }
            const int pr = reduce ? laplace_p_reduced(p, laplace_eta_boxes(1.0, hd, D)) : p;
            w_red += double(pr) * pr * pr;
            w_full += double(p) * p * p;
            T ca, sa;
            const auto& B = rotation(t[0], t[1], t[2], ca, sa);
            laplace_coax_sr<T>(pr, pr, hd / D, 1.0 / D, coax.data());
            laplace_m2l_apply<T>(pr, pr, ca, sa, B.data(), false, coax.data(), multipole(key).data(), target,
                                 work.data());
          }
    }
    for (int l = 1; l < L; ++l) {  // L2L from level 1 down to the leaf
      int t[3];
      for (int k = 0; k < 3; ++k) t[k] = ((rb[k] >> (L - l - 1)) & 1) ? 1 : -1;
      T ca, sa;
      const auto& B = rotation(t[0], t[1], t[2], ca, sa);
      laplace_coax_rr<T>(p, s3 / 4, 0.5, coax.data());
      laplace_l2l_apply<T>(p, ca, sa, B.data(), false, coax.data(), loc[l].data(), loc[l + 1].data(), work.data());
    }
    std::vector<T> nx, nq;
    for (int i = rb[0] - 1; i <= rb[0] + 1; ++i)
      for (int j = rb[1] - 1; j <= rb[1] + 1; ++j)
        for (int k = rb[2] - 1; k <= rb[2] + 1; ++k) {
          auto it = members.find({L, i, j, k});
          if (it == members.end()) continue;
          for (int s : it->second) {
            for (int q = 0; q < 3; ++q) nx.push_back(xT[3 * s + q]);
            nq.push_back(qT[s]);
          }
        }
    const auto& tm = members[{L, rb[0], rb[1], rb[2]}];
    const int nt = std::min(int(tm.size()), max_trg);
    std::vector<T> tx(3 * nt), pot(nt, T(0)), grad(3 * nt, T(0));
    std::vector<double> txd(3 * nt), pe(nt, 0.0), ge(3 * nt, 0.0);
    for (int a = 0; a < nt; ++a)
      for (int k = 0; k < 3; ++k) txd[3 * a + k] = xs[3 * tm[a] + k], tx[3 * a + k] = xT[3 * tm[a] + k];
    const double h = 1.0 / (1 << L);
    const T c[3] = {T((rb[0] + 0.5) * h), T((rb[1] + 0.5) * h), T((rb[2] + 0.5) * h)};
    laplace_l2p<T>(p, T(h), c, loc[L].data(), nt, tx.data(), pot.data(), grad.data());
    nearfield::p2p<T>(kernels::Laplace<T>{}, nt, tx.data(), int(nq.size()), nx.data(), nq.data(), nullptr, pot.data(), grad.data());
    nearfield::p2p<double>(kernels::Laplace<double>{}, nt, txd.data(), N, xs.data(), qs.data(), nullptr, pe.data(), ge.data());
    for (int a = 0; a < nt; ++a) {
      e2 += (double(pot[a]) - pe[a]) * (double(pot[a]) - pe[a]);
      n2 += pe[a] * pe[a];
      for (int k = 0; k < 3; ++k) {
        ge2 += (double(grad[3 * a + k]) - ge[3 * a + k]) * (double(grad[3 * a + k]) - ge[3 * a + k]);
        gn2 += ge[3 * a + k] * ge[3 * a + k];
      }
    }
  }
  MiniFmmError r;
  r.pot = std::sqrt(e2 / n2);
  r.grad = std::sqrt(ge2 / gn2);
  r.m2l_work = w_full > 0 ? w_red / w_full : 1.0;
  return r;
}

}  // namespace mini_fmm_test
