// C thunk of gpufmm_laplace_direct: every argument is checked before
// anything is computed (the outputs are untouched on any error), then the
// direct sum runs on the context's backend (src/cxx/fmm/direct.hpp).
#include <cmath>
#include <cstdint>

#include "core/context.hpp"
#include "core/error.hpp"
#include "fmm/direct.hpp"
#include "gpufmm.h"

using namespace gpufmm;

namespace {

// Far beyond any memory, small enough that 3 * n * sizeof(double) cannot
// overflow int64 / size_t.
constexpr int64_t kMaxCount = int64_t(1) << 58;

void check_count(int64_t n, const char* name) {
  require(n >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' = ", n, " is negative");
  require(n <= kMaxCount, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' = ", n, " is too large");
}

// 3 x n coordinates: finite, named with the first bad point index.
void check_points(const double* xyz, int64_t n, const char* name) {
  require(xyz != nullptr || n == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' is NULL but holds ", n,
          " points");
  for (int64_t i = 0; i < n; ++i) {
    const double x = xyz[3 * i], y = xyz[3 * i + 1], z = xyz[3 * i + 2];
    if (!(std::isfinite(x) && std::isfinite(y) && std::isfinite(z)))
      fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': point ", i, " has a NaN or Inf coordinate (", x,
           ", ", y, ", ", z, ")");
  }
}

// n values of `per` components each (charges 1, dipoles 3): finite.
void check_values(const double* v, int64_t n, int per, const char* name, const char* what) {
  if (v == nullptr) return;
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < per; ++k)
      if (!std::isfinite(v[per * i + k])) {
        if (per == 1)
          fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i, " is NaN or Inf (", v[i], ")");
        fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': ", what, " ", i, " has a NaN or Inf component (",
             v[per * i], ", ", v[per * i + 1], ", ", v[per * i + 2], ")");
      }
}

}  // namespace

extern "C" gpufmm_status_t gpufmm_laplace_direct(gpufmm_context_t ctx, int precision, int64_t nsrc,
                                                 const double* sources, const double* charges,
                                                 const double* dipoles, int64_t ntrg, const double* targets,
                                                 double* pot, double* grad) {
  return guard("gpufmm_laplace_direct", [&] {
    Context* c = checked_context(ctx);
    require(precision == GPUFMM_FLOAT32 || precision == GPUFMM_FLOAT64, GPUFMM_ERROR_INVALID_ARGUMENT,
            "argument 'precision' = ", precision, " is neither GPUFMM_FLOAT32 (", static_cast<int>(GPUFMM_FLOAT32),
            ") nor GPUFMM_FLOAT64 (", static_cast<int>(GPUFMM_FLOAT64), ")");
    check_count(nsrc, "nsrc");
    // targets == NULL: at the sources, ntrg ignored.
    if (targets != nullptr) check_count(ntrg, "ntrg");
    require(charges != nullptr || dipoles != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'charges' and 'dipoles' are both NULL: the sources carry nothing");
    require(pot != nullptr || grad != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'pot' and 'grad' are both NULL: nothing to compute");
    check_points(sources, nsrc, "sources");
    if (targets != nullptr) check_points(targets, ntrg, "targets");
    check_values(charges, nsrc, 1, "charges", "charge");
    check_values(dipoles, nsrc, 3, "dipoles", "dipole");

    LaplaceDirectArgs a;
    a.nsrc = nsrc;
    a.sources = sources;
    a.charges = charges;
    a.dipoles = dipoles;
    a.ntrg = targets != nullptr ? ntrg : nsrc;
    a.targets = targets != nullptr ? targets : sources;
    a.pot = pot;
    a.grad = grad;
    if (a.ntrg == 0) return;
    laplace_direct(*c, static_cast<gpufmm_dtype_t>(precision), a);
  });
}
