// Issues 18 and 21: the FMM-FFT over several GPUs of one process against
// its rival, cuFFTXt's multi-GPU 1D FFT, on the same GPUs and the same
// input, with NCCL's all-to-all and all-gather bandwidth between those
// GPUs, measured in the same call. Prints a table and appends CSV.
//
//   bench_fft_gpus [--gpus 0,1] [--n 2^20,2^24,...] [--single] [--repeat R]
//                  [--csv PATH] [--label TEXT]
//
// --gpus: the GPUs, a comma-separated list (default: every GPU); the same GPU
// may be listed twice ("0,0") so that cuFFTXt's multi-GPU code path runs on
// one card (the FMM-FFT and NCCL need distinct GPUs and are then skipped).
// N: powers of two >= 64 (cuFFTXt's 1D multi-GPU condition; default
// 2^20,2^24); input uniform in [-1, 1]^2, forward, data resident on the
// GPUs (host copies not counted); times: best of R (default 3), from before
// the execute until every GPU is done.
//  - cuFFTXt with the in-place descriptor format (cufftXtSetGPUs,
//    cufftMakePlan1d, cufftXtMalloc(CUFFT_XT_FORMAT_INPLACE), cufftXtMemcpy,
//    cufftXtExecDescriptor{Z2Z,C2C}; the other formats fail with
//    CUFFT_INVALID_TYPE). An in-place execute leaves the descriptor in the
//    shuffled format, into which the host input can no longer be copied,
//    so every repetition takes a fresh descriptor (allocation not timed).
//  - The FMM-FFT over the same GPUs (gpufmm_fft_plan_create_multi: one
//    context per GPU, halos, base level and transposition through NCCL),
//    default eps, part g holding elements [g N / G, (g + 1) N / G) in
//    device arrays (gpufmm_fft_execute_multi); its FMM stages and its 2D
//    FFT (the transposition included) as part 0 reports them.
//  - err: each one's relative L2 error (copied back in natural order)
//    against one GPU's cuFFT of the same input, whose time is printed too.
//  - NCCL (libnccl.so.2 loaded at run time when the machine has it): the
//    bus bandwidth of an all-to-all and of an all-gather of N / G complex
//    numbers per GPU, as nccl-tests defines it ((G - 1) / G times the bytes
//    each GPU moves in all, over the time).
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "gpufmm.h"

#ifdef GPUFMM_HAVE_CUDA
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#ifdef GPUFMM_BENCH_NCCL
#include <dlfcn.h>
#include <nccl.h>
#endif

namespace {

#define CUDA(call)                                                                            \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));                 \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CUFFT(call)                                                                           \
  do {                                                                                        \
    cufftResult r_ = (call);                                                                  \
    if (r_ != CUFFT_SUCCESS) {                                                                \
      std::fprintf(stderr, "%s failed: cufftResult %d\n", #call, int(r_));                    \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

int64_t parse_n(const std::string& s) {
  if (s.rfind("2^", 0) == 0) return int64_t(1) << std::stoi(s.substr(2));
  return int64_t(std::stod(s));
}

void sync_all(const std::vector<int>& gpus) {
  for (int g : gpus) {
    CUDA(cudaSetDevice(g));
    CUDA(cudaDeviceSynchronize());
  }
}

struct Row {
  double t_xt = 0, t_one = 0, err = -1, bw_a2a = 0, bw_gather = 0;
  double t_fmm = -1, err_fmm = -1, fmm_stages = 0, fft2d = 0;  // t_fmm < 0: not run
  gpufmm_fft_info_t info{};
};

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double s[2] = {0, 0};
  for (size_t i = 0; i < a.size(); ++i) {
    s[0] += (a[i] - b[i]) * (a[i] - b[i]);
    s[1] += b[i] * b[i];
  }
  return std::sqrt(s[0] / s[1]);
}
template <class R>
std::vector<double> widen(const std::vector<R>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// One GPU's cuFFT of x (forward, out of place); y its output; best time.
template <class R>
double cufft_one(int gpu, int64_t n, const std::vector<R>& x, std::vector<R>& y, int repeat) {
  CUDA(cudaSetDevice(gpu));
  const size_t bytes = sizeof(R) * 2 * size_t(n);
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaGetLastError();
    if (a) cudaFree(a);
    return -1;  // no reference at this size
  }
  CUDA(cudaMemcpy(a, x.data(), bytes, cudaMemcpyHostToDevice));
  cufftHandle h;
  size_t ws = 0;
  long long nn[1] = {n};
  CUFFT(cufftCreate(&h));
  CUFFT(cufftMakePlanMany64(h, 1, nn, nullptr, 1, 0, nullptr, 1, 0, sizeof(R) == 4 ? CUFFT_C2C : CUFFT_Z2Z, 1, &ws));
  double best = 1e300;
  for (int r = 0; r <= repeat; ++r) {  // the first: warm-up
    CUDA(cudaDeviceSynchronize());
    const double t0 = bench::now();
    if constexpr (sizeof(R) == 4)
      CUFFT(cufftExecC2C(h, (cufftComplex*)a, (cufftComplex*)b, CUFFT_FORWARD));
    else
      CUFFT(cufftExecZ2Z(h, (cufftDoubleComplex*)a, (cufftDoubleComplex*)b, CUFFT_FORWARD));
    CUDA(cudaDeviceSynchronize());
    if (r > 0) best = std::min(best, bench::now() - t0);
  }
  y.resize(x.size());
  CUDA(cudaMemcpy(y.data(), b, bytes, cudaMemcpyDeviceToHost));
  cufftDestroy(h);
  CUDA(cudaFree(a));
  CUDA(cudaFree(b));
  return best;
}

// cuFFTXt over the GPUs; y its output in natural order; best time.
template <class R>
double cufft_xt(std::vector<int> gpus, int64_t n, const std::vector<R>& x, std::vector<R>& y, int repeat) {
  cufftHandle h;
  CUFFT(cufftCreate(&h));
  CUFFT(cufftXtSetGPUs(h, int(gpus.size()), gpus.data()));
  std::vector<size_t> ws(gpus.size());
  CUFFT(cufftMakePlan1d(h, int(n), sizeof(R) == 4 ? CUFFT_C2C : CUFFT_Z2Z, 1, ws.data()));
  cudaLibXtDesc* d = nullptr;
  double best = 1e300;
  for (int r = 0; r <= repeat; ++r) {
    if (d) CUFFT(cufftXtFree(d));
    CUFFT(cufftXtMalloc(h, &d, CUFFT_XT_FORMAT_INPLACE));
    CUFFT(cufftXtMemcpy(h, d, const_cast<R*>(x.data()), CUFFT_COPY_HOST_TO_DEVICE));
    sync_all(gpus);
    const double t0 = bench::now();
    if constexpr (sizeof(R) == 4)
      CUFFT(cufftXtExecDescriptorC2C(h, d, d, CUFFT_FORWARD));
    else
      CUFFT(cufftXtExecDescriptorZ2Z(h, d, d, CUFFT_FORWARD));
    sync_all(gpus);
    if (r > 0) best = std::min(best, bench::now() - t0);
  }
  y.resize(x.size());
  CUFFT(cufftXtMemcpy(h, y.data(), d, CUFFT_COPY_DEVICE_TO_HOST));
  CUFFT(cufftXtFree(d));
  cufftDestroy(h);
  return best;
}

#define GPUFMM(call)                                                                        \
  do {                                                                                      \
    if ((call) != GPUFMM_SUCCESS) {                                                         \
      std::fprintf(stderr, "%s failed: %s\n", #call, gpufmm_last_error_message());           \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// The FMM-FFT over the GPUs (distinct, G a power of two); y its output in
// natural order; fills row's FMM-FFT fields.
template <class R>
void fmmfft_multi(const std::vector<int>& gpus, int64_t n, const std::vector<R>& x, std::vector<R>& y, int repeat,
                  Row& row) {
  const int G = int(gpus.size());
  const int64_t nl = n / G;
  const gpufmm_dtype_t dt = sizeof(R) == 4 ? GPUFMM_COMPLEX64 : GPUFMM_COMPLEX128;
  std::vector<gpufmm_context_t> ctx(gpus.size());
  for (int g = 0; g < G; ++g) GPUFMM(gpufmm_context_create(gpus[size_t(g)], &ctx[size_t(g)]));
  gpufmm_fft_options_t o;
  GPUFMM(gpufmm_fft_options_init(&o));
  o.n = n;
  o.dtype = dt;
  o.direction = GPUFMM_FFT_FORWARD;
  gpufmm_fft_plan_t plan;
  if (gpufmm_fft_plan_create_multi(ctx.data(), G, &o, &plan) != GPUFMM_SUCCESS) {
    std::fprintf(stderr, "FMM-FFT over %d GPUs, N = %lld: %s\n", G, (long long)n, gpufmm_last_error_message());
  } else {
    std::vector<gpufmm_array_t> in(gpus.size()), out(gpus.size());
    for (int g = 0; g < G; ++g) {
      int64_t dims[1] = {nl};
      GPUFMM(gpufmm_array_create(ctx[size_t(g)], dt, 1, dims, &in[size_t(g)]));
      GPUFMM(gpufmm_array_create(ctx[size_t(g)], dt, 1, dims, &out[size_t(g)]));
      GPUFMM(gpufmm_array_upload(in[size_t(g)], x.data() + 2 * size_t(g * nl), nl));
    }
    double best = 1e300;
    for (int r = 0; r <= repeat; ++r) {  // the first: warm-up
      for (auto c : ctx) GPUFMM(gpufmm_context_synchronize(c));
      const double t0 = bench::now();
      GPUFMM(gpufmm_fft_execute_multi(plan, in.data(), out.data(), GPUFMM_FFT_FORWARD));
      for (auto c : ctx) GPUFMM(gpufmm_context_synchronize(c));
      if (r > 0 && bench::now() - t0 < best) {
        best = bench::now() - t0;
        GPUFMM(gpufmm_fft_plan_info(plan, &row.info));
      }
    }
    y.assign(x.size(), R(0));
    for (int g = 0; g < G; ++g) GPUFMM(gpufmm_array_download(out[size_t(g)], y.data() + 2 * size_t(g * nl), nl));
    row.t_fmm = best;
    const double* t = row.info.time;
    row.fft2d = t[GPUFMM_FFT_STAGE_FFT_P] + t[GPUFMM_FFT_STAGE_FFT_M];
    for (int s = 0; s < GPUFMM_FFT_STAGES; ++s) row.fmm_stages += t[s];
    row.fmm_stages -= row.fft2d;
    for (int g = 0; g < G; ++g) {
      gpufmm_array_destroy(in[size_t(g)]);
      gpufmm_array_destroy(out[size_t(g)]);
    }
    gpufmm_fft_plan_destroy(plan);
  }
  for (auto c : ctx) gpufmm_context_destroy(c);
}

#ifdef GPUFMM_BENCH_NCCL
// NCCL's entry points from libnccl.so.2 (null members: not found).
struct Nccl {
  decltype(&::ncclCommInitAll) CommInitAll = nullptr;
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclAlltoAll) AlltoAll = nullptr;
  decltype(&::ncclAllGather) AllGather = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
  bool ok = false;
};
const Nccl& nccl() {
  static const Nccl n = [] {
    Nccl r;
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return r;
    r.CommInitAll = reinterpret_cast<decltype(r.CommInitAll)>(dlsym(h, "ncclCommInitAll"));
    r.CommDestroy = reinterpret_cast<decltype(r.CommDestroy)>(dlsym(h, "ncclCommDestroy"));
    r.AlltoAll = reinterpret_cast<decltype(r.AlltoAll)>(dlsym(h, "ncclAlltoAll"));
    r.AllGather = reinterpret_cast<decltype(r.AllGather)>(dlsym(h, "ncclAllGather"));
    r.GroupStart = reinterpret_cast<decltype(r.GroupStart)>(dlsym(h, "ncclGroupStart"));
    r.GroupEnd = reinterpret_cast<decltype(r.GroupEnd)>(dlsym(h, "ncclGroupEnd"));
    r.GetErrorString = reinterpret_cast<decltype(r.GetErrorString)>(dlsym(h, "ncclGetErrorString"));
    r.ok = r.CommInitAll && r.CommDestroy && r.AlltoAll && r.AllGather && r.GroupStart && r.GroupEnd &&
           r.GetErrorString;
    return r;
  }();
  return n;
}
#define NCCL(call)                                                                  \
  do {                                                                              \
    ncclResult_t r_ = nccl().call;                                                  \
    if (r_ != ncclSuccess) {                                                        \
      std::fprintf(stderr, "nccl%s failed: %s\n", #call, nccl().GetErrorString(r_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

// Bus bandwidth (bytes/s) of an all-to-all and an all-gather with `bytes`
// per GPU in all, best of `repeat`; 0 without NCCL.
void nccl_bandwidth(const std::vector<int>& gpus, size_t bytes, int repeat, Row& row) {
  if (!nccl().ok) return;
  const int G = int(gpus.size());
  std::vector<ncclComm_t> comms(gpus.size());
  NCCL(CommInitAll(comms.data(), G, gpus.data()));
  std::vector<void*> send(gpus.size()), recv(gpus.size());
  std::vector<cudaStream_t> st(gpus.size());
  for (int g = 0; g < G; ++g) {
    CUDA(cudaSetDevice(gpus[size_t(g)]));
    CUDA(cudaMalloc(&send[size_t(g)], bytes));
    CUDA(cudaMalloc(&recv[size_t(g)], bytes));
    CUDA(cudaMemset(send[size_t(g)], 0, bytes));
    CUDA(cudaStreamCreate(&st[size_t(g)]));
  }
  const size_t chunk = bytes / size_t(G);  // to each GPU (all-to-all), from each GPU (all-gather)
  auto time = [&](bool a2a) {
    double best = 1e300;
    for (int r = 0; r <= repeat; ++r) {
      sync_all(gpus);
      const double t0 = bench::now();
      NCCL(GroupStart());
      for (int g = 0; g < G; ++g) {
        if (a2a)
          NCCL(AlltoAll(send[size_t(g)], recv[size_t(g)], chunk, ncclChar, comms[size_t(g)], st[size_t(g)]));
        else
          NCCL(AllGather(send[size_t(g)], recv[size_t(g)], chunk, ncclChar, comms[size_t(g)], st[size_t(g)]));
      }
      NCCL(GroupEnd());
      sync_all(gpus);
      if (r > 0) best = std::min(best, bench::now() - t0);
    }
    return double(bytes) * (G - 1) / G / best;
  };
  row.bw_a2a = time(true);
  row.bw_gather = time(false);
  for (int g = 0; g < G; ++g) {
    CUDA(cudaSetDevice(gpus[size_t(g)]));
    CUDA(cudaFree(send[size_t(g)]));
    CUDA(cudaFree(recv[size_t(g)]));
    CUDA(cudaStreamDestroy(st[size_t(g)]));
    nccl().CommDestroy(comms[size_t(g)]);
  }
}
#endif

template <class R>
void run(const std::vector<int>& gpus, int64_t n, int repeat, const std::string& csv, const std::string& label) {
  std::vector<R> x(2 * size_t(n)), y, ref;
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : x) v = R(u(rng));
  Row row;
  row.t_xt = cufft_xt<R>(gpus, n, x, y, repeat);
  row.t_one = cufft_one<R>(gpus[0], n, x, ref, repeat);
  bool distinct = true;
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = 0; j < i; ++j) distinct = distinct && gpus[i] != gpus[j];
  std::vector<R> z;
  if (distinct) fmmfft_multi<R>(gpus, n, x, z, repeat, row);
  if (row.t_one > 0) {
    row.err = rel_l2(widen(y), widen(ref));
    if (row.t_fmm > 0) row.err_fmm = rel_l2(widen(z), widen(ref));
  }
#ifdef GPUFMM_BENCH_NCCL
  if (distinct && gpus.size() > 1) nccl_bandwidth(gpus, sizeof(R) * 2 * size_t(n) / gpus.size(), repeat, row);
#endif
  std::string list;
  for (int g : gpus) list += (list.empty() ? "" : ":") + std::to_string(g);
  const char* type = sizeof(R) == 4 ? "c64" : "c128";
  std::printf("%-9s %11lld %4s | %10.6f %8.2e | %10.6f %8.2e %9.6f %9.6f %7.2f | %10.6f | %8.1f %8.1f\n",
              list.c_str(), (long long)n, type, row.t_xt, row.err, row.t_fmm, row.err_fmm, row.fmm_stages, row.fft2d,
              row.t_fmm > 0 ? row.t_xt / row.t_fmm : 0.0, row.t_one, row.bw_a2a * 1e-9, row.bw_gather * 1e-9);
  std::fflush(stdout);
  if (FILE* f = bench::csv_append(csv, "label,gpus,n,dtype,cufftxt_s,err_cufftxt,fmmfft_s,err_fmmfft,fmmfft_fmm_s,"
                                       "fmmfft_fft2d_s,cufftxt_over_fmmfft,P,ml,L,B,Q,cufft_one_gpu_s,"
                                       "nccl_alltoall_busbw_GBs,nccl_allgather_busbw_GBs\n")) {
    std::fprintf(f, "%s,%s,%lld,%s,%.6g,%.3e,%.6g,%.3e,%.6g,%.6g,%.4g,%d,%d,%d,%d,%d,%.6g,%.4g,%.4g\n", label.c_str(),
                 list.c_str(), (long long)n, type, row.t_xt, row.err, row.t_fmm, row.err_fmm, row.fmm_stages,
                 row.fft2d, row.t_fmm > 0 ? row.t_xt / row.t_fmm : 0.0, row.info.p, row.info.ml, row.info.levels,
                 row.info.base, row.info.q, row.t_one, row.bw_a2a * 1e-9, row.bw_gather * 1e-9);
    std::fclose(f);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using bench::option;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "bench_fft_gpus: no GPU\n");
    return 1;
  }
  std::string all;
  for (int g = 0; g < ndev; ++g) all += (g ? "," : "") + std::to_string(g);
  std::vector<int> gpus;
  for (const std::string& s : bench::split(option(argc, argv, "--gpus", all))) {
    gpus.push_back(std::stoi(s));
    if (gpus.back() < 0 || gpus.back() >= ndev) {
      std::fprintf(stderr, "bench_fft_gpus: --gpus: no GPU %d (this machine has %d)\n", gpus.back(), ndev);
      return 1;
    }
  }
  const bool single = bench::flag(argc, argv, "--single");
  const int repeat = std::max(1, std::stoi(option(argc, argv, "--repeat", "3")));
  const std::string csv = option(argc, argv, "--csv", "");
  const std::string label = option(argc, argv, "--label", "");
  std::printf("# bench_fft_gpus: cuFFTXt's 1D FFT and the FMM-FFT over GPUs %s; best of %d, seconds; err against "
              "one GPU's cuFFT; NCCL bus bandwidth GB/s\n",
              option(argc, argv, "--gpus", all).c_str(), repeat);
  std::printf("%-9s %11s %4s | %10s %8s | %10s %8s %9s %9s %7s | %10s | %8s %8s\n", "gpus", "N", "type", "cufftxt",
              "err", "fmmfft", "err", "fmm", "fft2d", "speedup", "cufft-1", "a2a", "gather");
  for (const std::string& s : bench::split(option(argc, argv, "--n", "2^20,2^24"))) {
    const int64_t n = parse_n(s);
    if (n < 64 || (n & (n - 1)) != 0 || n > (int64_t(1) << 31) - 1) {
      std::fprintf(stderr, "bench_fft_gpus: N = %lld: cuFFTXt's 1D multi-GPU FFT takes powers of two from 64 to 2^30\n",
                   (long long)n);
      return 1;
    }
    if (single)
      run<float>(gpus, n, repeat, csv, label);
    else
      run<double>(gpus, n, repeat, csv, label);
  }
  return 0;
}

#else

int main() {
  std::fprintf(stderr, "bench_fft_gpus: built without CUDA\n");
  return 1;
}

#endif
