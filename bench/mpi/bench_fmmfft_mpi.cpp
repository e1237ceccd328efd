// The FMM-FFT across MPI ranks (issue 18) against FFTW's MPI 1D transform:
// one row per N, under mpirun with the number of ranks to measure. Prints a
// table (rank 0) and appends CSV.
//
//   mpirun -np G bench_fmmfft_mpi [--n 2^20,2^24,...] [--single] [--eps E]
//        [--repeat R] [--gpu] [--csv PATH] [--label TEXT]
//
// --gpu: rank g on GPU g mod (the GPUs it sees), ranks sharing GPUs when
// there are fewer; input and output in device arrays (data resident; the
// host copies are not timed). Without it, CPU ranks.
// N: a comma-separated list (2^k or integers; default 2^20,2^22,2^24). The
// input is uniform random in [-1, 1]^2, block-partitioned in natural order
// (rank g: [g N/G, (g+1) N/G)), forward transform. Times are the maximum
// over the ranks of the best of R (default 3) transforms: the FMM-FFT's
// whole execute, its FMM stages (S2M .. S2T+POST, waits for halos and the
// base level included), its 2D FFT (one all-to-all: FFTW-MPI on CPU ranks,
// cuFFT around MPI_Alltoall of host-staged rows on GPU ranks), the seconds
// it waited for messages, and FFTW-MPI's in-order 1D transform (three
// all-to-alls; FFTW_ESTIMATE, as the FMM-FFT's own FFTs) of the same
// block-partitioned input (on GPU ranks only the error reference: one
// transform, on the host's cores). err: the FMM-FFT's relative L2 error
// against FFTW-MPI's output. sent: the reals rank 0 sent per transform
// (input halo + multipole halos + its base-level block).
#include <fftw3-mpi.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "gpufmm_mpi.h"
#include "mpi_bench.hpp"

namespace {

int rank = 0, size = 1;
using bench::max_over_ranks;

int64_t parse_n(const std::string& s) {
  if (s.rfind("2^", 0) == 0) return int64_t(1) << std::stoi(s.substr(2));
  return int64_t(std::stod(s));
}

// FFTW-MPI's 1D transform of this rank's block (in natural order when its
// distribution is the N / G blocks), best of `repeat`; y gets the output
// block. Returns -1 when FFTW's blocks are not the natural ones.
template <class R>
double fftw_mpi_1d(int64_t n, const std::vector<R>& x, std::vector<R>& y, int repeat) {
  ptrdiff_t ni = 0, i0 = 0, no = 0, o0 = 0, alloc = 0;
  if constexpr (sizeof(R) == 8)
    alloc = fftw_mpi_local_size_1d(n, MPI_COMM_WORLD, FFTW_FORWARD, FFTW_ESTIMATE, &ni, &i0, &no, &o0);
  else
    alloc = fftwf_mpi_local_size_1d(n, MPI_COMM_WORLD, FFTW_FORWARD, FFTW_ESTIMATE, &ni, &i0, &no, &o0);
  int natural = ni == n / size && i0 == rank * (n / size) && no == n / size && o0 == rank * (n / size);
  MPI_Allreduce(MPI_IN_PLACE, &natural, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!natural) return -1;
  std::vector<R> in(2 * size_t(alloc)), out(2 * size_t(alloc));
  double best = 1e300;
  if constexpr (sizeof(R) == 8) {
    fftw_plan p = fftw_mpi_plan_dft_1d(n, (fftw_complex*)in.data(), (fftw_complex*)out.data(), MPI_COMM_WORLD,
                                       FFTW_FORWARD, FFTW_ESTIMATE);
    for (int r = 0; r < repeat; ++r) {
      std::copy(x.begin(), x.end(), in.begin());
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      fftw_execute(p);
      best = std::min(best, max_over_ranks(MPI_Wtime() - t0));
    }
    fftw_destroy_plan(p);
  } else {
    fftwf_plan p = fftwf_mpi_plan_dft_1d(n, (fftwf_complex*)in.data(), (fftwf_complex*)out.data(), MPI_COMM_WORLD,
                                         FFTW_FORWARD, FFTW_ESTIMATE);
    for (int r = 0; r < repeat; ++r) {
      std::copy(x.begin(), x.end(), in.begin());
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      fftwf_execute(p);
      best = std::min(best, max_over_ranks(MPI_Wtime() - t0));
    }
    fftwf_destroy_plan(p);
  }
  y.assign(out.begin(), out.begin() + 2 * (n / size));
  return best;
}

bool use_gpu = false;

template <class R>
void run(int64_t n, double eps, int repeat, const std::string& csv, const std::string& label) {
  const bool single = sizeof(R) == 4;
  const int64_t nl = n / size;
  std::vector<R> x(2 * size_t(nl)), y(x.size()), yf;
  std::mt19937_64 rng(20261127 + uint64_t(rank));
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : x) v = R(u(rng));

  gpufmm_context_t ctx = nullptr;
  int ndev = 0;
  gpufmm_device_count(&ndev);
  CHECK(gpufmm_context_create(use_gpu ? rank % ndev : GPUFMM_DEVICE_CPU, &ctx));
  gpufmm_fft_options_t o;
  gpufmm_fft_options_init(&o);
  o.n = n;
  o.dtype = single ? GPUFMM_COMPLEX64 : GPUFMM_COMPLEX128;
  o.eps = eps;
  o.direction = GPUFMM_FFT_FORWARD;
  gpufmm_fft_plan_t plan = nullptr;
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(gpufmm_fft_plan_create_mpi(ctx, MPI_COMM_WORLD, &o, &plan));
  gpufmm_fft_info_t info{}, best{};
  best.t_total = 1e300;
  gpufmm_array_t ax = nullptr, ay = nullptr;
  if (use_gpu) {
    int64_t shape[1] = {nl};
    CHECK(gpufmm_array_create(ctx, gpufmm_dtype_t(o.dtype), 1, shape, &ax));
    CHECK(gpufmm_array_create(ctx, gpufmm_dtype_t(o.dtype), 1, shape, &ay));
    CHECK(gpufmm_array_upload(ax, x.data(), nl));
  }
  for (int r = 0; r < repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (use_gpu)
      CHECK(gpufmm_fft_execute(plan, ax, ay, GPUFMM_FFT_FORWARD));
    else
      CHECK(gpufmm_fft_execute_host(plan, x.data(), y.data(), GPUFMM_FFT_FORWARD));
    CHECK(gpufmm_fft_plan_info(plan, &info));
    info.t_total = max_over_ranks(info.t_total);
    if (info.t_total < best.t_total) best = info;
  }
  if (use_gpu) {
    CHECK(gpufmm_array_download(ay, y.data(), nl));
    CHECK(gpufmm_array_destroy(ax));
    CHECK(gpufmm_array_destroy(ay));
  }
  double fmm = 0;
  for (int s = 0; s < GPUFMM_FFT_STAGE_FFT_P; ++s) fmm += best.time[s];
  fmm = max_over_ranks(fmm);
  const double fft2d = max_over_ranks(best.time[GPUFMM_FFT_STAGE_FFT_P] + best.time[GPUFMM_FFT_STAGE_FFT_M]);
  const double wait = max_over_ranks(best.t_wait);
  const double plan_s = max_over_ranks(info.plan_seconds);
  // On GPU ranks FFTW-MPI is the error reference: one transform.
  const double t_fftw = fftw_mpi_1d<R>(n, x, yf, use_gpu ? 1 : repeat);
  double err = -1;
  if (t_fftw > 0) {
    double s[2] = {0, 0};
    for (size_t i = 0; i < y.size(); ++i) {
      s[0] += (double(y[i]) - double(yf[i])) * (double(y[i]) - double(yf[i]));
      s[1] += double(yf[i]) * double(yf[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    err = std::sqrt(s[0] / s[1]);
  }
  if (rank == 0) {
    std::printf("%5d %11lld %4s %5d %4d %3d %2d %2d | %8.3f | %9.5f %9.5f %9.5f %9.5f | %9.5f %6.2f | %8.2e | %lld\n",
                size, (long long)n, single ? "c64" : "c128", info.p, info.ml, info.levels, info.base, info.q, plan_s,
                best.t_total, fmm, fft2d, wait, t_fftw, t_fftw > 0 ? t_fftw / best.t_total : 0.0, err,
                (long long)(info.sent_input + info.sent_multipoles + info.sent_base));
    std::fflush(stdout);
    if (FILE* f = bench::csv_append(csv, "label,ranks,threads,n,dtype,P,ml,L,B,Q,plan_s,fmmfft_s,fmm_stages_s,fft2d_s,wait_s,"
                                         "fftw_mpi_s,fftw_over_fmmfft,err_vs_fftw_mpi,sent_input,sent_multipoles,sent_base,backend\n")) {
      std::fprintf(f, "%s,%d,%d,%lld,%s,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.3e,%lld,%lld,%lld,%s\n",
                   label.c_str(), size, omp_get_max_threads(), (long long)n, single ? "c64" : "c128", info.p,
                   info.ml, info.levels, info.base, info.q, plan_s, best.t_total, fmm, fft2d, wait, t_fftw,
                   t_fftw > 0 ? t_fftw / best.t_total : 0.0, err, (long long)info.sent_input,
                   (long long)info.sent_multipoles, (long long)info.sent_base, use_gpu ? "gpu" : "cpu");
      std::fclose(f);
    }
  }
  CHECK(gpufmm_fft_plan_destroy(plan));
  CHECK(gpufmm_context_destroy(ctx));
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  fftw_init_threads();
  fftwf_init_threads();
  fftw_mpi_init();
  fftwf_mpi_init();
  fftw_plan_with_nthreads(omp_get_max_threads());
  fftwf_plan_with_nthreads(omp_get_max_threads());
  using bench::option;
  const bool single = bench::flag(argc, argv, "--single");
  use_gpu = bench::flag(argc, argv, "--gpu");
  int ndev = 0;
  gpufmm_device_count(&ndev);
  if (use_gpu && ndev == 0) {
    if (rank == 0) std::fprintf(stderr, "bench_fmmfft_mpi: --gpu: no GPU on this machine\n");
    MPI_Finalize();
    return 1;
  }
  const double eps = std::stod(option(argc, argv, "--eps", "0"));
  const int repeat = std::max(1, std::stoi(option(argc, argv, "--repeat", "3")));
  const std::string csv = option(argc, argv, "--csv", "");
  const std::string label = option(argc, argv, "--label", "");
  if (rank == 0) {
    std::printf("# bench_fmmfft_mpi: %d rank(s) x %d thread(s), %s; times: max over ranks, best of %d, seconds\n",
                size, omp_get_max_threads(), use_gpu ? "GPU ranks" : "CPU ranks", repeat);
    std::printf("%5s %11s %4s %5s %4s %3s %2s %2s | %8s | %9s %9s %9s %9s | %9s %6s | %8s | %s\n", "ranks", "N", "type",
                "P", "M_L", "L", "B", "Q", "plan", "fmmfft", "fmm", "fft2d", "wait", "fftw-mpi", "ratio", "err",
                "sent");
  }
  for (const std::string& s : bench::split(option(argc, argv, "--n", "2^20,2^22,2^24"))) {
    const int64_t n = parse_n(s);
    if (single)
      run<float>(n, eps, repeat, csv, label);
    else
      run<double>(n, eps, repeat, csv, label);
  }
  MPI_Finalize();
  return 0;
}
