// The FMM-accelerated FFT (papers/002; issue 17): options, the parameters
// and their model, and the plan of gpufmm_fft_plan_t, shared by the OpenMP
// stages (execute_cpu.cpp) and the CUDA ones (src/cuda/fmmfft/). The user
// guide is docs/fmmfft.md.
//
// ===========================================================================
// Method (eq. 2: F_N = F_{M,P} H^_{M,P}, N = P M, M = M_L 2^L)
// ===========================================================================
// With x_p[n] = x[p + P n] and X[k1 + M k2] (k1 < M, k2 < P),
//   X[k1 + M k2] = sum_p w_P^{p k2} (F_M z_p)[k1],  z_0 = x_0,
//   z_p = C_p x_p,  [C_p]_{mn} = rho_p (cot(pi/M (n - m) + pi p/N) + i)
// (forward; the inverse conjugates rho_p and i). The P - 1 products C~_p x_p
// are periodic 1D FMMs (operators.hpp), then POST makes z_p, and an M x P
// 2D FFT (FFTW / cuFFT) gives X in natural order.
//
// ===========================================================================
// Data layout (sec. 4.1-4.2; reals, complex numbers interleaved)
// ===========================================================================
// The input x is S_{pmb} (p fastest): x[p + P (m + M_L b)]. Row r = c + 2p
// (c: real or imaginary part) of FMM p is the unit-stride dimension of
// every tensor; R = 2 (P - 1) rows take part in the FMMs (p >= 1).
//   Multipoles  mult[off[l] + r' + R (q + Q b)], r' = r - 2, q < Q, b < 2^l
//   Locals      loc [off[l] + ...]                same shape, l = B..L
//   T           the FMM output in the input's layout (N complex), then the
//               2D FFT: along p in place (M transforms of length P), then
//               along m from T into the output (P transforms of length M,
//               input stride P, output stride 1: natural order).
// Stage order of one execute (the far field first, so that the near field
// adds to it and applies POST in the same pass over T):
//   S2M   mult^L = S2M x                      strided batched GEMM (2^L)
//   M2M   mult^l = M2M mult^{l+1}, l = L-1..B  one batched GEMM per level
//   M2L   loc^l = sum_s K^l_s mult^l(b+s), l = B+1..L (s in {-2,2,3} for
//         even b, {-3,-2,2} for odd b), entries computed on the fly
//   M2L-B loc^B from every non-neighbour box of the base level (cyclic)
//   REDUCE r_p = sum of mult^B of FMM p (= sum of x_p: S2M, M2M keep sums)
//   L2L   loc^{l+1} += L2L loc^l, l = B..L-1   one batched GEMM per level
//   L2T   T_p = L2T loc^L (p >= 1)             strided batched GEMM
//   S2T   T_p = rho_p (T_p + S2T x_p - sign i r_p) (p >= 1), T_0 = x_0:
//         the Toeplitz near field of three leaves and POST fused
//   FFT-P, FFT-M  the 2D FFT
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/gpufmm_types.h"

namespace gpufmm {
namespace fmmfft {

constexpr int kMaxQ = 24;       // expansion order Q: 2..kMaxQ
constexpr int64_t kMinLeaf = 2;  // M_L >= 2 (params.cpp: leaf_factor)
constexpr int64_t kMinN = 16;    // N = P M_L 2^L with P >= 2, M_L >= 2, L >= 2

enum Stage : int { kS2M, kM2M, kM2L, kM2LB, kReduce, kL2L, kL2T, kS2T, kFftP, kFftM, kStages };
const char* stage_name(int s);

struct Options {
  int64_t n = 0;
  gpufmm_dtype_t dtype = GPUFMM_COMPLEX128;
  double eps = 0;      // 0: the precision's default
  int P = 0, ml = 0;   // 0: from the model (set both or neither)
  int B = 0;           // 0: from the model
  int Q = 0;           // 0: from eps
  int direction = 0;   // 0: both; -1 forward only; +1 inverse only
  int tune = 0;        // time this many best-predicted candidates (0: model only)
  int post = 0;        // 0: POST in the near field; 1: in cuFFT's load callback (CUDA)
};

// Throws INVALID_ARGUMENT naming the field (as gpufmm_fft_options_t names it).
void validate(const Options& o);

struct Params {
  int64_t N = 0, M = 0;
  int P = 0, ml = 0, L = 0, B = 0, Q = 0;
};

// The roofline of one backend (sec. 5.4): gamma flop/s of a batched GEMM
// of the precision, beta bytes/s of a stream copy, and latency, the seconds
// one small batched GEMM call takes (a kernel launch, an OpenMP region);
// measured once per process and device (calibrate), cached.
struct Machine {
  double gamma = 0, beta = 0, latency = 0;
};

// Flops, bytes moved and the model time (eq. 3) of each stage.
struct Model {
  double flops[kStages] = {}, bytes[kStages] = {}, seconds[kStages] = {};
  double total = 0;
};
// G: the ranks of a distributed plan; the model is one rank's share.
Model model(const Params& p, int real_bytes, const Machine& m, int G = 1);

// eps -> Q for leaves of M_L points (the measured table of params.cpp) and
// the predicted error.
int order_for(double eps, bool single, int ml);
double predicted_error(int Q, bool single, int ml);
double default_eps(bool single);

// Throws INVALID_ARGUMENT for an N the factorization does not admit, the
// message naming the nearest admitted sizes. Over G ranks (a power of two)
// N must also split into G blocks of whole leaves with G | P and 2^B >= G
// (Distributed below).
void check_size(int64_t n, int G = 1);
// Every (P, M_L, L, B, Q) for N meeting eps (Q from eps and M_L unless the
// options set it), best predicted first (at most `keep`); or the one set by
// the options (checked). G: as check_size.
std::vector<Params> candidates(const Options& o, double eps, const Machine& m, int real_bytes, size_t keep,
                               int G = 1);

class Plan;
struct PlanObject;

// The communication of a plan over G ranks (papers/002 secs. 3-5; the MPI
// library implements it: src/mpi/fmmfft_mpi.cpp). G is a power of two;
// rank g holds the inputs and outputs [g N / G, (g + 1) N / G) (natural
// order), that is the leaves [g 2^L / G, (g + 1) 2^L / G) and at level l
// the boxes [g 2^l / G, ...). With 2^B >= G every level from B down holds
// whole boxes on each rank, at least two below B, so the M2L of a level
// needs two boxes from each side (s in {-3, -2, 2, 3} with the parity rule)
// and the S2T one leaf. The CPU stages (execute_cpu.cpp) call these at the
// steps of Algorithm 1, with the computation between a begin and its end.
class Distributed {
 public:
  int G = 1, rank = 0;
  virtual ~Distributed() = default;
  // Halo `id` (0: the input, l: the multipoles of level l): of this rank's
  // `units` units of `unit` reals (type: the plan's real), the first
  // `halo` go to the rank before and the last `halo` to the rank after
  // (cyclic); `before` gets the last `halo` units of the rank before,
  // `after` the first of the rank after. Only reals [skip, unit) of each
  // unit travel; the others of before / after are left as they are.
  virtual void halo_begin(int id, const void* block, int64_t units, int64_t unit, int64_t skip, int64_t halo,
                          void* before, void* after) = 0;
  virtual void halo_end(int id) = 0;
  // The base level: `reals` reals of each rank into all (G x reals, rank
  // order).
  virtual void gather_begin(const void* mine, int64_t reals, void* all) = 0;
  virtual void gather_end() = 0;
  // The M x P 2D FFT over the ranks of a CPU plan: fft_buffer() holds this
  // rank's M / G rows of P (p fastest; its size is the 2D FFT's, at least
  // N / G complex numbers) and is overwritten; out gets this rank's N / G
  // outputs in natural order.
  virtual void* fft_buffer() = 0;
  virtual void fft2d(void* out, int sign) = 0;
  // A GPU plan runs its 2D FFT with cuFFT around one transposition:
  // `reals` reals of send for each rank (rank order) into recv, `reals`
  // from each rank (rank order).
  virtual void alltoall(const void* send, void* recv, int64_t reals) = 0;
  // The memory a GPU plan passes to the calls above: host memory (false:
  // MPI; it stages halos, the base level and the transposition through
  // pinned buffers), or the context's device memory (true: NCCL, whose
  // messages are ordered against the context's stream by events, so no
  // call blocks the host; it may send whole units, skipped reals included).
  virtual bool device_memory() const { return false; }
  // Runs f on every rank and agrees on its outcome: when it threw on any
  // rank, every rank throws the same error (the lowest rank's).
  virtual void agree(const std::function<void()>& f) = 0;
  // Reals this rank sent in the last transform: the input halo, the
  // multipole halos, its block of the base level (to each other rank).
  int64_t sent_input = 0, sent_multipoles = 0, sent_base = 0;
  double t_wait = 0;  // seconds waited in halo_end / gather_end (last transform)
};

// The ranks a distributed plan is made on (plan_create): the roofline and
// timings agreed over them, and the Distributed of each candidate plan.
class Cluster {
 public:
  int G = 1, rank = 0;
  virtual ~Cluster() = default;
  virtual Machine agree_machine(const Machine& m) const = 0;  // the same on every rank
  virtual double max_over_ranks(double t) const = 0;
  virtual void agree(const std::function<void()>& f) const = 0;  // as Distributed::agree
  virtual std::unique_ptr<Distributed> make(const Plan& p) const = 0;  // collective
};

struct CudaPlan;  // src/cuda/fmmfft (GPU contexts)
struct CudaPlanDeleter {
  void operator()(CudaPlan* g) const;
};
struct CpuPlan;   // execute_cpu.cpp (FFTW plans, workspace)
struct CpuPlanDeleter {
  void operator()(CpuPlan* g) const;
};

// Members are destroyed in reverse order: the CUDA plan, then the CPU plan,
// then (ContextChild) the context's child reference.
class Plan : public ContextChild {
 public:
  Plan(Context& c, const Options& o) : ContextChild(c), options(o) {}

  Options options;
  Params par;
  Machine machine;
  Model predicted;
  double eps = 0;  // the eps the plan meets (options or default)
  bool single() const { return options.dtype == GPUFMM_COMPLEX64; }
  int real_bytes() const { return single() ? 4 : 8; }
  int64_t rows() const { return 2 * int64_t(par.P - 1); }  // R
  // Ranks, this rank's boxes of level l and its inputs (outputs).
  int G() const { return dist ? dist->G : 1; }
  int64_t boxes(int l) const { return (int64_t(1) << l) / G(); }
  int64_t local_n() const { return par.N / G(); }

  // Operator matrices, column-major doubles (the float plan rounds them):
  // s2m Q x M_L (S2M_{qm} = l_q(s_m)), m2m Q x 2Q ([M2M^- M2M^+]).
  std::vector<double> s2m, m2m;
  std::vector<double> z;               // the Q first-kind nodes
  std::vector<int64_t> level_offset;   // reals before level l of mult / loc, l = B..L+1 (index l - B; this rank's boxes)
  std::vector<int64_t> halo_offset;    // over several ranks: the parts of the halo buffer (ring.hpp)

  double times[kStages] = {};  // last execute (seconds)
  double t_total = 0, plan_seconds = 0;
  std::mutex mutex;
  std::unique_ptr<Distributed> dist;  // a plan over several ranks (null: one process)
  std::unique_ptr<CpuPlan, CpuPlanDeleter> cpu;
  std::unique_ptr<CudaPlan, CudaPlanDeleter> gpu;
};

// Builds a plan: parameters (model, optional timing of the best few),
// operators, backend set-up (FFT plans, workspace). With a cluster: a plan
// over its ranks (collective; the options must be equal on every rank; CPU
// contexts).
std::unique_ptr<Plan> plan_create(Context& ctx, const Options& o, const Cluster* cluster = nullptr);

// One transform. in/out: N interleaved complex numbers of the plan's dtype
// (a distributed plan: this rank's N / G), in host memory (on_context
// false) or the context's memory (true); may be the same buffer. sign -1
// forward, +1 inverse (unnormalized). `early`: an error the caller found in
// its arguments, thrown here (on a distributed plan: on every rank, agreed
// with the ranks' own checks before anything moves).
void execute(Plan& p, const void* in, void* out, int sign, bool on_context, std::exception_ptr early = nullptr);

namespace detail {
// FFTW's threads and a thread-safe planner, once per process (the MPI
// library's FFTW-MPI set-up calls it first).
void fftw_init();
void setup_cpu(Plan& p);
// Runs the stages up to and including `last` (the stage tests stop early
// and read the workspace: multipoles, locals, T, of the plan's precision).
void execute_cpu(Plan& p, const void* in, void* out, int sign, int last = kStages - 1);
struct CpuWorkspace {
  const void *mult, *loc, *T;
};
CpuWorkspace cpu_workspace(const Plan& p);
Machine calibrate_cpu(bool single);
#if defined(GPUFMM_HAVE_CUDA) && defined(GPUFMM_HAVE_NCCL)
// nccl_device_key and nccl_distributed below (multi.cu).
std::string nccl_device_key(const Context& ctx);
std::unique_ptr<Distributed> nccl_distributed(const Plan& p, int G, int rank,
                                              const std::function<void(void*, int)>& share_id,
                                              std::function<void(const std::function<void()>&)> agree);
// The parts of plan_create_multi and execute_multi over G >= 2 GPUs
// (src/cuda/fmmfft/multi.cu; the arguments checked).
void create_parts(PlanObject& obj, const std::vector<Context*>& ctxs, const Options& o);
void execute_parts(PlanObject& obj, const std::vector<const void*>& in, const std::vector<void*>& out, int sign,
                   bool on_context, const std::vector<std::exception_ptr>& early);
#endif
#ifdef GPUFMM_HAVE_CUDA
void setup_cuda(Plan& p);
void execute_cuda(Plan& p, const void* in, void* out, int sign, bool on_context);
Machine calibrate_cuda(Context& ctx, bool single);
#endif
}  // namespace detail

}  // namespace fmmfft
}  // namespace gpufmm

struct gpufmm_fft_plan_s;  // a handle: an id (core/handles.hpp)

namespace gpufmm {
namespace fmmfft {
// The object behind gpufmm_fft_plan_t: one plan (one process, or this
// rank's part over MPI ranks), or the parts of a plan over several GPUs of
// this process, one per GPU (plan_create_multi), with what they share
// (NCCL's communicators; destroyed after the parts).
struct PlanObject {
  std::shared_ptr<void> group;
  std::vector<std::unique_ptr<Plan>> parts;
  std::unique_ptr<Plan> plan;
  Plan& head() { return plan ? *plan : *parts.front(); }
  int count() const { return plan ? 1 : int(parts.size()); }
  Plan& part(int g) { return plan ? *plan : *parts[size_t(g)]; }
};

// A plan over the GPUs of ctxs (G of them, distinct devices, a power of
// two): part g holds the elements [g N / G, (g + 1) N / G) (natural order)
// on ctxs[g], and the parts exchange halos, the base level and the 2D
// FFT's transposition through NCCL (libnccl.so.2, loaded at run time), one
// host thread per GPU during create and execute (src/cuda/fmmfft/multi.cu).
// NOT_SUPPORTED without CUDA or NCCL; G = 1 gives a plain plan.
std::unique_ptr<PlanObject> plan_create_multi(const std::vector<Context*>& ctxs, const Options& o);
// One transform over every part: in[g], out[g] the part's N / G elements
// (host memory, or the part's context's memory when on_context); early[g]:
// an error found in part g's arguments (every part fails with it).
void execute_multi(PlanObject& obj, const std::vector<const void*>& in, const std::vector<void*>& out, int sign,
                   bool on_context, const std::vector<std::exception_ptr>& early);

// GPU ranks of an MPI plan (src/mpi/fmmfft_mpi.cpp). nccl_device_key: this
// context's GPU (its PCI bus id), to find ranks that share one; "" when
// the build has no NCCL header or the machine no libnccl.so.2.
std::string nccl_device_key(const Context& ctx);
// The Distributed of rank `rank` of G over NCCL in device memory, as the
// parts of plan_create_multi have it: share_id(id, bytes) must give every
// rank rank 0's bytes (its NCCL id; the MPI part broadcasts them); agree as
// Distributed::agree. Collective over the G ranks (ncclCommInitRank), one
// GPU each, every rank with a key.
std::unique_ptr<Distributed> nccl_distributed(const Plan& p, int G, int rank,
                                              const std::function<void(void*, int)>& share_id,
                                              std::function<void(const std::function<void()>&)> agree);
}  // namespace fmmfft
}  // namespace gpufmm
