// Temporaries of one step (a plan set-up pass, a tree or list build, a
// reduction) in one stream-ordered allocation, in CUB's two phases: first
// every piece is declared (its elements, or the bytes that a CUB algorithm
// asks for when it is called without storage), then allocate() makes one
// StreamBuffer and points every declared pointer into it. The buffer is freed
// in stream order (no device-wide synchronisation) with the object.
//
//   TempStorage tmp(ctx, "list build");
//   int32_t* cnt = nullptr;
//   tmp.add(cnt, n + 1);
//   auto scan = [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, cnt, cnt, n + 1, s); };
//   tmp.add_cub(scan, "cub::DeviceScan::ExclusiveSum");
//   tmp.allocate();
//   ... kernels writing cnt ...
//   tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum");
//
// The CUB algorithms of one object share one storage area (the largest of
// their sizes): they run one after another on the stream. The context's
// device must be current from allocate() to the destruction (as for
// StreamBuffer).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cuda/common/cuda_check.cuh"

namespace gpufmm {
namespace cuda {

class TempStorage {
 public:
  TempStorage(Context& ctx, const char* what) : ctx_(ctx), what_(what) {}

  // Phase 1: `ptr` will point to `count` elements of V (256-byte aligned).
  template <class V>
  void add(V*& ptr, int64_t count) {
    pieces_.push_back({aligned(static_cast<size_t>(std::max<int64_t>(count, 0)) * sizeof(V)),
                       [&ptr](char* p) { ptr = reinterpret_cast<V*>(p); }});
  }
  // Phase 1: room for a CUB device algorithm, `op(void* storage, size_t&
  // bytes)` returning its cudaError_t (a lambda around one cub::Device*
  // call), queried here with storage = nullptr; `call` names it in errors.
  template <class Op>
  void add_cub(Op&& op, const char* call) {
    size_t b = 0;
    check(op(nullptr, b), call);
    cub_bytes_ = std::max(cub_bytes_, b);
  }
  // Bytes of the allocation (after phase 1).
  size_t bytes() const {
    size_t b = aligned(cub_bytes_);
    for (const Piece& p : pieces_) b += p.bytes;
    return b;
  }
  // Phase 2: one allocation (at least 16 bytes); sets every pointer given to add().
  void allocate() {
    buf_ = std::make_unique<StreamBuffer>(ctx_, std::max<size_t>(bytes(), 16), what_);
    char* at = static_cast<char*>(buf_->get());
    for (const Piece& p : pieces_) {
      p.set(at);
      at += p.bytes;
    }
    cub_ = at;
  }
  // Runs a CUB algorithm declared with add_cub (after allocate()).
  template <class Op>
  void run_cub(Op&& op, const char* call) {
    size_t b = cub_bytes_;
    check(op(cub_, b), call);
  }

 private:
  struct Piece {
    size_t bytes;
    std::function<void(char*)> set;
  };
  static size_t aligned(size_t b) { return (b + 255) / 256 * 256; }

  Context& ctx_;
  const char* what_;
  std::vector<Piece> pieces_;
  size_t cub_bytes_ = 0;
  void* cub_ = nullptr;
  std::unique_ptr<StreamBuffer> buf_;
};

}  // namespace cuda
}  // namespace gpufmm
