// The part of libgpufmm_fmm3d (docs/fmm3d.md) that every family of FMM3D
// routines shares: a call in FMM3D's terms, its argument checks, the
// process-wide context and LRU plan cache keyed by a hash of the geometry,
// the ier mapping and the guard that keeps exceptions inside the library,
// and the macros that spell FMM3D's wrappers
// <family>_{s,t,st}_{c,d,cd}_{p,g,h}[_vec]. A family (lfmm3d.cpp, the
// Laplace routines) adds its plans, its evaluation and its entry points.
//
// ABI: gfortran's. Names in lower case with a trailing underscore, every
// argument by reference, FMM3D's integer*8 (nd, counts, flags, iper, ier) as
// int64_t, double precision as double, no hidden arguments (no character
// arguments). Arrays as FMM3D lays them out: source(3,n), charge(nd,n),
// dipvec(nd,3,n), pot(nd,n), grad(nd,3,n), hess(nd,6,n) with the Hessian in
// the order xx yy zz xy xz yz.
//
// Plans: one process-wide context (GPU 0 when there is one, else the CPU;
// GPUFMM_FMM3D_BACKEND overrides) and a small LRU cache of plans keyed by
// the geometry (family, mode, counts, coordinate pointers, a hash of every
// coordinate byte, eps, the kernel's parameters), so that a legacy solver
// that calls an FMM3D routine hundreds of times on one geometry builds one
// plan (GPUFMM_FMM3D_CACHE sets the number of plans kept; 0 disables the
// cache).
//
// Nothing here is exported: exports.map keeps only the FMM3D entry points
// and gpufmm_fmm3d.h's functions.
#ifndef GPUFMM_BINDINGS_FMM3D_COMMON_HPP
#define GPUFMM_BINDINGS_FMM3D_COMMON_HPP

#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

#include "gpufmm.h"

#define GPUFMM_FMM3D_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpufmm_fmm3d {

// ---------------------------------------------------------------- failures

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

// Throws the failure of a gpufmm call (its status and last-error message).
void check(gpufmm_status_t s);

// FMM3D's ier of a status (gpufmm_fmm3d.h).
int64_t ier_of(gpufmm_status_t s);

// The ier of the exception being handled (inside a catch), which it also
// records as the thread's last error (gpufmm_fmm3d_last_error) and, unless
// GPUFMM_FMM3D_QUIET is set, prints, both prefixed by `name`.
int64_t ier_of_current_exception(const char* name) noexcept;

// f() for the entry points: never throws; FMM3D's ier (0: success).
template <typename F>
int64_t guarded(const char* name, F f) noexcept {
  try {
    f();
    return 0;
  } catch (...) {
    return ier_of_current_exception(name);
  }
}

// ---------------------------------------------------------------- the calls

// Components per point of each output level: 1 pot, 3 grad, 6 hess.
constexpr int64_t kComponents[3] = {1, 3, 6};

// What is wanted at one set of points: level 0 nothing, 1 pot, 2 + grad,
// 3 + hess (FMM3D's ifpgh), and where it goes (FMM3D's layouts). V: the
// family's value type (double for Laplace).
template <typename V>
struct Outputs {
  int64_t level = 0;
  V* out[3] = {nullptr, nullptr, nullptr};  // pot, grad, hess
};

// One call of an FMM3D routine, in FMM3D's terms.
template <typename V>
struct Call {
  const char* name;
  int64_t nd;
  double eps;
  int64_t ns;
  const double* src;
  bool has_charge = false, has_dipole = false;
  const V* charge = nullptr;
  const V* dipvec = nullptr;
  Outputs<V> at_src;
  int64_t nt = 0;
  const double* trg = nullptr;
  Outputs<V> at_trg;
  double param[2] = {0.0, 0.0};  // the kernel's parameters (none for Laplace), part of the plan's key
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

// A call with its arguments checked: the outputs wanted at the sources and
// at the targets (level 0 where none), the number of targets that count.
template <typename V>
struct Request {
  Outputs<V> at_src, at_trg;
  int64_t nt = 0;
  Mode mode = Mode::kSources;
};

void check_level(int64_t level, const char* flag);

// Throws unless every wanted output of o has an array (names: the
// arguments' names, pot grad hess).
template <typename V>
void check_outputs(const Outputs<V>& o, const char* const names[3]) {
  for (int64_t k = 0; k < o.level; ++k)
    if (o.out[k] == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", names[k], "' is NULL");
}

// Every wanted output of the n points of o, times `factor` (0: zeros), on
// all cores.
template <typename V>
void scale_outputs(const Outputs<V>& o, int64_t nd, int64_t n, double factor) {
  for (int64_t k = 0; k < o.level; ++k) {
    V* v = o.out[k];
    const int64_t len = nd * kComponents[k] * n;
#pragma omp parallel for schedule(static) if (len > (int64_t(1) << 16))
    for (int64_t i = 0; i < len; ++i) v[i] = factor == 0.0 ? V(0) : v[i] * factor;
  }
}

// The checks of every call's scalars (nd, eps, counts, flags, overflow):
// FMM3D checks none of these; gpufmm would refuse most, but the hash of the
// geometry reads the coordinates first. Returns the number of targets that
// count (0 when none are wanted).
int64_t check_scalars(int64_t nd, double eps, int64_t ns, int64_t src_level, int64_t nt, int64_t trg_level);

// Checks c's arguments and settles what is wanted (r). Returns false when
// nothing is left to compute: no outputs wanted, or sources that carry
// nothing (whose outputs it has set to zero).
template <typename V>
bool prepare(const Call<V>& c, Request<V>& r) {
  static const char* const kSrcNames[3] = {"pot", "grad", "hess"};
  static const char* const kTrgNames[3] = {"pottarg", "gradtarg", "hesstarg"};
  r.nt = check_scalars(c.nd, c.eps, c.ns, c.at_src.level, c.nt, c.at_trg.level);
  const bool want_s = c.at_src.level >= 1;
  const bool want_t = r.nt > 0;
  if (c.ns > 0 && c.src == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'source' is NULL");
  if (want_t && c.trg == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'targ' is NULL");
  if (c.has_charge && c.charge == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charge' is NULL");
  if (c.has_dipole && c.dipvec == nullptr) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'dipvec' is NULL");
  r.at_src = c.at_src;
  r.at_trg = c.at_trg;
  if (!want_s) r.at_src.level = 0;
  if (!want_t) r.at_trg.level = 0;
  check_outputs(r.at_src, kSrcNames);
  check_outputs(r.at_trg, kTrgNames);
  if (!want_s && !want_t) return false;
  if (c.ns == 0 || (!c.has_charge && !c.has_dipole)) {  // no sources, or sources that carry nothing
    scale_outputs(r.at_src, c.nd, c.ns, 0.0);
    scale_outputs(r.at_trg, c.nd, r.nt, 0.0);
    return false;
  }
  r.mode = want_s && want_t ? Mode::kBoth : want_s ? Mode::kSources : Mode::kTargets;
  return true;
}

// ---------------------------------------------------------------- the plan cache

// A hash of every byte of n doubles (fmm3d_common.cpp says how).
uint64_t hash_doubles(const double* x, int64_t n, uint64_t seed);

// The families of routines, so that two families' plans of one geometry
// are two entries.
enum class Family { kLaplace };

struct Key {
  Family family;
  Mode mode;
  int64_t ns, nt;
  const double* src;
  const double* trg;
  uint64_t hash;  // of every coordinate byte: a coordinate changed in place is a new geometry
  double eps;
  double param[2];
  bool operator==(const Key& o) const;
};

// The key of a checked call (hashes its coordinates).
template <typename V>
Key key_of(Family family, const Call<V>& c, const Request<V>& r) {
  uint64_t hash = hash_doubles(c.src, 3 * c.ns, static_cast<uint64_t>(r.mode));
  if (r.mode != Mode::kSources) hash = hash_doubles(c.trg, 3 * r.nt, hash);
  return Key{family, r.mode, c.ns, r.nt, c.src, r.mode == Mode::kSources ? nullptr : c.trg, hash, c.eps,
             {c.param[0], c.param[1]}};
}

// The plans of one geometry: a family derives its entry (the plans the mode
// needs, freed by its destructor). Freed when the cache has dropped it and
// the last call using it has returned.
struct Entry {
  Key key;
  explicit Entry(const Key& k) : key(k) {}
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  virtual ~Entry() = default;
};

// The process-wide state: the context, the settings read from the
// environment, and the cache. Built on the first call (thread-safe: a
// function-local static), torn down at exit (plans first, then the context).
class State {
 public:
  State();
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  bool quiet() const { return quiet_; }

  // The context, or the failure of the set-up.
  gpufmm_context_t context() const;

  // The plans for `key`, an entry of type E (built by `make(E&)` on a miss,
  // outside the lock: other calls go on meanwhile).
  template <typename E, typename Make>
  std::shared_ptr<E> plan(const Key& key, Make make) {
    if (std::shared_ptr<Entry> hit = find(key)) return std::static_pointer_cast<E>(hit);  // same key, same family
    auto e = std::make_shared<E>(key);
    make(*e);
    insert(e);
    return e;
  }

  // Drops every plan; returns whether there was any.
  bool clear();

  void stats(int64_t* hits, int64_t* misses, int64_t* plans);

 private:
  void init();
  std::shared_ptr<Entry> find(const Key& key);  // counts a hit or a miss
  void insert(std::shared_ptr<Entry> e);

  gpufmm_status_t status_ = GPUFMM_SUCCESS;
  std::string error_;
  gpufmm_context_t ctx_ = nullptr;
  bool quiet_ = false;
  int64_t capacity_;
  std::mutex mutex_;
  std::list<std::shared_ptr<Entry>> lru_;  // most recently used first
  int64_t hits_ = 0, misses_ = 0;
};

State& state();

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

// Straight into the caller's arrays, set by set: eval(sources, out) (out =
// {pot, grad, hess}, NULL where not wanted) for the sources' and the
// targets' outputs that are wanted, each followed by the family's
// normalization `factor`.
template <typename V, typename Eval>
void evaluate_sets(State& st, const Call<V>& c, const Request<V>& r, double factor, Eval eval) {
  for (const bool sources : {true, false}) {
    const Outputs<V>& o = sources ? r.at_src : r.at_trg;
    if (o.level == 0) continue;
    V* out[3] = {nullptr, nullptr, nullptr};
    for (int64_t k = 0; k < o.level; ++k) out[k] = o.out[k];
    with_memory_retry(st, [&] { eval(sources, out); });
    scale_outputs(o, c.nd, sources ? c.ns : r.nt, factor);
  }
}

}  // namespace gpufmm_fmm3d

// ---------------------------------------------------------------- wrapper macros

// FMM3D's wrappers of a family F (lfmm3d: lfmm3dwrap.f and
// lfmm3dwrap_vec.f), by the parts of their names,
// F_<points>_<sources>_<outputs>[_vec]:
//   points  s: at the sources; t: at the targets; st: both
//   sources c: charge; d: dipvec; cd: charge, dipvec
//   outputs p: pot; g: pot, grad; h: pot, grad, hess
// Arguments: [nd,] eps, <F's parameters,> nsource, source, <sources>,
// [<outputs at the sources>,] [ntarg, targ, <outputs at the targets>,] ier.
// A family defines, before it expands GPUFMM_FMM3D_WRAPPER(F, E, K, O):
//   GPUFMM_FMM3D_VALUE_F        its value type (charges and outputs)
//   GPUFMM_FMM3D_PARAM_ARGS_F   its parameters' arguments after eps (each
//                               followed by a comma; empty: none)
//   GPUFMM_FMM3D_PARAM_SET_F    statements that set c.param from them
//   void run(const gpufmm_fmm3d::Call<value>&)   the evaluation
#define GPUFMM_FMM3D_KER_ARGS_c(V) const V *charge,
#define GPUFMM_FMM3D_KER_ARGS_d(V) const V *dipvec,
#define GPUFMM_FMM3D_KER_ARGS_cd(V) const V *charge, const V *dipvec,
#define GPUFMM_FMM3D_KER_SET_c c.has_charge = true; c.charge = charge;
#define GPUFMM_FMM3D_KER_SET_d c.has_dipole = true; c.dipvec = dipvec;
#define GPUFMM_FMM3D_KER_SET_cd GPUFMM_FMM3D_KER_SET_c GPUFMM_FMM3D_KER_SET_d
#define GPUFMM_FMM3D_OUT_ARGS_p(V, P, G, H) V *P,
#define GPUFMM_FMM3D_OUT_ARGS_g(V, P, G, H) V *P, V *G,
#define GPUFMM_FMM3D_OUT_ARGS_h(V, P, G, H) V *P, V *G, V *H,
#define GPUFMM_FMM3D_OUT_SET_p(W, P, G, H) W.level = 1; W.out[0] = P;
#define GPUFMM_FMM3D_OUT_SET_g(W, P, G, H) W.level = 2; W.out[0] = P; W.out[1] = G;
#define GPUFMM_FMM3D_OUT_SET_h(W, P, G, H) W.level = 3; W.out[0] = P; W.out[1] = G; W.out[2] = H;
#define GPUFMM_FMM3D_SRC_ARGS_s(V, O) GPUFMM_FMM3D_OUT_ARGS_##O(V, pot, grad, hess)
#define GPUFMM_FMM3D_SRC_ARGS_t(V, O)
#define GPUFMM_FMM3D_SRC_ARGS_st(V, O) GPUFMM_FMM3D_SRC_ARGS_s(V, O)
#define GPUFMM_FMM3D_SRC_SET_s(O) GPUFMM_FMM3D_OUT_SET_##O(c.at_src, pot, grad, hess)
#define GPUFMM_FMM3D_SRC_SET_t(O)
#define GPUFMM_FMM3D_SRC_SET_st(O) GPUFMM_FMM3D_SRC_SET_s(O)
#define GPUFMM_FMM3D_TRG_ARGS_s(V, O)
#define GPUFMM_FMM3D_TRG_ARGS_t(V, O) \
  const int64_t *ntarg, const double *targ, GPUFMM_FMM3D_OUT_ARGS_##O(V, pottarg, gradtarg, hesstarg)
#define GPUFMM_FMM3D_TRG_ARGS_st(V, O) GPUFMM_FMM3D_TRG_ARGS_t(V, O)
#define GPUFMM_FMM3D_TRG_SET_s(O)
#define GPUFMM_FMM3D_TRG_SET_t(O) \
  c.nt = *ntarg; c.trg = targ; GPUFMM_FMM3D_OUT_SET_##O(c.at_trg, pottarg, gradtarg, hesstarg)
#define GPUFMM_FMM3D_TRG_SET_st(O) GPUFMM_FMM3D_TRG_SET_t(O)

// The arguments after eps's (and nd's) and the body of one wrapper.
#define GPUFMM_FMM3D_WRAPPER_ARGS(F, E, K, O)                                                        \
  GPUFMM_FMM3D_PARAM_ARGS_##F const int64_t *nsource, const double *source,                         \
      GPUFMM_FMM3D_KER_ARGS_##K(GPUFMM_FMM3D_VALUE_##F) GPUFMM_FMM3D_SRC_ARGS_##E(GPUFMM_FMM3D_VALUE_##F, O) \
          GPUFMM_FMM3D_TRG_ARGS_##E(GPUFMM_FMM3D_VALUE_##F, O) int64_t *ier
#define GPUFMM_FMM3D_WRAPPER_BODY(F, E, K, O, NAME, ND)                                                     \
  gpufmm_fmm3d::Call<GPUFMM_FMM3D_VALUE_##F> c(NAME, ND, *eps, *nsource, source);                            \
  GPUFMM_FMM3D_PARAM_SET_##F GPUFMM_FMM3D_KER_SET_##K GPUFMM_FMM3D_SRC_SET_##E(O) GPUFMM_FMM3D_TRG_SET_##E(O) \
      *ier = gpufmm_fmm3d::guarded(c.name, [&] { run(c); });

// F_E_K_O_ and F_E_K_O_vec_.
#define GPUFMM_FMM3D_WRAPPER(F, E, K, O)                                                                     \
  GPUFMM_FMM3D_EXPORT void F##_##E##_##K##_##O##_(const double* eps, GPUFMM_FMM3D_WRAPPER_ARGS(F, E, K, O)) { \
    GPUFMM_FMM3D_WRAPPER_BODY(F, E, K, O, #F "_" #E "_" #K "_" #O, 1)                                        \
  }                                                                                                          \
  GPUFMM_FMM3D_EXPORT void F##_##E##_##K##_##O##_vec_(const int64_t* nd, const double* eps,                  \
                                                      GPUFMM_FMM3D_WRAPPER_ARGS(F, E, K, O)) {               \
    GPUFMM_FMM3D_WRAPPER_BODY(F, E, K, O, #F "_" #E "_" #K "_" #O "_vec", *nd)                               \
  }

#endif  // GPUFMM_BINDINGS_FMM3D_COMMON_HPP
