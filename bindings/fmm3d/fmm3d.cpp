// libgpufmm_fmm3d: FMM3D's Laplace entry points (lfmm3d and its wrappers
// lfmm3d_{s,t,st}_{c,d,cd}_{p,g,h}[_vec], as FMM3D 2.1 defines them in
// src/Laplace/lfmm3d.f, lfmm3dwrap.f and lfmm3dwrap_vec.f) on top of the C
// API of gpufmm.h, so that a program written for FMM3D relinks against gpufmm
// unchanged (docs/fmm3d.md).
//
// ABI: gfortran's. Names in lower case with a trailing underscore, every
// argument by reference, FMM3D's integer*8 (nd, counts, flags, iper, ier) as
// int64_t, double precision as double, no hidden arguments (no character
// arguments). Arrays as FMM3D lays them out: source(3,n), charge(nd,n),
// dipvec(nd,3,n), pot(nd,n), grad(nd,3,n), hess(nd,6,n) with the Hessian in
// the order xx yy zz xy xz yz: the layouts of gpufmm_laplace_evaluate_nd.
//
// Normalization: FMM3D's kernel is 1/(4 pi r) (its dipole term
// v . (x - x_j) / (4 pi |x - x_j|^3)); gpufmm's is 1/r, so every output is
// gpufmm's times 1/(4 pi).
//
// Plans: one process-wide context (GPU 0 when there is one, else the CPU;
// GPUFMM_FMM3D_BACKEND overrides) and a small LRU cache of plans keyed by
// the geometry (mode, counts, coordinate pointers, a hash of every
// coordinate byte, eps), so that a legacy solver that calls lfmm3d hundreds
// of times on one geometry builds one plan (GPUFMM_FMM3D_CACHE sets the
// number of plans kept; 0 disables the cache).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "gpufmm.h"
#include "gpufmm_fmm3d.h"

#define GPUFMM_FMM3D_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr double kInvFourPi = 0.07957747154594766788444188168625718;  // 1 / (4 pi)
constexpr int64_t kDefaultCacheSize = 4;
constexpr int64_t kMaxCacheSize = 1024;

// Components per point of each output level: 1 pot, 3 grad, 6 hess.
constexpr int64_t kComponents[3] = {1, 3, 6};

thread_local std::string t_last_error;

// A failure: the drop-in's own argument checks, or a gpufmm call that failed
// (with its message).
struct Failure {
  gpufmm_status_t status;
  std::string message;
};

template <typename... Parts>
[[noreturn]] void fail(gpufmm_status_t status, const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  throw Failure{status, s.str()};
}

void check(gpufmm_status_t s) {
  if (s != GPUFMM_SUCCESS) throw Failure{s, gpufmm_last_error_message()};
}

int64_t ier_of(gpufmm_status_t s) {
  if (s == GPUFMM_SUCCESS) return 0;
  if (s == GPUFMM_ERROR_OUT_OF_MEMORY) return GPUFMM_FMM3D_IER_ALLOC;
  return GPUFMM_FMM3D_IER_BASE + static_cast<int64_t>(s);
}

// ---------------------------------------------------------------- the calls

// What is wanted at one set of points: level 0 nothing, 1 pot, 2 + grad,
// 3 + hess (FMM3D's ifpgh), and where it goes (FMM3D's layouts).
struct Outputs {
  int64_t level = 0;
  double* out[3] = {nullptr, nullptr, nullptr};  // pot, grad, hess
};

// One call of an FMM3D routine, in FMM3D's terms.
struct Call {
  const char* name;
  int64_t nd;
  double eps;
  int64_t ns;
  const double* src;
  bool has_charge = false, has_dipole = false;
  const double* charge = nullptr;
  const double* dipvec = nullptr;
  Outputs at_src;
  int64_t nt = 0;
  const double* trg = nullptr;
  Outputs at_trg;
  Call(const char* name, int64_t nd, double eps, int64_t ns, const double* src)
      : name(name), nd(nd), eps(eps), ns(ns), src(src) {}
};

// Which plans a call needs: at the sources (targets = sources), at separate
// targets, or both (the two plans in one cache entry). Each set of outputs
// has a plan of its own, so that each meets eps relative to its own values:
// one plan whose targets were the sources followed by the targets met eps
// over the union, which the sources' values dominate where dipoles sit
// close together, and left the targets' gradients 200 eps off
// (tests/fmm3d/test_fmm3d.py, clustered points, eps 1e-9: gradient norms
// 5.8e16 at the sources, 2.9e4 at the targets).
enum class Mode { kSources, kTargets, kBoth };

// ---------------------------------------------------------------- the plan cache

// A hash of every byte of n doubles: blocks of kHashBlock words, each
// hashed in four independent lanes of a multiply-rotate round, on all cores;
// the blocks' hashes are then mixed in order and the sum avalanched, so the
// value does not depend on the number of threads. O(n), well under a
// millisecond for 10^6 points on 16 cores, against seconds for a plan.
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull;
constexpr int64_t kHashBlock = int64_t(1) << 14;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline void mix(uint64_t& acc, uint64_t w) { acc = rotl(acc + w * kP2, 31) * kP1; }

uint64_t hash_block(const double* x, int64_t n, uint64_t seed) {
  uint64_t lane[4] = {seed + kP1, seed ^ kP2, seed + kP3, seed - kP1};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, x + i + l, sizeof w);
      mix(lane[l], w);
    }
  }
  uint64_t h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
  for (; i < n; ++i) {
    uint64_t w;
    std::memcpy(&w, x + i, sizeof w);
    mix(h, w);
  }
  return h;
}

uint64_t hash_doubles(const double* x, int64_t n, uint64_t seed) {
  const int64_t nb = (n + kHashBlock - 1) / kHashBlock;
  std::vector<uint64_t> part(static_cast<size_t>(nb));
#pragma omp parallel for schedule(static) if (nb > 1)
  for (int64_t b = 0; b < nb; ++b)
    part[size_t(b)] = hash_block(x + b * kHashBlock, std::min(kHashBlock, n - b * kHashBlock), seed + uint64_t(b));
  uint64_t h = seed ^ kP3;
  for (const uint64_t v : part) mix(h, v);
  h ^= static_cast<uint64_t>(n);
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

struct Key {
  Mode mode;
  int64_t ns, nt;
  const double* src;
  const double* trg;
  uint64_t hash;  // of every coordinate byte: a coordinate changed in place is a new geometry
  double eps;
  bool operator==(const Key& o) const {
    return mode == o.mode && ns == o.ns && nt == o.nt && src == o.src && trg == o.trg && hash == o.hash &&
           std::memcmp(&eps, &o.eps, sizeof eps) == 0;
  }
};

// The plans of one geometry (at the sources, at the targets: those the mode
// needs). Freed when the cache has dropped it and the last call using it has
// returned.
struct Entry {
  Key key;
  gpufmm_laplace_plan_t at_src = nullptr, at_trg = nullptr;
  explicit Entry(const Key& k) : key(k) {}
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  ~Entry() {
    gpufmm_laplace_plan_destroy(at_src);
    gpufmm_laplace_plan_destroy(at_trg);
  }
};

// The process-wide state: the context, the settings read from the
// environment, and the cache. Built on the first call (thread-safe: a
// function-local static), torn down at exit (plans first, then the context).
class State {
 public:
  State() {
    try {
      init();
    } catch (const Failure& f) {
      status_ = f.status;
      error_ = f.message;
    }
  }
  ~State() {
    clear();
    if (ctx_ != nullptr) gpufmm_context_destroy(ctx_);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  bool quiet() const { return quiet_; }

  // The context, or the failure of the set-up.
  gpufmm_context_t context() const {
    if (status_ != GPUFMM_SUCCESS) throw Failure{status_, error_};
    return ctx_;
  }

  // The plan for `key` (built by `make` on a miss, outside the lock: other
  // calls go on meanwhile).
  template <typename Make>
  std::shared_ptr<Entry> plan(const Key& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = lru_.begin(); it != lru_.end(); ++it) {
        if ((*it)->key == key) {
          lru_.splice(lru_.begin(), lru_, it);
          ++hits_;
          return lru_.front();
        }
      }
      ++misses_;
    }
    auto e = std::make_shared<Entry>(key);
    make(*e);
    if (capacity_ > 0) {
      std::list<std::shared_ptr<Entry>> dropped;  // freed after the lock is released
      std::lock_guard<std::mutex> lock(mutex_);
      lru_.push_front(e);
      while (static_cast<int64_t>(lru_.size()) > capacity_) dropped.splice(dropped.end(), lru_, std::prev(lru_.end()));
    }
    return e;
  }

  // Drops every plan; returns whether there was any.
  bool clear() {
    std::list<std::shared_ptr<Entry>> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      dropped.swap(lru_);
    }
    return !dropped.empty();
  }

  void stats(int64_t* hits, int64_t* misses, int64_t* plans) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (hits) *hits = hits_;
    if (misses) *misses = misses_;
    if (plans) *plans = static_cast<int64_t>(lru_.size());
  }

 private:
  void init() {
    const char* q = std::getenv("GPUFMM_FMM3D_QUIET");
    quiet_ = q != nullptr && std::strcmp(q, "") != 0 && std::strcmp(q, "0") != 0;
    if (const char* c = std::getenv("GPUFMM_FMM3D_CACHE")) {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(c, &end, 10);
      if (end == c || *end != '\0' || errno != 0 || v < 0 || v > kMaxCacheSize)
        fail(GPUFMM_ERROR_INVALID_ARGUMENT, "environment variable GPUFMM_FMM3D_CACHE = '", c,
             "' is not a number of plans in 0..", kMaxCacheSize, " (0 disables the plan cache)");
      capacity_ = v;
    }
    int device = GPUFMM_DEVICE_DEFAULT;  // GPU 0 if the build has CUDA and there is a GPU, else the CPU
    const char* b = std::getenv("GPUFMM_FMM3D_BACKEND");
    if (b == nullptr || std::strcmp(b, "") == 0) b = "auto";
    if (std::strcmp(b, "cpu") == 0)
      device = GPUFMM_DEVICE_CPU;
    else if (std::strcmp(b, "gpu") == 0)
      device = 0;
    else if (std::strcmp(b, "auto") != 0)
      fail(GPUFMM_ERROR_INVALID_ARGUMENT, "environment variable GPUFMM_FMM3D_BACKEND = '", b,
           "' is not cpu, gpu or auto");
    const gpufmm_status_t s = gpufmm_context_create(device, &ctx_);
    if (s != GPUFMM_SUCCESS) {
      ctx_ = nullptr;
      fail(s, "creating the context (GPUFMM_FMM3D_BACKEND = ", b, "): ", gpufmm_last_error_message());
    }
  }

  gpufmm_status_t status_ = GPUFMM_SUCCESS;
  std::string error_;
  gpufmm_context_t ctx_ = nullptr;
  bool quiet_ = false;
  int64_t capacity_ = kDefaultCacheSize;
  std::mutex mutex_;
  std::list<std::shared_ptr<Entry>> lru_;  // most recently used first
  int64_t hits_ = 0, misses_ = 0;
};

State& state() {
  static State s;
  return s;
}

// ---------------------------------------------------------------- evaluation

// gpufmm's sums (kernel 1/r) of nd densities into out = {pot, grad, hess}
// (NULL: not wanted), in FMM3D's layouts.
void evaluate(gpufmm_laplace_plan_t plan, int64_t nd, const double* charge, const double* dipvec,
              double* const out[3]) {
  check(gpufmm_laplace_evaluate_nd(plan, static_cast<int>(nd), charge, dipvec, out[0], out[1], out[2]));
}

// Runs f; when it fails for lack of memory and the cache held plans, frees
// them and runs f once more (plans of other geometries hold device memory).
template <typename F>
void with_memory_retry(State& st, F f) {
  try {
    f();
  } catch (const Failure& e) {
    if (e.status != GPUFMM_ERROR_OUT_OF_MEMORY || !st.clear()) throw;
    f();
  }
}

void check_level(int64_t level, const char* flag) {
  if (level > 3) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", flag, "' = ", level, " is not in 0..3");
}

void check_outputs(const Outputs& o, const char* const names[3]) {
  for (int64_t k = 0; k < o.level; ++k)
    if (o.out[k] == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", names[k], "' is NULL");
}

// Every wanted output of the n points of o, times `factor` (0: zeros), on
// all cores.
void scale_outputs(const Outputs& o, int64_t nd, int64_t n, double factor) {
  for (int64_t k = 0; k < o.level; ++k) {
    double* v = o.out[k];
    const int64_t len = nd * kComponents[k] * n;
#pragma omp parallel for schedule(static) if (len > (int64_t(1) << 16))
    for (int64_t i = 0; i < len; ++i) v[i] = factor == 0.0 ? 0.0 : v[i] * factor;
  }
}

void run(const Call& c) {
  State& st = state();
  const gpufmm_context_t ctx = st.context();
  static const char* const kSrcNames[3] = {"pot", "grad", "hess"};
  static const char* const kTrgNames[3] = {"pottarg", "gradtarg", "hesstarg"};
  // FMM3D checks none of these; gpufmm would refuse most, but the hash below
  // reads the coordinates first.
  if (c.nd < 1 || c.nd > INT_MAX) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nd' = ", c.nd, " is not in 1..", INT_MAX);
  if (!(c.eps > 0.0 && c.eps < 1.0)) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'eps' = ", c.eps, " is not in (0, 1)");
  if (c.ns < 0) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nsource' = ", c.ns, " is negative");
  check_level(c.at_src.level, "ifpgh");
  check_level(c.at_trg.level, "ifpghtarg");
  if (c.at_trg.level >= 1 && c.nt < 0) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'ntarg' = ", c.nt, " is negative");
  const bool want_s = c.at_src.level >= 1;
  const bool want_t = c.at_trg.level >= 1 && c.nt > 0;
  const int64_t nt = want_t ? c.nt : 0;
  if (c.ns > INT64_MAX / 6 / c.nd - nt)
    fail(GPUFMM_ERROR_INVALID_ARGUMENT, "arguments 'nd' = ", c.nd, ", 'nsource' = ", c.ns, " and 'ntarg' = ", nt,
         ": the outputs' sizes overflow 64 bits");
  if (c.ns > 0 && c.src == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'source' is NULL");
  if (want_t && c.trg == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'targ' is NULL");
  if (c.has_charge && c.charge == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charge' is NULL");
  if (c.has_dipole && c.dipvec == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'dipvec' is NULL");
  Outputs at_src = c.at_src, at_trg = c.at_trg;
  if (!want_s) at_src.level = 0;
  if (!want_t) at_trg.level = 0;
  check_outputs(at_src, kSrcNames);
  check_outputs(at_trg, kTrgNames);
  if (!want_s && !want_t) return;
  if (c.ns == 0 || (!c.has_charge && !c.has_dipole)) {  // no sources, or sources that carry nothing
    scale_outputs(at_src, c.nd, c.ns, 0.0);
    scale_outputs(at_trg, c.nd, nt, 0.0);
    return;
  }

  const Mode mode = want_s && want_t ? Mode::kBoth : want_s ? Mode::kSources : Mode::kTargets;
  uint64_t hash = hash_doubles(c.src, 3 * c.ns, static_cast<uint64_t>(mode));
  if (mode != Mode::kSources) hash = hash_doubles(c.trg, 3 * nt, hash);
  const Key key{mode, c.ns, nt, c.src, mode == Mode::kSources ? nullptr : c.trg, hash, c.eps};
  const std::shared_ptr<Entry> entry = st.plan(key, [&](Entry& e) {
    gpufmm_laplace_options_t opt;
    check(gpufmm_laplace_options_init(&opt));
    opt.eps = c.eps;
    opt.precision = GPUFMM_FLOAT64;
    with_memory_retry(st, [&] {
      // (A retry after running out of memory keeps a plan already made.)
      if (mode != Mode::kTargets && e.at_src == nullptr)
        check(gpufmm_laplace_plan_create(ctx, &opt, c.ns, c.src, 0, nullptr, &e.at_src));
      if (mode != Mode::kSources && e.at_trg == nullptr)
        check(gpufmm_laplace_plan_create(ctx, &opt, c.ns, c.src, nt, c.trg, &e.at_trg));
    });
  });
  const double* q = c.has_charge ? c.charge : nullptr;
  const double* d = c.has_dipole ? c.dipvec : nullptr;
  // Straight into the caller's arrays, set by set.
  for (const bool sources : {true, false}) {
    const Outputs& o = sources ? at_src : at_trg;
    if (o.level == 0) continue;
    double* out[3] = {nullptr, nullptr, nullptr};
    for (int64_t k = 0; k < o.level; ++k) out[k] = o.out[k];
    with_memory_retry(st, [&] { evaluate(sources ? entry->at_src : entry->at_trg, c.nd, q, d, out); });
    scale_outputs(o, c.nd, sources ? c.ns : nt, kInvFourPi);
  }
}

// run() for the entry points: never throws; the ier of FMM3D (docs/fmm3d.md).
int64_t guarded(const Call& c) noexcept {
  gpufmm_status_t status = GPUFMM_SUCCESS;
  std::string message;
  try {
    run(c);
    return 0;
  } catch (const Failure& f) {
    status = f.status;
    message = f.message;
  } catch (const std::bad_alloc&) {
    status = GPUFMM_ERROR_OUT_OF_MEMORY;
    message = "out of host memory";
  } catch (...) {
    status = GPUFMM_ERROR_INTERNAL;
    message = "unexpected exception (please report it)";
  }
  const int64_t ier = ier_of(status);
  try {
    t_last_error = std::string(c.name) + ": " + message;
    if (!state().quiet()) std::fprintf(stderr, "gpufmm_fmm3d: %s (ier = %lld)\n", t_last_error.c_str(), static_cast<long long>(ier));
  } catch (...) {
  }
  return ier;
}

}  // namespace

// ---------------------------------------------------------------- entry points

GPUFMM_FMM3D_EXPORT void gpufmm_fmm3d_cache_clear(void) { state().clear(); }

GPUFMM_FMM3D_EXPORT void gpufmm_fmm3d_cache_stats(int64_t* hits, int64_t* misses, int64_t* plans) {
  state().stats(hits, misses, plans);
}

GPUFMM_FMM3D_EXPORT const char* gpufmm_fmm3d_last_error(void) { return t_last_error.c_str(); }

// lfmm3d (src/Laplace/lfmm3d.f): flags as FMM3D reads them (ifcharge,
// ifdipole: 1 = yes, anything else no; ifpgh, ifpghtarg: 1 pot, 2 + grad,
// 3 + hess, 0 or less nothing); iper is not read (FMM3D overwrites it with
// 0; this library leaves it alone).
GPUFMM_FMM3D_EXPORT void lfmm3d_(const int64_t* nd, const double* eps, const int64_t* nsource, const double* source,
                                 const int64_t* ifcharge, const double* charge, const int64_t* ifdipole,
                                 const double* dipvec, const int64_t* iper, const int64_t* ifpgh, double* pot,
                                 double* grad, double* hess, const int64_t* ntarg, const double* targ,
                                 const int64_t* ifpghtarg, double* pottarg, double* gradtarg, double* hesstarg,
                                 int64_t* ier) {
  (void)iper;
  Call c("lfmm3d", *nd, *eps, *nsource, source);
  c.has_charge = *ifcharge == 1;
  c.charge = charge;
  c.has_dipole = *ifdipole == 1;
  c.dipvec = dipvec;
  c.at_src = Outputs{std::max<int64_t>(*ifpgh, 0), {pot, grad, hess}};
  c.nt = *ntarg;
  c.trg = targ;
  c.at_trg = Outputs{std::max<int64_t>(*ifpghtarg, 0), {pottarg, gradtarg, hesstarg}};
  *ier = guarded(c);
}

// The wrappers of lfmm3dwrap.f and lfmm3dwrap_vec.f, by the parts of their
// names, lfmm3d_<points>_<sources>_<outputs>[_vec]:
//   points  s: at the sources; t: at the targets; st: both
//   sources c: charge; d: dipvec; cd: charge, dipvec
//   outputs p: pot; g: pot, grad; h: pot, grad, hess
// Arguments: [nd,] eps, nsource, source, <sources>, [<outputs at the
// sources>,] [ntarg, targ, <outputs at the targets>,] ier.
#define GPUFMM_KER_ARGS_c const double *charge,
#define GPUFMM_KER_ARGS_d const double *dipvec,
#define GPUFMM_KER_ARGS_cd const double *charge, const double *dipvec,
#define GPUFMM_KER_SET_c c.has_charge = true; c.charge = charge;
#define GPUFMM_KER_SET_d c.has_dipole = true; c.dipvec = dipvec;
#define GPUFMM_KER_SET_cd GPUFMM_KER_SET_c GPUFMM_KER_SET_d
#define GPUFMM_OUT_ARGS_p(P, G, H) double *P,
#define GPUFMM_OUT_ARGS_g(P, G, H) double *P, double *G,
#define GPUFMM_OUT_ARGS_h(P, G, H) double *P, double *G, double *H,
#define GPUFMM_OUT_SET_p(W, P, G, H) W = Outputs{1, {P, nullptr, nullptr}};
#define GPUFMM_OUT_SET_g(W, P, G, H) W = Outputs{2, {P, G, nullptr}};
#define GPUFMM_OUT_SET_h(W, P, G, H) W = Outputs{3, {P, G, H}};
#define GPUFMM_SRC_ARGS_s(O) GPUFMM_OUT_ARGS_##O(pot, grad, hess)
#define GPUFMM_SRC_ARGS_t(O)
#define GPUFMM_SRC_ARGS_st(O) GPUFMM_SRC_ARGS_s(O)
#define GPUFMM_SRC_SET_s(O) GPUFMM_OUT_SET_##O(c.at_src, pot, grad, hess)
#define GPUFMM_SRC_SET_t(O)
#define GPUFMM_SRC_SET_st(O) GPUFMM_SRC_SET_s(O)
#define GPUFMM_TRG_ARGS_s(O)
#define GPUFMM_TRG_ARGS_t(O) const int64_t *ntarg, const double *targ, GPUFMM_OUT_ARGS_##O(pottarg, gradtarg, hesstarg)
#define GPUFMM_TRG_ARGS_st(O) GPUFMM_TRG_ARGS_t(O)
#define GPUFMM_TRG_SET_s(O)
#define GPUFMM_TRG_SET_t(O) c.nt = *ntarg; c.trg = targ; GPUFMM_OUT_SET_##O(c.at_trg, pottarg, gradtarg, hesstarg)
#define GPUFMM_TRG_SET_st(O) GPUFMM_TRG_SET_t(O)

#define GPUFMM_WRAPPER(E, K, O)                                                                                   \
  GPUFMM_FMM3D_EXPORT void lfmm3d_##E##_##K##_##O##_(const double* eps, const int64_t* nsource,                  \
                                                     const double* source, GPUFMM_KER_ARGS_##K                    \
                                                     GPUFMM_SRC_ARGS_##E(O) GPUFMM_TRG_ARGS_##E(O) int64_t* ier) { \
    Call c("lfmm3d_" #E "_" #K "_" #O, 1, *eps, *nsource, source);                                                \
    GPUFMM_KER_SET_##K GPUFMM_SRC_SET_##E(O) GPUFMM_TRG_SET_##E(O) *ier = guarded(c);                             \
  }                                                                                                               \
  GPUFMM_FMM3D_EXPORT void lfmm3d_##E##_##K##_##O##_vec_(const int64_t* nd, const double* eps,                   \
                                                         const int64_t* nsource, const double* source,            \
                                                         GPUFMM_KER_ARGS_##K GPUFMM_SRC_ARGS_##E(O)               \
                                                         GPUFMM_TRG_ARGS_##E(O) int64_t* ier) {                   \
    Call c("lfmm3d_" #E "_" #K "_" #O "_vec", *nd, *eps, *nsource, source);                                       \
    GPUFMM_KER_SET_##K GPUFMM_SRC_SET_##E(O) GPUFMM_TRG_SET_##E(O) *ier = guarded(c);                             \
  }
#define GPUFMM_WRAPPERS_K(E, K) GPUFMM_WRAPPER(E, K, p) GPUFMM_WRAPPER(E, K, g) GPUFMM_WRAPPER(E, K, h)
#define GPUFMM_WRAPPERS(E) GPUFMM_WRAPPERS_K(E, c) GPUFMM_WRAPPERS_K(E, d) GPUFMM_WRAPPERS_K(E, cd)

GPUFMM_WRAPPERS(s)
GPUFMM_WRAPPERS(t)
GPUFMM_WRAPPERS(st)
