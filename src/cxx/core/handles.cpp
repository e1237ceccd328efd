#include "core/handles.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace gpufmm {
namespace {

static_assert(sizeof(uintptr_t) >= 8, "handle ids are 64-bit: a 32-bit counter could wrap");

struct Entry {
  HandleKind kind;
  void* obj;
  long users = 0;         // leases held by running calls
  bool retiring = false;  // destroy is waiting: no new leases
};

struct Registry {
  std::mutex mutex;
  std::condition_variable released;  // a retiring entry lost its last user
  std::unordered_map<uintptr_t, Entry> live;
  uintptr_t next = 1;  // 0 is NULL
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: safe at exit
  return *r;
}

// The leases of the calling thread's running C API calls (innermost last),
// and how many calls are running on it.
thread_local std::vector<uintptr_t> t_leases;
thread_local int t_calls = 0;

uintptr_t id_of(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

[[noreturn]] void not_live(HandleKind kind, const char* argname) {
  fail(GPUFMM_ERROR_INVALID_HANDLE, handle_kind_name(kind), " handle '", argname,
       "' is not a live handle (never created, or already destroyed)");
}

Entry& live_entry(Registry& r, const void* handle, HandleKind kind, const char* argname) {
  if (handle == nullptr) fail(GPUFMM_ERROR_INVALID_HANDLE, handle_kind_name(kind), " handle '", argname, "' is NULL");
  auto it = r.live.find(id_of(handle));
  if (it == r.live.end() || it->second.kind != kind || it->second.retiring) not_live(kind, argname);
  return it->second;
}

}  // namespace

namespace detail {
size_t begin_call() noexcept {
  ++t_calls;
  return t_leases.size();
}

void end_call(size_t mark) noexcept {
  --t_calls;
  if (t_leases.size() == mark) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  bool wake = false;
  for (size_t i = mark; i < t_leases.size(); ++i) {
    Entry& e = r.live.at(t_leases[i]);  // a leased entry is never erased
    if (--e.users == 0 && e.retiring) wake = true;
  }
  t_leases.resize(mark);
  if (wake) r.released.notify_all();
}
}  // namespace detail

const char* handle_kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::Context: return "context";
    case HandleKind::Array: return "array";
    case HandleKind::TreePlan: return "tree";
    case HandleKind::LaplacePlan: return "Laplace plan";
    case HandleKind::TreecodePlan: return "treecode plan";
    case HandleKind::FftPlan: return "FFT plan";
  }
  return "unknown";
}

void* register_handle(void* obj, HandleKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const uintptr_t id = r.next++;
  r.live.emplace(id, Entry{kind, obj});
  return reinterpret_cast<void*>(id);
}

void* lease_handle(const void* handle, HandleKind kind, const char* argname) {
  Registry& r = registry();
  if (t_calls > 0) t_leases.reserve(t_leases.size() + 1);  // may throw: before the count changes
  std::lock_guard<std::mutex> lock(r.mutex);
  Entry& e = live_entry(r, handle, kind, argname);
  if (t_calls > 0) {
    ++e.users;
    t_leases.push_back(id_of(handle));
  }
  return e.obj;
}

void* retire_handle(const void* handle, HandleKind kind, const char* argname,
                    const std::function<void(void*)>& check) {
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mutex);
  Entry& e = live_entry(r, handle, kind, argname);
  e.retiring = true;
  r.released.wait(lock, [&] { return e.users == 0; });
  if (check) {
    try {
      check(e.obj);
    } catch (...) {
      e.retiring = false;
      throw;
    }
  }
  void* obj = e.obj;
  r.live.erase(id_of(handle));
  return obj;
}

}  // namespace gpufmm
