// Relative L2 difference of a result from a reference (papers/000 eq. 36),
// shared by the GPU tests and benchmarks; the absolute L2 norm when the
// reference is zero.
#pragma once

#include <cmath>
#include <vector>

namespace gpufmm_test {

inline double rel_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  double e = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    e += (a[i] - ref[i]) * (a[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  return n > 0 ? std::sqrt(e / n) : std::sqrt(e);
}

}  // namespace gpufmm_test
