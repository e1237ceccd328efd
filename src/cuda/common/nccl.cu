// NCCL loaded at run time (nccl.hpp).
#include "cuda/common/nccl.hpp"

#include <dlfcn.h>

#include <string>

#include "core/error.hpp"

namespace gpufmm {
namespace cuda {

namespace {

struct Loaded {
  Nccl api;
  std::string missing;  // empty: every entry point found
};

template <class F>
void bind(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f && missing.empty()) missing = std::string("libnccl.so.2 has no ") + name;
}

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded r;
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      r.missing = std::string("NCCL could not be loaded (") + (e ? e : "libnccl.so.2") + ")";
      return r;
    }
    bind(lib, "ncclCommInitAll", r.api.CommInitAll, r.missing);
    bind(lib, "ncclGetUniqueId", r.api.GetUniqueId, r.missing);
    bind(lib, "ncclCommInitRank", r.api.CommInitRank, r.missing);
    bind(lib, "ncclCommDestroy", r.api.CommDestroy, r.missing);
    bind(lib, "ncclAllGather", r.api.AllGather, r.missing);
    bind(lib, "ncclSend", r.api.Send, r.missing);
    bind(lib, "ncclRecv", r.api.Recv, r.missing);
    bind(lib, "ncclGroupStart", r.api.GroupStart, r.missing);
    bind(lib, "ncclGroupEnd", r.api.GroupEnd, r.missing);
    bind(lib, "ncclGetErrorString", r.api.GetErrorString, r.missing);
    return r;
  }();
  return l;
}

}  // namespace

const Nccl& nccl() {
  const Loaded& l = loaded();
  require(l.missing.empty(), GPUFMM_ERROR_NOT_SUPPORTED, l.missing,
          ": the FMM-FFT over several GPUs of one process needs NCCL (libnccl.so.2 on the library path); "
          "MPI ranks (gpufmm_fft_plan_create_mpi) do not (without it they send through host memory)");
  return l.api;
}

void nccl_check(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return;
  fail(GPUFMM_ERROR_COMMUNICATION, call, " failed: ", nccl().GetErrorString(r));
}

}  // namespace cuda
}  // namespace gpufmm
