// FMM-FFT benchmark (issue 17; not a test). For N = 2^min .. 2^max and each
// precision: the FMM-FFT's time (median of --reps executes on device
// arrays, or host arrays on the CPU backend), its stage profile and the
// achieved fraction of the roofline per stage (papers/002 Fig. 4, 5), the
// vendor 1D FFT of the same N (cuFFT on a GPU, FFTW on all host threads on
// the CPU backend) and the vendor M x P 2D FFT alone, measured in the same
// run, and the FMM-FFT's relative L2 error against the vendor 1D FFT.
//
//   bench_fmmfft [--gpu | --cpu] [--min 16] [--max 26] [--reps 5]
//                [--precisions double,single] [--tune K] [--post fused|callback|both] [--csv FILE]
//
// --post (GPU): where POST runs (gpufmm_fft_options_t::post); both: a row
// for each, the callback's plan with the fused plan's parameters (P, M_L,
// B, Q), on the same input and vendor times.
#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "gpufmm.h"
#ifdef GPUFMM_HAVE_CUDA
#include <cuda_runtime.h>
#include <cufft.h>
#endif

namespace {

// Uniform [-1, 1) reals from a counter hash (fast, parallel, reproducible).
void fill_random(std::vector<double>& x, uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < int64_t(x.size()); ++i) {
    uint64_t z = (uint64_t(i) + seed) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[size_t(i)] = double(z >> 11) * 0x1.0p-52 - 1.0;
  }
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0, r = 0;
#pragma omp parallel for reduction(+ : e, r)
  for (int64_t i = 0; i < int64_t(a.size()); ++i) {
    e += (a[size_t(i)] - b[size_t(i)]) * (a[size_t(i)] - b[size_t(i)]);
    r += b[size_t(i)] * b[size_t(i)];
  }
  return std::sqrt(e / r);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::string backend, prec, post = "fused";
  int64_t n = 0;
  gpufmm_fft_info_t info{};
  double t = 0, t_vendor1d = 0, t_vendor2d = 0, err = 0, plan_s = 0;
};

// Vendor transforms on the CPU: FFTW, all threads, FFTW_ESTIMATE (as the
// FMM-FFT's own 2D FFT).
template <class R>
void fftw_times(int64_t n, int64_t M, int64_t P, const std::vector<double>& x, int reps, Row& row,
                std::vector<double>& y) {
  const size_t cnt = 2 * size_t(n);
  std::vector<R> in(x.begin(), x.end()), out(cnt);
  std::vector<double> t1, t2;
  if constexpr (sizeof(R) == 8) {
    fftw_plan_with_nthreads(omp_get_max_threads());
    fftw_plan p1 = fftw_plan_dft_1d(int(n), (fftw_complex*)in.data(), (fftw_complex*)out.data(), -1, FFTW_ESTIMATE);
    fftw_plan p2 = fftw_plan_dft_2d(int(M), int(P), (fftw_complex*)in.data(), (fftw_complex*)out.data(), -1, FFTW_ESTIMATE);
    for (int r = 0; r < reps; ++r) {
      double t0 = bench::now();
      fftw_execute(p1);
      t1.push_back(bench::now() - t0);
      t0 = bench::now();
      fftw_execute(p2);
      t2.push_back(bench::now() - t0);
    }
    fftw_execute(p1);
    fftw_destroy_plan(p1);
    fftw_destroy_plan(p2);
  } else {
    fftwf_plan_with_nthreads(omp_get_max_threads());
    fftwf_plan p1 = fftwf_plan_dft_1d(int(n), (fftwf_complex*)in.data(), (fftwf_complex*)out.data(), -1, FFTW_ESTIMATE);
    fftwf_plan p2 = fftwf_plan_dft_2d(int(M), int(P), (fftwf_complex*)in.data(), (fftwf_complex*)out.data(), -1, FFTW_ESTIMATE);
    for (int r = 0; r < reps; ++r) {
      double t0 = bench::now();
      fftwf_execute(p1);
      t1.push_back(bench::now() - t0);
      t0 = bench::now();
      fftwf_execute(p2);
      t2.push_back(bench::now() - t0);
    }
    fftwf_execute(p1);
    fftwf_destroy_plan(p1);
    fftwf_destroy_plan(p2);
  }
  row.t_vendor1d = median(t1);
  row.t_vendor2d = median(t2);
  y.assign(out.begin(), out.end());
}

#ifdef GPUFMM_HAVE_CUDA
#define CU(call)                                                                     \
  do {                                                                               \
    if ((call) != 0) {                                                               \
      std::fprintf(stderr, "%s failed at %s:%d\n", #call, __FILE__, __LINE__);      \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// cuFFT 1D (out of place) and 2D M x P (in place) on device data; y: the 1D result.
void cufft_times(int64_t n, int64_t M, int64_t P, bool single, const void* din, int reps, Row& row,
                 std::vector<double>& y) {
  const size_t bytes = (single ? 8 : 16) * size_t(n);
  void *dout = nullptr, *dtmp = nullptr;
  CU(cudaMalloc(&dout, bytes));
  CU(cudaMalloc(&dtmp, bytes));
  cufftHandle p1, p2;
  const cufftType type = single ? CUFFT_C2C : CUFFT_Z2Z;
  size_t ws;
  long long nn[1] = {n}, n2[2] = {M, P};
  CU(cufftCreate(&p1));
  CU(cufftMakePlanMany64(p1, 1, nn, nullptr, 1, 0, nullptr, 1, 0, type, 1, &ws));
  CU(cufftCreate(&p2));
  CU(cufftMakePlanMany64(p2, 2, n2, nullptr, 1, 0, nullptr, 1, 0, type, 1, &ws));
  auto exec = [&](cufftHandle h, void* a, void* b) {
    if (single)
      CU(cufftExecC2C(h, (cufftComplex*)a, (cufftComplex*)b, CUFFT_FORWARD));
    else
      CU(cufftExecZ2Z(h, (cufftDoubleComplex*)a, (cufftDoubleComplex*)b, CUFFT_FORWARD));
  };
  cudaEvent_t e0, e1;
  CU(cudaEventCreate(&e0));
  CU(cudaEventCreate(&e1));
  std::vector<double> t1, t2;
  CU(cudaMemcpy(dtmp, din, bytes, cudaMemcpyDeviceToDevice));
  exec(p1, const_cast<void*>(din), dout);
  exec(p2, dtmp, dtmp);
  for (int r = 0; r < reps; ++r) {
    float ms;
    CU(cudaEventRecord(e0));
    exec(p1, const_cast<void*>(din), dout);
    CU(cudaEventRecord(e1));
    CU(cudaEventSynchronize(e1));
    CU(cudaEventElapsedTime(&ms, e0, e1));
    t1.push_back(ms * 1e-3);
    CU(cudaEventRecord(e0));
    exec(p2, dtmp, dtmp);
    CU(cudaEventRecord(e1));
    CU(cudaEventSynchronize(e1));
    CU(cudaEventElapsedTime(&ms, e0, e1));
    t2.push_back(ms * 1e-3);
  }
  row.t_vendor1d = median(t1);
  row.t_vendor2d = median(t2);
  y.resize(2 * size_t(n));
  if (single) {
    std::vector<float> f(2 * size_t(n));
    CU(cudaMemcpy(f.data(), dout, bytes, cudaMemcpyDeviceToHost));
    y.assign(f.begin(), f.end());
  } else {
    CU(cudaMemcpy(y.data(), dout, bytes, cudaMemcpyDeviceToHost));
  }
  cufftDestroy(p1);
  cufftDestroy(p2);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(dout);
  cudaFree(dtmp);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int ndev = 0;
  gpufmm_device_count(&ndev);
  const bool gpu = !bench::flag(argc, argv, "--cpu") && (bench::flag(argc, argv, "--gpu") || ndev > 0);
#ifndef GPUFMM_HAVE_CUDA
  if (gpu) {
    std::fprintf(stderr, "bench_fmmfft: built without CUDA; use --cpu\n");
    return 1;
  }
#endif
  const int kmin = std::stoi(bench::option(argc, argv, "--min", "16"));
  const int kmax = std::stoi(bench::option(argc, argv, "--max", gpu ? "26" : "24"));
  const int reps = std::stoi(bench::option(argc, argv, "--reps", "5"));
  const int tune = std::stoi(bench::option(argc, argv, "--tune", "0"));
  const auto precs = bench::split(bench::option(argc, argv, "--precisions", "double,single"));
  const std::string post_arg = bench::option(argc, argv, "--post", "fused");
  std::vector<int> posts;
  if (post_arg == "fused" || post_arg == "both") posts.push_back(GPUFMM_FFT_POST_FUSED);
  if (post_arg == "callback" || post_arg == "both") posts.push_back(GPUFMM_FFT_POST_CALLBACK);
  if (posts.empty() || (!gpu && posts != std::vector<int>{GPUFMM_FFT_POST_FUSED})) {
    std::fprintf(stderr, "bench_fmmfft: --post is fused, callback or both (callback: GPU only)\n");
    return 1;
  }
  const std::string csv = bench::option(argc, argv, "--csv", "");
  gpufmm_context_t ctx;
  CHECK(gpufmm_context_create(gpu ? 0 : GPUFMM_DEVICE_CPU, &ctx));
  std::vector<Row> rows;
  std::printf("%-4s %-6s %-8s %10s %6s %4s %3s %2s %3s %10s %10s %10s %7s %9s %8s\n", "back", "prec", "post", "N",
              "P", "M_L", "L", "B", "Q", "fmmfft_ms", "vend1d_ms", "vend2d_ms", "ratio", "error", "plan_s");
  for (const std::string& prec : precs) {
    const bool single = prec == "single";
    for (int k = kmin; k <= kmax; ++k) {
      const int64_t n = int64_t(1) << k;
      std::vector<double> x(2 * size_t(n)), ref;
      fill_random(x, uint64_t(k) * 7919);
      Row first;  // the first mode's row: its parameters and vendor times
      for (size_t pi = 0; pi < posts.size(); ++pi) {
        Row row;
        row.backend = gpu ? "gpu" : "cpu";
        row.prec = single ? "c64" : "c128";
        row.post = posts[pi] == GPUFMM_FFT_POST_CALLBACK ? "callback" : "fused";
        row.n = n;
        std::vector<double> y;
        gpufmm_fft_options_t o;
        CHECK(gpufmm_fft_options_init(&o));
        o.n = n;
        o.dtype = single ? GPUFMM_COMPLEX64 : GPUFMM_COMPLEX128;
        o.direction = GPUFMM_FFT_FORWARD;
        o.tune = tune;
        o.post = posts[pi];
        if (pi > 0) {  // the first mode's parameters
          o.p = first.info.p;
          o.ml = first.info.ml;
          o.b = first.info.base;
          o.q = first.info.q;
          o.tune = 0;
        }
        gpufmm_fft_plan_t plan;
        double t0 = bench::now();
        CHECK(gpufmm_fft_plan_create(ctx, &o, &plan));
        row.plan_s = bench::now() - t0;
        CHECK(gpufmm_fft_plan_info(plan, &row.info));
        const int64_t M = row.info.m, P = row.info.p;
        std::vector<double> times;
        if (gpu) {
#ifdef GPUFMM_HAVE_CUDA
          gpufmm_array_t a, b;
          int64_t dims[1] = {n};
          CHECK(gpufmm_array_create(ctx, gpufmm_dtype_t(o.dtype), 1, dims, &a));
          CHECK(gpufmm_array_create(ctx, gpufmm_dtype_t(o.dtype), 1, dims, &b));
          if (single) {
            std::vector<float> xf(x.begin(), x.end());
            CHECK(gpufmm_array_upload(a, xf.data(), n));
          } else {
            CHECK(gpufmm_array_upload(a, x.data(), n));
          }
          CHECK(gpufmm_fft_execute(plan, a, b, -1));
          for (int r = 0; r < reps; ++r) {
            t0 = bench::now();
            CHECK(gpufmm_fft_execute(plan, a, b, -1));
            times.push_back(bench::now() - t0);
          }
          y.resize(x.size());
          if (single) {
            std::vector<float> yf(x.size());
            CHECK(gpufmm_array_download(b, yf.data(), n));
            y.assign(yf.begin(), yf.end());
          } else {
            CHECK(gpufmm_array_download(b, y.data(), n));
          }
          void* din;
          CHECK(gpufmm_array_data(a, &din));
          CHECK(gpufmm_context_synchronize(ctx));
          if (pi == 0)
            cufft_times(n, M, P, single, din, reps, row, ref);
          else
            row.t_vendor1d = first.t_vendor1d, row.t_vendor2d = first.t_vendor2d;
          gpufmm_array_destroy(a);
          gpufmm_array_destroy(b);
#endif
        } else {
          if (single) {
            std::vector<float> xf(x.begin(), x.end()), yf(x.size());
            CHECK(gpufmm_fft_execute_host(plan, xf.data(), yf.data(), -1));
            for (int r = 0; r < reps; ++r) {
              t0 = bench::now();
              CHECK(gpufmm_fft_execute_host(plan, xf.data(), yf.data(), -1));
              times.push_back(bench::now() - t0);
            }
            y.assign(yf.begin(), yf.end());
            fftw_times<float>(n, M, P, x, reps, row, ref);
          } else {
            y.resize(x.size());
            CHECK(gpufmm_fft_execute_host(plan, x.data(), y.data(), -1));
            for (int r = 0; r < reps; ++r) {
              t0 = bench::now();
              CHECK(gpufmm_fft_execute_host(plan, x.data(), y.data(), -1));
              times.push_back(bench::now() - t0);
            }
            fftw_times<double>(n, M, P, x, reps, row, ref);
          }
        }
        CHECK(gpufmm_fft_plan_info(plan, &row.info));  // the stage times of the last execute
        row.t = median(times);
        row.err = rel_l2(y, ref);
        std::printf("%-4s %-6s %-8s %10lld %6d %4d %3d %2d %3d %10.3f %10.3f %10.3f %7.2f %9.2e %8.3f\n",
                    row.backend.c_str(), row.prec.c_str(), row.post.c_str(), (long long)n, row.info.p, row.info.ml,
                    row.info.levels, row.info.base, row.info.q, row.t * 1e3, row.t_vendor1d * 1e3, row.t_vendor2d * 1e3,
                    row.t / row.t_vendor1d, row.err, row.plan_s);
        std::printf("     stages (ms, roofline fraction):");
        for (int s = 0; s < GPUFMM_FFT_STAGES; ++s)
          std::printf(" %s %.3f (%.0f%%)", gpufmm_fft_stage_name(s), row.info.time[s] * 1e3,
                      row.info.time[s] > 0 ? 100 * row.info.model[s] / row.info.time[s] : 0.0);
        std::printf("\n");
        std::fflush(stdout);
        rows.push_back(row);
        if (pi == 0) first = row;
        gpufmm_fft_plan_destroy(plan);
      }
    }
  }
  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", csv.c_str());
      return 1;
    }
    std::fprintf(f, "backend,precision,post,n,p,ml,levels,base,q,t_fmmfft,t_vendor1d,t_vendor2d,error,plan_s,gamma,beta");
    for (int s = 0; s < GPUFMM_FFT_STAGES; ++s) std::fprintf(f, ",t_%s,model_%s", gpufmm_fft_stage_name(s), gpufmm_fft_stage_name(s));
    std::fprintf(f, "\n");
    for (const Row& r : rows) {
      std::fprintf(f, "%s,%s,%s,%lld,%d,%d,%d,%d,%d,%.6e,%.6e,%.6e,%.3e,%.4f,%.4e,%.4e", r.backend.c_str(),
                   r.prec.c_str(), r.post.c_str(), (long long)r.n, r.info.p, r.info.ml, r.info.levels, r.info.base, r.info.q, r.t, r.t_vendor1d,
                   r.t_vendor2d, r.err, r.plan_s, r.info.gamma, r.info.beta);
      for (int s = 0; s < GPUFMM_FFT_STAGES; ++s) std::fprintf(f, ",%.6e,%.6e", r.info.time[s], r.info.model[s]);
      std::fprintf(f, "\n");
    }
    std::fclose(f);
  }
  gpufmm_context_destroy(ctx);
  return 0;
}
