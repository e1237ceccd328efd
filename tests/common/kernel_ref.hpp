// Long-double references of the pair kernels of gpufmm.h (the test oracle:
// written from the formulas of gpufmm.h, independently of src/cxx/kernels)
// and a long-double direct sum. The oracle's gradients are themselves
// checked against central differences of its potential (test_kernels.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpufmm.h"

namespace gpufmm_test {

struct KernelCase {
  std::string name;
  int type;
  std::vector<double> params;
};

inline std::vector<KernelCase> kernel_cases() {
  return {{"laplace", GPUFMM_KERNEL_LAPLACE, {}},
          {"yukawa", GPUFMM_KERNEL_YUKAWA, {0.5}},
          {"yukawa_strong", GPUFMM_KERNEL_YUKAWA, {12.0}},
          {"reg_laplace", GPUFMM_KERNEL_REGULARIZED_LAPLACE, {1e-3}},
          {"reg_yukawa", GPUFMM_KERNEL_REGULARIZED_YUKAWA, {0.5, 2e-2}}};
}

// G(R) and grad_y G at R = y - x (|R| = r), long double.
inline void kernel_ref(const KernelCase& k, long double rx, long double ry, long double rz, long double& g,
                       long double grad[3]) {
  const long double r2 = rx * rx + ry * ry + rz * rz;
  long double s2 = r2, kappa = 0;
  if (k.type == GPUFMM_KERNEL_YUKAWA) kappa = k.params[0];
  if (k.type == GPUFMM_KERNEL_REGULARIZED_LAPLACE) s2 = r2 + (long double)k.params[0] * k.params[0];
  if (k.type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) {
    kappa = k.params[0];
    s2 = r2 + (long double)k.params[1] * k.params[1];
  }
  if (s2 == 0) {  // singular kernels: a coincident pair adds nothing
    g = grad[0] = grad[1] = grad[2] = 0;
    return;
  }
  const long double s = std::sqrt(s2);
  g = std::exp(-kappa * s) / s;
  // d/ds (e^{-kappa s}/s) = -e^{-kappa s} (1 + kappa s) / s^2, ds/dR = R / s
  const long double c = -std::exp(-kappa * s) * (1 + kappa * s) / (s2 * s);
  grad[0] = c * rx;
  grad[1] = c * ry;
  grad[2] = c * rz;
}

// Direct sum in long double: pot (ntrg) and grad (3 ntrg), charges only.
inline void direct_ref(const KernelCase& k, int64_t ns, const double* src, const double* q, int64_t nt,
                       const double* trg, std::vector<double>& pot, std::vector<double>& grad) {
  pot.assign(nt, 0.0);
  grad.assign(3 * nt, 0.0);
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < nt; ++i) {
    long double v = 0, gx = 0, gy = 0, gz = 0;
    for (int64_t j = 0; j < ns; ++j) {
      long double g, gr[3];
      kernel_ref(k, (long double)trg[3 * i] - src[3 * j], (long double)trg[3 * i + 1] - src[3 * j + 1],
                 (long double)trg[3 * i + 2] - src[3 * j + 2], g, gr);
      v += q[j] * g;
      gx += q[j] * gr[0];
      gy += q[j] * gr[1];
      gz += q[j] * gr[2];
    }
    pot[i] = double(v);
    grad[3 * i] = double(gx);
    grad[3 * i + 1] = double(gy);
    grad[3 * i + 2] = double(gz);
  }
}

}  // namespace gpufmm_test
