// The calibration sweep behind laplace_p_for_eps (label long: minutes on 16
// cores; tools/gpu-check runs it). For every p it runs the small FMM of
// tests/common/mini_fmm.hpp 24 ways (depth 3 and 4; uniform, ellipsoid-surface
// and Plummer sources; positive and mixed-sign charges; two seeds), prints the
// table of docs/laplace_math.md and checks the promise the p rule rests on:
// laplace_p_for_eps picks the smallest p whose modelled error is <= eps/2, so
// the worst measured error at p must stay <= 2 * model(p), for the potential
// and for the gradient, wherever the model is above rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/mini_fmm.hpp"

namespace {

using namespace gpufmm;
using namespace mini_fmm_test;

void sweep(bool single) {
  const int pmax = single ? kLaplaceMaxPFloat : kMaxP;
  const double floor = single ? 5e-6 : 1e-13;  // rounding, not truncation, below this
  std::printf("%s: p  runs  pot max  pot median  grad max  grad median  m2l work  model pot  model grad\n",
              single ? "float" : "double");
  for (int p = 3; p <= pmax; ++p) {
    std::vector<double> ep, eg;
    double work = 0;
    for (int L = 3; L <= 4; ++L)
      for (Dist d : {Dist::kUniform, Dist::kEllipsoid, Dist::kPlummer})
        for (int pos = 0; pos < 2; ++pos)
          for (int s = 1; s <= 2; ++s) {
            const int N = (L == 3 ? 8000 : 30000) / (d == Dist::kUniform ? 1 : 2);
            const unsigned seed = 13u * s + pos + 100u * unsigned(d);
            MiniFmmError e = single ? mini_fmm<float>(d, L, N, seed, pos, p, true, 10, 40)
                                    : mini_fmm<double>(d, L, N, seed, pos, p, true, 10, 40);
            ep.push_back(e.pot);
            eg.push_back(e.grad);
            work += e.m2l_work;
          }
    const size_t n = ep.size();
    work /= double(n);
    std::sort(ep.begin(), ep.end());
    std::sort(eg.begin(), eg.end());
    const double mp = std::pow(10.0, laplace_log10_error_model(p));
    const double mg = std::pow(10.0, laplace_log10_error_model(p, true));
    std::printf("%2d %zu  %.2e  %.2e  %.2e  %.2e  %.2f   %.2e  %.2e\n", p, n, ep.back(), ep[n / 2], eg.back(),
                eg[n / 2], work, mp, mg);
    std::fflush(stdout);
    if (mp > floor) EXPECT_LE(ep.back(), 2 * mp) << (single ? "float" : "double") << " potential, p = " << p;
    if (mg > floor) EXPECT_LE(eg.back(), 2 * mg) << (single ? "float" : "double") << " gradient, p = " << p;
  }
}

TEST(LaplaceCalibrationLong, WorstErrorWithinModelDouble) { sweep(false); }
TEST(LaplaceCalibrationLong, WorstErrorWithinModelFloat) { sweep(true); }

}  // namespace
