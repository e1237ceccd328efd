// Point distributions for tests, benchmarks and the CLI (header only, no
// dependency on gpufmm). Every generator is deterministic for a given seed on
// every platform (own RNG, no std::*_distribution). Output: 3 x n doubles,
// Fortran order (x0 y0 z0 x1 ...).
//
//   uniform    uniform in the unit cube [0,1]^3
//   ellipsoid  on the surface of an ellipsoid with semi-axes 0.1 : 0.5 : 0.1
//              (aspect 1:5:1, centred at 0.5,0.5,0.5), uniform in direction
//   plummer    a Plummer sphere (scale radius 0.05, centred at 0.5,0.5,0.5),
//              radii beyond 20 scale radii resampled
//   clusters   two Gaussian clusters (sigma 0.01) centred at (0.1,0.1,0.1) and
//              (0.9,0.9,0.9), half the points each
//   patch      on a sphere (radius 0.4, centred at 0.5,0.5,0.5), half the
//              points uniform on it and half on a cap of 1/1000 of its area
//              (a BEM mesh refined 1000:1 there)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufmm_test {

// splitmix64: small, fast, good enough for test data.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform in (0, 1).
  double uniform_open() {
    double u;
    do u = uniform(); while (u == 0.0);
    return u;
  }
  double normal() {  // Box-Muller (one of the pair)
    const double u1 = uniform_open(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // A uniformly random unit vector.
  void direction(double& x, double& y, double& z) {
    const double cz = 2.0 * uniform() - 1.0, phi = 6.283185307179586 * uniform();
    const double s = std::sqrt(std::max(0.0, 1.0 - cz * cz));
    x = s * std::cos(phi);
    y = s * std::sin(phi);
    z = cz;
  }

 private:
  uint64_t s_;
};

enum class Dist { Uniform, Ellipsoid, Plummer, Clusters, Patch };

inline const char* dist_name(Dist d) {
  switch (d) {
    case Dist::Uniform: return "uniform";
    case Dist::Ellipsoid: return "ellipsoid";
    case Dist::Plummer: return "plummer";
    case Dist::Clusters: return "clusters";
    case Dist::Patch: return "patch";
  }
  return "?";
}

inline bool parse_dist(const std::string& s, Dist& d) {
  for (Dist x : {Dist::Uniform, Dist::Ellipsoid, Dist::Plummer, Dist::Clusters, Dist::Patch})
    if (s == dist_name(x)) {
      d = x;
      return true;
    }
  return false;
}

inline std::vector<double> uniform_cube(int64_t n, uint64_t seed) {
  Rng r(seed);
  std::vector<double> p(static_cast<size_t>(3 * n));
  for (auto& v : p) v = r.uniform();
  return p;
}

inline std::vector<double> ellipsoid_surface(int64_t n, uint64_t seed, double a = 0.1,
                                             double b = 0.5, double c = 0.1) {
  Rng r(seed);
  std::vector<double> p(static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < n; ++i) {
    double x, y, z;
    r.direction(x, y, z);
    p[3 * i] = 0.5 + a * x;
    p[3 * i + 1] = 0.5 + b * y;
    p[3 * i + 2] = 0.5 + c * z;
  }
  return p;
}

inline std::vector<double> plummer(int64_t n, uint64_t seed, double scale = 0.05,
                                   double rmax = 20.0) {
  Rng r(seed);
  std::vector<double> p(static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < n; ++i) {
    double rad;
    do {
      const double u = r.uniform_open();
      rad = 1.0 / std::sqrt(std::pow(u, -2.0 / 3.0) - 1.0);
    } while (!(rad <= rmax));
    double x, y, z;
    r.direction(x, y, z);
    p[3 * i] = 0.5 + scale * rad * x;
    p[3 * i + 1] = 0.5 + scale * rad * y;
    p[3 * i + 2] = 0.5 + scale * rad * z;
  }
  return p;
}

inline std::vector<double> two_clusters(int64_t n, uint64_t seed, double sigma = 0.01) {
  Rng r(seed);
  std::vector<double> p(static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < n; ++i) {
    const double c = (i % 2 == 0) ? 0.1 : 0.9;
    for (int k = 0; k < 3; ++k) p[3 * i + k] = c + sigma * r.normal();
  }
  return p;
}

inline std::vector<double> sphere_patch(int64_t n, uint64_t seed, double radius = 0.4) {
  Rng r(seed);
  std::vector<double> p(static_cast<size_t>(3 * n));
  const double cap = 1.0 - 2e-3;  // cos of the cap's angular radius: area fraction 1e-3
  for (int64_t i = 0; i < n; ++i) {
    double x, y, z;
    if (i % 2 == 0) {
      r.direction(x, y, z);
    } else {  // uniform on the cap around +z
      z = 1.0 - (1.0 - cap) * r.uniform();
      const double phi = 6.283185307179586 * r.uniform(), s = std::sqrt(std::max(0.0, 1.0 - z * z));
      x = s * std::cos(phi);
      y = s * std::sin(phi);
    }
    p[3 * i] = 0.5 + radius * x;
    p[3 * i + 1] = 0.5 + radius * y;
    p[3 * i + 2] = 0.5 + radius * z;
  }
  return p;
}

inline std::vector<double> make_points(Dist d, int64_t n, uint64_t seed) {
  switch (d) {
    case Dist::Uniform: return uniform_cube(n, seed);
    case Dist::Ellipsoid: return ellipsoid_surface(n, seed);
    case Dist::Plummer: return plummer(n, seed);
    case Dist::Clusters: return two_clusters(n, seed);
    case Dist::Patch: return sphere_patch(n, seed);
  }
  throw std::invalid_argument("unknown distribution");
}

}  // namespace gpufmm_test
