// Direct-sum throughput: gpufmm_laplace_direct, sources = targets, uniform
// points in the unit cube with random charges, potential and gradient, in
// float and double, on the GPU for N = 1e4 .. 1e6 and on the CPU (all cores)
// for N <= 1e5. Prints a table and writes CSV.
//
//   bench_direct [--csv PATH] [--sizes 1e4,3e4,1e5,3e5,1e6] [--cpu-max 1e5]
//                [--repeat 3] [--cpu-only | --gpu-only]
//
// interactions/s = N^2 / time. Two times per row, both the best of `repeat`
// runs after one warm-up call:
//   call    the whole gpufmm_laplace_direct call: host conversion, upload,
//           kernel, download (what a user sees);
//   kernel  the summation alone: on the GPU the kernels between two CUDA
//           events (src/cxx/fmm/direct.hpp, LaplaceDirectTiming); on the CPU
//           the OpenMP loop (call minus argument checks, i.e. about the same).
// Targets on an H100 (issue): 2e12 interactions/s in float, 7e11 in double.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "core/context.hpp"
#include "fmm/direct.hpp"
#include "bench_args.hpp"
#include "gpufmm.h"

namespace {

using bench::flag;
using bench::now;
using bench::option;
using bench::split;

struct Row {
  std::string backend, device, precision;
  long long n = 0;
  int threads = 0;
  double call = 0, kernel = 0;  // seconds
};

long long parse_count(const std::string& s) { return static_cast<long long>(std::strtod(s.c_str(), nullptr)); }

// One configuration: a warm-up call, then `repeat` timed calls; the best call
// time and the best kernel time.
bool measure(gpufmm_context_t ctx, int precision, const std::vector<double>& pts, const std::vector<double>& q,
             int repeat, Row& row) {
  const long long n = static_cast<long long>(q.size());
  std::vector<double> pot(n), grad(3 * n);
  if (gpufmm_laplace_direct(ctx, precision, n, pts.data(), q.data(), nullptr, 0, nullptr, pot.data(), grad.data()) !=
      GPUFMM_SUCCESS) {
    std::fprintf(stderr, "bench_direct: gpufmm_laplace_direct failed: %s\n", gpufmm_last_error_message());
    return false;
  }
  row.call = row.kernel = 1e300;
  for (int r = 0; r < repeat; ++r) {
    // The public call, timed from outside ...
    const auto t0 = std::chrono::steady_clock::now();
    if (gpufmm_laplace_direct(ctx, precision, n, pts.data(), q.data(), nullptr, 0, nullptr, pot.data(),
                              grad.data()) != GPUFMM_SUCCESS) {
      std::fprintf(stderr, "bench_direct: gpufmm_laplace_direct failed: %s\n", gpufmm_last_error_message());
      return false;
    }
    row.call = std::min(row.call, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // ... and the internal entry point, for the kernel time.
    gpufmm::LaplaceDirectArgs a;
    a.nsrc = a.ntrg = n;
    a.sources = a.targets = pts.data();
    a.charges = q.data();
    a.pot = pot.data();
    a.grad = grad.data();
    gpufmm::LaplaceDirectTiming t;
    try {
      gpufmm::laplace_direct(*ctx, static_cast<gpufmm_dtype_t>(precision), a, &t);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_direct: laplace_direct failed: %s\n", e.what());
      return false;
    }
    row.kernel = std::min(row.kernel, t.kernel_seconds);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (flag(argc, argv, "--help") || flag(argc, argv, "-h")) {
    std::printf("usage: bench_direct [--csv PATH] [--sizes 1e4,3e4,1e5,3e5,1e6] [--cpu-max 1e5] [--repeat 3]\n"
                "                    [--cpu-only | --gpu-only]\n");
    return 0;
  }
  const std::string csv = option(argc, argv, "--csv", "");
  std::vector<long long> sizes;
  for (const auto& s : split(option(argc, argv, "--sizes", "1e4,3e4,1e5,3e5,1e6"))) sizes.push_back(parse_count(s));
  const long long cpu_max = parse_count(option(argc, argv, "--cpu-max", "1e5"));
  const int repeat = std::max(1, std::atoi(option(argc, argv, "--repeat", "3").c_str()));
  const bool cpu_only = flag(argc, argv, "--cpu-only"), gpu_only = flag(argc, argv, "--gpu-only");

  std::vector<std::pair<int, std::string>> backends;  // device, label
  int ndev = 0;
  gpufmm_device_count(&ndev);
  if (!cpu_only) {
    if (ndev > 0)
      backends.push_back({0, "gpu"});
    else
      std::printf("bench_direct: no CUDA device visible: GPU rows skipped\n");
  }
  if (!gpu_only) backends.push_back({GPUFMM_DEVICE_CPU, "cpu"});

  std::vector<Row> rows;
  for (const auto& be : backends) {
    gpufmm_context_t ctx = nullptr;
    if (gpufmm_context_create(be.first, &ctx) != GPUFMM_SUCCESS) {
      std::fprintf(stderr, "bench_direct: context %d: %s\n", be.first, gpufmm_last_error_message());
      return 1;
    }
    gpufmm_device_info_t info;
    gpufmm_context_device_info(ctx, &info);
    for (long long n : sizes) {
      if (be.second == "cpu" && n > cpu_max) continue;
      const std::vector<double> pts = gpufmm_test::uniform_cube(n, 20250 + n);
      std::vector<double> q(n);
      gpufmm_test::Rng rng(777 + n);
      for (auto& v : q) v = rng.uniform();  // q in (0, 1) as in papers/000
      for (int precision : {int(GPUFMM_FLOAT32), int(GPUFMM_FLOAT64)}) {
        Row row;
        row.backend = be.second;
        row.device = info.name;
        row.precision = precision == GPUFMM_FLOAT32 ? "float" : "double";
        row.n = n;
        row.threads = be.second == "cpu" ? omp_get_max_threads() : 0;
        if (!measure(ctx, precision, pts, q, repeat, row)) {
          gpufmm_context_destroy(ctx);
          return 1;
        }
        rows.push_back(row);
        std::printf("%-4s %-7s N = %9lld  call %10.4f s  kernel %10.4f s  %.3e interactions/s (kernel %.3e)\n",
                    row.backend.c_str(), row.precision.c_str(), row.n, row.call, row.kernel,
                    double(n) * double(n) / row.call, double(n) * double(n) / row.kernel);
        std::fflush(stdout);
      }
    }
    gpufmm_context_destroy(ctx);
  }

  std::printf("\nLaplace direct sum, sources = targets, charges, potential + gradient (best of %d)\n", repeat);
  std::printf("%-4s %-7s %9s %12s %12s %14s %14s  %s\n", "", "", "N", "call (s)", "kernel (s)", "inter./s call",
              "inter./s kern", "device");
  for (const auto& r : rows)
    std::printf("%-4s %-7s %9lld %12.5f %12.5f %14.3e %14.3e  %s%s\n", r.backend.c_str(), r.precision.c_str(), r.n,
                r.call, r.kernel, double(r.n) * double(r.n) / r.call, double(r.n) * double(r.n) / r.kernel,
                r.device.c_str(), r.threads ? (" (" + std::to_string(r.threads) + " threads)").c_str() : "");

  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_direct: cannot write %s\n", csv.c_str());
      return 1;
    }
    std::fprintf(f, "backend,device,threads,precision,n,seconds_call,seconds_kernel,interactions_per_s_call,"
                    "interactions_per_s_kernel\n");
    for (const auto& r : rows)
      std::fprintf(f, "%s,\"%s\",%d,%s,%lld,%.6e,%.6e,%.6e,%.6e\n", r.backend.c_str(), r.device.c_str(), r.threads,
                   r.precision.c_str(), r.n, r.call, r.kernel, double(r.n) * double(r.n) / r.call,
                   double(r.n) * double(r.n) / r.kernel);
    std::fclose(f);
    std::printf("CSV written to %s\n", csv.c_str());
  }
  return 0;
}
