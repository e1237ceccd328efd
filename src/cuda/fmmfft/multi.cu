// The FMM-FFT over several GPUs of one process (plan.hpp: plan_create_multi;
// issue 18): one plan per GPU, made and run by one host thread each, whose
// Distributed (plan.hpp) is NCCL on a communication stream beside the
// context's. MPI ranks with one GPU each use the same Distributed
// (nccl_distributed), their communicator made from rank 0's NCCL id. The stage code is the GPU's (fmmfft.cu) in its device-memory
// mode: the halos, the base level and the 2D FFT's transposition move
// between the GPUs' memories with no host copy, ordered against the stages
// by events, and the host threads meet only where the plan agrees on
// errors and on the roofline.
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/thread_group.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/nccl.hpp"
#include "fmmfft/plan.hpp"

namespace gpufmm {
namespace fmmfft {

namespace {

// What the parts share: the thread group and NCCL's communicators (one per
// GPU, destroyed with the plan).
struct Shared {
  explicit Shared(int G) : group(G), comms(static_cast<size_t>(G), nullptr) {}
  ~Shared() {
    for (ncclComm_t c : comms)
      if (c) cuda::nccl().CommDestroy(c);
  }
  ThreadGroup group;
  std::vector<ncclComm_t> comms;
};

// The Distributed of part `rank` (plan.hpp): NCCL in device memory, whole
// units, on a stream of its own so that the messages overlap the stages
// (papers/002 Algorithm 1): each *_begin makes the communication stream
// wait for what the context's stream has enqueued so far, posts the
// messages there and records an event; the matching *_end makes the
// context's stream wait for that event. Message slots: the halos 0..L, the
// base level L + 1, the transposition L + 2.
class NcclExchange final : public Distributed {
 public:
  using Agree = std::function<void(const std::function<void()>&)>;
  // comm: rank r's of G; destroyed with the exchange when `owned`.
  NcclExchange(ncclComm_t comm, bool owned, int G_, int r, const Plan& p, Agree agree)
      : agree_(std::move(agree)), comm_(comm), owned_(owned), stream_(cuda::stream_of(p.ctx)),
        device_(p.ctx.device), type_(p.single() ? ncclFloat32 : ncclFloat64), es_(size_t(p.real_bytes())) {
    G = G_;
    rank = r;
    prev_ = (rank + G - 1) % G;
    next_ = (rank + 1) % G;
    cuda::DeviceGuard guard(device_);
    GPUFMM_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
    done_.assign(size_t(p.par.L + 3), nullptr);
    for (auto& e : done_) GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  }
  ~NcclExchange() override {
    cuda::DeviceGuardNoThrow guard(device_);
    for (auto e : done_)
      if (e) cudaEventDestroy(e);
    if (ready_) cudaEventDestroy(ready_);
    if (comm_stream_) cudaStreamDestroy(comm_stream_);
    if (owned_ && comm_) cuda::nccl().CommDestroy(comm_);
  }

  bool device_memory() const override { return true; }

  void halo_begin(int id, const void* block, int64_t units, int64_t unit, int64_t, int64_t halo, void* before,
                  void* after) override {
    const size_t n = size_t(halo * unit);
    const char* b = static_cast<const char*>(block);
    post();
    // Per peer, NCCL pairs the messages in the order they are posted: the
    // first units to the rank before, then the last to the rank after;
    // from the rank after, then from the rank before. With two parts (the
    // rank before is the rank after) this pairs each with its own buffer.
    GPUFMM_NCCL(GroupStart);
    GPUFMM_NCCL(Send, b, n, type_, prev_, comm_, comm_stream_);
    GPUFMM_NCCL(Send, b + es_ * size_t((units - halo) * unit), n, type_, next_, comm_, comm_stream_);
    GPUFMM_NCCL(Recv, after, n, type_, next_, comm_, comm_stream_);
    GPUFMM_NCCL(Recv, before, n, type_, prev_, comm_, comm_stream_);
    GPUFMM_NCCL(GroupEnd);
    posted(id);
    (id == 0 ? sent_input : sent_multipoles) += 2 * int64_t(n);
  }
  void halo_end(int id) override { wait(id); }

  void gather_begin(const void* mine, int64_t reals, void* all) override {
    post();
    GPUFMM_NCCL(AllGather, mine, all, size_t(reals), type_, comm_, comm_stream_);
    posted(gather_slot());
    sent_base = reals;
  }
  void gather_end() override { wait(gather_slot()); }

  void* fft_buffer() override { fail(GPUFMM_ERROR_INTERNAL, "an NCCL plan has no host 2D FFT buffer"); }
  void fft2d(void*, int) override { fail(GPUFMM_ERROR_INTERNAL, "an NCCL plan's 2D FFT is the GPU's"); }

  void alltoall(const void* send, void* recv, int64_t reals) override {
    const char* s = static_cast<const char*>(send);
    char* r = static_cast<char*>(recv);
    const size_t bytes = es_ * size_t(reals);
    post();
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(r + bytes * size_t(rank), s + bytes * size_t(rank), bytes,
                                      cudaMemcpyDeviceToDevice, comm_stream_));
    GPUFMM_NCCL(GroupStart);
    for (int h = 0; h < G; ++h) {
      if (h == rank) continue;
      GPUFMM_NCCL(Send, s + bytes * size_t(h), size_t(reals), type_, h, comm_, comm_stream_);
      GPUFMM_NCCL(Recv, r + bytes * size_t(h), size_t(reals), type_, h, comm_, comm_stream_);
    }
    GPUFMM_NCCL(GroupEnd);
    posted(gather_slot() + 1);
    wait(gather_slot() + 1);  // the 2D FFT goes on at once
  }

  void agree(const std::function<void()>& f) override { agree_(f); }

 private:
  int gather_slot() const { return int(done_.size()) - 2; }
  // The communication stream after everything the context's stream has
  // enqueued so far.
  void post() {
    GPUFMM_CUDA_CHECK(cudaEventRecord(ready_, stream_));
    GPUFMM_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, ready_, 0));
  }
  void posted(int slot) { GPUFMM_CUDA_CHECK(cudaEventRecord(done_[size_t(slot)], comm_stream_)); }
  void wait(int slot) { GPUFMM_CUDA_CHECK(cudaStreamWaitEvent(stream_, done_[size_t(slot)], 0)); }

  Agree agree_;
  ncclComm_t comm_;
  bool owned_;
  cudaStream_t stream_;  // the context's
  int device_;
  ncclDataType_t type_;
  size_t es_;
  int prev_ = 0, next_ = 0;
  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  std::vector<cudaEvent_t> done_;
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
    Shared* sh = &sh_;
    const int r = rank;
    return std::make_unique<NcclExchange>(sh_.comms[size_t(r)], false, G, r, p,
                                          [sh, r](const std::function<void()>& f) { sh->group.agree(r, f); });
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
  run_parts(sh->group, [&](int g) {
    const NcclCluster cluster(*sh, g);
    parts[size_t(g)] = plan_create(*ctxs[size_t(g)], o, &cluster);
  });
  obj.group = sh;
  obj.parts = std::move(parts);
}

std::string nccl_device_key(const Context& ctx) {
  try {
    cuda::nccl();
  } catch (const Error&) {
    return "";
  }
  char bus[64] = {0};
  GPUFMM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, int(sizeof bus), ctx.device));
  return bus;
}

std::unique_ptr<Distributed> nccl_distributed(const Plan& p, int G, int rank,
                                              const std::function<void(void*, int)>& share_id,
                                              std::function<void(const std::function<void()>&)> agree) {
  // Rank 0's id and whether it got one, so that a failure there fails
  // every rank instead of leaving them in ncclCommInitRank.
  struct {
    ncclUniqueId id;
    int ok;
  } msg{};
  if (rank == 0) msg.ok = cuda::nccl().GetUniqueId(&msg.id) == ncclSuccess;
  share_id(&msg, int(sizeof msg));
  require(msg.ok != 0, GPUFMM_ERROR_COMMUNICATION, "ncclGetUniqueId failed on rank 0");
  const ncclUniqueId& id = msg.id;
  ncclComm_t comm = nullptr;
  {
    cuda::DeviceGuard guard(p.ctx.device);
    GPUFMM_NCCL(CommInitRank, &comm, G, id, rank);
  }
  try {
    return std::make_unique<NcclExchange>(comm, true, G, rank, p, std::move(agree));
  } catch (...) {
    cuda::nccl().CommDestroy(comm);
    throw;
  }
}

void execute_parts(PlanObject& obj, const std::vector<const void*>& in, const std::vector<void*>& out, int sign,
                   bool on_context, const std::vector<std::exception_ptr>& early) {
  auto& sh = *static_cast<Shared*>(obj.group.get());
  run_parts(sh.group, [&](int g) {
    execute(*obj.parts[size_t(g)], in[size_t(g)], out[size_t(g)], sign, on_context, early[size_t(g)]);
  });
}

}  // namespace detail

}  // namespace fmmfft
}  // namespace gpufmm
