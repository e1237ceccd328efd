// FMM3D's Laplace call lfmm3d_s_c_g (charges at the sources, potential and
// gradient there) on the distributions of tools/common/distributions.hpp,
// timed; the same source runs against gpufmm's drop-in and against FMM3D.
// CMake links it to libgpufmm_fmm3d (build*/bench/bench_fmm3d_api); the
// peer's binary is the same file linked to FMM3D's libfmm3d by hand, beside
// the project (docs/performance.md says how), and both are run side by side:
//
//   bench_fmm3d_api [--dists uniform,plummer,...] [--n 1e6] [--eps 1e-6,1e-5]
//                   [--repeat 3] [--samples 200] [--csv PATH]
//
// Per row (a distribution and one of the eps): the first call (the drop-in
// plans there; FMM3D always does), the fastest of the repeats (the drop-in
// then reuses its cached plan), and the relative L2 errors of potential and
// gradient at --samples sources (every n / samples-th of the generated
// order) against a direct sum in double (kernel 1/(4 pi r), FMM3D's; summed
// once per distribution, on all cores). bench/fmm3d_equal_error.py pairs the
// rows of the two binaries at equal achieved error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/distributions.hpp"

extern "C" void lfmm3d_s_c_g_(const double* eps, const int64_t* nsource, const double* source, const double* charge,
                              double* pot, double* grad, int64_t* ier);

namespace {

std::string option(int argc, char** argv, const char* name, const char* def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == name) return argv[i + 1];
  return def;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t end = std::min(s.find(',', pos), s.size());
    if (end > pos) out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const auto dists = split(option(argc, argv, "--dists", "uniform,ellipsoid,plummer,clusters,patch"));
  const int64_t n = int64_t(std::strtod(option(argc, argv, "--n", "1e6").c_str(), nullptr));
  std::vector<double> epss;
  for (const std::string& e : split(option(argc, argv, "--eps", "1e-6"))) epss.push_back(std::strtod(e.c_str(), nullptr));
  const int repeat = std::max(1, std::atoi(option(argc, argv, "--repeat", "3").c_str()));
  const int64_t samples = std::max<int64_t>(1, std::atoll(option(argc, argv, "--samples", "200").c_str()));
  const std::string csv_path = option(argc, argv, "--csv", "");
  bool eps_ok = !epss.empty();
  for (double e : epss) eps_ok = eps_ok && e > 0 && e < 1;
  if (n < 1 || !eps_ok) {
    std::fprintf(stderr,
                 "usage: bench_fmm3d_api [--dists D,..] [--n N >= 1] [--eps E,.. each in (0,1)] [--repeat R] "
                 "[--samples S] [--csv PATH]\n");
    return 2;
  }
  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv) std::fprintf(csv, "dist,n,eps,first_s,best_s,err_pot,err_grad\n");
  std::printf("lfmm3d_s_c_g, N = %lld, %d calls per eps\n", static_cast<long long>(n), repeat);
  std::printf("%-10s %8s %10s %10s %10s %10s\n", "dist", "eps", "first s", "best s", "err pot", "err grad");
  for (const std::string& dn : dists) {
    gpufmm_test::Dist d;
    if (!gpufmm_test::parse_dist(dn, d)) {
      std::fprintf(stderr, "unknown distribution %s\n", dn.c_str());
      return 2;
    }
    const std::vector<double> x = gpufmm_test::make_points(d, n, 1);
    std::vector<double> q(static_cast<size_t>(n)), pot(static_cast<size_t>(n)), grad(static_cast<size_t>(3 * n));
    gpufmm_test::Rng r(7);
    for (auto& v : q) v = 2 * r.uniform() - 1;
    // Direct sum at the sampled sources (no self term), 1/(4 pi r), once
    // for all eps: sample s is source s n / m.
    const int64_t m = std::min<int64_t>(samples, n);
    std::vector<double> ref(static_cast<size_t>(4 * m));
#pragma omp parallel for schedule(dynamic)
    for (int64_t s = 0; s < m; ++s) {
      const int64_t i = s * n / m;
      double v = 0, g[3] = {0, 0, 0};
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double dx = x[3 * i] - x[3 * j], dy = x[3 * i + 1] - x[3 * j + 1], dz = x[3 * i + 2] - x[3 * j + 2];
        const double r2 = dx * dx + dy * dy + dz * dz;
        if (r2 == 0) continue;
        const double ir = 1 / std::sqrt(r2), ir3 = ir * ir * ir;
        v += q[j] * ir;
        g[0] -= q[j] * dx * ir3;
        g[1] -= q[j] * dy * ir3;
        g[2] -= q[j] * dz * ir3;
      }
      const double f = 1 / (4 * M_PI);
      ref[4 * s] = f * v;
      for (int c = 0; c < 3; ++c) ref[4 * s + 1 + c] = f * g[c];
    }
    for (double eps : epss) {
      double first = 0, best = 1e300;
      for (int k = 0; k < repeat; ++k) {
        int64_t ier = 0;
        const auto t0 = std::chrono::steady_clock::now();
        lfmm3d_s_c_g_(&eps, &n, x.data(), q.data(), pot.data(), grad.data(), &ier);
        const double t = seconds_since(t0);
        if (ier != 0) {
          std::fprintf(stderr, "lfmm3d_s_c_g: ier = %lld\n", static_cast<long long>(ier));
          return 1;
        }
        if (k == 0) first = t;
        best = std::min(best, t);
      }
      double ep = 0, np = 0, eg = 0, ng = 0;
      for (int64_t s = 0; s < m; ++s) {
        const int64_t i = s * n / m;
        ep += (pot[i] - ref[4 * s]) * (pot[i] - ref[4 * s]);
        np += ref[4 * s] * ref[4 * s];
        for (int c = 0; c < 3; ++c) {
          const double e = grad[3 * i + c] - ref[4 * s + 1 + c];
          eg += e * e;
          ng += ref[4 * s + 1 + c] * ref[4 * s + 1 + c];
        }
      }
      const double e_pot = std::sqrt(ep / np), e_grad = std::sqrt(eg / ng);
      std::printf("%-10s %8.1e %10.4f %10.4f %10.2e %10.2e\n", dn.c_str(), eps, first, best, e_pot, e_grad);
      std::fflush(stdout);
      if (csv)
        std::fprintf(csv, "%s,%lld,%.1e,%.6f,%.6f,%.3e,%.3e\n", dn.c_str(), static_cast<long long>(n), eps, first,
                     best, e_pot, e_grad);
    }
  }
  if (csv) std::fclose(csv);
  return 0;
}
