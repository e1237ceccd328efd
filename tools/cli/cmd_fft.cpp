// gpufmm fft: plans and executes the FMM-accelerated FFT (papers/002) on
// random complex input; prints the parameters the plan runs with (P, M_L,
// L, B, Q), the roofline it was chosen by, the stage profile in the form of
// papers/002 Fig. 4 with the model time and the achieved fraction of the
// roofline per stage (Fig. 5), and the relative L2 error against a direct
// DFT, computed here in long double, at K sampled outputs (the tool does
// not link FFTW: the tests compare with it).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "common/distributions.hpp"
#include "gpufmm.h"

namespace {

using gpufmm_cli::parse_double;
using gpufmm_cli::parse_int;
using cld = std::complex<long double>;

void usage(FILE* out) {
  std::fprintf(out,
               "usage: gpufmm fft --n N [--double|--single] [--eps E] [--p P --ml M] [--b B] [--q Q]\n"
               "                  [--inverse] [--tune K] [--post fused|callback] [--check K] [--seed S]\n"
               "                  [--cpu|--gpu]\n"
               "  --n        transform length N = P M_L 2^L (required); input uniform in [-1, 1]^2\n"
               "  --double   complex128 (default); --single: complex64\n"
               "  --eps      requested relative L2 error (default 2e-14 in complex128, 1e-6 in complex64):\n"
               "             Q from it\n"
               "  --p, --ml  P (FMMs + 1) and M_L (points per leaf): set both or neither (default: the\n"
               "             roofline model's best)\n"
               "  --b        base level B >= 2 (default: the model); --q expansion order Q, 2..%d\n"
               "  --q        (default: from eps)\n"
               "  --inverse  the inverse transform, sign +1 (default forward, -1; both unnormalized)\n"
               "  --tune     time the K best-predicted parameter sets and keep the fastest (default 0)\n"
               "  --post     where POST runs on the GPU: fused into the near field (default) or in the\n"
               "             load of cuFFT's first transform (callback, linked when the plan is made)\n"
               "  --check    compare K sampled outputs with a direct DFT in long double (default 8;\n"
               "             0: no check)\n"
               "  --seed     random seed (default 1)\n"
               "  --cpu / --gpu  backend (default: the first GPU if any, else the CPU)\n"
               "The transform runs twice on arrays of the context; the second run is reported. On a\n"
               "terminal, a progress line on stderr says which stage is running.\n",
               GPUFMM_FFT_MAX_Q);
}

int fail(const char* what) {
  std::fprintf(stderr, "gpufmm fft: %s: %s\n", what, gpufmm_last_error_message());
  return 1;
}

// X[k] = sum_n x[n] exp(sign 2 pi i n k / N) in long double for each k of
// ks, one thread per output up to the hardware's. The twiddle is exact
// (sincos of the reduced index n k mod N) every kBlock terms and a
// rotation in between.
std::vector<cld> direct_dft(const std::vector<double>& x, int64_t n, int sign, const std::vector<int64_t>& ks) {
  constexpr int64_t kBlock = 256;
  const long double two_pi = 2 * std::acos(-1.0L);
  std::vector<cld> out(ks.size());
  auto one = [&](size_t i) {
    const int64_t k = ks[i];
    const cld step = std::polar(1.0L, sign * two_pi * static_cast<long double>(k) / n);
    cld acc = 0;
    for (int64_t n0 = 0; n0 < n; n0 += kBlock) {
      const auto idx = static_cast<int64_t>((static_cast<unsigned __int128>(n0) * k) % n);
      cld w = std::polar(1.0L, sign * two_pi * static_cast<long double>(idx) / n);
      for (int64_t j = n0; j < std::min(n, n0 + kBlock); ++j) {
        acc += cld(x[2 * j], x[2 * j + 1]) * w;
        w *= step;
      }
    }
    out[i] = acc;
  };
  const size_t nthreads = std::max<size_t>(1, std::min<size_t>(ks.size(), std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < nthreads; ++t)
    pool.emplace_back([&, t] {
      for (size_t i = t; i < ks.size(); i += nthreads) one(i);
    });
  for (auto& th : pool) th.join();
  return out;
}

// One row of the profile: time, share of the total, model time (ms) and
// the roofline fraction model / time ("-" for a stage with nothing to do).
void print_stage(const char* name, double t, double total, double model) {
  std::printf("%-12s %10.4f %8.1f %10.4f", name, 1e3 * t, total > 0 ? 100 * t / total : 0.0, 1e3 * model);
  if (t > 0 && model > 0)
    std::printf(" %9.2f\n", model / t);
  else
    std::printf(" %9s\n", "-");
}

int run_fft(const std::vector<std::string>& args) {
  if (!gpufmm_cli::check_known(args,
                               {"--n", "--eps", "--p", "--ml", "--b", "--q", "--tune", "--post", "--check", "--seed"},
                               {"--double", "--single", "--inverse", "--cpu", "--gpu"})) {
    usage(stderr);
    return 2;
  }
  long long n = -1, p = 0, ml = 0, b = 0, q = 0, tune = 0, check = 8, seed = 1;
  double eps = 0;
  const std::string ns = gpufmm_cli::option_value(args, "--n", "");
  // Ranges are the library's to check (its message names the field).
  if (ns.empty() || !parse_int(ns, n) || !parse_double(gpufmm_cli::option_value(args, "--eps", "0"), eps) ||
      !parse_int(gpufmm_cli::option_value(args, "--p", "0"), p) ||
      !parse_int(gpufmm_cli::option_value(args, "--ml", "0"), ml) ||
      !parse_int(gpufmm_cli::option_value(args, "--b", "0"), b) ||
      !parse_int(gpufmm_cli::option_value(args, "--q", "0"), q) ||
      !parse_int(gpufmm_cli::option_value(args, "--tune", "0"), tune) ||
      !parse_int(gpufmm_cli::option_value(args, "--check", "8"), check) || check < 0 ||
      !parse_int(gpufmm_cli::option_value(args, "--seed", "1"), seed)) {
    usage(stderr);
    return 2;
  }
  const bool single = gpufmm_cli::has_flag(args, "--single");
  const std::string post = gpufmm_cli::option_value(args, "--post", "fused");
  int device;
  if ((single && gpufmm_cli::has_flag(args, "--double")) || !gpufmm_cli::parse_device(args, device) ||
      (post != "fused" && post != "callback")) {
    usage(stderr);
    return 2;
  }
  const int direction = gpufmm_cli::has_flag(args, "--inverse") ? GPUFMM_FFT_INVERSE : GPUFMM_FFT_FORWARD;
  const gpufmm_dtype_t dtype = single ? GPUFMM_COMPLEX64 : GPUFMM_COMPLEX128;
  auto clamp_int = [](long long v) { return static_cast<int>(std::clamp<long long>(v, -1, 1 << 30)); };
  gpufmm_cli::Progress progress("fft");

  gpufmm_context_t ctx = nullptr;
  if (gpufmm_context_create(device, &ctx) != GPUFMM_SUCCESS) return fail("context");
  gpufmm_device_info_t dev;
  gpufmm_context_device_info(ctx, &dev);
  gpufmm_fft_options_t opt;
  gpufmm_fft_options_init(&opt);
  opt.n = n;
  opt.dtype = dtype;
  opt.eps = eps;
  opt.p = clamp_int(p);
  opt.ml = clamp_int(ml);
  opt.b = clamp_int(b);
  opt.q = clamp_int(q);
  opt.direction = direction;  // a plan for this direction only
  opt.tune = clamp_int(tune);
  opt.post = post == "callback" ? GPUFMM_FFT_POST_CALLBACK : GPUFMM_FFT_POST_FUSED;
  gpufmm_fft_plan_t plan = nullptr;
  progress.stage(tune > 0 ? "plan (timing the best-predicted parameter sets)" : "plan");
  if (gpufmm_fft_plan_create(ctx, &opt, &plan) != GPUFMM_SUCCESS) {
    gpufmm_context_destroy(ctx);
    return fail("plan");
  }

  // The input, uniform in [-1, 1]^2, in double (the reference's) and, for
  // complex64, rounded to float (what the transform and the reference see).
  progress.stage("input");
  std::vector<double> x(static_cast<size_t>(2 * n));
  gpufmm_test::Rng rng(static_cast<uint64_t>(seed));
  for (auto& v : x) v = 2 * rng.uniform() - 1;
  std::vector<float> xf(single ? x.size() : 0);
  for (size_t i = 0; i < xf.size(); ++i) x[i] = xf[i] = static_cast<float>(x[i]);
  const void* host_in = single ? static_cast<const void*>(xf.data()) : static_cast<const void*>(x.data());
  std::vector<double> y(x.size());
  std::vector<float> yf(xf.size());
  void* host_out = single ? static_cast<void*>(yf.data()) : static_cast<void*>(y.data());

  // Arrays of the context, so that the profile holds no host transfers.
  const int64_t dims[1] = {n};
  gpufmm_array_t a_in = nullptr, a_out = nullptr;
  int rc = 0;
  if (gpufmm_array_create(ctx, dtype, 1, dims, &a_in) != GPUFMM_SUCCESS ||
      gpufmm_array_create(ctx, dtype, 1, dims, &a_out) != GPUFMM_SUCCESS ||
      gpufmm_array_upload(a_in, host_in, n) != GPUFMM_SUCCESS)
    rc = fail("arrays");
  for (int round = 0; rc == 0 && round < 2; ++round) {  // the first run warms up
    progress.stage(round == 0 ? "execute 1 of 2" : "execute 2 of 2");
    if (gpufmm_fft_execute(plan, a_in, a_out, direction) != GPUFMM_SUCCESS) rc = fail("execute");
  }
  if (rc == 0 && gpufmm_array_download(a_out, host_out, n) != GPUFMM_SUCCESS) rc = fail("download");
  for (size_t i = 0; i < yf.size(); ++i) y[i] = yf[i];
  gpufmm_fft_info_t info;
  gpufmm_fft_plan_info(plan, &info);

  std::string error_line;
  if (rc == 0 && check > 0) {
    progress.stage("direct DFT at the sampled outputs");
    const int64_t k = std::min<int64_t>(check, n);
    std::vector<int64_t> ks(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) ks[i] = (i * n / k + i) % n;  // spread, not only multiples of N / K
    const std::vector<cld> ref = direct_dft(x, n, direction, ks);
    long double e = 0, r = 0;
    for (int64_t i = 0; i < k; ++i) {
      e += std::norm(cld(y[2 * ks[i]], y[2 * ks[i] + 1]) - ref[i]);
      r += std::norm(ref[i]);
    }
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "\nrelative L2 error on %lld sampled outputs (direct DFT in long double): %.3e  (eps %.1e, "
                  "predicted %.1e)\n",
                  static_cast<long long>(k), static_cast<double>(std::sqrt(e / r)), info.eps, info.predicted_error);
    error_line = buf;
  }
  progress.stage(nullptr);

  if (rc == 0) {
    std::printf("gpufmm fft: N = %lld, %s, %s, %s (%s backend)\n", n, single ? "complex64" : "complex128",
                direction == GPUFMM_FFT_FORWARD ? "forward" : "inverse", dev.name,
                info.backend == GPUFMM_BACKEND_CUDA ? "CUDA" : "CPU");
    std::printf("parameters: P %d, M_L %d, L %d (M = M_L 2^L = %lld), B %d, Q %d", info.p, info.ml, info.levels,
                static_cast<long long>(info.m), info.base, info.q);
    if (p > 0 && b > 0)
      std::printf(" (P, M_L, B given");
    else
      std::printf(" (%s", tune > 0 ? "the fastest of the model's best" : "from the roofline model");
    std::printf("; Q %s; predicted error %.1e)\n", q > 0 ? "given" : "from eps", info.predicted_error);
    std::printf("roofline: gamma %.3g Gflop/s (batched GEMM), beta %.3g GB/s; plan %.3f s\n\n", 1e-9 * info.gamma,
                1e-9 * info.beta, info.plan_seconds);
    // papers/002 Fig. 4 (share of each stage) and Fig. 5 (model / time).
    double total = 0, model_total = 0, fmm = 0, fmm_model = 0;
    for (int s = 0; s < GPUFMM_FFT_STAGES; ++s) {
      total += info.time[s];
      model_total += info.model[s];
      if (s < GPUFMM_FFT_STAGE_FFT_P) fmm += info.time[s], fmm_model += info.model[s];
    }
    std::printf("%-12s %10s %8s %10s %9s\n", "stage", "time ms", "% total", "model ms", "roofline");
    for (int s = 0; s < GPUFMM_FFT_STAGES; ++s)
      print_stage(gpufmm_fft_stage_name(s), info.time[s], total, info.model[s]);
    print_stage("FMM stages", fmm, total, fmm_model);
    print_stage("2D FFT", total - fmm, total, model_total - fmm_model);
    print_stage("total", total, total, model_total);
    std::printf("execute: %.4f ms (the stages and what runs between them)\n", 1e3 * info.t_total);
    std::printf("%s", error_line.c_str());
  }

  gpufmm_array_destroy(a_in);
  gpufmm_array_destroy(a_out);
  gpufmm_fft_plan_destroy(plan);
  gpufmm_context_destroy(ctx);
  return rc;
}

}  // namespace

GPUFMM_SUBCOMMAND(fft, "fft", "FMM-accelerated FFT on random input: parameters, stage profile vs roofline, error",
                  run_fft, usage);
