// The FMM-FFT over several GPUs of one process (plan.hpp: plan_create_multi;
// issue 18): one plan per GPU, made and run by one host thread each, whose
// Distributed (plan.hpp) is NCCL on the context's stream. The stage code is
// the GPU's (fmmfft.cu) in its device-memory mode: the halos, the base
// level and the 2D FFT's transposition move between the GPUs' memories with
// no host copy, in stream order, and the host threads meet only where the
// plan agrees on errors and on the roofline.
#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/nccl.hpp"
#include "fmmfft/plan.hpp"

namespace gpufmm {
namespace fmmfft {

namespace {

// An error every part agreed on (thrown by every part's thread).
class GroupError : public Error {
 public:
  using Error::Error;
};

// The host threads of one plan (one per GPU): a barrier, and agreement on
// errors and values. A part that fails outside an agreement breaks the
// group: the other parts' next meeting fails instead of waiting for it.
class Group {
 public:
  explicit Group(int G) : G_(G), err_(size_t(G)), val_(size_t(G)) {}

  // Runs f on part `g`; when it threw on any part, every part throws the
  // lowest part's error, named "GPU part g: ...".
  void agree(int g, const std::function<void()>& f) {
    std::exception_ptr e;
    try {
      f();
    } catch (...) {
      e = std::current_exception();
    }
    err_[size_t(g)] = e;
    barrier();
    int who = -1;
    for (int h = 0; h < G_ && who < 0; ++h)
      if (err_[size_t(h)]) who = h;
    const std::exception_ptr first = who >= 0 ? err_[size_t(who)] : nullptr;
    barrier();  // every part has read before any writes again
    if (!first) return;
    try {
      std::rethrow_exception(first);
    } catch (const GroupError&) {
      throw;
    } catch (const Error& x) {
      throw GroupError(x.status(), "GPU part " + std::to_string(who) + ": " + x.what());
    } catch (const std::bad_alloc&) {
      throw GroupError(GPUFMM_ERROR_OUT_OF_MEMORY, "GPU part " + std::to_string(who) +
                                                       ": host memory allocation failed (std::bad_alloc)");
    } catch (const std::exception& x) {
      throw GroupError(GPUFMM_ERROR_INTERNAL, "GPU part " + std::to_string(who) + ": internal error: " + x.what());
    }
  }

  // Every part's v reduced (max, or min): the same on every part.
  double reduce(int g, double v, bool max) {
    val_[size_t(g)] = v;
    barrier();
    double r = val_[0];
    for (double w : val_) r = max ? std::max(r, w) : std::min(r, w);
    barrier();
    return r;
  }

  void abandon() {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = true;
    cv_.notify_all();
  }

 private:
  void barrier() {
    std::unique_lock<std::mutex> lock(mu_);
    require(!broken_, GPUFMM_ERROR_INTERNAL, "another GPU part of this plan failed earlier: destroy the plan");
    const long gen = gen_;
    if (++count_ == G_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen != gen_ || broken_; });
    require(gen != gen_, GPUFMM_ERROR_INTERNAL, "another GPU part of this plan failed: destroy the plan");
  }

  const int G_;
  std::vector<std::exception_ptr> err_;
  std::vector<double> val_;
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
  long gen_ = 0;
  bool broken_ = false;
};

// What the parts share: the thread group and NCCL's communicators (one per
// GPU, destroyed with the plan).
struct Shared {
  explicit Shared(int G) : group(G), comms(size_t(G), nullptr) {}
  ~Shared() {
    for (ncclComm_t c : comms)
      if (c) cuda::nccl().CommDestroy(c);
  }
  Group group;
  std::vector<ncclComm_t> comms;
};

// Runs f(g) for g = 0..G-1, g = 0 on this thread and the others on threads
// of their own; rethrows the lowest part's error.
void run_parts(Shared& sh, int G, const std::function<void(int)>& f) {
  std::vector<std::exception_ptr> err(static_cast<size_t>(G));
  auto body = [&](int g) {
    try {
      f(g);
    } catch (const GroupError&) {
      err[size_t(g)] = std::current_exception();
    } catch (...) {
      err[size_t(g)] = std::current_exception();
      sh.group.abandon();
    }
  };
  std::vector<std::thread> threads;
  for (int g = 1; g < G; ++g) threads.emplace_back(body, g);
  body(0);
  for (auto& t : threads) t.join();
  for (const auto& e : err)
    if (e) std::rethrow_exception(e);
}

// The Distributed of part `rank` (plan.hpp): NCCL on the context's stream,
// device memory, whole units.
class NcclExchange final : public Distributed {
 public:
  NcclExchange(Shared& sh, int r, const Plan& p)
      : sh_(sh), comm_(sh.comms[size_t(r)]), stream_(cuda::stream_of(p.ctx)),
        type_(p.single() ? ncclFloat32 : ncclFloat64), es_(size_t(p.real_bytes())) {
    G = int(sh.comms.size());
    rank = r;
    prev_ = (rank + G - 1) % G;
    next_ = (rank + 1) % G;
  }

  bool device_memory() const override { return true; }

  void halo_begin(int id, const void* block, int64_t units, int64_t unit, int64_t, int64_t halo, void* before,
                  void* after) override {
    const size_t n = size_t(halo * unit);
    const char* b = static_cast<const char*>(block);
    // Per peer, NCCL pairs the messages in the order they are posted: the
    // first units to the rank before, then the last to the rank after;
    // from the rank after, then from the rank before. With two parts (the
    // rank before is the rank after) this pairs each with its own buffer.
    GPUFMM_NCCL(GroupStart);
    GPUFMM_NCCL(Send, b, n, type_, prev_, comm_, stream_);
    GPUFMM_NCCL(Send, b + es_ * size_t((units - halo) * unit), n, type_, next_, comm_, stream_);
    GPUFMM_NCCL(Recv, after, n, type_, next_, comm_, stream_);
    GPUFMM_NCCL(Recv, before, n, type_, prev_, comm_, stream_);
    GPUFMM_NCCL(GroupEnd);
    (id == 0 ? sent_input : sent_multipoles) += 2 * int64_t(n);
  }
  void halo_end(int) override {}  // stream order

  void gather_begin(const void* mine, int64_t reals, void* all) override {
    GPUFMM_NCCL(AllGather, mine, all, size_t(reals), type_, comm_, stream_);
    sent_base = reals;
  }
  void gather_end() override {}

  void* fft_buffer() override { fail(GPUFMM_ERROR_INTERNAL, "an NCCL plan has no host 2D FFT buffer"); }
  void fft2d(void*, int) override { fail(GPUFMM_ERROR_INTERNAL, "an NCCL plan's 2D FFT is the GPU's"); }

  void alltoall(const void* send, void* recv, int64_t reals) override {
    const char* s = static_cast<const char*>(send);
    char* r = static_cast<char*>(recv);
    const size_t bytes = es_ * size_t(reals);
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(r + bytes * size_t(rank), s + bytes * size_t(rank), bytes,
                                      cudaMemcpyDeviceToDevice, stream_));
    GPUFMM_NCCL(GroupStart);
    for (int h = 0; h < G; ++h) {
      if (h == rank) continue;
      GPUFMM_NCCL(Send, s + bytes * size_t(h), size_t(reals), type_, h, comm_, stream_);
      GPUFMM_NCCL(Recv, r + bytes * size_t(h), size_t(reals), type_, h, comm_, stream_);
    }
    GPUFMM_NCCL(GroupEnd);
  }

  void agree(const std::function<void()>& f) override { sh_.group.agree(rank, f); }

 private:
  Shared& sh_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  ncclDataType_t type_;
  size_t es_;
  int prev_ = 0, next_ = 0;
};

// The parts of the plan being made, as seen by part `rank`.
class NcclCluster final : public Cluster {
 public:
  NcclCluster(Shared& sh, int r) : sh_(sh) {
    G = int(sh.comms.size());
    rank = r;
  }
  Machine agree_machine(const Machine& m) const override {
    // The slowest part's figures.
    return Machine{sh_.group.reduce(rank, m.gamma, false), sh_.group.reduce(rank, m.beta, false),
                   sh_.group.reduce(rank, m.latency, true)};
  }
  double max_over_ranks(double t) const override { return sh_.group.reduce(rank, t, true); }
  void agree(const std::function<void()>& f) const override { sh_.group.agree(rank, f); }
  std::unique_ptr<Distributed> make(const Plan& p) const override {
    return std::make_unique<NcclExchange>(sh_, rank, p);
  }

 private:
  Shared& sh_;
};

}  // namespace

namespace detail {

void create_parts(PlanObject& obj, const std::vector<Context*>& ctxs, const Options& o) {
  const int G = int(ctxs.size());
  cuda::nccl();  // NOT_SUPPORTED without NCCL
  auto sh = std::make_shared<Shared>(G);
  std::vector<int> devices;
  for (Context* c : ctxs) devices.push_back(c->device);
  GPUFMM_NCCL(CommInitAll, sh->comms.data(), G, devices.data());
  std::vector<std::unique_ptr<Plan>> parts(static_cast<size_t>(G));
  run_parts(*sh, G, [&](int g) {
    const NcclCluster cluster(*sh, g);
    parts[size_t(g)] = plan_create(*ctxs[size_t(g)], o, &cluster);
  });
  obj.group = sh;
  obj.parts = std::move(parts);
}

void execute_parts(PlanObject& obj, const std::vector<const void*>& in, const std::vector<void*>& out, int sign,
                   bool on_context, const std::vector<std::exception_ptr>& early) {
  auto& sh = *static_cast<Shared*>(obj.group.get());
  run_parts(sh, obj.count(), [&](int g) {
    execute(*obj.parts[size_t(g)], in[size_t(g)], out[size_t(g)], sign, on_context, early[size_t(g)]);
  });
}

}  // namespace detail

}  // namespace fmmfft
}  // namespace gpufmm
