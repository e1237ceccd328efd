// The part of libgpufmm_fmm3d every family of FMM3D routines shares
// (fmm3d_common.hpp): failures and ier, the argument checks, the hash of the
// geometry, the process-wide state and its plan cache, and the functions of
// gpufmm_fmm3d.h.
#include "fmm3d_common.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "gpufmm_fmm3d.h"

namespace gpufmm_fmm3d {

namespace {

constexpr int64_t kDefaultCacheSize = 4;
constexpr int64_t kMaxCacheSize = 1024;

thread_local std::string t_last_error;

}  // namespace

// ---------------------------------------------------------------- failures

void check(gpufmm_status_t s) {
  if (s != GPUFMM_SUCCESS) throw Failure{s, gpufmm_last_error_message()};
}

int64_t ier_of(gpufmm_status_t s) {
  if (s == GPUFMM_SUCCESS) return 0;
  if (s == GPUFMM_ERROR_OUT_OF_MEMORY) return GPUFMM_FMM3D_IER_ALLOC;
  return GPUFMM_FMM3D_IER_BASE + static_cast<int64_t>(s);
}

int64_t ier_of_current_exception(const char* name) noexcept {
  gpufmm_status_t status = GPUFMM_ERROR_INTERNAL;
  std::string message;
  try {
    throw;
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
    t_last_error = std::string(name) + ": " + message;
    if (!state().quiet()) std::fprintf(stderr, "gpufmm_fmm3d: %s (ier = %lld)\n", t_last_error.c_str(), static_cast<long long>(ier));
  } catch (...) {
  }
  return ier;
}

// ---------------------------------------------------------------- the calls

void check_level(int64_t level, const char* flag) {
  if (level > 3) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument '", flag, "' = ", level, " is not in 0..3");
}

int64_t check_scalars(int64_t nd, double eps, int64_t ns, int64_t src_level, int64_t nt, int64_t trg_level) {
  if (nd < 1 || nd > INT_MAX) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nd' = ", nd, " is not in 1..", INT_MAX);
  if (!(eps > 0.0 && eps < 1.0)) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'eps' = ", eps, " is not in (0, 1)");
  if (ns < 0) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'nsource' = ", ns, " is negative");
  check_level(src_level, "ifpgh");
  check_level(trg_level, "ifpghtarg");
  if (trg_level >= 1 && nt < 0) fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'ntarg' = ", nt, " is negative");
  const int64_t counted = trg_level >= 1 && nt > 0 ? nt : 0;
  if (ns > INT64_MAX / 6 / nd - counted)
    fail(GPUFMM_ERROR_INVALID_ARGUMENT, "arguments 'nd' = ", nd, ", 'nsource' = ", ns, " and 'ntarg' = ", counted,
         ": the outputs' sizes overflow 64 bits");
  return counted;
}

// ---------------------------------------------------------------- the plan cache

// A hash of every byte of n doubles: blocks of kHashBlock words, each
// hashed in four independent lanes of a multiply-rotate round, on all cores;
// the blocks' hashes are then mixed in order and the sum avalanched, so the
// value does not depend on the number of threads. O(n), well under a
// millisecond for 10^6 points on 16 cores, against seconds for a plan.
namespace {

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

}  // namespace

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

bool Key::operator==(const Key& o) const {
  return family == o.family && mode == o.mode && ns == o.ns && nt == o.nt && src == o.src && trg == o.trg &&
         hash == o.hash && std::memcmp(&eps, &o.eps, sizeof eps) == 0 && std::memcmp(param, o.param, sizeof param) == 0;
}

State::State() : capacity_(kDefaultCacheSize) {
  try {
    init();
  } catch (const Failure& f) {
    status_ = f.status;
    error_ = f.message;
  }
}

State::~State() {
  clear();
  if (ctx_ != nullptr) gpufmm_context_destroy(ctx_);
}

gpufmm_context_t State::context() const {
  if (status_ != GPUFMM_SUCCESS) throw Failure{status_, error_};
  return ctx_;
}

std::shared_ptr<Entry> State::find(const Key& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if ((*it)->key == key) {
      lru_.splice(lru_.begin(), lru_, it);
      ++hits_;
      return lru_.front();
    }
  }
  ++misses_;
  return nullptr;
}

void State::insert(std::shared_ptr<Entry> e) {
  if (capacity_ <= 0) return;
  std::list<std::shared_ptr<Entry>> dropped;  // freed after the lock is released
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.push_front(std::move(e));
  while (static_cast<int64_t>(lru_.size()) > capacity_) dropped.splice(dropped.end(), lru_, std::prev(lru_.end()));
}

bool State::clear() {
  std::list<std::shared_ptr<Entry>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(lru_);
  }
  return !dropped.empty();
}

void State::stats(int64_t* hits, int64_t* misses, int64_t* plans) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (hits) *hits = hits_;
  if (misses) *misses = misses_;
  if (plans) *plans = static_cast<int64_t>(lru_.size());
}

void State::init() {
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

State& state() {
  static State s;
  return s;
}

}  // namespace gpufmm_fmm3d

// ---------------------------------------------------------------- entry points (gpufmm_fmm3d.h)

GPUFMM_FMM3D_EXPORT void gpufmm_fmm3d_cache_clear(void) { gpufmm_fmm3d::state().clear(); }

GPUFMM_FMM3D_EXPORT void gpufmm_fmm3d_cache_stats(int64_t* hits, int64_t* misses, int64_t* plans) {
  gpufmm_fmm3d::state().stats(hits, misses, plans);
}

GPUFMM_FMM3D_EXPORT const char* gpufmm_fmm3d_last_error(void) { return gpufmm_fmm3d::t_last_error.c_str(); }
