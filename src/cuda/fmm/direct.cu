// Direct summation on the CUDA backend: the classic tiled N-body kernel of
// papers/000 sec. 4.1.
//
//  - Each thread owns its targets (one in double, four in float: see
//    TargetsPerThread): their coordinates and accumulators (pot, grad) live
//    in registers for the whole sweep.
//  - The sources are packed on the host into one array of records in the
//    working precision T, stride 4 (x y z q) or, with dipoles, 8
//    (x y z q dx dy dz 0), and swept in tiles of one thread block: all
//    threads of the block copy a tile from global to shared memory (coalesced),
//    synchronise, and every thread runs through the tile (loop unrolled; the
//    reads are shared-memory broadcasts of 16-byte records).
//  - The per-pair math is laplace_p2p_accumulate (fmm/laplace_p2p.hpp), the
//    same function the OpenMP backend calls; on the device its reciprocal
//    square root is the hardware approximation (laplace_rsqrt).
//  - Load balance: the sources may be split into `parts` contiguous chunks
//    over gridDim.y (plan_launch picks the split that fills the last wave of
//    blocks best, which matters most when there are few targets); each part
//    writes its own partial sums, and a second kernel adds the parts in a
//    fixed order (deterministic; no atomics).
//
// Every CUDA call and every launch is checked (cuda/common/cuda_check.cuh).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/cuda_backend.hpp"
#include "cuda/common/cuda_check.cuh"
#include "fmm/direct.hpp"
#include "fmm/laplace_p2p.hpp"

namespace gpufmm {
namespace cuda {

namespace {

constexpr int kBlock = 256;  // threads per block = sources per tile

// Targets per thread: each source record read from shared memory serves K
// targets (fewer shared-memory loads per pair, more independent work per
// thread). Measured on an H100: +3% in float with K = 4; in double, K > 1
// gains nothing (the pair is bound by FP64 throughput) and K = 4 loses.
template <class T>
struct TargetsPerThread {
  static constexpr int value = sizeof(T) == 4 ? 4 : 1;
};

template <bool kDipole>
struct Stride {
  static constexpr int value = kDipole ? 8 : 4;
};

// Grid: x over blocks of K * kBlock targets (thread t of block b owns targets
// b * K * kBlock + k * kBlock + t, k < K), y over source chunks of `chunk`
// sources (a multiple of kBlock). Part p = blockIdx.y writes
// pot[p * ntrg + i] and grad[p * 3 * ntrg + 3 i + c]; pot or grad may be NULL
// (not wanted).
template <class T, bool kCharge, bool kDipole, bool kGrad>
__global__ void __launch_bounds__(kBlock)
    direct_kernel(int64_t ntrg, const T* __restrict__ trg, int64_t nsrc, int64_t chunk,
                  const T* __restrict__ src, T* __restrict__ pot, T* __restrict__ grad) {
  constexpr int S = Stride<kDipole>::value;
  constexpr int K = TargetsPerThread<T>::value;
  __shared__ __align__(16) T tile[kBlock * S];

  const int64_t first = int64_t(blockIdx.x) * (K * kBlock) + threadIdx.x;
  T y[K][3], v[K], gx[K], gy[K], gz[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = first + int64_t(k) * kBlock;
    const bool active = i < ntrg;
#pragma unroll
    for (int c = 0; c < 3; ++c) y[k][c] = active ? trg[3 * i + c] : T(0);
    v[k] = gx[k] = gy[k] = gz[k] = T(0);
  }

  const int64_t j_begin = int64_t(blockIdx.y) * chunk;
  const int64_t j_end = j_begin + chunk < nsrc ? j_begin + chunk : nsrc;
  for (int64_t j0 = j_begin; j0 < j_end; j0 += kBlock) {
    const int n = static_cast<int>(j_end - j0 < kBlock ? j_end - j0 : kBlock);
    const T* __restrict__ s = src + j0 * S;
    for (int e = threadIdx.x; e < n * S; e += kBlock) tile[e] = s[e];
    __syncthreads();
    // One source record (a shared-memory broadcast) against the K targets.
    auto pair = [&](int j) {
      const T* t = tile + j * S;
      const T sx = t[0], sy = t[1], sz = t[2];
      const T q = kCharge ? t[3] : T(0);
      const T dx = kDipole ? t[4] : T(0), dy = kDipole ? t[5] : T(0), dz = kDipole ? t[6] : T(0);
#pragma unroll
      for (int k = 0; k < K; ++k)
        laplace_p2p_accumulate<kCharge, kDipole, kGrad>(y[k][0] - sx, y[k][1] - sy, y[k][2] - sz, q, dx, dy, dz,
                                                        v[k], gx[k], gy[k], gz[k]);
    };
    if (n == kBlock) {
#pragma unroll 16
      for (int j = 0; j < kBlock; ++j) pair(j);
    } else {
      for (int j = 0; j < n; ++j) pair(j);
    }
    __syncthreads();
  }

  const int64_t part = blockIdx.y;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = first + int64_t(k) * kBlock;
    if (i < ntrg) {
      if (pot) pot[part * ntrg + i] = v[k];
      if (kGrad) {
        T* g = grad + part * 3 * ntrg + 3 * i;
        g[0] = gx[k];
        g[1] = gy[k];
        g[2] = gz[k];
      }
    }
  }
}

// out[e] = sum over p < parts of in[p * n + e], in the order p = 0, 1, ...
template <class T>
__global__ void sum_parts_kernel(int64_t n, int parts, const T* __restrict__ in, T* __restrict__ out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    T s = in[e];
    for (int p = 1; p < parts; ++p) s += in[int64_t(p) * n + e];
    out[e] = s;
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
  require(nbx <= 0x7fffffff, GPUFMM_ERROR_NOT_SUPPORTED, "laplace_direct: ", ntrg,
          " targets exceed the CUDA grid limit");
  const int64_t tiles = (nsrc + kBlock - 1) / kBlock;
  const int64_t by_memory = std::max<int64_t>(
      1, int64_t(512) * 1024 * 1024 / std::max<int64_t>(1, ntrg * int64_t(out_bytes_per_target)));
  const int64_t max_parts = std::max<int64_t>(1, std::min<int64_t>({tiles / 2, by_memory, 256}));
  Launch l;
  l.ntrg = ntrg;
  l.nsrc = nsrc;
  l.parts = 1;
  l.chunk = tiles * kBlock;
  double best = -1;
  for (int64_t want = 1; want <= max_parts; ++want) {
    const int64_t chunk = (tiles + want - 1) / want * kBlock;  // whole tiles
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

template <class T, bool kCharge, bool kDipole, bool kGrad>
int blocks_per_sm() {
  int n = 0;
  GPUFMM_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, direct_kernel<T, kCharge, kDipole, kGrad>, kBlock, 0));
  return n;
}

template <class T>
void launch_sum_parts(int64_t n, int parts, const T* in, T* out, cudaStream_t s) {
  if (n == 0) return;
  clear_last_error();
  sum_parts_kernel<T><<<grid_for(n, kBlock), kBlock, 0, s>>>(n, parts, in, out);
  check_launch("sum_parts_kernel");
}

template <class T>
T* ptr(const StreamBuffer& b) {
  return static_cast<T*>(b.get());
}

// Host data converted to the working precision T.
template <class T>
struct Staged {
  std::vector<T> src, trg, pot, grad;
};

// Upload, kernel(s), download for one kernel instance; the results are in
// h.pot / h.grad on return.
template <class T, bool kCharge, bool kDipole, bool kGrad>
void execute(Context& ctx, const LaplaceDirectArgs& a, Staged<T>& h, LaplaceDirectTiming* timing) {
  DeviceGuard guard(ctx);  // outlives the buffers below
  cudaStream_t stream = stream_of(ctx);
  const size_t tb = sizeof(T);
  const Launch l = plan_launch(a.ntrg, a.nsrc, TargetsPerThread<T>::value * kBlock,
                               blocks_per_sm<T, kCharge, kDipole, kGrad>(),
                               ((a.pot ? 1 : 0) + (kGrad ? 3 : 0)) * tb);
  StreamBuffer d_src(ctx, h.src.size() * tb, "direct-sum sources");
  StreamBuffer d_trg(ctx, h.trg.size() * tb, "direct-sum targets");
  StreamBuffer d_pot(ctx, h.pot.size() * tb, "direct-sum potentials");
  StreamBuffer d_grad(ctx, h.grad.size() * tb, "direct-sum gradients");
  const bool split = l.parts > 1;
  StreamBuffer p_pot(ctx, split ? h.pot.size() * l.parts * tb : 0, "direct-sum partial potentials");
  StreamBuffer p_grad(ctx, split ? h.grad.size() * l.parts * tb : 0, "direct-sum partial gradients");

  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(d_src.get(), h.src.data(), h.src.size() * tb, cudaMemcpyHostToDevice, stream));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(d_trg.get(), h.trg.data(), h.trg.size() * tb, cudaMemcpyHostToDevice, stream));

  T* kpot = a.pot ? (split ? ptr<T>(p_pot) : ptr<T>(d_pot)) : nullptr;
  T* kgrad = kGrad ? (split ? ptr<T>(p_grad) : ptr<T>(d_grad)) : nullptr;
  Event start, stop;
  GPUFMM_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  clear_last_error();
  direct_kernel<T, kCharge, kDipole, kGrad>
      <<<l.grid, kBlock, 0, stream>>>(l.ntrg, ptr<T>(d_trg), l.nsrc, l.chunk, ptr<T>(d_src), kpot, kgrad);
  check_launch("direct_kernel");
  if (split) {
    if (a.pot) launch_sum_parts<T>(a.ntrg, l.parts, kpot, ptr<T>(d_pot), stream);
    if (kGrad) launch_sum_parts<T>(3 * a.ntrg, l.parts, kgrad, ptr<T>(d_grad), stream);
  }
  GPUFMM_CUDA_CHECK(cudaEventRecord(stop.get(), stream));

  if (a.pot)
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h.pot.data(), d_pot.get(), h.pot.size() * tb, cudaMemcpyDeviceToHost, stream));
  if (kGrad)
    GPUFMM_CUDA_CHECK(
        cudaMemcpyAsync(h.grad.data(), d_grad.get(), h.grad.size() * tb, cudaMemcpyDeviceToHost, stream));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  float ms = 0;
  GPUFMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  if (timing) timing->kernel_seconds = 1e-3 * ms;
}

template <class T>
void run(Context& ctx, const LaplaceDirectArgs& a, LaplaceDirectTiming* timing) {
  const bool has_q = a.charges != nullptr, has_d = a.dipoles != nullptr;
  const int S = has_d ? Stride<true>::value : Stride<false>::value;
  const size_t nt = static_cast<size_t>(a.ntrg), ns = static_cast<size_t>(a.nsrc);

  // Host staging in T: source records, target coordinates (relative to
  // a.origin), room for the results.
  Staged<T> h;
  h.src.assign(ns * S, T(0));
  h.trg.resize(3 * nt);
  for (size_t j = 0; j < ns; ++j) {
    T* r = h.src.data() + j * S;
    r[0] = static_cast<T>(a.sources[3 * j] - a.origin[0]);
    r[1] = static_cast<T>(a.sources[3 * j + 1] - a.origin[1]);
    r[2] = static_cast<T>(a.sources[3 * j + 2] - a.origin[2]);
    if (has_q) r[3] = static_cast<T>(a.charges[j]);
    if (has_d) {
      r[4] = static_cast<T>(a.dipoles[3 * j]);
      r[5] = static_cast<T>(a.dipoles[3 * j + 1]);
      r[6] = static_cast<T>(a.dipoles[3 * j + 2]);
    }
  }
  for (size_t k = 0; k < 3 * nt; ++k) h.trg[k] = static_cast<T>(a.targets[k] - a.origin[k % 3]);
  h.pot.resize(a.pot ? nt : 0);
  h.grad.resize(a.grad ? 3 * nt : 0);

  if (a.grad) {
    if (has_q && has_d) execute<T, true, true, true>(ctx, a, h, timing);
    else if (has_q) execute<T, true, false, true>(ctx, a, h, timing);
    else execute<T, false, true, true>(ctx, a, h, timing);
  } else {
    if (has_q && has_d) execute<T, true, true, false>(ctx, a, h, timing);
    else if (has_q) execute<T, true, false, false>(ctx, a, h, timing);
    else execute<T, false, true, false>(ctx, a, h, timing);
  }

  // Everything succeeded: only now are the outputs written.
  for (size_t i = 0; i < h.pot.size(); ++i) a.pot[i] = static_cast<double>(h.pot[i]);
  for (size_t k = 0; k < h.grad.size(); ++k) a.grad[k] = static_cast<double>(h.grad[k]);
}

}  // namespace

void laplace_direct(Context& ctx, gpufmm_dtype_t precision, const LaplaceDirectArgs& a, LaplaceDirectTiming* timing) {
  require(precision == GPUFMM_FLOAT32 || precision == GPUFMM_FLOAT64, GPUFMM_ERROR_INVALID_ARGUMENT,
          "laplace_direct: precision ", static_cast<int>(precision), " is neither GPUFMM_FLOAT32 nor GPUFMM_FLOAT64");
  require(a.charges || a.dipoles, GPUFMM_ERROR_INVALID_ARGUMENT, "laplace_direct: no charges and no dipoles");
  require(a.pot || a.grad, GPUFMM_ERROR_INVALID_ARGUMENT, "laplace_direct: no output wanted");
  const auto t0 = std::chrono::steady_clock::now();
  if (timing) *timing = LaplaceDirectTiming();
  if (a.ntrg > 0) {
    if (a.nsrc == 0) {  // nothing acts on the targets
      if (a.pot) std::fill(a.pot, a.pot + a.ntrg, 0.0);
      if (a.grad) std::fill(a.grad, a.grad + 3 * a.ntrg, 0.0);
    } else if (precision == GPUFMM_FLOAT32) {
      run<float>(ctx, a, timing);
    } else {
      run<double>(ctx, a, timing);
    }
  }
  if (timing)
    timing->total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace cuda
}  // namespace gpufmm
