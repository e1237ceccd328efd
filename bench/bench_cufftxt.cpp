// The rival of the distributed FMM-FFT (issues 18 and 21): cuFFTXt's
// multi-GPU 1D FFT in one process, and NCCL's all-to-all and all-gather
// bandwidth between the same GPUs, measured in the same call. Prints a
// table and appends CSV.
//
//   bench_cufftxt [--gpus 0,1] [--n 2^20,2^24,...] [--single] [--repeat R]
//                 [--csv PATH] [--label TEXT]
//
// --gpus: the GPUs, a comma-separated list (default: every GPU); the same GPU
// may be listed twice ("0,0") so that the multi-GPU code path runs on one
// card. N: powers of two >= 64 (cuFFTXt's 1D multi-GPU condition; default
// 2^20,2^24). cuFFTXt with the in-place descriptor format
// (cufftXtSetGPUs, cufftMakePlan1d, cufftXtMalloc(CUFFT_XT_FORMAT_INPLACE),
// cufftXtMemcpy, cufftXtExecDescriptor{Z2Z,C2C}; the other formats fail
// with CUFFT_INVALID_TYPE), forward, input uniform in [-1, 1]^2. Times: best
// of R (default 3) transforms, from before the execute until every GPU is
// done, data resident (host copies not counted). err: the relative L2 error
// of cuFFTXt's output (copied back in natural order) against one GPU's
// cuFFT of the same input, whose time is printed too. NCCL (libnccl.so.2
// loaded at run time when the machine has it; distinct GPUs only: NCCL
// refuses a GPU twice in one communicator): the bus bandwidth of
// an all-to-all and of an all-gather of N / G complex numbers per GPU, as
// nccl-tests defines it ((G - 1) / G times the bytes each GPU moves in all,
// over the time).
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_args.hpp"

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
};

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
  CUFFT(cufftXtMalloc(h, &d, CUFFT_XT_FORMAT_INPLACE));
  double best = 1e300;
  for (int r = 0; r <= repeat; ++r) {
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
  if (row.t_one > 0) {
    double s[2] = {0, 0};
    for (size_t i = 0; i < y.size(); ++i) {
      s[0] += (double(y[i]) - double(ref[i])) * (double(y[i]) - double(ref[i]));
      s[1] += double(ref[i]) * double(ref[i]);
    }
    row.err = std::sqrt(s[0] / s[1]);
  }
  bool distinct = true;
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = 0; j < i; ++j) distinct = distinct && gpus[i] != gpus[j];
#ifdef GPUFMM_BENCH_NCCL
  if (distinct && gpus.size() > 1) nccl_bandwidth(gpus, sizeof(R) * 2 * size_t(n) / gpus.size(), repeat, row);
#endif
  std::string list;
  for (int g : gpus) list += (list.empty() ? "" : ":") + std::to_string(g);
  std::printf("%-9s %11lld %4s | %10.6f %10.6f %7.2f | %8.2e | %8.1f %8.1f\n", list.c_str(), (long long)n,
              sizeof(R) == 4 ? "c64" : "c128", row.t_xt, row.t_one, row.t_one > 0 ? row.t_one / row.t_xt : 0.0,
              row.err, row.bw_a2a * 1e-9, row.bw_gather * 1e-9);
  std::fflush(stdout);
  if (FILE* f = bench::csv_append(csv, "label,gpus,n,dtype,cufftxt_s,cufft_one_gpu_s,err_vs_one_gpu,nccl_alltoall_busbw_GBs,"
                                       "nccl_allgather_busbw_GBs\n")) {
    std::fprintf(f, "%s,%s,%lld,%s,%.6g,%.6g,%.3e,%.4g,%.4g\n", label.c_str(), list.c_str(), (long long)n,
                 sizeof(R) == 4 ? "c64" : "c128", row.t_xt, row.t_one, row.err, row.bw_a2a * 1e-9,
                 row.bw_gather * 1e-9);
    std::fclose(f);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using bench::option;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "bench_cufftxt: no GPU\n");
    return 1;
  }
  std::string all;
  for (int g = 0; g < ndev; ++g) all += (g ? "," : "") + std::to_string(g);
  std::vector<int> gpus;
  for (const std::string& s : bench::split(option(argc, argv, "--gpus", all))) {
    gpus.push_back(std::stoi(s));
    if (gpus.back() < 0 || gpus.back() >= ndev) {
      std::fprintf(stderr, "bench_cufftxt: --gpus: no GPU %d (this machine has %d)\n", gpus.back(), ndev);
      return 1;
    }
  }
  const bool single = bench::flag(argc, argv, "--single");
  const int repeat = std::max(1, std::stoi(option(argc, argv, "--repeat", "3")));
  const std::string csv = option(argc, argv, "--csv", "");
  const std::string label = option(argc, argv, "--label", "");
  std::printf("# bench_cufftxt: cuFFTXt 1D over GPUs %s; best of %d, seconds; NCCL bus bandwidth GB/s\n",
              option(argc, argv, "--gpus", all).c_str(), repeat);
  std::printf("%-9s %11s %4s | %10s %10s %7s | %8s | %8s %8s\n", "gpus", "N", "type", "cufftxt", "cufft-1", "ratio",
              "err", "a2a", "gather");
  for (const std::string& s : bench::split(option(argc, argv, "--n", "2^20,2^24"))) {
    const int64_t n = parse_n(s);
    if (n < 64 || (n & (n - 1)) != 0 || n > (int64_t(1) << 31) - 1) {
      std::fprintf(stderr, "bench_cufftxt: N = %lld: cuFFTXt's 1D multi-GPU FFT takes powers of two from 64 to 2^30\n",
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
  std::fprintf(stderr, "bench_cufftxt: built without CUDA\n");
  return 1;
}

#endif
