// A CUDA graph of stream work that repeats with the same arguments: the
// first run with new arguments launches the work directly (it may make lazy
// allocations), the second with the same arguments captures it into a graph
// and launches that, later ones replay the graph (one launch for everything).
// With other arguments and a graph at hand, the captured graph updates the
// executable one in place (cudaGraphExecUpdate: same topology, new pointers)
// or replaces it. Key: what makes two runs the same graph (operator==).
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/cuda_check.cuh"

namespace gpufmm {
namespace cuda {

template <class Key>
class GraphCache {
 public:
  GraphCache() = default;
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;
  ~GraphCache() { reset(); }

  // Destroys the executable graph (with the owner's device current).
  void reset() noexcept {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }

  // enqueue(bool capturing) puts the work on stream s (stream operations
  // only: no host synchronisation, no allocation while capturing). enabled =
  // false: never captured (a graph at hand is still replayed for its key).
  template <class Enqueue>
  void run(cudaStream_t s, const Key& key, bool enabled, Enqueue&& enqueue) {
    const bool replay = exec_ && key_ == key;
    const bool capture = !replay && enabled && (exec_ || last_ == key);
    last_ = key;
    if (replay) {
      GPUFMM_CUDA_CHECK(cudaGraphLaunch(exec_, s));
      return;
    }
    if (!capture) {
      enqueue(false);
      return;
    }
    cudaGraph_t g = nullptr;
    GPUFMM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(true);
    } catch (...) {
      if (cudaStreamEndCapture(s, &g) == cudaSuccess && g) (void)cudaGraphDestroy(g);
      (void)cudaGetLastError();
      throw;
    }
    GPUFMM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    struct GraphGuard {
      cudaGraph_t g;
      ~GraphGuard() { (void)cudaGraphDestroy(g); }
    } guard{g};
    if (exec_) {
      cudaGraphExecUpdateResultInfo info;
      if (cudaGraphExecUpdate(exec_, g, &info) != cudaSuccess) {
        (void)cudaGetLastError();
        reset();
      }
    }
    // (the kernels' priorities are their capturing streams')
    if (exec_ == nullptr) GPUFMM_CUDA_CHECK(cudaGraphInstantiate(&exec_, g, cudaGraphInstantiateFlagUseNodePriority));
    key_ = key;
    GPUFMM_CUDA_CHECK(cudaGraphLaunch(exec_, s));
  }

 private:
  cudaGraphExec_t exec_ = nullptr;
  Key key_, last_;  // of exec_; of the last run
};

}  // namespace cuda
}  // namespace gpufmm
