// C thunks of the pair kernels and the direct sums (gpufmm_kernel_init,
// gpufmm_direct, gpufmm_direct_arrays, gpufmm_laplace_direct): every
// argument is checked before anything is computed (the outputs are untouched
// on any error), then the direct sum runs on the context's backend
// (src/cxx/nearfield/direct.hpp).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "array/array.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "gpufmm.h"
#include "kernel_convert.hpp"
#include "kernels/kernel.hpp"
#include "nearfield/direct.hpp"

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

static_assert(int(kernels::KernelType::kLaplace) == GPUFMM_KERNEL_LAPLACE &&
                  int(kernels::KernelType::kYukawa) == GPUFMM_KERNEL_YUKAWA &&
                  int(kernels::KernelType::kRegularizedLaplace) == GPUFMM_KERNEL_REGULARIZED_LAPLACE &&
                  int(kernels::KernelType::kRegularizedYukawa) == GPUFMM_KERNEL_REGULARIZED_YUKAWA &&
                  int(kernels::KernelType::kUser) == GPUFMM_KERNEL_USER,
              "kernels::KernelType mirrors gpufmm_kernel_type_t");
static_assert(kernels::kMaxUserParams == GPUFMM_KERNEL_MAX_PARAMS, "a user kernel takes every parameter");
static_assert(std::is_same<kernels::RadialFn, gpufmm_radial_fn_t>::value, "one radial function type");

// Host data: every check, then the sum (the outputs untouched on error).
void direct_host(Context& c, const kernels::KernelDesc& k, int precision, int64_t nsrc, const double* sources,
                 const double* charges, const double* dipoles, int64_t ntrg, const double* targets, double* pot,
                 double* grad) {
  const gpufmm_dtype_t dt = checked_precision(precision, "argument 'precision'");
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

  nearfield::DirectArgs a;
  a.nsrc = nsrc;
  a.sources = sources;
  a.charges = charges;
  a.dipoles = dipoles;
  a.ntrg = targets != nullptr ? ntrg : nsrc;
  a.targets = targets != nullptr ? targets : sources;
  a.pot = pot;
  a.grad = grad;
  if (a.ntrg == 0) return;
  nearfield::direct(c, k, dt, a);
}

// A non-NULL array argument of gpufmm_direct_arrays: live, float64, on
// `ctx` (the first array's context when ctx is NULL), count elements
// (count < 0: a multiple of 3, returned / 3). NULL handle -> nullptr.
const Array* direct_array(gpufmm_array_t h, Context*& ctx, const char* name) {
  if (h == nullptr) return nullptr;
  const Array* a = checked_array(h, name);
  if (ctx == nullptr) ctx = a->ctx;
  require(a->ctx == ctx, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name,
          "' belongs to another context than argument 'sources'");
  require(a->dtype == GPUFMM_FLOAT64, GPUFMM_ERROR_TYPE_MISMATCH, "argument '", name, "' has dtype ",
          dtype_name(a->dtype), ", not float64");
  return a;
}

void require_count(const Array* a, int64_t count, const char* name, const char* what) {
  if (a == nullptr) return;
  require(a->count == count, GPUFMM_ERROR_SIZE_MISMATCH, "argument '", name, "' has ", a->count,
          " elements, not ", count, " (", what, ")");
}

int64_t points_of(const Array* a, const char* name) {
  require(a->count % 3 == 0, GPUFMM_ERROR_SIZE_MISMATCH, "argument '", name, "' has ", a->count,
          " elements, not a multiple of 3 (xyz of each point)");
  return a->count / 3;
}

// The data of an array (an empty array: a valid pointer to nothing, so that
// "present but empty" stays distinct from "absent").
const double* data_of(const Array* a) {
  static const double kNothing = 0.0;
  if (a == nullptr) return nullptr;
  return a->count > 0 ? static_cast<const double*>(a->data) : &kNothing;
}

}  // namespace

namespace gpufmm {
namespace capi {

// Parameters of each built-in kernel type, in the order of gpufmm.h (-1: not
// a built-in type).
static int kernel_nparams(int type) {
  switch (type) {
    case GPUFMM_KERNEL_LAPLACE: return 0;
    case GPUFMM_KERNEL_YUKAWA: return 1;
    case GPUFMM_KERNEL_REGULARIZED_LAPLACE: return 1;
    case GPUFMM_KERNEL_REGULARIZED_YUKAWA: return 2;
    default: return -1;
  }
}

// A user kernel's expression field: NUL-terminated within the array.
static std::string expression(const char (&e)[GPUFMM_KERNEL_MAX_EXPR], const char* name, const char* field) {
  const void* end = std::memchr(e, '\0', GPUFMM_KERNEL_MAX_EXPR);
  require(end != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': user kernel field '", field,
          "' has no terminating NUL within GPUFMM_KERNEL_MAX_EXPR = ", GPUFMM_KERNEL_MAX_EXPR, " characters");
  return std::string(e, static_cast<const char*>(end));
}

static kernels::UserKernel user_kernel(const gpufmm_kernel_t* k, const char* name) {
  require(k->nparams >= 0 && k->nparams <= GPUFMM_KERNEL_MAX_PARAMS, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '",
          name, "': a user kernel takes 0..", GPUFMM_KERNEL_MAX_PARAMS, " parameters, not ", k->nparams);
  require(k->r0 == GPUFMM_KERNEL_R0_LEFT_OUT || k->r0 == GPUFMM_KERNEL_R0_INCLUDED, GPUFMM_ERROR_INVALID_ARGUMENT,
          "argument '", name, "': user kernel field 'r0' = ", k->r0,
          " is not GPUFMM_KERNEL_R0_LEFT_OUT or GPUFMM_KERNEL_R0_INCLUDED");
  kernels::UserKernel u;
  u.nparams = k->nparams;
  for (int i = 0; i < k->nparams; ++i) u.params[i] = k->params[i];
  u.r0_included = k->r0 == GPUFMM_KERNEL_R0_INCLUDED;
  u.value_expr = expression(k->value_expr, name, "value_expr");
  u.deriv_expr = expression(k->deriv_expr, name, "deriv_expr");
  u.value_fn = k->value_fn;
  u.deriv_fn = k->deriv_fn;
  return u;
}

// The internal description of a C kernel (validated; throws naming `name`).
kernels::KernelDesc kernel_desc(const gpufmm_kernel_t* k, const char* name) {
  require(k != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' is NULL");
  kernels::KernelDesc d;
  if (k->type == GPUFMM_KERNEL_USER) {
    d.type = kernels::KernelType::kUser;
    d.user = user_kernel(k, name);
    kernels::validate(d);
    return d;
  }
  const int np = kernel_nparams(k->type);
  require(np >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': type ", k->type,
          " is not a gpufmm_kernel_type_t");
  require(k->nparams == np, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "': the ",
          kernels::kernel_name(kernels::KernelType(k->type)), " kernel takes ", np, " parameters, not ", k->nparams);
  d.type = kernels::KernelType(k->type);
  switch (k->type) {
    case GPUFMM_KERNEL_YUKAWA: d.kappa = k->params[0]; break;
    case GPUFMM_KERNEL_REGULARIZED_LAPLACE: d.delta = k->params[0]; break;
    case GPUFMM_KERNEL_REGULARIZED_YUKAWA: d.kappa = k->params[0], d.delta = k->params[1]; break;
    default: break;
  }
  kernels::validate(d);
  return d;
}

}  // namespace capi
}  // namespace gpufmm

using capi::kernel_desc;

// The parameter arguments of the kernel initialisers, checked.
static void check_params(int nparams, const double* params) {
  require(nparams >= 0 && nparams <= GPUFMM_KERNEL_MAX_PARAMS, GPUFMM_ERROR_INVALID_ARGUMENT,
          "argument 'nparams' = ", nparams, " is not in 0..", GPUFMM_KERNEL_MAX_PARAMS);
  require(params != nullptr || nparams == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'params' is NULL but ",
          nparams, " parameters are given");
}

extern "C" gpufmm_status_t gpufmm_kernel_init(gpufmm_kernel_t* kernel, int type, int nparams, const double* params) {
  return guard("gpufmm_kernel_init", [&] {
    require(kernel != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'kernel' is NULL");
    check_params(nparams, params);
    require(type != GPUFMM_KERNEL_USER, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'type' = ", type,
            " (GPUFMM_KERNEL_USER): a user kernel is set with gpufmm_kernel_init_user");
    gpufmm_kernel_t k{};
    k.type = type;
    k.nparams = nparams;
    for (int i = 0; i < nparams; ++i) k.params[i] = params[i];
    kernel_desc(&k, "kernel");  // validates
    *kernel = k;
  });
}

// Copies a user expression argument (NULL or "": none) into its field.
static void set_expression(char (&field)[GPUFMM_KERNEL_MAX_EXPR], const char* e, const char* name) {
  if (e == nullptr) return;
  const size_t n = std::strlen(e);
  require(n < size_t(GPUFMM_KERNEL_MAX_EXPR), GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", name, "' has ", n,
          " characters, more than GPUFMM_KERNEL_MAX_EXPR - 1 = ", GPUFMM_KERNEL_MAX_EXPR - 1);
  std::memcpy(field, e, n + 1);
}

extern "C" gpufmm_status_t gpufmm_kernel_init_user(gpufmm_kernel_t* kernel, int nparams, const double* params,
                                                   const char* value_expr, const char* deriv_expr,
                                                   gpufmm_radial_fn_t value_fn, gpufmm_radial_fn_t deriv_fn, int r0) {
  return guard("gpufmm_kernel_init_user", [&] {
    require(kernel != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'kernel' is NULL");
    check_params(nparams, params);
    gpufmm_kernel_t k{};
    k.type = GPUFMM_KERNEL_USER;
    k.nparams = nparams;
    for (int i = 0; i < nparams; ++i) k.params[i] = params[i];
    k.r0 = r0;
    set_expression(k.value_expr, value_expr, "value_expr");
    set_expression(k.deriv_expr, deriv_expr, "deriv_expr");
    k.value_fn = value_fn;
    k.deriv_fn = deriv_fn;
    kernel_desc(&k, "kernel");  // validates
    *kernel = k;
  });
}

extern "C" gpufmm_status_t gpufmm_direct(gpufmm_context_t ctx, const gpufmm_kernel_t* kernel, int precision,
                                         int64_t nsrc, const double* sources, const double* charges, int64_t ntrg,
                                         const double* targets, double* pot, double* grad) {
  return guard("gpufmm_direct", [&] {
    Context* c = checked_context(ctx);
    const kernels::KernelDesc k = kernel_desc(kernel, "kernel");
    direct_host(*c, k, precision, nsrc, sources, charges, nullptr, ntrg, targets, pot, grad);
  });
}

extern "C" gpufmm_status_t gpufmm_laplace_direct_nd(gpufmm_context_t ctx, int precision, int nd, int64_t nsrc,
                                                    const double* sources, const double* charges,
                                                    const double* dipoles, int64_t ntrg, const double* targets,
                                                    double* pot, double* grad, double* hess) {
  return guard("gpufmm_laplace_direct_nd", [&] {
    Context* c = checked_context(ctx);
    const gpufmm_dtype_t dt = checked_precision(precision, "argument 'precision'");
    require(nd >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nd' = ", nd, " is not positive");
    check_count(nsrc, "nsrc");
    if (targets != nullptr) check_count(ntrg, "ntrg");
    require(charges != nullptr || dipoles != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'charges' and 'dipoles' are both NULL: the sources carry nothing");
    require(pot != nullptr || grad != nullptr || hess != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'pot', 'grad' and 'hess' are all NULL: nothing to compute");
    check_points(sources, nsrc, "sources");
    if (targets != nullptr) check_points(targets, ntrg, "targets");
    check_values(charges, nsrc * nd, 1, "charges", "value");
    check_values(dipoles, nsrc * nd * 3, 1, "dipoles", "value");
    const int64_t nt = targets != nullptr ? ntrg : nsrc;
    if (nt == 0) return;
    // One density at a time into scratch (nothing written on error), then
    // scattered into the interleaved outputs.
    const size_t ns = size_t(nsrc), n = size_t(nt), m = size_t(nd);
    std::vector<double> q(charges ? ns : 0), d(dipoles ? 3 * ns : 0), P(pot ? m * n : 0), G(grad || hess ? m * 3 * n : 0),
        H(hess ? m * 6 * n : 0);
    for (size_t k = 0; k < m; ++k) {
      for (size_t j = 0; j < ns; ++j) {
        if (charges) q[j] = charges[k + m * j];
        if (dipoles)
          for (int c = 0; c < 3; ++c) d[3 * j + c] = dipoles[k + m * (c + 3 * j)];
      }
      nearfield::DirectArgs a;
      a.nsrc = nsrc;
      a.sources = sources;
      a.charges = charges ? q.data() : nullptr;
      a.dipoles = dipoles ? d.data() : nullptr;
      a.ntrg = nt;
      a.targets = targets != nullptr ? targets : sources;
      a.pot = pot ? P.data() + k * n : nullptr;
      a.grad = grad || hess ? G.data() + k * 3 * n : nullptr;
      a.hess = hess ? H.data() + k * 6 * n : nullptr;
      nearfield::direct(*c, kernels::KernelDesc{}, dt, a);
    }
    for (size_t k = 0; k < m; ++k)
      for (size_t i = 0; i < n; ++i) {
        if (pot) pot[k + m * i] = P[k * n + i];
        if (grad)
          for (int c = 0; c < 3; ++c) grad[k + m * (c + 3 * i)] = G[k * 3 * n + 3 * i + c];
        if (hess)
          for (int c = 0; c < 6; ++c) hess[k + m * (c + 6 * i)] = H[k * 6 * n + 6 * i + c];
      }
  });
}

extern "C" gpufmm_status_t gpufmm_direct_arrays(const gpufmm_kernel_t* kernel, int precision, gpufmm_array_t sources,
                                                gpufmm_array_t charges, gpufmm_array_t targets, gpufmm_array_t pot,
                                                gpufmm_array_t grad) {
  return guard("gpufmm_direct_arrays", [&] {
    const kernels::KernelDesc k = kernel_desc(kernel, "kernel");
    const gpufmm_dtype_t dt = checked_precision(precision, "argument 'precision'");
    Context* ctx = nullptr;
    require(sources != nullptr, GPUFMM_ERROR_INVALID_HANDLE, "argument 'sources' is a NULL handle");
    const Array* s = direct_array(sources, ctx, "sources");
    const Array* q = direct_array(charges, ctx, "charges");
    const Array* t = direct_array(targets, ctx, "targets");
    const Array* p = direct_array(pot, ctx, "pot");
    const Array* g = direct_array(grad, ctx, "grad");
    require(q != nullptr, GPUFMM_ERROR_INVALID_HANDLE, "argument 'charges' is a NULL handle");
    require(p != nullptr || g != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT,
            "arguments 'pot' and 'grad' are both NULL: nothing to compute");
    const int64_t ns = points_of(s, "sources");
    const int64_t nt = t ? points_of(t, "targets") : ns;
    require_count(q, ns, "charges", "one per source");
    require_count(p, nt, "pot", "one per target");
    require_count(g, 3 * nt, "grad", "three per target");
    if (!ctx->on_gpu()) {  // host memory: the host checks
      direct_host(*ctx, k, precision, ns, data_of(s), data_of(q), nullptr, nt, t ? data_of(t) : nullptr,
                  p ? static_cast<double*>(p->data) : nullptr, g ? static_cast<double*>(g->data) : nullptr);
      return;
    }
    nearfield::DirectArgs a;  // device memory: checked by the CUDA backend
    a.on_context = true;
    a.nsrc = ns;
    a.sources = data_of(s);
    a.charges = data_of(q);
    a.ntrg = nt;
    a.targets = t ? data_of(t) : a.sources;
    a.pot = p && nt > 0 ? static_cast<double*>(p->data) : nullptr;
    a.grad = g && nt > 0 ? static_cast<double*>(g->data) : nullptr;
    if (nt == 0) return;
    nearfield::direct(*ctx, k, dt, a);
  });
}

extern "C" gpufmm_status_t gpufmm_laplace_direct(gpufmm_context_t ctx, int precision, int64_t nsrc,
                                                 const double* sources, const double* charges,
                                                 const double* dipoles, int64_t ntrg, const double* targets,
                                                 double* pot, double* grad) {
  return guard("gpufmm_laplace_direct", [&] {
    Context* c = checked_context(ctx);
    direct_host(*c, kernels::KernelDesc{}, precision, nsrc, sources, charges, dipoles, ntrg, targets, pot, grad);
  });
}
