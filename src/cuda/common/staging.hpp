// Host <-> device copies of any plan (the Laplace FMM today; the treecode
// and the FMM-FFT stage their inputs the same way), all on the context's
// stream. Declared without CUDA types, so that the plans' C++ code calls them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/context.hpp"

namespace gpufmm {
namespace cuda {

// Host-side copy of one chunk (memcpy semantics; the plans pass
// plan::parallel_copy).
using HostCopy = void (*)(void* dst, const void* src, size_t bytes);
// Large copies through two process-wide pinned chunks, the caller's `copy`
// for the host side of each chunk, overlapped with the DMA of the other;
// small ones (or without pinned memory) are plain cudaMemcpyAsync. Upload
// returns when src may be reused (the data follow in stream order), download
// with the data in dst.
void staged_upload(Context& ctx, void* dst, const void* src, size_t bytes, HostCopy copy);
void staged_download(Context& ctx, void* dst, const void* src, size_t bytes, HostCopy copy);
// The user's coordinates (3 x n, host) in device memory, user order; targets
// null when trg is. Freed (stream-ordered) with the last copy of `hold`.
struct DevicePoints {
  const double* src = nullptr;
  const double* trg = nullptr;
  std::shared_ptr<void> hold;
};
DevicePoints upload_points(Context& ctx, const double* src, int64_t ns, const double* trg, int64_t nt,
                           HostCopy copy);

}  // namespace cuda
}  // namespace gpufmm
