// The CUDA FMM-FFT (src/cxx/fmmfft/plan.hpp), every stage on the context's
// stream, data resident:
//   S2M, M2M, L2L, L2T  cuBLAS strided batched GEMMs (complex as real rows,
//                       papers/002 sec. 5.1; array/: gemm_strided_batched)
//   k_m2l               M2L of one level (or the base level): a block holds
//                       8 FMMs (16 rows) and a chunk of boxes; the entries
//                       of one box offset s at a time in shared memory,
//                       from the level's cot table and tan(pi p / N)
//   k_reduce            r_p, the sums of the base level's multipoles
//   k_nonfinite         NaN / Inf input, found from the sums before any
//                       output is written
//   k_s2t               the Toeplitz near field of three leaves and POST:
//                       the block's 8 FMMs' entries (a plan-time table) and
//                       the leaves of input in shared memory, each thread
//                       8 consecutive targets with a register window over
//                       the entries; writes
//                       the FMM output Z m-major (the transposition the CPU
//                       leaves to FFTW's strides); with
//                       GPUFMM_FFT_POST_CALLBACK it writes the FMM outputs
//                       unscaled and the first FFT's load applies POST
//                       (post_callback.hpp)
//   FFT-M, FFT-P        cuFFT on Z: along m (contiguous, in place), then
//                       along p (stride M, contiguous batches) into the
//                       output in natural order
// Over several ranks (a plan with a Distributed, plan.hpp) the kernels read
// the input and the multipoles through rings (ring.hpp) that reach into the
// halos, which travel through pinned host buffers (the Distributed's calls
// take host memory); k_s2t writes Z p-major (this rank's M / G rows of P),
// FFT-P runs along p in place, the rows go to their ranks in one all-to-all
// (packed by the copies to the host), and FFT-M runs along m into this
// rank's N / G outputs in natural order.
// The operator entries are operators.hpp's, as on the CPU.
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/cuda_backend.hpp"
#include "core/error.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/staging.hpp"
#include "cuda/fmmfft/post_callback.hpp"
#include "fmmfft/operators.hpp"
#include "fmmfft/plan.hpp"
#include "fmmfft/ring.hpp"
#include "plan/checks.hpp"

namespace gpufmm {
namespace fmmfft {

using gpufmm::cuda::check_launch;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::DeviceGuardNoThrow;
using gpufmm::cuda::stream_of;

namespace {

constexpr int kRows = 16;  // rows per block: 8 FMMs, real and imaginary parts
constexpr int kWin = 8;    // consecutive targets per thread in k_s2t

const char* cufft_error(cufftResult r) {
  switch (r) {
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY: return "CUFFT_MISSING_DEPENDENCY (libnvJitLink, for the POST callback)";
    case CUFFT_NVRTC_FAILURE: return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE: return "CUFFT_NVJITLINK_FAILURE (linking the POST callback)";
    default: return "cuFFT error";
  }
}
void check_cufft(cufftResult r, const char* call) {
  if (r == CUFFT_SUCCESS) return;
  fail(r == CUFFT_ALLOC_FAILED ? GPUFMM_ERROR_OUT_OF_MEMORY : GPUFMM_ERROR_DEVICE, call, ": ", cufft_error(r));
}
#define GPUFMM_CUFFT_CHECK(call) check_cufft((call), #call)

// M2L of one level: loc[r + R (i + Q b)] = sum_s sum_j K_s[i][j](p) mult[r +
// R (j + Q (b + s))], over this rank's nb boxes, the sources through the
// ring src_ring from box first + b + s. grid.x: row tiles of kMRows (4
// FMMs), grid.y: box chunks; block kMRows x ny threads, each kBox boxes (ny
// apart), its Q <= QM outputs per box in registers (loops unrolled to QM,
// guarded by Q): one shared-memory entry serves kBox boxes, and the entries
// of one offset s, built once per block (a division each), serve ny kBox
// boxes.
constexpr int kBox = 2;
constexpr int kMRows = 8;
constexpr int kMLanes = 32;
template <class R, int QM>
__global__ void k_m2l(int Q, int64_t Rr, int level, bool base, int64_t nb, const double* __restrict__ cotA,
                      const double* __restrict__ tanp, int64_t box_chunk, Ring<R> src_ring, int64_t first,
                      R* __restrict__ loc) {
  extern __shared__ unsigned char smem_raw[];
  R* K = reinterpret_cast<R*>(smem_raw);  // [i][j][kMRows] of one s
  const int ns = m2l_count(level, base);
  const int64_t r0 = int64_t(blockIdx.x) * kMRows;
  const int tr = threadIdx.x, nthreads = blockDim.x * blockDim.y, tid = tr + blockDim.x * threadIdx.y;
  const int64_t r = r0 + tr;
  const bool row_ok = r < Rr;
  const int64_t b0 = int64_t(blockIdx.y) * box_chunk, b1 = min(nb, b0 + box_chunk);
  const int64_t step = int64_t(blockDim.y) * kBox;
  for (int64_t bb = b0; bb < b1; bb += step) {
    int64_t b[kBox];
    R acc[kBox][QM];
#pragma unroll
    for (int u = 0; u < kBox; ++u) {
      b[u] = bb + threadIdx.y + int64_t(u) * blockDim.y;
#pragma unroll
      for (int i = 0; i < QM; ++i) acc[u][i] = R(0);
    }
    for (int si = 0; si < ns; ++si) {
      const int s = m2l_offset(si, base);
      __syncthreads();
      for (int e = tid; e < Q * Q * kMRows; e += nthreads) {
        const int rr = e % kMRows, ij = e / kMRows;
        const int64_t row = r0 + rr;
        K[e] = row < Rr ? R(m2l_shifted(cotA[int64_t(si) * Q * Q + ij], tanp[row / 2])) : R(0);
      }
      __syncthreads();
      if (!row_ok) continue;
      const R* src[kBox];
      bool on[kBox];
#pragma unroll
      for (int u = 0; u < kBox; ++u) {
        on[u] = b[u] < b1 && m2l_applies(s, b[u], base);
        src[u] = on[u] ? src_ring.at(first + b[u] + s) + r : nullptr;  // only boxes the list holds
      }
      R next[kBox];  // the next j's multipoles, loaded one step ahead
#pragma unroll
      for (int u = 0; u < kBox; ++u) next[u] = on[u] ? src[u][0] : R(0);
#pragma unroll
      for (int j = 0; j < QM; ++j) {
        if (j >= Q) break;
        R m[kBox];
#pragma unroll
        for (int u = 0; u < kBox; ++u) {
          m[u] = next[u];
          next[u] = (on[u] && j + 1 < Q) ? src[u][Rr * (j + 1)] : R(0);
        }
#pragma unroll
        for (int i = 0; i < QM; ++i) {
          if (i < Q) {
            const R k = K[(i * Q + j) * kMRows + tr];
#pragma unroll
            for (int u = 0; u < kBox; ++u) acc[u][i] += k * m[u];
          }
        }
      }
    }
    if (row_ok)
#pragma unroll
      for (int u = 0; u < kBox; ++u)
        if (b[u] < b1)
#pragma unroll
          for (int i = 0; i < QM; ++i)
            if (i < Q) loc[r + Rr * (i + int64_t(Q) * b[u])] = acc[u][i];
  }
}

// r_p per row: the sum of the row over Q 2^B columns (double sums).
template <class R>
__global__ void k_reduce(int64_t Rr, int64_t cols, const R* __restrict__ mult, double* __restrict__ red) {
  __shared__ double part[8][32];
  const int64_t r = int64_t(blockIdx.x) * 32 + threadIdx.x;
  double s = 0;
  if (r < Rr)
    for (int64_t c = threadIdx.y; c < cols; c += blockDim.y) s += double(mult[r + Rr * c]);
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && r < Rr) {
    for (int k = 1; k < blockDim.y; ++k) s += part[k][threadIdx.x];
    red[r] = s;
  }
}

// The near-field entries of FMM p = 1..P-1 at k = -(2 M_L - 1)..2 M_L - 1
// (plan time): table[(p - 1) (4 M_L - 1) + k + 2 M_L - 1].
__global__ void k_s2t_table(int64_t N, int64_t P, int ml, double* __restrict__ table) {
  const int64_t nk = 4 * ml - 1, total = (P - 1) * nk;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x)
    table[e] = s2t_entry(N, P, e / nk + 1, e % nk - (2 * ml - 1));
}

// Z = rho_p (T + S2T x - sign i r_p) (p >= 1), Z_0 = x_0, over this rank's
// nb leaves, with T (the L2T result) in the input's p-major layout, x read
// through the ring xr, and Z written with complex (m, p) at m zm + p zp: in
// one process m-major (zm 1, zp M: the 2D FFT then runs over contiguous
// transforms of length M and strided ones of length P with contiguous
// batches, both fast in cuFFT), over several ranks p-major (zm P, zp 1).
// grid.x: row tiles of kRows, grid.y: chunks of leaves; block kRows
// x (G nbp): G = ceil(M_L / kWin) target groups of each of nbp leaves done
// together (their nbp + 2 leaves of input staged once).
// post false: Z = T + S2T x unscaled (p >= 1), POST left to the FFT's load
// callback.
template <class R>
__global__ void k_s2t(int64_t N, int64_t P, int64_t M, int ml, int64_t nb, int nbp, int64_t box_chunk, int sign,
                      bool post, const double* __restrict__ table, const double* __restrict__ red, Ring<R> xr,
                      const R* __restrict__ T, int64_t zm, int64_t zp, R* __restrict__ Z) {
  extern __shared__ unsigned char smem_raw[];
  const int nk = 4 * ml - 1;
  R* K = reinterpret_cast<R*>(smem_raw);  // [k][kRows]
  R* xs = K + size_t(nk) * kRows;         // [(nbp + 2) M_L][kRows]
  const int64_t rows = 2 * P, r0 = int64_t(blockIdx.x) * kRows;
  const int tr = threadIdx.x, tid = tr + blockDim.x * threadIdx.y, nthreads = blockDim.x * blockDim.y;
  const int64_t r = r0 + tr, p = r / 2;
  const bool row_ok = r < rows;
  for (int e = tid; e < nk * kRows; e += nthreads) {
    const int64_t row = r0 + e % kRows, pp = row / 2;
    K[e] = (row < rows && pp >= 1) ? R(table[(pp - 1) * nk + e / kRows]) : R(0);
  }
  // POST factors of this thread's FMM.
  double rho_re = 0, rho_im = 0, red_re = 0, red_im = 0;
  if (post && row_ok && p >= 1) {
    const Rho f = post_factor(P, M, p, sign);
    rho_re = f.re, rho_im = f.im;
    red_re = red[2 * (p - 1)], red_im = red[2 * (p - 1) + 1];
  }
  const int G = (ml + kWin - 1) / kWin;
  const int i0 = (threadIdx.y % G) * kWin, bp = threadIdx.y / G;  // targets i0.., leaf b + bp
  const int64_t b0 = int64_t(blockIdx.y) * box_chunk, b1 = min(nb, b0 + box_chunk);
  for (int64_t bg = b0; bg < b1; bg += nbp) {
    const int64_t span = min(int64_t(nbp), b1 - bg) + 2;  // leaves bg-1 .. bg+nbp
    __syncthreads();
    for (int e = tid; e < span * ml * kRows; e += nthreads) {
      const int rr = e % kRows, j = e / kRows;
      const int64_t row = r0 + rr;
      xs[e] = row < rows ? xr.at((bg - 1) * ml + j)[row] : R(0);
    }
    __syncthreads();
    const int64_t b = bg + bp;
    const R* xw = xs + size_t(bp) * ml * kRows;  // this leaf's window: leaves b-1, b, b+1
    // acc[t] for target i0 + t: sum over source j (0..3 M_L-1, offset -M_L) of
    // K[j - M_L - i + 2 M_L - 1]; win[t] = K[j + M_L - 1 - i0 - t].
    R acc[kWin], win[kWin];
#pragma unroll
    for (int t = 0; t < kWin; ++t) {
      acc[t] = R(0);
      const int k = ml - 1 - i0 - t;  // j = 0
      win[t] = (k >= 0 && k < nk) ? K[k * kRows + tr] : R(0);
    }
    if (b < b1) {
      for (int j = 0; j < 3 * ml; ++j) {
        const R xv = xw[j * kRows + tr];
#pragma unroll
        for (int t = 0; t < kWin; ++t) acc[t] += win[t] * xv;
#pragma unroll
        for (int t = kWin - 1; t > 0; --t) win[t] = win[t - 1];
        const int k = j + ml - i0;
        win[0] = k < nk ? K[k * kRows + tr] : R(0);
      }
    }
#pragma unroll
    for (int t = 0; t < kWin; ++t) {
      const int i = i0 + t;
      const bool ok = row_ok && i < ml && b < b1;
      const int64_t m = i + int64_t(ml) * b;
      const int64_t at = 2 * P * m + r, to = 2 * (m * zm + p * zp) + (r & 1);
      const double v = ok ? double(acc[t]) + (p >= 1 ? double(T[at]) : 0.0) : 0.0;
      const double partner = __shfl_xor_sync(__activemask(), v, 1);
      if (!ok) continue;
      if (p == 0) {
        Z[to] = xw[(ml + i) * kRows + tr];
        continue;
      }
      if (!post) {
        Z[to] = R(v);
        continue;
      }
      const bool im_part = r & 1;
      const Cplx z = post_apply(Rho{rho_re, rho_im}, im_part ? partner : v, im_part ? v : partner, red_re, red_im, sign);
      Z[to] = R(im_part ? z.im : z.re);
    }
  }
}

// Whether the input holds a NaN or Inf, before anything is written to the
// output: a non-finite x_p (p >= 1) makes its sum r_p non-finite (S2M and
// M2M keep sums, and NaN / Inf propagate through them), so the check reads
// the 2 (P - 1) sums and the M numbers of x_0 only.
template <class R>
__global__ void k_nonfinite(int64_t nred, const double* __restrict__ red, int64_t M, int64_t P,
                            const R* __restrict__ x, int* __restrict__ flag) {
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < nred + 2 * M;
       e += int64_t(gridDim.x) * blockDim.x) {
    const double v = e < nred ? red[e] : double(x[2 * P * ((e - nred) / 2) + (e - nred) % 2]);
    if (!isfinite(v)) atomicOr(flag, 1);
  }
}

// First index (of 2N reals) that is NaN or Inf, for the error message.
template <class R>
__global__ void k_first_nonfinite(int64_t n, const R* __restrict__ x, unsigned long long* __restrict__ first) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (!isfinite(double(x[i]))) atomicMin(first, (unsigned long long)i);
}

// k_s2t's shared memory: the entries and nbp + 2 leaves of input (kRows rows).
template <class R>
size_t s2t_smem(int ml) {
  const int G = (ml + kWin - 1) / kWin, nbp = std::max(1, 16 / G);
  return sizeof(R) * size_t(kRows) * (4 * ml - 1 + (nbp + 2) * ml);
}

}  // namespace

struct CudaPlan {
  Context* ctx = nullptr;
  std::vector<void*> blocks;
  void* alloc(size_t b, const char* what) {
    void* p = backend_alloc(*ctx, std::max<size_t>(b, 16), what);
    blocks.push_back(p);
    return p;
  }
  void* work = nullptr;     // mult | loc | T
  int64_t nexp = 0;
  void* staging = nullptr;  // host variant: N complex (this rank's N / G)
  void* zbuf = nullptr;     // Z of in-place transforms: N complex (N / G)
  double *s2t = nullptr, *cotA = nullptr, *tanp = nullptr, *red = nullptr;
  std::vector<int64_t> cot_offset;  // per level l - B: offset into cotA
  void *s2m = nullptr, *m2m = nullptr;  // operators in the plan's precision
  int* flag = nullptr;
  unsigned long long* first = nullptr;
  cufftHandle fft_p = 0, fft_m = 0;
  bool have_p = false, have_m = false;
  // GPUFMM_FFT_POST_CALLBACK: the callback's caller info (device) and the
  // sign it holds now.
  PostInfo* post_info = nullptr;
  void* post_caller = nullptr;  // cuFFT keeps the address of the caller info
  int post_sign = 0;
  cudaEvent_t ev[kStages + 1] = {};
  // Over several ranks: the halos and base level on the device (ring.hpp's
  // layout), and pinned host memory (reals) for what travels: the two end
  // leaves of input, the four end boxes of each level below B, this rank's
  // base level, the received halos and base level (ring.hpp's layout), and
  // the transposition's send and receive buffers.
  void* halo = nullptr;
  void* host = nullptr;  // MPI (the Distributed takes host memory)
  void* send = nullptr;  // NCCL: the transposition's packed send buffer (N / G complex)
  int64_t h_in = 0, h_level = 0, h_base = 0, h_recv = 0, h_send = 0, h_a2a = 0, h_end = 0;
  ~CudaPlan() {
    DeviceGuardNoThrow guard(ctx->device);
    if (have_p) cufftDestroy(fft_p);
    if (have_m) cufftDestroy(fft_m);
    for (auto& e : ev)
      if (e) cudaEventDestroy(e);
    for (void* b : blocks) backend_free(*ctx, b);
    if (host) cudaFreeHost(host);
  }
};

void CudaPlanDeleter::operator()(CudaPlan* g) const { delete g; }

namespace {

template <class R>
void upload_as(CudaPlan& g, void*& dst, const std::vector<double>& v, const char* what) {
  std::vector<R> h(v.begin(), v.end());
  dst = g.alloc(sizeof(R) * h.size(), what);
  backend_upload(*g.ctx, dst, h.data(), sizeof(R) * h.size(), false);
}

// The device halos of a plan over several ranks, and its pinned host
// buffers (MPI) or the transposition's device send buffer (NCCL).
template <class R>
void setup_distributed(Plan& p, CudaPlan& g, cudaStream_t st) {
  const int64_t P = p.par.P, box = p.rows() * p.par.Q, nl = p.local_n();
  const size_t dbytes = sizeof(R) * size_t(p.halo_offset.back());
  g.halo = g.alloc(dbytes, "FMM-FFT halos and base level");
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(g.halo, 0, dbytes, st));
  if (p.dist->device_memory()) {
    g.send = g.alloc(sizeof(R) * 2 * size_t(nl), "FMM-FFT transposition buffer");
    return;
  }
  g.h_in = 0;
  g.h_level = g.h_in + 2 * int64_t(p.par.ml) * 2 * P;
  g.h_base = g.h_level + 4 * box * (p.par.L - p.par.B);
  g.h_recv = g.h_base + box * p.boxes(p.par.B);
  g.h_send = g.h_recv + p.halo_offset.back();
  g.h_a2a = g.h_send + 2 * nl;
  g.h_end = g.h_a2a + 2 * nl;
  const size_t hbytes = sizeof(R) * size_t(g.h_end);
  const cudaError_t e = cudaMallocHost(&g.host, hbytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    g.host = nullptr;
    fail(GPUFMM_ERROR_OUT_OF_MEMORY, "the FMM-FFT's pinned host buffers (", hbytes, " bytes): ", cudaGetErrorString(e));
  }
  // Zeroed: the input halo's rows of p = 0 never travel, and the S2T
  // multiplies them by 0.
  std::memset(g.host, 0, hbytes);
}

// GPUFMM_FFT_POST_CALLBACK: POST moves into the load of the 2D FFT's first
// transform h (made after this), whose element of index (m, p) is at m zm
// + p zp. The factors rho_p of both directions come from post_factor (a
// table), the sums r_p from k_reduce's output.
template <class R>
void set_post_callback(Plan& p, CudaPlan& g, cufftHandle h, int64_t zp) {
  const int64_t P = p.par.P;
  std::vector<double> rho(size_t(4 * P));
  for (int s = 0; s < 2; ++s)
    for (int64_t q = 0; q < P; ++q) {
      const Rho f = post_factor(P, p.par.M, q, s == 0 ? -1 : 1);
      rho[size_t(2 * (s * P + q))] = f.re;
      rho[size_t(2 * (s * P + q) + 1)] = f.im;
    }
  void* dev_rho = nullptr;
  upload_as<double>(g, dev_rho, rho, "FMM-FFT POST factors");
  g.post_sign = -1;
  const PostInfo info{static_cast<const double*>(dev_rho), g.red, P, zp, g.post_sign};
  g.post_info = static_cast<PostInfo*>(g.alloc(sizeof(PostInfo), "FMM-FFT POST callback's data"));
  backend_upload(*g.ctx, g.post_info, &info, sizeof(info), false);
  g.post_caller = g.post_info;
  const bool single = sizeof(R) == 4;
  GPUFMM_CUFFT_CHECK(cufftXtSetJITCallback(h, single ? kPostLoadC : kPostLoadZ, kPostCallbackLto,
                                           kPostCallbackLto_size,
                                           single ? CUFFT_CB_LD_COMPLEX : CUFFT_CB_LD_COMPLEX_DOUBLE, &g.post_caller));
}

template <class R>
void setup_t(Plan& p) {
  auto g = std::unique_ptr<CudaPlan, CudaPlanDeleter>(new CudaPlan);
  g->ctx = &p.ctx;
  DeviceGuard guard(p.ctx);
  const cudaStream_t st = stream_of(p.ctx);
  // N, M: the transform's (operator entries, POST); nl, ml_rows: this
  // rank's numbers and rows of M (all of them in one process).
  const int64_t N = p.par.N, P = p.par.P, M = p.par.M, Q = p.par.Q, nl = p.local_n(), rows = nl / P;
  const int G = p.G();
  g->nexp = p.level_offset.back();
  g->work = g->alloc(sizeof(R) * size_t(2 * g->nexp + 2 * nl), "FMM-FFT workspace (expansions and the FMM output)");
  upload_as<R>(*g, g->s2m, p.s2m, "FMM-FFT operators");
  upload_as<R>(*g, g->m2m, p.m2m, "FMM-FFT operators");
  // Near-field table, M2L tables (cot per level, tan per FMM).
  g->s2t = static_cast<double*>(g->alloc(sizeof(double) * size_t((P - 1) * (4 * p.par.ml - 1)), "FMM-FFT S2T table"));
  k_s2t_table<<<gpufmm::cuda::grid_for((P - 1) * (4 * p.par.ml - 1), 256), 256, 0, st>>>(N, P, p.par.ml, g->s2t);
  check_launch("k_s2t_table");
  std::vector<double> cot, tanp(size_t(P - 1));
  for (int l = p.par.B; l <= p.par.L; ++l) {
    const bool base = l == p.par.B;
    g->cot_offset.push_back(int64_t(cot.size()));
    for (int si = 0; si < std::max(0, m2l_count(l, base)); ++si)
      for (int i = 0; i < Q; ++i)
        for (int j = 0; j < Q; ++j) cot.push_back(m2l_cot(l, p.z[i], p.z[j], m2l_offset(si, base)));
  }
  for (int64_t q = 1; q < P; ++q) tanp[size_t(q - 1)] = shift_tan(N, q);
  g->cotA = static_cast<double*>(g->alloc(sizeof(double) * std::max<size_t>(cot.size(), 1), "FMM-FFT M2L table"));
  if (!cot.empty()) backend_upload(p.ctx, g->cotA, cot.data(), sizeof(double) * cot.size(), false);
  g->tanp = static_cast<double*>(g->alloc(sizeof(double) * tanp.size(), "FMM-FFT M2L table"));
  backend_upload(p.ctx, g->tanp, tanp.data(), sizeof(double) * tanp.size(), false);
  g->red = static_cast<double*>(g->alloc(sizeof(double) * size_t(2 * (P - 1)), "FMM-FFT reduction"));
  g->flag = static_cast<int*>(g->alloc(sizeof(int) + sizeof(unsigned long long), "FMM-FFT flags"));
  g->first = reinterpret_cast<unsigned long long*>(g->alloc(sizeof(unsigned long long), "FMM-FFT flags"));
  const cufftType type = sizeof(R) == 4 ? CUFFT_C2C : CUFFT_Z2Z;
  size_t ws = 0;
  GPUFMM_CUFFT_CHECK(cufftCreate(&g->fft_m));
  g->have_m = true;
  GPUFMM_CUFFT_CHECK(cufftCreate(&g->fft_p));
  g->have_p = true;
  long long np[1] = {P}, nm[1] = {M};
  if (p.options.post) set_post_callback<R>(p, *g, G == 1 ? g->fft_m : g->fft_p, G == 1 ? M : 1);
  if (G == 1) {
    // cuFFT on Z (m-major, see k_s2t): along m (P contiguous transforms of
    // length M, in place), then along p (M transforms of length P, stride
    // M, contiguous batches) into the output in natural order X[k1 + M k2].
    GPUFMM_CUFFT_CHECK(cufftMakePlanMany64(g->fft_m, 1, nm, nm, 1, M, nm, 1, M, type, P, &ws));
    GPUFMM_CUFFT_CHECK(cufftMakePlanMany64(g->fft_p, 1, np, np, M, 1, np, M, 1, type, M, &ws));
  } else {
    // Z p-major (this rank's rows m): along p in place (contiguous
    // transforms); after the all-to-all the rank holds all M rows of its
    // P / G columns k2 (column fastest): along m (stride P / G) into the
    // output X[k1 + M k2] (k1 fastest).
    GPUFMM_CUFFT_CHECK(cufftMakePlanMany64(g->fft_p, 1, np, np, 1, P, np, 1, P, type, rows, &ws));
    GPUFMM_CUFFT_CHECK(cufftMakePlanMany64(g->fft_m, 1, nm, nm, P / G, 1, nm, 1, M, type, P / G, &ws));
    setup_distributed<R>(p, *g, st);
  }
  GPUFMM_CUFFT_CHECK(cufftSetStream(g->fft_m, st));
  GPUFMM_CUFFT_CHECK(cufftSetStream(g->fft_p, st));
  for (auto& e : g->ev) GPUFMM_CUDA_CHECK(cudaEventCreate(&e));
  // Shared memory above 48 KiB for the near field of large leaves.
  GPUFMM_CUDA_CHECK(
      cudaFuncSetAttribute(k_s2t<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s2t_smem<R>(p.par.ml))));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
  p.gpu = std::move(g);
}

// The index of the first NaN or Inf among the n reals of x (device), or
// ~0 (none).
template <class R>
unsigned long long first_nonfinite(CudaPlan& g, cudaStream_t st, const R* x, int64_t n) {
  const unsigned long long none = ~0ull;
  unsigned long long first = none;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.first, &none, sizeof(none), cudaMemcpyHostToDevice, st));
  k_first_nonfinite<R><<<gpufmm::cuda::grid_for(n, 256), 256, 0, st>>>(n, x, g.first);
  check_launch("k_first_nonfinite");
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&first, g.first, sizeof(first), cudaMemcpyDeviceToHost, st));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
  return first;
}

void nonfinite_error(unsigned long long first) {
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'in': element ", int64_t(first / 2), " has a NaN or Inf ",
       first % 2 ? "imaginary" : "real", " part");
}

// The device buffers of one transform: the input x, the output y and Z
// (the FMM output).
template <class R>
struct Buffers {
  const R* x = nullptr;
  R* y = nullptr;
  R* Z = nullptr;
};

// The input on the device (the host variant's staging), and Z (the FMM
// output): the output itself unless that is the input (in place, or the
// staging), then a second buffer. Over several ranks this and the check
// of the input (a NaN or Inf on any rank fails every rank before anything
// moves; in one process check_sums finds it) are agreed on.
template <class R>
Buffers<R> prepare(Plan& p, const void* in, void* out, bool on_context) {
  CudaPlan& g = *p.gpu;
  Context& ctx = p.ctx;
  Distributed* d = p.dist.get();
  const cudaStream_t st = stream_of(ctx);
  const int64_t N = p.local_n();
  Buffers<R> b;
  auto body = [&] {
    if (on_context) {
      b.x = static_cast<const R*>(in);
      b.y = static_cast<R*>(out);
    } else {
      if (!g.staging) g.staging = g.alloc(sizeof(R) * 2 * size_t(N), "FMM-FFT staging of the host input");
      gpufmm::cuda::staged_upload(ctx, g.staging, in, sizeof(R) * 2 * size_t(N), plan::parallel_copy);
      b.x = static_cast<const R*>(g.staging);
      b.y = static_cast<R*>(g.staging);
    }
    b.Z = b.y;
    if (static_cast<const void*>(b.y) == static_cast<const void*>(b.x)) {
      if (!g.zbuf) g.zbuf = g.alloc(sizeof(R) * 2 * size_t(N), "FMM-FFT output buffer of in-place transforms");
      b.Z = static_cast<R*>(g.zbuf);
    }
    if (d) {
      const unsigned long long first = first_nonfinite<R>(g, st, b.x, 2 * N);
      if (first != ~0ull) nonfinite_error(first);
    }
  };
  if (d) {
    d->agree(body);
    d->t_wait = 0;
    d->sent_input = d->sent_multipoles = d->sent_base = 0;
  } else {
    body();
  }
  return b;
}

// One transform on the context's stream after prepare(): the plan's sizes,
// the work arrays, and the stages as execute_t calls them, in stream
// order. Over several ranks the halos travel through device memory (NCCL;
// the Distributed orders the messages against the stream) or are staged
// through pinned host memory (MPI).
template <class R>
struct Exec {
  Exec(Plan& plan, const Buffers<R>& b)
      : p(plan), g(*plan.gpu), ctx(plan.ctx), d(plan.dist.get()), st(stream_of(plan.ctx)), N(plan.local_n()),
        P(plan.par.P), M(plan.par.M), Q(plan.par.Q), ml(plan.par.ml), Rr(plan.rows()), B(plan.par.B),
        L(plan.par.L), dt(sizeof(R) == 4 ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64), x(b.x), y(b.y), Z(b.Z),
        staged(d && !d->device_memory()), mult(static_cast<R*>(g.work)), loc(mult + g.nexp), T(loc + g.nexp),
        halo(static_cast<R*>(g.halo)), host(static_cast<R*>(g.host)), box(Rr * Q),
        s2m(static_cast<const R*>(g.s2m)), m2m(static_cast<const R*>(g.m2m)) {}

  Plan& p;
  CudaPlan& g;
  Context& ctx;
  Distributed* const d;
  const cudaStream_t st;
  const int64_t N, P, M, Q, ml, Rr;
  const int B, L;
  const gpufmm_dtype_t dt;
  const R* const x;
  R* const y;
  R* const Z;
  const bool staged;  // MPI: messages staged through pinned host memory; NCCL: device memory
  R* const mult;
  R* const loc;
  R* const T;
  R* const halo;
  R* const host;
  const int64_t box;
  const R one = 1, zero = 0;
  const R* const s2m;
  const R* const m2m;

  R* lev(R* base, int l) const { return base + p.level_offset[l - B]; }
  // The halos: n reals of device memory to host memory at host_at, or the
  // received parts k0..k1 - 1 (adjacent) of the halo buffer to the device.
  void to_host(int64_t host_at, const R* src, int64_t n) {
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(host + host_at, src, sizeof(R) * size_t(n), cudaMemcpyDeviceToHost, st));
  }
  void received(int k0, int k1) {
    if (!staged) return;
    const int64_t a = p.halo_offset[size_t(k0)], b = p.halo_offset[size_t(k1)];
    GPUFMM_CUDA_CHECK(
        cudaMemcpyAsync(halo + a, host + g.h_recv + a, sizeof(R) * size_t(b - a), cudaMemcpyHostToDevice, st));
  }
  void gemm(gpufmm_op_t tb, int64_t m, int64_t n, int64_t k, const R* A, int64_t lda, int64_t sA, const R* Bm,
            int64_t ldb, const R* beta, R* C, int64_t ldc, int64_t sC, int64_t batch) {
    cuda::gemm_strided_batched(ctx, dt, GPUFMM_OP_N, tb, m, n, k, &one, A, lda, sA, Bm, ldb, 0, beta, C, ldc, sC,
                               batch);
  }

  void send_input();
  void upward();
  void send_levels();
  void m2l(int l, bool base);
  void m2l_passes();
  void check_sums();
  void downward();
  void s2t(int sign);
  void ffts(int sign);
  void record_times();
};

// Algorithm 1, over several ranks: the input's end leaves travel during
// S2M, M2M, M2L.
template <class R>
void Exec<R>::send_input() {
  if (d && !staged) {
    // In device memory (the Distributed orders the messages against this
    // stream): the input's end leaves, and in send_levels the rest.
    d->halo_begin(0, x, N / P, 2 * P, 2, ml, halo + p.halo_offset[0], halo + p.halo_offset[1]);
  } else if (d) {
    const int64_t leaf = ml * 2 * P;
    to_host(g.h_in, x, leaf);
    to_host(g.h_in + leaf, x + 2 * N - leaf, leaf);
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
    d->halo_begin(0, host + g.h_in, 2 * ml, 2 * P, 2, ml, host + g.h_recv + p.halo_offset[0],
                  host + g.h_recv + p.halo_offset[1]);
  }
}

// S2M, then M2M level by level upwards.
template <class R>
void Exec<R>::upward() {
  gemm(GPUFMM_OP_T, Rr, Q, ml, x + 2, 2 * P, 2 * P * ml, s2m, Q, &zero, lev(mult, L), Rr, Rr * Q, p.boxes(L));
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kS2M + 1], st));
  for (int l = L - 1; l >= B; --l)
    gemm(GPUFMM_OP_T, Rr, Q, 2 * Q, lev(mult, l + 1), Rr, Rr * 2 * Q, m2m, Q, &zero, lev(mult, l), Rr, Rr * Q,
         p.boxes(l));
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kM2M + 1], st));
}

// Over several ranks, after M2M: the base level's all-gather and each
// level's end boxes, during the M2L of the levels before them.
template <class R>
void Exec<R>::send_levels() {
  if (d && !staged) {
    d->gather_begin(lev(mult, B), box * p.boxes(B), halo + p.halo_offset[2 * (L - B) + 2]);
    for (int l = B + 1; l <= L; ++l) {
      const int k = 2 * (l - B);
      d->halo_begin(l, lev(mult, l), p.boxes(l), box, 0, 2, halo + p.halo_offset[size_t(k)],
                    halo + p.halo_offset[size_t(k + 1)]);
    }
  } else if (d) {
    for (int l = B + 1; l <= L; ++l) {
      const int64_t at = g.h_level + 4 * box * (l - B - 1);
      to_host(at, lev(mult, l), 2 * box);
      to_host(at + 2 * box, lev(mult, l) + box * (p.boxes(l) - 2), 2 * box);
    }
    to_host(g.h_base, lev(mult, B), box * p.boxes(B));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
    d->gather_begin(host + g.h_base, box * p.boxes(B), host + g.h_recv + p.halo_offset[2 * (L - B) + 2]);
    for (int l = B + 1; l <= L; ++l) {
      const int k = 2 * (l - B);
      d->halo_begin(l, host + g.h_level + 4 * box * (l - B - 1), 4, box, 0, 2,
                    host + g.h_recv + p.halo_offset[size_t(k)], host + g.h_recv + p.halo_offset[size_t(k + 1)]);
    }
  }
}

// The M2L of level l (or the base level): k_m2l instantiated for the
// smallest QM >= Q.
template <class R>
void Exec<R>::m2l(int l, bool base) {
  if (m2l_count(l, base) <= 0) return;
  const int64_t nb = p.boxes(l);
  const int64_t lanes = std::max<int64_t>(1, std::min<int64_t>(nb / kBox, kMLanes)), chunk = lanes * kBox;
  dim3 block(kMRows, unsigned(lanes));
  dim3 grid(unsigned((Rr + kMRows - 1) / kMRows), unsigned((nb + chunk - 1) / chunk));
  const size_t smem = sizeof(R) * size_t(Q) * Q * kMRows;
  const Ring<R> src = level_ring<R>(p, l, lev(mult, l), halo);
  const int64_t first = base && d ? d->rank * nb : 0;
  auto launch = [&](auto kernel) {
    kernel<<<grid, block, smem, st>>>(int(Q), Rr, l, base, nb, g.cotA + g.cot_offset[l - B], g.tanp, chunk, src,
                                      first, lev(loc, l));
  };
  if (Q <= 8)
    launch(k_m2l<R, 8>);
  else if (Q <= 12)
    launch(k_m2l<R, 12>);
  else if (Q <= 16)
    launch(k_m2l<R, 16>);
  else if (Q <= 20)
    launch(k_m2l<R, 20>);
  else
    launch(k_m2l<R, kMaxQ>);
  check_launch("k_m2l");
}

// The M2L of every level below B as its halo arrives, then the base
// level's (after the all-gather), then k_reduce's sums r_p of every
// rank's base level.
template <class R>
void Exec<R>::m2l_passes() {
  for (int l = B + 1; l <= L; ++l) {
    if (d) {
      d->halo_end(l);
      received(2 * (l - B), 2 * (l - B) + 2);
    }
    m2l(l, false);
  }
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kM2L + 1], st));
  if (d) {
    d->gather_end();
    received(2 * (L - B) + 2, 2 * (L - B) + 3);
  }
  m2l(B, true);
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kM2LB + 1], st));
  const R* base_mult = level_ring<R>(p, B, lev(mult, B), halo).mid;  // every rank's base level
  k_reduce<R><<<unsigned((Rr + 31) / 32), dim3(32, 8), 0, st>>>(Rr, Q << B, base_mult, g.red);
  check_launch("k_reduce");
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kReduce + 1], st));
}

// In one process, a NaN or Inf input: reported from the sums before
// anything reaches `out` (over several ranks prepare() checked it).
template <class R>
void Exec<R>::check_sums() {
  if (d) return;
  k_nonfinite<R><<<gpufmm::cuda::grid_for(Rr + 2 * M, 256), 256, 0, st>>>(Rr, g.red, M, P, x, g.flag);
  check_launch("k_nonfinite");
  int bad = 0;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&bad, g.flag, sizeof(int), cudaMemcpyDeviceToHost, st));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
  if (bad) {
    const unsigned long long first = first_nonfinite<R>(g, st, x, 2 * N);
    require(first != ~0ull, GPUFMM_ERROR_INVALID_ARGUMENT,
            "argument 'in': its sums overflow the precision (values too large for the FMM-FFT)");
    nonfinite_error(first);
  }
}

// L2L level by level downwards, then L2T into T.
template <class R>
void Exec<R>::downward() {
  for (int l = B; l < L; ++l)
    gemm(GPUFMM_OP_N, Rr, 2 * Q, Q, lev(loc, l), Rr, Rr * Q, m2m, Q, &one, lev(loc, l + 1), Rr, Rr * 2 * Q,
         p.boxes(l));
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kL2L + 1], st));
  gemm(GPUFMM_OP_N, Rr, ml, Q, lev(loc, L), Rr, Rr * Q, s2m, Q, &zero, T + 2, 2 * P, 2 * P * ml, p.boxes(L));
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kL2T + 1], st));
}

// The near field and POST (k_s2t) into Z, after the input's halo.
template <class R>
void Exec<R>::s2t(int sign) {
  if (d) {
    d->halo_end(0);
    received(0, 2);
  }
  const int64_t nb = p.boxes(L);
  const int G = int((ml + kWin - 1) / kWin), nbp = std::max(1, 16 / G);
  const int64_t chunk = std::max<int64_t>(nbp, std::min<int64_t>(nb, 4096 / ml) / nbp * nbp);
  dim3 block(kRows, unsigned(G * nbp));
  dim3 grid(unsigned((2 * P + kRows - 1) / kRows), unsigned((nb + chunk - 1) / chunk));
  const size_t smem = s2t_smem<R>(int(ml));
  const int64_t zm = d ? P : 1, zp = d ? 1 : M;
  k_s2t<R><<<grid, block, smem, st>>>(p.par.N, P, M, int(ml), nb, nbp, chunk, sign, !g.post_info, g.s2t,
                                      g.red, input_ring<R>(p, x, halo), T, zm, zp, Z);
  check_launch("k_s2t");
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kS2T + 1], st));
}

// The M x P 2D FFT of Z into y (with the callback's POST for this
// direction on the first transform's load).
template <class R>
void Exec<R>::ffts(int sign) {
  if (g.post_info && g.post_sign != sign) {
    g.post_sign = sign;
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&g.post_info->sign, &g.post_sign, sizeof(int), cudaMemcpyHostToDevice, st));
  }
  const int dir = sign < 0 ? CUFFT_FORWARD : CUFFT_INVERSE;
  auto fft = [&](cufftHandle h, R* a, R* b) {
    if constexpr (sizeof(R) == 4)
      GPUFMM_CUFFT_CHECK(cufftExecC2C(h, reinterpret_cast<cufftComplex*>(a), reinterpret_cast<cufftComplex*>(b), dir));
    else
      GPUFMM_CUFFT_CHECK(
          cufftExecZ2Z(h, reinterpret_cast<cufftDoubleComplex*>(a), reinterpret_cast<cufftDoubleComplex*>(b), dir));
  };
  // The first transform's output: Z itself (in place), or, when its load
  // applies POST (a callback reading Z), T (free after the S2T).
  R* F = g.post_info ? T : Z;
  if (d) {
    // Along p on this rank's rows, then each rank's P / G columns of every
    // row to that rank (packed by the copy: G blocks of rows x P / G), one
    // all-to-all, and along m over the rows of every rank (in T, free after
    // the S2T and the packing) into the output.
    fft(g.fft_p, Z, F);
    GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kFftP + 1], st));
    const int64_t rows = N / P, cols = P / d->G, blk = 2 * rows * cols;
    R* send = staged ? host + g.h_send : static_cast<R*>(g.send);
    for (int h = 0; h < d->G; ++h)
      GPUFMM_CUDA_CHECK(cudaMemcpy2DAsync(send + h * blk, sizeof(R) * 2 * size_t(cols), F + 2 * h * cols,
                                          sizeof(R) * 2 * size_t(P), sizeof(R) * 2 * size_t(cols), size_t(rows),
                                          staged ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice, st));
    if (staged) {
      GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
      d->alltoall(send, host + g.h_a2a, blk);
      GPUFMM_CUDA_CHECK(
          cudaMemcpyAsync(T, host + g.h_a2a, sizeof(R) * 2 * size_t(N), cudaMemcpyHostToDevice, st));
    } else {
      d->alltoall(send, T, blk);
    }
    fft(g.fft_m, T, y);
    GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kFftM + 1], st));
  } else {
    fft(g.fft_m, Z, F);  // along m first (Z is m-major): ev[kFftM + 1]
    GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kFftM + 1], st));
    fft(g.fft_p, F, y);
    GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[kFftP + 1], st));
  }
}

// The stage times (p.times) from the events, after the final sync.
template <class R>
void Exec<R>::record_times() {
  for (int s = 0; s < kStages; ++s) {
    // The stages ran in index order but for the two FFTs of one process
    // (FFT-M first).
    int from = s;
    if (!d) from = s == kFftP ? kFftM + 1 : s == kFftM ? kS2T + 1 : s;
    float ms = 0;
    GPUFMM_CUDA_CHECK(cudaEventElapsedTime(&ms, g.ev[from], g.ev[s + 1]));
    p.times[s] = ms * 1e-3;
  }
}

// One transform: the stages in stream order, the bad-value flag cleared
// and the first event recorded before the first of them.
template <class R>
void execute_t(Plan& p, const void* in, void* out, int sign, bool on_context) {
  CudaPlan& g = *p.gpu;
  DeviceGuard guard(p.ctx);
  Exec<R> e(p, prepare<R>(p, in, out, on_context));
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(g.flag, 0, sizeof(int), e.st));
  GPUFMM_CUDA_CHECK(cudaEventRecord(g.ev[0], e.st));
  e.send_input();
  e.upward();
  e.send_levels();
  e.m2l_passes();
  e.check_sums();
  e.downward();
  e.s2t(sign);
  e.ffts(sign);
  if (!on_context)
    gpufmm::cuda::staged_download(p.ctx, out, e.y, sizeof(R) * 2 * size_t(e.N), plan::parallel_copy);
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(e.st));
  e.record_times();
}

}  // namespace

namespace detail {

void setup_cuda(Plan& p) {
  if (p.single())
    setup_t<float>(p);
  else
    setup_t<double>(p);
}

void execute_cuda(Plan& p, const void* in, void* out, int sign, bool on_context) {
  if (p.single())
    execute_t<float>(p, in, out, sign, on_context);
  else
    execute_t<double>(p, in, out, sign, on_context);
}

// gamma: a strided batched GEMM of the S2M's shape (rows 510, Q 16, M_L 64,
// 4096 boxes); beta: a 512 MiB device-to-device copy; latency: a tiny
// batched GEMM call, host clock.
Machine calibrate_cuda(Context& ctx, bool single) {
  DeviceGuard guard(ctx);
  const cudaStream_t st = stream_of(ctx);
  const gpufmm_dtype_t dt = single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  const size_t es = single ? 4 : 8;
  const int64_t m = 510, n = 16, k = 64, batch = 4096;
  const size_t bytes = size_t(512) << 20;
  void* a = backend_alloc(ctx, std::max(es * size_t(m * k * batch), bytes), "FMM-FFT calibration");
  void* c = nullptr;
  Machine mach;
  try {
    c = backend_alloc(ctx, std::max(es * size_t(m * n * batch), bytes), "FMM-FFT calibration");
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(a, 0, bytes, st));
    const double one = 1, zero = 0;
    const float onef = 1, zerof = 0;
    const void* al = single ? (const void*)&onef : (const void*)&one;
    const void* be = single ? (const void*)&zerof : (const void*)&zero;
    cudaEvent_t e0, e1;
    GPUFMM_CUDA_CHECK(cudaEventCreate(&e0));
    GPUFMM_CUDA_CHECK(cudaEventCreate(&e1));
    auto gemm = [&] {
      cuda::gemm_strided_batched(ctx, dt, GPUFMM_OP_N, GPUFMM_OP_T, m, n, k, al, a, m, m * k, a, n, 0, be, c, m,
                                 m * n, batch);
    };
    gemm();
    GPUFMM_CUDA_CHECK(cudaEventRecord(e0, st));
    for (int r = 0; r < 3; ++r) gemm();
    GPUFMM_CUDA_CHECK(cudaEventRecord(e1, st));
    GPUFMM_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    GPUFMM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    mach.gamma = 3 * 2.0 * m * n * k * batch / (std::max(ms, 1e-3f) * 1e-3);
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, st));
    GPUFMM_CUDA_CHECK(cudaEventRecord(e0, st));
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, st));
    GPUFMM_CUDA_CHECK(cudaEventRecord(e1, st));
    GPUFMM_CUDA_CHECK(cudaEventSynchronize(e1));
    GPUFMM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    mach.beta = 2.0 * bytes / (std::max(ms, 1e-3f) * 1e-3);
    // latency: a tiny batched GEMM, 20 in a row, on the host's clock (the
    // calls' host cost is what bounds a transform of small N).
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 20; ++r)
      cuda::gemm_strided_batched(ctx, dt, GPUFMM_OP_N, GPUFMM_OP_N, 8, 8, 8, al, a, 8, 64, a, 8, 0, be, c, 8, 64, 16);
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(st));
    mach.latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 20;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  } catch (...) {
    backend_free(ctx, a);
    if (c) backend_free(ctx, c);
    throw;
  }
  backend_free(ctx, a);
  backend_free(ctx, c);
  return mach;
}

}  // namespace detail

}  // namespace fmmfft
}  // namespace gpufmm
