// NCCL (the FMM-FFT over several GPUs of one process, or over MPI ranks
// with one GPU each), loaded at run time from libnccl.so.2: the library
// does not link it, so a machine without NCCL runs everything else; a plan
// over several GPUs of one process fails (with NOT_SUPPORTED, saying why),
// and MPI ranks send through host memory instead. The header (nccl.h) is needed at build time
// (GPUFMM_HAVE_NCCL).
#pragma once

#include <nccl.h>

namespace gpufmm {
namespace cuda {

struct Nccl {
  decltype(&::ncclCommInitAll) CommInitAll = nullptr;
  decltype(&::ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&::ncclCommInitRank) CommInitRank = nullptr;
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclAllGather) AllGather = nullptr;
  decltype(&::ncclSend) Send = nullptr;
  decltype(&::ncclRecv) Recv = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
};

// The entry points, loaded once; throws NOT_SUPPORTED when libnccl.so.2 or
// one of them is missing.
const Nccl& nccl();

// Throws COMMUNICATION naming the call and NCCL's message unless r is
// ncclSuccess.
void nccl_check(ncclResult_t r, const char* call);

}  // namespace cuda
}  // namespace gpufmm

#define GPUFMM_NCCL(fn, ...) ::gpufmm::cuda::nccl_check(::gpufmm::cuda::nccl().fn(__VA_ARGS__), "nccl" #fn)
