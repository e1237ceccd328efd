// gpufmm info: version, backends built in, devices found.
#include <cstdio>

#include "cli.hpp"
#include "gpufmm.h"

static void print_device(int device) {
  gpufmm_context_t ctx = nullptr;
  if (gpufmm_context_create(device, &ctx) != GPUFMM_SUCCESS) {
    std::printf("  device %d: unavailable (%s)\n", device, gpufmm_last_error_message());
    return;
  }
  gpufmm_device_info_t info;
  if (gpufmm_context_device_info(ctx, &info) == GPUFMM_SUCCESS) {
    const double gib = 1024.0 * 1024.0 * 1024.0;
    if (info.backend == GPUFMM_BACKEND_CUDA)
      std::printf("  GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB (%.1f GiB free), L2 %.0f MiB, "
                  "%lld KiB shared memory per block\n",
                  info.device, info.name, info.compute_major, info.compute_minor, info.multiprocessors,
                  info.total_memory / gib, info.free_memory / gib, info.l2_cache_bytes / (1024.0 * 1024.0),
                  static_cast<long long>(info.shared_mem_per_block_optin / 1024));
    else
      std::printf("  CPU: %s, %d logical cores, %.1f GiB memory (%.1f GiB free)\n", info.name,
                  info.multiprocessors, info.total_memory / gib, info.free_memory / gib);
  }
  gpufmm_context_destroy(ctx);
}

static void usage_info(FILE* out) {
  std::fprintf(out,
               "usage: gpufmm info\n"
               "  prints the library version, the backends built in (CPU; CUDA if built), the number\n"
               "  of CUDA devices found, and the CPU and each GPU (name, cores or SMs, memory)\n");
}

static int run_info(const std::vector<std::string>& args) {
  if (!gpufmm_cli::check_known(args, {}, {})) {
    usage_info(stderr);
    return 2;
  }
  std::printf("gpufmm %s\n", gpufmm_version(nullptr, nullptr, nullptr));
  std::printf("backends built in: CPU (OpenMP)%s\n", gpufmm_cuda_built() ? ", CUDA" : "");
  int ndev = 0;
  gpufmm_device_count(&ndev);
  std::printf("CUDA devices found: %d\n", ndev);
  print_device(GPUFMM_DEVICE_CPU);
  for (int d = 0; d < ndev; ++d) print_device(d);
  return 0;
}

GPUFMM_SUBCOMMAND(info, "info", "version, backends built in, devices found", run_info, usage_info);
