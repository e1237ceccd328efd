// The FMM-FFT across MPI ranks (fmmfft_mpi.hpp).
#include "mpi/fmmfft_mpi.hpp"

#include <fftw3-mpi.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "mpi/collective.hpp"

namespace gpufmm {
namespace mpi {

namespace {

// FFTW's threads (the single-process plans' set-up), then its MPI part,
// once per process.
void fftw_mpi_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    fmmfft::detail::fftw_init();
    fftw_mpi_init();
    fftwf_mpi_init();
  });
}

// FFTW-MPI's 2D transform with transposed output, per precision.
template <class R>
struct FftwMpi;
template <>
struct FftwMpi<double> {
  using plan = fftw_plan;
  static MPI_Datatype real() { return MPI_DOUBLE; }
  static ptrdiff_t local_size(ptrdiff_t n0, ptrdiff_t n1, MPI_Comm c, ptrdiff_t* ln0, ptrdiff_t* s0, ptrdiff_t* ln1,
                              ptrdiff_t* s1) {
    return fftw_mpi_local_size_2d_transposed(n0, n1, c, ln0, s0, ln1, s1);
  }
  static void* alloc(ptrdiff_t n) { return fftw_alloc_complex(size_t(n)); }
  static void release(void* p) { fftw_free(p); }
  static plan make(ptrdiff_t n0, ptrdiff_t n1, void* buf, MPI_Comm c, int sign) {
    fftw_plan_with_nthreads(omp_get_max_threads());
    auto* b = static_cast<fftw_complex*>(buf);
    return fftw_mpi_plan_dft_2d(n0, n1, b, b, c, sign, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  }
  static void exec(plan p, void* buf) {
    auto* b = static_cast<fftw_complex*>(buf);
    fftw_mpi_execute_dft(p, b, b);
  }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};
template <>
struct FftwMpi<float> {
  using plan = fftwf_plan;
  static MPI_Datatype real() { return MPI_FLOAT; }
  static ptrdiff_t local_size(ptrdiff_t n0, ptrdiff_t n1, MPI_Comm c, ptrdiff_t* ln0, ptrdiff_t* s0, ptrdiff_t* ln1,
                              ptrdiff_t* s1) {
    return fftwf_mpi_local_size_2d_transposed(n0, n1, c, ln0, s0, ln1, s1);
  }
  static void* alloc(ptrdiff_t n) { return fftwf_alloc_complex(size_t(n)); }
  static void release(void* p) { fftwf_free(p); }
  static plan make(ptrdiff_t n0, ptrdiff_t n1, void* buf, MPI_Comm c, int sign) {
    fftwf_plan_with_nthreads(omp_get_max_threads());
    auto* b = static_cast<fftwf_complex*>(buf);
    return fftwf_mpi_plan_dft_2d(n0, n1, b, b, c, sign, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  }
  static void exec(plan p, void* buf) {
    auto* b = static_cast<fftwf_complex*>(buf);
    fftwf_mpi_execute_dft(p, b, b);
  }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

int to_int(int64_t v, const char* what) {
  require(v <= std::numeric_limits<int>::max(), GPUFMM_ERROR_NOT_SUPPORTED, what,
          " exceeds 2^31 reals in one MPI message: use more ranks");
  return int(v);
}

// A duplicate of a communicator (errors returned, not fatal), freed with
// its owner unless MPI is finalized by then: the plan's create, each
// Exchange, the agreements of an NCCL plan. Its messages never meet the
// user's or another plan's.
struct OwnComm {
  explicit OwnComm(MPI_Comm c) {
    check(MPI_Comm_dup(c, &comm), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  ~OwnComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  OwnComm(const OwnComm&) = delete;
  OwnComm& operator=(const OwnComm&) = delete;
  MPI_Comm comm = MPI_COMM_NULL;
};

// The Distributed of one plan: its own duplicate of the communicator (its
// messages never meet the user's or another plan's), the halo requests in
// flight, the base level's all-gather, the 2D FFT.
template <class R>
class Exchange final : public fmmfft::Distributed {
 public:
  Exchange(MPI_Comm user, const fmmfft::Plan& p) : dup_(user), comm_(dup_.comm) {
    using F = FftwMpi<R>;
    check(MPI_Comm_rank(comm_, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &G), "MPI_Comm_size");
    prev_ = (rank + G - 1) % G;
    next_ = (rank + 1) % G;
    halos_.resize(size_t(p.par.L + 1));
    const ptrdiff_t M = p.par.M, P = p.par.P;
    n_local_ = p.par.N / G;
    if (p.ctx.on_gpu()) return;  // cuFFT on each rank around alltoall()
    fftw_mpi_once();
    collective(comm_, [&] {
      ptrdiff_t ln0 = 0, s0 = 0, ln1 = 0, s1 = 0;
      const ptrdiff_t alloc = F::local_size(M, P, comm_, &ln0, &s0, &ln1, &s1);
      // The parameters (G | P, G | 2^L) make FFTW's blocks the natural ones.
      require(ln0 == M / G && s0 == rank * (M / G) && ln1 == P / G && s1 == rank * (P / G), GPUFMM_ERROR_INTERNAL,
              "FFTW-MPI splits the ", M, " x ", P, " 2D FFT into other blocks than N / G = ", n_local_,
              " elements per rank");
      buf_ = F::alloc(std::max<ptrdiff_t>(alloc, ptrdiff_t(n_local_)));
      require(buf_ != nullptr, GPUFMM_ERROR_OUT_OF_MEMORY, "the 2D FFT's buffer (", n_local_,
              " complex numbers) could not be allocated");
    });
    for (int d = 0; d < 2; ++d) {
      const int sign = d == 0 ? -1 : 1;
      if (p.options.direction != 0 && p.options.direction != sign) continue;
      plans_[d] = F::make(M, P, buf_, comm_, sign);  // collective
    }
    collective(comm_, [&] {
      for (int d = 0; d < 2; ++d) {
        const int sign = d == 0 ? -1 : 1;
        require(plans_[d] || (p.options.direction != 0 && p.options.direction != sign), GPUFMM_ERROR_INTERNAL,
                "FFTW-MPI could not plan the ", M, " x ", P, " 2D FFT");
      }
    });
  }

  ~Exchange() override {
    using F = FftwMpi<R>;
    for (auto& h : halos_)
      if (h.type != MPI_DATATYPE_NULL) MPI_Type_free(&h.type);
    for (auto& pl : plans_)
      if (pl) F::destroy(pl);
    if (buf_) F::release(buf_);
  }

  void halo_begin(int id, const void* block, int64_t units, int64_t unit, int64_t skip, int64_t halo, void* before,
                  void* after) override {
    Halo& h = halos_.at(size_t(id));
    const MPI_Datatype real = FftwMpi<R>::real();
    check(MPI_Type_vector(to_int(halo, "a halo"), to_int(unit - skip, "a halo unit"), to_int(unit, "a halo unit"),
                          real, &h.type),
          "MPI_Type_vector");
    check(MPI_Type_commit(&h.type), "MPI_Type_commit");
    const R* b = static_cast<const R*>(block);
    // Tags: 2 id for a rank's first units (the "after" of the rank before),
    // 2 id + 1 for its last (the "before" of the rank after).
    check(MPI_Irecv(static_cast<R*>(before) + skip, 1, h.type, prev_, 2 * id + 1, comm_, &h.req[0]), "MPI_Irecv (halo)");
    check(MPI_Irecv(static_cast<R*>(after) + skip, 1, h.type, next_, 2 * id, comm_, &h.req[1]), "MPI_Irecv (halo)");
    check(MPI_Isend(b + skip, 1, h.type, prev_, 2 * id, comm_, &h.req[2]), "MPI_Isend (halo)");
    check(MPI_Isend(b + (units - halo) * unit + skip, 1, h.type, next_, 2 * id + 1, comm_, &h.req[3]),
          "MPI_Isend (halo)");
    (id == 0 ? sent_input : sent_multipoles) += 2 * halo * (unit - skip);
  }

  void halo_end(int id) override {
    Halo& h = halos_.at(size_t(id));
    const double t0 = MPI_Wtime();
    check(MPI_Waitall(4, h.req, MPI_STATUSES_IGNORE), "MPI_Waitall (halo)");
    t_wait += MPI_Wtime() - t0;
    check(MPI_Type_free(&h.type), "MPI_Type_free");
  }

  void gather_begin(const void* mine, int64_t reals, void* all) override {
    const int n = to_int(reals, "a rank's block of the base level");
    const MPI_Datatype real = FftwMpi<R>::real();
    check(MPI_Iallgather(mine, n, real, all, n, real, comm_, &gather_), "MPI_Iallgather (base level)");
    sent_base = reals;
  }

  void gather_end() override {
    const double t0 = MPI_Wtime();
    check(MPI_Wait(&gather_, MPI_STATUS_IGNORE), "MPI_Wait (base level)");
    t_wait += MPI_Wtime() - t0;
  }

  void* fft_buffer() override { return buf_; }

  void fft2d(void* out, int sign) override {
    FftwMpi<R>::exec(plans_[sign < 0 ? 0 : 1], buf_);
    std::memmove(out, buf_, sizeof(R) * 2 * size_t(n_local_));
  }

  void alltoall(const void* send, void* recv, int64_t reals) override {
    const int n = to_int(reals, "a rank's block of the 2D FFT's transposition");
    const MPI_Datatype real = FftwMpi<R>::real();
    const double t0 = MPI_Wtime();
    check(MPI_Alltoall(send, n, real, recv, n, real, comm_), "MPI_Alltoall (2D FFT)");
    t_wait += MPI_Wtime() - t0;
  }

  void agree(const std::function<void()>& f) override { collective(comm_, f); }

 private:
  struct Halo {
    MPI_Request req[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Datatype type = MPI_DATATYPE_NULL;
  };
  OwnComm dup_;
  MPI_Comm comm_;  // dup_'s
  int prev_ = 0, next_ = 0;
  int64_t n_local_ = 0;
  std::vector<Halo> halos_;  // by id: 0 the input, l the multipoles of level l
  MPI_Request gather_ = MPI_REQUEST_NULL;
  void* buf_ = nullptr;
  typename FftwMpi<R>::plan plans_[2] = {};
};

// The ranks of the plan being made (plan_create's collective steps).
class FftCluster final : public fmmfft::Cluster {
 public:
  explicit FftCluster(MPI_Comm c) : comm(c) {
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &G), "MPI_Comm_size");
  }
  fmmfft::Machine agree_machine(const fmmfft::Machine& m) const override {
    // The slowest rank's figures.
    double v[3] = {m.gamma, m.beta, -m.latency};
    check(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MIN, comm), "MPI_Allreduce (roofline)");
    return fmmfft::Machine{v[0], v[1], -v[2]};
  }
  double max_over_ranks(double t) const override {
    check(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce (time)");
    return t;
  }
  void agree(const std::function<void()>& f) const override { collective(comm, f); }
  std::unique_ptr<fmmfft::Distributed> make(const fmmfft::Plan& p) const override {
    if (p.ctx.on_gpu() && nccl_everywhere(p)) {
      // NCCL between the GPUs' memories (the Distributed of
      // plan_create_multi); the plan's own communicator for the agreements.
      auto own = std::make_shared<OwnComm>(comm);
      return fmmfft::nccl_distributed(
          p, G, rank,
          [&](void* id, int bytes) { check(MPI_Bcast(id, bytes, MPI_BYTE, 0, comm), "MPI_Bcast (NCCL id)"); },
          [own](const std::function<void()>& f) { collective(own->comm, f); });
    }
    if (p.single()) return std::make_unique<Exchange<float>>(comm, p);
    return std::make_unique<Exchange<double>>(comm, p);
  }

 private:
  // Collective: every rank has NCCL and a GPU no other rank has (NCCL takes
  // a GPU once; ranks sharing one send through host memory), and
  // GPUFMM_MPI_NCCL is not 0 on any rank.
  bool nccl_everywhere(const fmmfft::Plan& p) const {
    constexpr int kKey = 128;
    char key[kKey] = {0};
    const char* env = std::getenv("GPUFMM_MPI_NCCL");
    std::string bus;
    if (!(env && std::string(env) == "0")) {
      try {  // a rank that cannot tell takes the host path with the others
        bus = fmmfft::nccl_device_key(p.ctx);
      } catch (const Error&) {
        bus.clear();
      }
    }
    if (!bus.empty()) {
      char host[MPI_MAX_PROCESSOR_NAME] = {0};
      int len = 0;
      check(MPI_Get_processor_name(host, &len), "MPI_Get_processor_name");
      std::snprintf(key, sizeof key, "%s/%s", host, bus.c_str());
    }
    std::vector<char> all(size_t(kKey) * size_t(G));
    check(MPI_Allgather(key, kKey, MPI_CHAR, all.data(), kKey, MPI_CHAR, comm), "MPI_Allgather (GPU keys)");
    std::vector<std::string> keys;
    for (int r = 0; r < G; ++r) keys.emplace_back(all.data() + size_t(r) * kKey);
    for (int r = 0; r < G; ++r) {
      if (keys[size_t(r)].empty()) return false;
      for (int s = 0; s < r; ++s)
        if (keys[size_t(s)] == keys[size_t(r)]) return false;
    }
    return true;
  }
  MPI_Comm comm;
};

// The options as named values, to compare across ranks.
std::vector<std::pair<const char*, double>> option_fields(const fmmfft::Options& o) {
  return {{"n", double(o.n)}, {"dtype", double(o.dtype)}, {"eps", o.eps},         {"p", double(o.P)},
          {"ml", double(o.ml)}, {"b", double(o.B)},        {"q", double(o.Q)},     {"direction", double(o.direction)},
          {"tune", double(o.tune)}, {"post", double(o.post)}};
}

}  // namespace

std::unique_ptr<fmmfft::PlanObject> fft_plan_create(Context* ctx, MPI_Comm user_comm, const fmmfft::Options& o,
                                                    std::exception_ptr early) {
  check_comm(user_comm);

  const OwnComm dup(user_comm);  // the create's, freed on every way out
  MPI_Comm comm = dup.comm;
  int size = 1;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  collective(comm, [&] {
    if (early) std::rethrow_exception(early);
    require((size & (size - 1)) == 0, GPUFMM_ERROR_NOT_SUPPORTED, "the FMM-FFT across MPI ranks needs a power of "
            "two of ranks (the communicator has ", size, ")");
  });
  // Every rank on the same backend: CPU ranks transform with FFTW-MPI, GPU
  // ranks with cuFFT around MPI_Alltoall.
  auto fields = option_fields(o);
  fields.emplace_back("the context's backend (0 CPU, 1 GPU)", ctx && ctx->on_gpu() ? 1.0 : 0.0);
  agree_options(comm, fields);
  const FftCluster cluster(comm);
  auto obj = std::make_unique<fmmfft::PlanObject>();
  obj->plan = fmmfft::plan_create(*ctx, o, &cluster);
  return obj;
}

}  // namespace mpi
}  // namespace gpufmm
