// Direct summation on the CUDA backend, for every pair kernel
// (src/cxx/kernels): the classic tiled N-body kernel of papers/000 sec. 4.1.
//
//  - Each thread owns its targets (one in double, four in float: see
//    TargetsPerThread): their coordinates and accumulators (pot, grad) live
//    in registers for the whole sweep.
//  - The sources are packed on the device (pack_kernel, from the double
//    inputs) into one array of records in the working precision T, stride 4
//    (x y z q) or, with dipoles, 8 (x y z q dx dy dz 0), and swept in tiles
//    of one thread block: all threads of the block copy a tile from global to
//    shared memory (coalesced), synchronise, and every thread runs through
//    the tile (loop unrolled; the reads are shared-memory broadcasts of
//    16-byte records).
//  - The per-pair math is the kernel struct's accumulate, the same function
//    the OpenMP backend calls; on the device its reciprocal square root is
//    the hardware approximation (kernels/fast_math.hpp).
//  - Load balance: the sources may be split into `parts` contiguous chunks
//    over gridDim.y (plan_launch picks the split that fills the last wave of
//    blocks best, which matters most when there are few targets); each part
//    writes its own partial sums, and a second kernel adds the parts in a
//    fixed order (deterministic; no atomics) and converts them to double.
//  - Host data are uploaded in double; device data (gpufmm_direct_arrays) are
//    read in place and the results written in place.
//  - User kernels run the same direct_kernel (direct_kernel.cuh), compiled
//    by NVRTC with the user's expressions (user_kernel.cuh).
//
// Every CUDA call and every launch is checked (cuda/common/cuda_check.cuh).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/cuda_backend.hpp"
#include "cuda/common/bounds.cuh"
#include "cuda/common/cuda_check.cuh"
#include "cuda/nearfield/direct_kernel.cuh"
#include "cuda/nearfield/user_kernel.cuh"
#include "nearfield/direct.hpp"

namespace gpufmm {
namespace nearfield {
namespace cuda {

using gpufmm::cuda::check_launch;
using gpufmm::cuda::clear_last_error;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::grid_for;
using gpufmm::cuda::stream_of;
using gpufmm::cuda::StreamBuffer;

namespace {

// out[e] = sum over p < parts of in[p * n + e], in the order p = 0, 1, ...,
// converted to double.
template <class T>
__global__ void sum_parts_kernel(int64_t n, int parts, const T* __restrict__ in, double* __restrict__ out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    T s = in[e];
    for (int p = 1; p < parts; ++p) s += in[int64_t(p) * n + e];
    out[e] = static_cast<double>(s);
  }
}

// Source records (stride S) and target coordinates in T, relative to origin.
// Device inputs are checked here too: bad[0..3] (initialised to ~0) receive
// the first index of a non-finite source coordinate, charge, dipole and
// target coordinate.
__device__ __forceinline__ bool finite3(const double* p) {
  return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

template <class T, int S>
__global__ void pack_kernel(int64_t nsrc, const double* __restrict__ xyz, const double* __restrict__ q,
                            const double* __restrict__ d, int64_t ntrg, const double* __restrict__ txyz, double ox,
                            double oy, double oz, T* __restrict__ rec, T* __restrict__ trg,
                            unsigned long long* __restrict__ bad) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < nsrc || j < ntrg; j += stride) {
    if (j < nsrc) {
      T* r = rec + j * S;
      r[0] = T(xyz[3 * j] - ox);
      r[1] = T(xyz[3 * j + 1] - oy);
      r[2] = T(xyz[3 * j + 2] - oz);
      r[3] = q ? T(q[j]) : T(0);
      if (!finite3(xyz + 3 * j)) atomicMin(bad, (unsigned long long)j);
      if (q && !isfinite(q[j])) atomicMin(bad + 1, (unsigned long long)j);
      if (S == 8) {
        r[4] = d ? T(d[3 * j]) : T(0);
        r[5] = d ? T(d[3 * j + 1]) : T(0);
        r[6] = d ? T(d[3 * j + 2]) : T(0);
        r[7] = T(0);
        if (d && !finite3(d + 3 * j)) atomicMin(bad + 2, (unsigned long long)j);
      }
    }
    if (j < ntrg) {
      trg[3 * j] = T(txyz[3 * j] - ox);
      trg[3 * j + 1] = T(txyz[3 * j + 1] - oy);
      trg[3 * j + 2] = T(txyz[3 * j + 2] - oz);
      if (!finite3(txyz + 3 * j)) atomicMin(bad + 3, (unsigned long long)j);
    }
  }
}

// The centre of the bounding box of device points (direct_origin's rule).
void device_origin(Context& ctx, const DirectArgs& a, double origin[3]) {
  using gpufmm::cuda::box_partial_kernel;
  using gpufmm::cuda::kBoxBlock;
  const int64_t n[2] = {a.nsrc, a.targets == a.sources && a.ntrg <= a.nsrc ? 0 : a.ntrg};
  const double* p[2] = {a.sources, a.targets};
  unsigned blocks[2];
  for (int s = 0; s < 2; ++s) blocks[s] = n[s] > 0 ? std::min(grid_for(n[s], kBoxBlock), 1024u) : 0u;
  const unsigned total = blocks[0] + blocks[1];
  StreamBuffer part(ctx, size_t(6) * total * sizeof(double), "direct-sum bounds");
  StreamBuffer bad(ctx, sizeof(unsigned long long), "direct-sum bounds check");  // checked by pack_kernel
  cudaStream_t stream = stream_of(ctx);
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xff, sizeof(unsigned long long), stream));
  clear_last_error();
  for (int s = 0; s < 2; ++s)
    if (n[s] > 0) {
      box_partial_kernel<<<blocks[s], kBoxBlock, 0, stream>>>(
          p[s], n[s], static_cast<double*>(part.get()) + 6 * (s == 0 ? 0 : blocks[0]),
          static_cast<unsigned long long*>(bad.get()));
      check_launch("box_partial_kernel");
    }
  std::vector<double> h(size_t(6) * total);
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h.data(), part.get(), h.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int c = 0; c < 3; ++c) {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (unsigned b = 0; b < total; ++b) {
      lo = std::min(lo, h[6 * b + c]);
      hi = std::max(hi, h[6 * b + 3 + c]);
    }
    origin[c] = lo <= hi ? 0.5 * lo + 0.5 * hi : 0.0;
  }
}

// A CUDA event (for kernel timing), destroyed on scope exit.
class Event {
 public:
  Event() { GPUFMM_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (cudaEventDestroy(e_) != cudaSuccess) (void)cudaGetLastError();
  }
  cudaEvent_t get() const { return e_; }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

 private:
  cudaEvent_t e_ = nullptr;
};

struct Launch {
  int64_t ntrg, nsrc, chunk;
  int parts;
  dim3 grid;
};

// Chooses the source split. A grid of equal blocks runs in waves of `slots`
// resident blocks (SMs x blocks per SM), so nbx target blocks take
// ceil(nbx / slots) block-times: with 3.7 waves, 7% of the GPU idles in the
// last one, and with fewer blocks than slots most of it idles. Splitting the
// sources into `parts` chunks makes nbx * parts shorter work items; the split
// with the best wave efficiency (items / (waves * slots)) is taken, more parts
// only for a gain of 1% or more (each part costs a pass over its partial sums),
// with chunks of at least 2 tiles and the partial sums within 512 MiB.
Launch plan_launch(int64_t ntrg, int64_t nsrc, int targets_per_block, int blocks_per_sm,
                   size_t out_bytes_per_target) {
  int dev = 0, sms = 0;
  GPUFMM_CUDA_CHECK(cudaGetDevice(&dev));
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int64_t slots = int64_t(std::max(sms, 1)) * std::max(blocks_per_sm, 1);
  const int64_t nbx = (ntrg + targets_per_block - 1) / targets_per_block;
  require(nbx <= 0x7fffffff, GPUFMM_ERROR_NOT_SUPPORTED, "direct: ", ntrg, " targets exceed the CUDA grid limit");
  const int64_t tiles = (nsrc + kDirectBlock - 1) / kDirectBlock;
  const int64_t by_memory = std::max<int64_t>(
      1, int64_t(512) * 1024 * 1024 / std::max<int64_t>(1, ntrg * int64_t(out_bytes_per_target)));
  const int64_t max_parts = std::max<int64_t>(1, std::min<int64_t>({tiles / 2, by_memory, 256}));
  Launch l;
  l.ntrg = ntrg;
  l.nsrc = nsrc;
  l.parts = 1;
  l.chunk = tiles * kDirectBlock;
  double best = -1;
  for (int64_t want = 1; want <= max_parts; ++want) {
    const int64_t chunk = (tiles + want - 1) / want * kDirectBlock;  // whole tiles
    const int64_t parts = (nsrc + chunk - 1) / chunk;
    if (parts != want) continue;  // the same split as a smaller `want`
    const int64_t items = nbx * parts, waves = (items + slots - 1) / slots;
    const double eff = double(items) / double(waves * slots);
    if (eff > best + 0.01) {
      best = eff;
      l.parts = static_cast<int>(parts);
      l.chunk = chunk;
    }
  }
  l.grid = dim3(static_cast<unsigned>(nbx), static_cast<unsigned>(l.parts), 1);
  return l;
}

template <class T>
T* ptr(const StreamBuffer& b) {
  return static_cast<T*>(b.get());
}

// Throws INVALID_ARGUMENT naming the first non-finite device input found by
// pack_kernel (host inputs are checked by the C thunk).
void check_inputs(cudaStream_t stream, const unsigned long long* d_bad) {
  unsigned long long bad[4];
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost, stream));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  const char* what[4][2] = {{"sources", "point"}, {"charges", "charge"}, {"dipoles", "dipole"}, {"targets", "point"}};
  for (int k = 0; k < 4; ++k)
    require(bad[k] == ~0ull, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", what[k][0], "': ", what[k][1], " ", bad[k],
            " has a NaN or Inf value");
}

template <class T>
void launch_sum_parts(int64_t n, int parts, const T* in, double* out, cudaStream_t s) {
  if (n == 0) return;
  clear_last_error();
  sum_parts_kernel<T><<<grid_for(n, kDirectBlock), kDirectBlock, 0, s>>>(n, parts, in, out);
  check_launch("sum_parts_kernel");
}

// Device copies (or views) of the double inputs and outputs of one call.
struct DeviceData {
  const double *src = nullptr, *q = nullptr, *d = nullptr, *trg = nullptr;
  double *pot = nullptr, *grad = nullptr, *hess = nullptr;
};

// Pack, kernel(s), conversion to double into x.pot / x.grad (device) for
// one kernel instance: bps = its resident blocks per SM, launch(l, trg, rec,
// pot, grad) launches it (direct_kernel's arguments after the kernel struct)
// on ctx's stream.
template <bool kC, bool kD, bool kG, bool kH, class T, class Launcher>
void execute(Context& ctx, int bps, const Launcher& launch, const DirectArgs& a, const DeviceData& x,
             DirectTiming* timing) {
  cudaStream_t stream = stream_of(ctx);
  constexpr int S = Stride<kD>::value;
  const size_t tb = sizeof(T);
  const Launch l = plan_launch(a.ntrg, a.nsrc, TargetsPerThread<T>::value * kDirectBlock, bps,
                               ((a.pot ? 1 : 0) + (kG ? 3 : 0) + (kH ? 6 : 0)) * tb);
  const size_t nt = size_t(a.ntrg), ns = size_t(a.nsrc);
  StreamBuffer d_rec(ctx, ns * S * tb, "direct-sum sources");
  StreamBuffer d_trg(ctx, 3 * nt * tb, "direct-sum targets");
  StreamBuffer p_pot(ctx, a.pot ? nt * l.parts * tb : 0, "direct-sum partial potentials");
  StreamBuffer p_grad(ctx, kG ? 3 * nt * l.parts * tb : 0, "direct-sum partial gradients");
  StreamBuffer p_hess(ctx, kH ? 6 * nt * l.parts * tb : 0, "direct-sum partial Hessians");
  StreamBuffer d_bad(ctx, 4 * sizeof(unsigned long long), "direct-sum input check");

  Event start, stop;
  GPUFMM_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(d_bad.get(), 0xff, 4 * sizeof(unsigned long long), stream));
  clear_last_error();
  pack_kernel<T, S><<<grid_for(int64_t(std::max(ns, nt)), kDirectBlock), kDirectBlock, 0, stream>>>(
      a.nsrc, x.src, x.q, x.d, a.ntrg, x.trg, a.origin[0], a.origin[1], a.origin[2], ptr<T>(d_rec), ptr<T>(d_trg),
      ptr<unsigned long long>(d_bad));
  check_launch("pack_kernel");
  if (a.on_context) check_inputs(stream, ptr<unsigned long long>(d_bad));  // before any output is written
  launch(l, ptr<T>(d_trg), ptr<T>(d_rec), a.pot ? ptr<T>(p_pot) : nullptr, kG ? ptr<T>(p_grad) : nullptr,
         kH ? ptr<T>(p_hess) : nullptr);
  if (a.pot) launch_sum_parts<T>(a.ntrg, l.parts, ptr<T>(p_pot), x.pot, stream);
  if (kG) launch_sum_parts<T>(3 * a.ntrg, l.parts, ptr<T>(p_grad), x.grad, stream);
  if (kH) launch_sum_parts<T>(6 * a.ntrg, l.parts, ptr<T>(p_hess), x.hess, stream);
  GPUFMM_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  GPUFMM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  GPUFMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  if (timing) timing->kernel_seconds = 1e-3 * ms;
}

// A user kernel: direct_kernel as NVRTC compiled it (user_kernel.cuh).
template <class T>
void run_user(Context& ctx, const kernels::KernelDesc& desc, const DirectArgs& a, const DeviceData& x,
              DirectTiming* timing) {
  const UserKernels& uk = user_kernels(ctx, desc.user, sizeof(T) == sizeof(float) ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64);
  kernels::RadialParams<T> params = user_params<T>(desc.user);
  auto go = [&](auto g_) {
    constexpr bool kG = decltype(g_)::value;
    const cudaKernel_t f = uk.direct[kG];
    auto launch = [&](const Launch& l, T* trg, T* rec, T* pot, T* grad, T* hess) {
      int64_t ntrg = l.ntrg, nsrc = l.nsrc, chunk = l.chunk;
      void* args[] = {&params, &ntrg, &trg, &nsrc, &chunk, &rec, &pot, &grad, &hess};
      launch_user_kernel(f, l.grid, kDirectBlock, stream_of(ctx), args, "direct_kernel (user kernel)");
    };
    execute<true, false, kG, false, T>(ctx, user_kernel_occupancy(f, kDirectBlock), launch, a, x, timing);
  };
  if (a.grad)
    go(kernels::Flag<true>{});
  else
    go(kernels::Flag<false>{});
}

template <class T>
void run(Context& ctx, const kernels::KernelDesc& desc, const DirectArgs& a, const DeviceData& x,
         DirectTiming* timing) {
  if (desc.type == kernels::KernelType::kUser) {
    run_user<T>(ctx, desc, a, x, timing);
    return;
  }
  // One instance of direct_kernel (kH: the Hessian, Laplace only).
  auto instance = [&](auto k, auto c, auto d, auto g, auto hh) {
    using K = decltype(k);
    constexpr bool kC = decltype(c)::value, kD = decltype(d)::value, kG = decltype(g)::value;
    constexpr bool kH = decltype(hh)::value;
    int bps = 0;
    GPUFMM_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, direct_kernel<K, T, kC, kD, kG, kH>, kDirectBlock, 0));
    cudaStream_t stream = stream_of(ctx);
    auto launch = [&](const Launch& l, T* trg, T* rec, T* pot, T* grad, T* hess) {
      direct_kernel<K, T, kC, kD, kG, kH><<<l.grid, kDirectBlock, 0, stream>>>(k, l.ntrg, trg, l.nsrc, l.chunk, rec,
                                                                               pot, grad, hess);
      check_launch("direct_kernel");
    };
    execute<kC, kD, kG, kH, T>(ctx, bps, launch, a, x, timing);
  };
  if (a.hess) {
    kernels::with_sources<true>(a.charges != nullptr, a.dipoles != nullptr, true, [&](auto c, auto d, auto g) {
      instance(kernels::Laplace<T>{}, c, d, g, kernels::Flag<true>{});
    });
    return;
  }
  kernels::with_builtin_kernel<T>(desc, [&](auto k) {
    using K = decltype(k);
    kernels::with_sources<K::kDipoles>(a.charges != nullptr, a.dipoles != nullptr, a.grad != nullptr,
                                       [&](auto c, auto d, auto g) { instance(k, c, d, g, kernels::Flag<false>{}); });
  });
}

}  // namespace

void direct(Context& ctx, const kernels::KernelDesc& k, gpufmm_dtype_t precision, const DirectArgs& args,
            DirectTiming* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  if (timing) *timing = DirectTiming();
  DirectArgs a = args;
  DeviceGuard guard(ctx);  // outlives the buffers below
  cudaStream_t stream = stream_of(ctx);
  const size_t nt = size_t(a.ntrg), ns = size_t(a.nsrc), db = sizeof(double);
  const bool host = !a.on_context;
  const bool same = a.targets == a.sources;
  // Host data: uploaded in double (the conversion to T runs on the device).
  StreamBuffer h_src(ctx, host ? 3 * ns * db : 0, "direct-sum source coordinates");
  StreamBuffer h_q(ctx, host && a.charges ? ns * db : 0, "direct-sum charges");
  StreamBuffer h_d(ctx, host && a.dipoles ? 3 * ns * db : 0, "direct-sum dipoles");
  StreamBuffer h_trg(ctx, host && !same ? 3 * nt * db : 0, "direct-sum target coordinates");
  StreamBuffer h_pot(ctx, host && a.pot ? nt * db : 0, "direct-sum potentials");
  StreamBuffer h_grad(ctx, host && a.grad ? 3 * nt * db : 0, "direct-sum gradients");
  StreamBuffer h_hess(ctx, host && a.hess ? 6 * nt * db : 0, "direct-sum Hessians");
  DeviceData x;
  if (host) {
    auto up = [&](const StreamBuffer& b, const double* p, size_t n) -> const double* {
      if (!p) return nullptr;
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(b.get(), p, n * db, cudaMemcpyHostToDevice, stream));
      return static_cast<const double*>(b.get());
    };
    x.src = up(h_src, a.sources, 3 * ns);
    x.q = up(h_q, a.charges, ns);
    x.d = up(h_d, a.dipoles, 3 * ns);
    x.trg = same ? x.src : up(h_trg, a.targets, 3 * nt);
    x.pot = a.pot ? ptr<double>(h_pot) : nullptr;
    x.grad = a.grad ? ptr<double>(h_grad) : nullptr;
    x.hess = a.hess ? ptr<double>(h_hess) : nullptr;
  } else {
    x = DeviceData{a.sources, a.charges, a.dipoles, a.targets, a.pot, a.grad, a.hess};
    if (precision == GPUFMM_FLOAT32 && a.nsrc + a.ntrg > 0) device_origin(ctx, a, a.origin);
  }
  if (a.ntrg > 0) {
    if (a.nsrc == 0) {  // nothing acts on the targets
      if (x.pot) GPUFMM_CUDA_CHECK(cudaMemsetAsync(x.pot, 0, nt * db, stream));
      if (x.grad) GPUFMM_CUDA_CHECK(cudaMemsetAsync(x.grad, 0, 3 * nt * db, stream));
      if (x.hess) GPUFMM_CUDA_CHECK(cudaMemsetAsync(x.hess, 0, 6 * nt * db, stream));
    } else if (precision == GPUFMM_FLOAT32) {
      run<float>(ctx, k, a, x, timing);
    } else {
      run<double>(ctx, k, a, x, timing);
    }
    // Everything succeeded: only now are the host outputs written.
    if (host && a.pot) GPUFMM_CUDA_CHECK(cudaMemcpyAsync(a.pot, x.pot, nt * db, cudaMemcpyDeviceToHost, stream));
    if (host && a.grad)
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(a.grad, x.grad, 3 * nt * db, cudaMemcpyDeviceToHost, stream));
    if (host && a.hess)
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(a.hess, x.hess, 6 * nt * db, cudaMemcpyDeviceToHost, stream));
  }
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (timing)
    timing->total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
