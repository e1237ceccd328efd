// Direct-sum throughput of every pair kernel: gpufmm_laplace_direct (the
// Laplace baseline, row "laplace-direct") and gpufmm_direct with each kernel
// of gpufmm.h (Laplace, Yukawa kappa = 0.5, regularized Laplace delta = 1e-3,
// regularized Yukawa kappa = 0.5 delta = 1e-3); sources = targets, uniform
// points in the unit cube with random charges, potential and gradient, in
// float and double, on the GPU for N = 1e4 .. 1e6 and on the CPU (all cores)
// for N <= 1e5. Prints a table and writes CSV.
//
//   bench_direct [--csv PATH] [--sizes 1e4,3e4,1e5,3e5,1e6] [--cpu-max 1e5]
//                [--repeat 3] [--cpu-only | --gpu-only] [--laplace-only]
//
// interactions/s = N^2 / time. Two times per row, both the best of `repeat`
// runs after one warm-up call:
//   call    the whole public call: argument checks, upload, kernel,
//           download (what a user sees);
//   kernel  the summation alone: on the GPU the kernels between two CUDA
//           events (conversion to the working precision, the tiled sum, the
//           sum of the parts; src/cxx/nearfield/direct.hpp, DirectTiming);
//           on the CPU the OpenMP loop (call minus argument checks).
// Targets on an H100 (issue 4): 2e12 interactions/s in float, 7e11 in
// double for Laplace.
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
#include "nearfield/direct.hpp"
#include "bench_args.hpp"
#include "gpufmm.h"

namespace {

using bench::flag;
using bench::now;
using bench::option;
using bench::split;

// One kernel of the sweep: its row label, the C descriptor, the internal one.
struct Kernel {
  std::string name;
  gpufmm_kernel_t c;
  gpufmm::kernels::KernelDesc d;
  bool laplace_entry;  // timed through gpufmm_laplace_direct
};

std::vector<Kernel> kernel_list(bool laplace_only) {
  std::vector<Kernel> ks;
  auto add = [&](const char* name, int type, std::vector<double> params, bool entry) {
    Kernel k;
    k.name = name;
    if (gpufmm_kernel_init(&k.c, type, int(params.size()), params.data()) != GPUFMM_SUCCESS) {
      std::fprintf(stderr, "bench_direct: gpufmm_kernel_init: %s\n", gpufmm_last_error_message());
      std::exit(1);
    }
    k.d.type = gpufmm::kernels::KernelType(type);
    if (type == GPUFMM_KERNEL_YUKAWA || type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) k.d.kappa = params[0];
    if (type == GPUFMM_KERNEL_REGULARIZED_LAPLACE) k.d.delta = params[0];
    if (type == GPUFMM_KERNEL_REGULARIZED_YUKAWA) k.d.delta = params[1];
    k.laplace_entry = entry;
    ks.push_back(k);
  };
  add("laplace-direct", GPUFMM_KERNEL_LAPLACE, {}, true);
  if (laplace_only) return ks;
  add("laplace", GPUFMM_KERNEL_LAPLACE, {}, false);
  add("yukawa", GPUFMM_KERNEL_YUKAWA, {0.5}, false);
  add("reg-laplace", GPUFMM_KERNEL_REGULARIZED_LAPLACE, {1e-3}, false);
  add("reg-yukawa", GPUFMM_KERNEL_REGULARIZED_YUKAWA, {0.5, 1e-3}, false);
  return ks;
}

struct Row {
  std::string kname, backend, device, precision;
  long long n = 0;
  int threads = 0;
  double call = 0, kernel = 0;  // seconds
};

long long parse_count(const std::string& s) { return static_cast<long long>(std::strtod(s.c_str(), nullptr)); }

// One configuration: a warm-up call, then `repeat` timed calls; the best call
// time and the best kernel time.
bool measure(gpufmm_context_t ctx, const Kernel& k, int precision, const std::vector<double>& pts,
             const std::vector<double>& q, int repeat, Row& row) {
  const long long n = static_cast<long long>(q.size());
  std::vector<double> pot(n), grad(3 * n);
  auto call = [&] {
    const gpufmm_status_t st =
        k.laplace_entry
            ? gpufmm_laplace_direct(ctx, precision, n, pts.data(), q.data(), nullptr, 0, nullptr, pot.data(),
                                    grad.data())
            : gpufmm_direct(ctx, &k.c, precision, n, pts.data(), q.data(), 0, nullptr, pot.data(), grad.data());
    if (st != GPUFMM_SUCCESS)
      std::fprintf(stderr, "bench_direct: %s failed: %s\n", k.name.c_str(), gpufmm_last_error_message());
    return st == GPUFMM_SUCCESS;
  };
  if (!call()) return false;
  row.call = row.kernel = 1e300;
  for (int r = 0; r < repeat; ++r) {
    // The public call, timed from outside ...
    const auto t0 = std::chrono::steady_clock::now();
    if (!call()) return false;
    row.call = std::min(row.call, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // ... and the internal entry point, for the kernel time.
    gpufmm::nearfield::DirectArgs a;
    a.nsrc = a.ntrg = n;
    a.sources = a.targets = pts.data();
    a.charges = q.data();
    a.pot = pot.data();
    a.grad = grad.data();
    gpufmm::nearfield::DirectTiming t;
    try {
      gpufmm::nearfield::direct(*gpufmm::checked_context(ctx), k.d, static_cast<gpufmm_dtype_t>(precision), a, &t);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_direct: nearfield::direct failed: %s\n", e.what());
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
                "                    [--cpu-only | --gpu-only] [--laplace-only]\n");
    return 0;
  }
  const std::string csv = option(argc, argv, "--csv", "");
  std::vector<long long> sizes;
  for (const auto& s : split(option(argc, argv, "--sizes", "1e4,3e4,1e5,3e5,1e6"))) sizes.push_back(parse_count(s));
  const long long cpu_max = parse_count(option(argc, argv, "--cpu-max", "1e5"));
  const int repeat = std::max(1, std::atoi(option(argc, argv, "--repeat", "3").c_str()));
  const bool cpu_only = flag(argc, argv, "--cpu-only"), gpu_only = flag(argc, argv, "--gpu-only");
  const std::vector<Kernel> kernels = kernel_list(flag(argc, argv, "--laplace-only"));

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
      for (const Kernel& k : kernels)
      for (int precision : {int(GPUFMM_FLOAT32), int(GPUFMM_FLOAT64)}) {
        Row row;
        row.kname = k.name;
        row.backend = be.second;
        row.device = info.name;
        row.precision = precision == GPUFMM_FLOAT32 ? "float" : "double";
        row.n = n;
        row.threads = be.second == "cpu" ? omp_get_max_threads() : 0;
        if (!measure(ctx, k, precision, pts, q, repeat, row)) {
          gpufmm_context_destroy(ctx);
          return 1;
        }
        rows.push_back(row);
        std::printf("%-14s %-4s %-7s N = %9lld  call %10.4f s  kernel %10.4f s  %.3e interactions/s (kernel %.3e)\n",
                    row.kname.c_str(), row.backend.c_str(), row.precision.c_str(), row.n, row.call, row.kernel,
                    double(n) * double(n) / row.call, double(n) * double(n) / row.kernel);
        std::fflush(stdout);
      }
    }
    gpufmm_context_destroy(ctx);
  }

  std::printf("\nDirect sums, sources = targets, charges, potential + gradient (best of %d)\n", repeat);
  std::printf("%-14s %-4s %-7s %9s %12s %12s %14s %14s  %s\n", "kernel", "", "", "N", "call (s)", "kernel (s)", "inter./s call",
              "inter./s kern", "device");
  for (const auto& r : rows)
    std::printf("%-14s %-4s %-7s %9lld %12.5f %12.5f %14.3e %14.3e  %s%s\n", r.kname.c_str(), r.backend.c_str(), r.precision.c_str(), r.n,
                r.call, r.kernel, double(r.n) * double(r.n) / r.call, double(r.n) * double(r.n) / r.kernel,
                r.device.c_str(), r.threads ? (" (" + std::to_string(r.threads) + " threads)").c_str() : "");

  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_direct: cannot write %s\n", csv.c_str());
      return 1;
    }
    std::fprintf(f, "kernel,backend,device,threads,precision,n,seconds_call,seconds_kernel,interactions_per_s_call,"
                    "interactions_per_s_kernel\n");
    for (const auto& r : rows)
      std::fprintf(f, "%s,%s,\"%s\",%d,%s,%lld,%.6e,%.6e,%.6e,%.6e\n", r.kname.c_str(), r.backend.c_str(), r.device.c_str(), r.threads,
                   r.precision.c_str(), r.n, r.call, r.kernel, double(r.n) * double(r.n) / r.call,
                   double(r.n) * double(r.n) / r.kernel);
    std::fclose(f);
    std::printf("CSV written to %s\n", csv.c_str());
  }
  return 0;
}
