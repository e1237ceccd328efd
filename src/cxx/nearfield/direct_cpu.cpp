// Direct summation on the CPU backend (OpenMP), and the backend dispatch of
// nearfield::direct. The per-pair math is the kernel struct's accumulate
// (src/cxx/kernels), in the source loop of nearfield/p2p.hpp shared with the
// FMM's P2P; the CUDA kernel calls the same structs.
//
// Layout: the sources are converted once to structure-of-arrays in the
// working precision T (float or double), padded to a multiple of kLanes, so
// that the inner loop over sources is a unit-stride SIMD loop. The targets
// are split into blocks of kTargetBlock, one block per OpenMP work item;
// each block sweeps the sources in tiles of kSourceTile, which stay in
// L1/L2 while the block's targets use them. Accumulation is in T; the
// results are converted to double at the end. GCC vectorises the source loop
// only with -fno-math-errno -fno-trapping-math (CMakeLists.txt sets them for
// this folder).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/cpu_isa.hpp"
#include "core/error.hpp"
#include "nearfield/direct.hpp"
#include "nearfield/p2p.hpp"
#include "tree/parallel.hpp"

namespace gpufmm {
namespace nearfield {

namespace {

constexpr int64_t kTargetBlock = 32;
constexpr int64_t kSourceTile = 1024;
static_assert(kSourceTile % kLanes == 0, "source tiles are whole lane groups");

template <class T>
Sources<T, T> to_soa(const DirectArgs& a) {
  Sources<T, T> s(padded(a.nsrc));
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < a.nsrc; ++j) {
    s.x[j] = static_cast<T>(a.sources[3 * j] - a.origin[0]);
    s.y[j] = static_cast<T>(a.sources[3 * j + 1] - a.origin[1]);
    s.z[j] = static_cast<T>(a.sources[3 * j + 2] - a.origin[2]);
    if (a.charges) s.q[j] = static_cast<T>(a.charges[j]);
    if (a.dipoles) {
      s.dx[j] = static_cast<T>(a.dipoles[3 * j]);
      s.dy[j] = static_cast<T>(a.dipoles[3 * j + 1]);
      s.dz[j] = static_cast<T>(a.dipoles[3 * j + 2]);
    }
  }
  return s;
}

template <bool kC, bool kD, bool kG, class K, class T>
GPUFMM_CPU_CLONES GPUFMM_CPU_FLATTEN void direct_sum(const K& k, const Sources<T, T>& s, const DirectArgs& a) {
  const int64_t nblocks = (a.ntrg + kTargetBlock - 1) / kTargetBlock;
  const int64_t ns = static_cast<int64_t>(s.x.size());  // padded
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t i0 = b * kTargetBlock, i1 = std::min(a.ntrg, i0 + kTargetBlock);
    const int nb = static_cast<int>(i1 - i0);
    T yx[kTargetBlock], yy[kTargetBlock], yz[kTargetBlock];
    T pv[kTargetBlock], px[kTargetBlock], py[kTargetBlock], pz[kTargetBlock];
    for (int t = 0; t < nb; ++t) {
      yx[t] = static_cast<T>(a.targets[3 * (i0 + t)] - a.origin[0]);
      yy[t] = static_cast<T>(a.targets[3 * (i0 + t) + 1] - a.origin[1]);
      yz[t] = static_cast<T>(a.targets[3 * (i0 + t) + 2] - a.origin[2]);
      pv[t] = px[t] = py[t] = pz[t] = T(0);
    }
    for (int64_t j0 = 0; j0 < ns; j0 += kSourceTile) {
      const int64_t j1 = std::min(ns, j0 + kSourceTile);
      for (int t = 0; t < nb; ++t) {
        T v, gx, gy, gz;
        sum_sources<kC, kD, kG>(k, yx[t], yy[t], yz[t], j0, j1, s, v, gx, gy, gz);
        pv[t] += v;
        px[t] += gx;
        py[t] += gy;
        pz[t] += gz;
      }
    }
    for (int t = 0; t < nb; ++t) {
      const int64_t i = i0 + t;
      if (a.pot) a.pot[i] = static_cast<double>(pv[t]);
      if (kG) {
        a.grad[3 * i] = static_cast<double>(px[t]);
        a.grad[3 * i + 1] = static_cast<double>(py[t]);
        a.grad[3 * i + 2] = static_cast<double>(pz[t]);
      }
    }
  }
}

// direct_sum with the Hessian (the Laplace kernel; a.grad non-null).
template <bool kC, bool kD, class T>
GPUFMM_CPU_CLONES GPUFMM_CPU_FLATTEN void direct_sum_hess(const Sources<T, T>& s, const DirectArgs& a) {
  const kernels::Laplace<T> k;
  const int64_t ns = static_cast<int64_t>(s.x.size());  // padded
#pragma omp parallel for schedule(dynamic, kTargetBlock)
  for (int64_t i = 0; i < a.ntrg; ++i) {
    const T y[3] = {static_cast<T>(a.targets[3 * i] - a.origin[0]), static_cast<T>(a.targets[3 * i + 1] - a.origin[1]),
                    static_cast<T>(a.targets[3 * i + 2] - a.origin[2])};
    T acc[10] = {};
    for (int64_t j0 = 0; j0 < ns; j0 += kSourceTile) {
      T o[10];
      sum_sources_hess<kC, kD>(k, y[0], y[1], y[2], j0, std::min(ns, j0 + kSourceTile), s, o);
      for (int c = 0; c < 10; ++c) acc[c] += o[c];
    }
    if (a.pot) a.pot[i] = static_cast<double>(acc[0]);
    for (int c = 0; c < 3; ++c) a.grad[3 * i + c] = static_cast<double>(acc[1 + c]);
    for (int c = 0; c < 6; ++c) a.hess[6 * i + c] = static_cast<double>(acc[4 + c]);
  }
}

template <class T>
void run(const kernels::KernelDesc& desc, const DirectArgs& a) {
  const Sources<T, T> s = allocating("the direct sum's sources", 7.0 * sizeof(T) * double(padded(a.nsrc)),
                                     [&] { return to_soa<T>(a); });  // outputs untouched on failure
  if (a.hess) {
    kernels::with_sources<true>(a.charges != nullptr, a.dipoles != nullptr, true,
                                [&](auto c, auto d, auto) { direct_sum_hess<decltype(c)::value, decltype(d)::value>(s, a); });
    return;
  }
  kernels::with_kernel<T>(desc, [&](auto k) {
    using K = decltype(k);
    kernels::with_sources<K::kDipoles>(a.charges != nullptr, a.dipoles != nullptr, a.grad != nullptr,
                                       [&](auto c, auto d, auto g) { direct_sum<decltype(c)::value, decltype(d)::value, decltype(g)::value>(k, s, a); });
  });
}

}  // namespace

namespace cpu {

void direct(const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& a, DirectTiming* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.ntrg > 0) {
    if (precision == GPUFMM_FLOAT32)
      run<float>(k, a);
    else
      run<double>(k, a);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timing) {
    timing->kernel_seconds = s;
    timing->total_seconds = s;
  }
}

}  // namespace cpu

void direct_origin(const DirectArgs& a, double origin[3]) {
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  tree::detail::bounding_box(a.sources, a.nsrc, lo, hi);
  if (!(a.targets == a.sources && a.ntrg <= a.nsrc)) tree::detail::bounding_box(a.targets, a.ntrg, lo, hi);
  for (int k = 0; k < 3; ++k)
    origin[k] = lo[k] <= hi[k] ? 0.5 * lo[k] + 0.5 * hi[k] : 0.0;  // halves first: no overflow
}

namespace {

// The backend's sum (arguments checked).
void run_backend(Context& ctx, const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
                 DirectTiming* timing) {
  DirectArgs a = args;
  // Float: coordinates relative to the bounding box's centre (their rounding
  // to float is the dominant error of close pairs). Double: as given, so that
  // every difference is one correctly rounded subtraction; a shift would
  // round coordinates far smaller than it (6e-11 relative for pairs 1e-6
  // apart near 0 in a unit box, test TightClustersDouble). Device data: the
  // CUDA backend finds the centre on the device.
  a.origin[0] = a.origin[1] = a.origin[2] = 0.0;
  if (precision == GPUFMM_FLOAT32 && !a.on_context) direct_origin(a, a.origin);
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::direct(ctx, k, precision, a, timing);
    return;
#else
    fail(GPUFMM_ERROR_INTERNAL, "direct: a CUDA context in a build without CUDA");
#endif
  }
  cpu::direct(k, precision, a, timing);
}

// Context memory (device memory of a GPU context), freed on scope exit.
struct Scratch {
  Context& ctx;
  void* p = nullptr;
  Scratch(Context& c, size_t bytes, const char* what) : ctx(c) {
    if (bytes > 0) p = backend_alloc(ctx, bytes, what);
  }
  ~Scratch() { backend_free(ctx, p); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// A sum with a user kernel: into scratch outputs, copied to the outputs only
// when every value is finite (kernels::check_user_results).
void run_checked(Context& ctx, const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
                 DirectTiming* timing) {
  const size_t nt = size_t(args.ntrg), db = sizeof(double);
  std::vector<double> pot(args.pot ? nt : 0), grad(args.grad ? 3 * nt : 0);
  const bool dev = args.on_context;
  Scratch dpot(ctx, dev && args.pot ? nt * db : 0, "direct-sum potentials");
  Scratch dgrad(ctx, dev && args.grad ? 3 * nt * db : 0, "direct-sum gradients");
  DirectArgs a = args;
  if (args.pot) a.pot = dev ? static_cast<double*>(dpot.p) : pot.data();
  if (args.grad) a.grad = dev ? static_cast<double*>(dgrad.p) : grad.data();
  run_backend(ctx, k, precision, a, timing);
  if (dev && args.pot) backend_download(ctx, pot.data(), a.pot, nt * db, false);
  if (dev && args.grad) backend_download(ctx, grad.data(), a.grad, 3 * nt * db, false);
  kernels::check_user_results(args.pot ? pot.data() : nullptr, args.grad ? grad.data() : nullptr, args.ntrg);
  if (dev) {
    if (args.pot) backend_copy(ctx, args.pot, a.pot, nt * db);
    if (args.grad) backend_copy(ctx, args.grad, a.grad, 3 * nt * db);
    backend_synchronize(ctx);
    return;
  }
  if (args.pot) std::copy(pot.begin(), pot.end(), args.pot);
  if (args.grad) std::copy(grad.begin(), grad.end(), args.grad);
}

}  // namespace

void direct(Context& ctx, const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
            DirectTiming* timing) {
  require(precision == GPUFMM_FLOAT32 || precision == GPUFMM_FLOAT64, GPUFMM_ERROR_INVALID_ARGUMENT,
          "direct: precision ", static_cast<int>(precision), " is neither GPUFMM_FLOAT32 nor GPUFMM_FLOAT64");
  require(args.charges || args.dipoles, GPUFMM_ERROR_INVALID_ARGUMENT, "direct: no charges and no dipoles");
  require(args.pot || args.grad, GPUFMM_ERROR_INVALID_ARGUMENT, "direct: no output wanted");
  require(!args.hess || (k.type == kernels::KernelType::kLaplace && args.grad), GPUFMM_ERROR_INTERNAL,
          "direct: Hessians are for the Laplace kernel, with the gradient");
  require(!args.dipoles || kernels::kernel_has_dipoles(k.type), GPUFMM_ERROR_INVALID_ARGUMENT,
          "direct: the ", kernels::kernel_name(k.type), " kernel takes no dipoles");
  kernels::validate_for_backend(k, ctx.on_gpu());
  if (k.type == kernels::KernelType::kUser)
    run_checked(ctx, k, precision, args, timing);
  else
    run_backend(ctx, k, precision, args, timing);
}

}  // namespace nearfield
}  // namespace gpufmm
