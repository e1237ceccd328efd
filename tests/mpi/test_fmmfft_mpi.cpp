// The FMM-FFT across MPI ranks (issue 18; gpufmm_mpi.h), run by CTest under
// mpirun with 1, 2, 3 and 4 ranks on the CPU (label mpi; `--gpu`: each rank
// on GPU 0, ranks sharing it, their messages through host memory;
// `--gpus`: rank r on GPU r mod (GPUs), through NCCL where every rank has
// a GPU of its own; label gpu). Every check is
// collective: a rank's failure fails the program on every rank (rank 0
// prints the summary). With a number of ranks that is not a power of two
// it checks that every rank gets NOT_SUPPORTED, and stops.
//
// On fresh seeds (printed), for N from 2^12 to 2^20 and sizes that are not
// powers of two, both precisions, forward and inverse:
//  1. Equal to rounding to the single-process plan with the same (P, M_L,
//     B, Q): each rank's output block against that plan's whole transform.
//  2. Accurate: the relative L2 error against FFTW within eps; and
//     inverse(forward(x)) = N x, in place.
//  3. The volumes each rank sent equal papers/002 sec. 5.2's counts: the
//     input halo 2 C (P - 1) M_L, the multipole halos 4 C (L - B) (P - 1) Q,
//     and the base level 2^B C (P - 1) Q gathered from the G ranks' blocks.
//  4. Errors on every rank: a NaN on one rank (every output untouched),
//     options that differ across ranks, a size not admitted over G ranks.
// On GPU ranks also: device arrays in place give the host calls' values,
// POST in cuFFT's load callback gives POST fused's, and a CPU rank among GPU
// ranks is refused on every rank.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/fft_check.hpp"
#include "gpufmm.h"
#include "gpufmm_mpi.h"
#include "mpi_check.hpp"

namespace {

using namespace mpi_check;

bool use_gpu = false;
int gpu_of_rank = 0;  // --gpu: 0; --gpus: rank mod (GPUs)

// The rank's GPU with --gpu or --gpus, else the CPU.
gpufmm_context_t make_context(bool gpu = use_gpu) {
  gpufmm_context_t c = nullptr;
  gpufmm_context_create(gpu ? gpu_of_rank : GPUFMM_DEVICE_CPU, &c);
  return c;
}

gpufmm_fft_options_t options(int64_t n, int dtype, double eps) {
  gpufmm_fft_options_t o;
  gpufmm_fft_options_init(&o);
  o.n = n;
  o.dtype = dtype;
  o.eps = eps;
  return o;
}

// One transform of this rank's block of x (2N reals, the same on every
// rank) through the plan; returns the rank's block of the output in double.
std::vector<double> run_block(gpufmm_fft_plan_t plan, const std::vector<double>& x, int sign, bool single,
                              bool in_place = false) {
  const size_t nl = x.size() / 2 / size_t(size);
  const std::vector<double> xl(x.begin() + 2 * nl * rank, x.begin() + 2 * nl * (rank + 1));
  std::vector<double> y(xl.size());
  gpufmm_status_t st;
  if (single) {
    std::vector<float> xf(xl.begin(), xl.end()), yf(xl.size());
    st = gpufmm_fft_execute_host(plan, xf.data(), in_place ? xf.data() : yf.data(), sign);
    const std::vector<float>& r = in_place ? xf : yf;
    for (size_t i = 0; i < y.size(); ++i) y[i] = r[i];
  } else {
    std::vector<double> xd(xl);
    st = gpufmm_fft_execute_host(plan, xd.data(), in_place ? xd.data() : y.data(), sign);
    if (in_place) y = xd;
  }
  expect(st == GPUFMM_SUCCESS, std::string("execute: ") + gpufmm_last_error_message());
  return y;
}

// The whole output from every rank's block.
std::vector<double> gather(const std::vector<double>& block) {
  std::vector<double> all(block.size() * size_t(size));
  MPI_Allgather(block.data(), int(block.size()), MPI_DOUBLE, all.data(), int(block.size()), MPI_DOUBLE,
                MPI_COMM_WORLD);
  return all;
}

// Error of the rank's block against the same block of ref, in the norm of
// the whole vector (the L2 sums added over the ranks).
double block_error(const std::vector<double>& block, const std::vector<double>& ref) {
  const size_t off = block.size() * size_t(rank);
  double s[2] = {0, 0};
  for (size_t i = 0; i < block.size(); ++i) s[0] += (block[i] - ref[off + i]) * (block[i] - ref[off + i]);
  for (double v : ref) s[1] += v * v;
  MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(s[0] / s[1]);
}

// 1-3 for one size, precision and eps, both directions; P, M_L, B from the
// model (0) or set (deep trees: halos at every level below B).
void check_transform(int64_t n, int dtype, double eps, int tune = 0, int P = 0, int ml = 0, int B = 0) {
  const bool single = dtype == GPUFMM_COMPLEX64;
  test_name = "transform n " + std::to_string(n) + (single ? " c64" : " c128") + " eps " + std::to_string(eps) +
              (tune ? " tune" : "") + (P ? " P " + std::to_string(P) + " B " + std::to_string(B) : "");
  gpufmm_context_t cpu = make_context();
  gpufmm_fft_options_t o = options(n, dtype, eps);
  o.tune = tune;
  o.p = P;
  o.ml = ml;
  o.b = B;
  gpufmm_fft_plan_t plan = nullptr;
  const gpufmm_status_t st = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan);
  expect(st == GPUFMM_SUCCESS, std::string("plan: ") + gpufmm_last_error_message());
  if (st != GPUFMM_SUCCESS) {
    gpufmm_context_destroy(cpu);
    finish_test();
    return;
  }
  gpufmm_fft_info_t info;
  gpufmm_fft_plan_info(plan, &info);
  expect(info.ranks == size && info.rank == rank && info.n_local == n / size, "info: ranks, rank, n_local");
  // The single-process plan with the same parameters.
  gpufmm_fft_options_t so = options(n, dtype, eps);
  so.p = info.p;
  so.ml = info.ml;
  so.b = info.base;
  so.q = info.q;
  gpufmm_fft_plan_t ref = nullptr;
  expect(gpufmm_fft_plan_create(cpu, &so, &ref) == GPUFMM_SUCCESS, gpufmm_last_error_message());
  const uint64_t seed = shared_seed();
  const auto x = gpufmm_test::random_signal(n, seed, single);
  const double tol_same = single ? 2e-6 : 2e-14;
  for (int sign : {-1, 1}) {
    const std::vector<double> y = run_block(plan, x, sign, single);
    const std::vector<double> y1 = gpufmm_test::fmmfft_host(ref, x, sign, single);
    const double same = block_error(y, y1);
    const double err = block_error(y, gpufmm_test::fftw_reference(x, sign));
    gpufmm_fft_plan_info(plan, &info);
    if (rank == 0)
      std::printf("  n %lld %s sign %+d G %d: P %d M_L %d L %d B %d Q %d  vs one process %.1e  vs FFTW %.2e "
                  "(eps %.0e, seed %llu)\n",
                  (long long)n, single ? "c64" : "c128", sign, size, info.p, info.ml, info.levels, info.base, info.q,
                  same, err, info.eps, (unsigned long long)seed);
    expect(same <= tol_same, "differs from the single-process plan by " + std::to_string(same));
    expect(err <= info.eps, "error " + std::to_string(err) + " above eps");
    // Sec. 5.2's counts (C = 2: complex). NCCL sends the input's points
    // whole (p = 0 included: 2 C P M_L).
    const int64_t C = 2, P1 = info.p - 1;
    expect(info.messages >= (size > 1 ? 1 : 0) && info.messages <= (use_gpu ? 2 : 1),
           "info.messages " + std::to_string(info.messages));
    if (rank == 0 && sign < 0 && size > 1)
      std::printf("  messages through %s\n", info.messages == 2 ? "NCCL" : "MPI");
    expect(info.sent_input == 2 * C * (info.messages == 2 ? info.p : P1) * info.ml,
           "input halo " + std::to_string(info.sent_input));
    expect(info.sent_multipoles == 4 * C * (info.levels - info.base) * P1 * info.q,
           "multipole halos " + std::to_string(info.sent_multipoles));
    expect(info.sent_base * size == (int64_t(1) << info.base) * C * P1 * info.q,
           "base level " + std::to_string(info.sent_base));
  }
  if (use_gpu) {
    // POST in cuFFT's load (over ranks the first transform runs along p):
    // the fused plan's values to rounding.
    gpufmm_fft_options_t oc = options(n, dtype, eps);
    oc.p = info.p;
    oc.ml = info.ml;
    oc.b = info.base;
    oc.q = info.q;
    oc.post = GPUFMM_FFT_POST_CALLBACK;
    gpufmm_fft_plan_t cb = nullptr;
    const gpufmm_status_t sc = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &oc, &cb);
    expect(sc == GPUFMM_SUCCESS, std::string("POST callback plan: ") + gpufmm_last_error_message());
    if (sc == GPUFMM_SUCCESS) {
      for (int sign : {-1, 1}) {
        const double d = block_error(run_block(cb, x, sign, single), gather(run_block(plan, x, sign, single)));
        expect(d <= (single ? 6e-7 : 1e-15), "POST callback differs from POST fused by " + std::to_string(d));
      }
      gpufmm_fft_plan_destroy(cb);
    }
  }
  // inverse(forward(x)) = N x, in place.
  std::vector<double> z = gather(run_block(plan, x, -1, single, true));
  z = gather(run_block(plan, z, 1, single, true));
  for (auto& v : z) v /= double(n);
  const double round = gpufmm_test::rel_l2_err(z, x);
  expect(round <= 2 * info.eps, "inverse(forward(x)) / N differs from x by " + std::to_string(round));
  if (use_gpu) {
    // Device arrays, in place: the host call's values.
    const int64_t nl = n / size;
    const std::vector<double> yh = run_block(plan, x, -1, single);
    gpufmm_array_t a = nullptr;
    int64_t shape[1] = {nl};
    expect(gpufmm_array_create(cpu, gpufmm_dtype_t(dtype), 1, shape, &a) == GPUFMM_SUCCESS, gpufmm_last_error_message());
    const std::vector<double> xl(x.begin() + 2 * nl * rank, x.begin() + 2 * nl * (rank + 1));
    std::vector<double> ya(xl.size());
    if (single) {
      std::vector<float> xf(xl.begin(), xl.end());
      gpufmm_array_upload(a, xf.data(), nl);
      expect(gpufmm_fft_execute(plan, a, a, -1) == GPUFMM_SUCCESS, gpufmm_last_error_message());
      gpufmm_array_download(a, xf.data(), nl);
      ya.assign(xf.begin(), xf.end());
    } else {
      gpufmm_array_upload(a, xl.data(), nl);
      expect(gpufmm_fft_execute(plan, a, a, -1) == GPUFMM_SUCCESS, gpufmm_last_error_message());
      gpufmm_array_download(a, ya.data(), nl);
    }
    gpufmm_array_destroy(a);
    const double arr = block_error(ya, gather(yh));
    expect(arr <= tol_same, "device arrays in place differ from the host call by " + std::to_string(arr));
  }
  gpufmm_fft_plan_destroy(ref);
  gpufmm_fft_plan_destroy(plan);
  gpufmm_context_destroy(cpu);
  finish_test();
}

// 4. Errors agreed on every rank.
void check_errors() {
  gpufmm_context_t cpu = make_context();
  const int64_t n = int64_t(1) << 12;

  test_name = "a NaN on the last rank: every rank fails, no output written";
  {
    gpufmm_fft_options_t o = options(n, GPUFMM_COMPLEX128, 1e-10);
    gpufmm_fft_plan_t plan = nullptr;
    expect(gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan) == GPUFMM_SUCCESS, gpufmm_last_error_message());
    std::vector<double> x(2 * size_t(n / size), 0.5), y(x.size(), -7.0);
    if (rank == size - 1) x[5] = std::nan("");
    const gpufmm_status_t st = gpufmm_fft_execute_host(plan, x.data(), y.data(), GPUFMM_FFT_FORWARD);
    const std::string msg = gpufmm_last_error_message();
    expect(st == GPUFMM_ERROR_INVALID_ARGUMENT, "status " + std::to_string(st));
    expect(msg.find("rank " + std::to_string(size - 1)) != std::string::npos && msg.find("element 2") != std::string::npos,
           "message: " + msg);
    bool untouched = true;
    for (double v : y) untouched = untouched && v == -7.0;
    expect(untouched, "an output was written");
    // The plan still works afterwards.
    x[5] = 0.5;
    expect(gpufmm_fft_execute_host(plan, x.data(), y.data(), GPUFMM_FFT_FORWARD) == GPUFMM_SUCCESS,
           gpufmm_last_error_message());
    // A NULL output on rank 0 only.
    const gpufmm_status_t s2 = gpufmm_fft_execute_host(plan, x.data(), rank == 0 ? nullptr : y.data(), -1);
    expect(s2 == GPUFMM_ERROR_INVALID_ARGUMENT &&
               std::string(gpufmm_last_error_message()).find("rank 0: argument 'out' is NULL") != std::string::npos,
           std::string("NULL out on rank 0: ") + gpufmm_last_error_message());
    gpufmm_fft_plan_destroy(plan);
  }
  finish_test();

  test_name = "options that differ across ranks";
  {
    gpufmm_fft_options_t o = options(n, GPUFMM_COMPLEX128, rank == size - 1 && size > 1 ? 1e-8 : 1e-10);
    gpufmm_fft_plan_t plan = nullptr;
    const gpufmm_status_t st = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan);
    if (size > 1) {
      expect(st == GPUFMM_ERROR_INVALID_ARGUMENT && plan == nullptr, "status " + std::to_string(st));
      expect(std::string(gpufmm_last_error_message()).find("options field 'eps' differs from rank 0's") !=
                 std::string::npos,
             gpufmm_last_error_message());
    }
    gpufmm_fft_plan_destroy(plan);
  }
  finish_test();

  test_name = "bad options on one rank; a size not admitted over the ranks";
  {
    gpufmm_fft_options_t o = options(n, GPUFMM_COMPLEX128, 0);
    if (rank == size - 1) o.q = 99;
    gpufmm_fft_plan_t plan = nullptr;
    gpufmm_status_t st = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan);
    expect(st == GPUFMM_ERROR_INVALID_ARGUMENT && plan == nullptr &&
               std::string(gpufmm_last_error_message()).find("options field 'q'") != std::string::npos,
           std::string("q = 99 on the last rank: ") + gpufmm_last_error_message());
    if (!use_gpu) {  // POST in cuFFT's load: refused on CPU ranks, on every rank
      o = options(n, GPUFMM_COMPLEX128, 0);
      o.post = GPUFMM_FFT_POST_CALLBACK;
      st = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan);
      expect(st == GPUFMM_ERROR_INVALID_ARGUMENT && plan == nullptr &&
                 std::string(gpufmm_last_error_message()).find("needs a GPU context") != std::string::npos,
             std::string("post = GPUFMM_FFT_POST_CALLBACK on CPU ranks: ") + gpufmm_last_error_message());
    }
    // N = 16 factors as P = 2, M_L = 2, L = 2: over 4 ranks P is not a
    // multiple of 4.
    o = options(16, GPUFMM_COMPLEX128, 1e-3);
    st = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan);
    if (size == 4) {
      expect(st == GPUFMM_ERROR_INVALID_ARGUMENT &&
                 std::string(gpufmm_last_error_message()).find("nearest admitted sizes") != std::string::npos,
             std::string("n = 16 over 4 ranks: ") + gpufmm_last_error_message());
    } else {
      expect(st == GPUFMM_SUCCESS, std::string("n = 16: ") + gpufmm_last_error_message());
    }
    gpufmm_fft_plan_destroy(plan);
  }
  finish_test();

  if (use_gpu && size > 1) {
    test_name = "a CPU context on rank 0 among GPU ranks";
    gpufmm_context_t c = make_context(rank != 0);
    gpufmm_fft_options_t o = options(n, GPUFMM_COMPLEX128, 1e-10);
    gpufmm_fft_plan_t plan = nullptr;
    const gpufmm_status_t st = gpufmm_fft_plan_create_mpi(c, MPI_COMM_WORLD, &o, &plan);
    expect(st == GPUFMM_ERROR_INVALID_ARGUMENT && plan == nullptr &&
               std::string(gpufmm_last_error_message()).find("backend") != std::string::npos,
           std::string("mixed backends: ") + gpufmm_last_error_message());
    gpufmm_fft_plan_destroy(plan);
    gpufmm_context_destroy(c);
    finish_test();
  }
  gpufmm_context_destroy(cpu);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  init();
  bool spread = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--gpu") use_gpu = true;
    if (std::string(argv[i]) == "--gpus") use_gpu = spread = true;
  }
  int ndev = 0;
  gpufmm_device_count(&ndev);
  if (spread && ndev > 0) gpu_of_rank = rank % ndev;
  if (use_gpu && ndev == 0) {
    if (rank == 0) std::printf("--gpu: no GPU on this machine, nothing to test\n");
    MPI_Finalize();
    return 0;
  }
  if (rank == 0)
    std::printf("FMM-FFT over %d MPI rank(s), %s backend\n", size,
                !use_gpu ? "CPU" : spread ? "CUDA (rank r on GPU r mod GPUs)" : "CUDA (GPU 0 on every rank)");
  if ((size & (size - 1)) != 0) {
    test_name = "a number of ranks that is not a power of two";
    gpufmm_context_t cpu = make_context();
    gpufmm_fft_options_t o = options(4096, GPUFMM_COMPLEX128, 0);
    gpufmm_fft_plan_t plan = nullptr;
    const gpufmm_status_t st = gpufmm_fft_plan_create_mpi(cpu, MPI_COMM_WORLD, &o, &plan);
    expect(st == GPUFMM_ERROR_NOT_SUPPORTED && plan == nullptr &&
               std::string(gpufmm_last_error_message()).find("power of two") != std::string::npos,
           std::string("status ") + std::to_string(st) + ": " + gpufmm_last_error_message());
    gpufmm_context_destroy(cpu);
    finish_test();
  } else {
    for (int dtype : {GPUFMM_COMPLEX128, GPUFMM_COMPLEX64}) {
      const bool single = dtype == GPUFMM_COMPLEX64;
      for (int64_t n : {int64_t(1) << 12, int64_t(1) << 16, int64_t(3) << 16, int64_t(5) << 15, int64_t(1) << 20})
        check_transform(n, dtype, single ? 0 : 1e-11);
    }
    // Deep trees: L = 8 with B = 2 and 3 (halos at 6 and 5 levels).
    for (int B : {2, 3}) {
      check_transform(int64_t(1) << 16, GPUFMM_COMPLEX128, 1e-10, 0, 16, 16, B);
      check_transform(int64_t(1) << 16, GPUFMM_COMPLEX64, 1e-5, 0, 16, 16, B);
    }
    check_transform(int64_t(1) << 14, GPUFMM_COMPLEX128, 1e-6);
    check_transform(int64_t(1) << 14, GPUFMM_COMPLEX128, 1e-13, 3);
    check_errors();
  }
  return finish_program();
}
