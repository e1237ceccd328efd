#include "core/handles.hpp"

#include <mutex>
#include <unordered_map>

namespace gpufmm {
namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<const void*, HandleKind>& registry() {
  static auto* r = new std::unordered_map<const void*, HandleKind>();  // never destroyed: safe at exit
  return *r;
}
}  // namespace

const char* handle_kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::Context: return "context";
    case HandleKind::Array: return "array";
    case HandleKind::TreePlan: return "tree";
    case HandleKind::LaplacePlan: return "Laplace plan";
  }
  return "unknown";
}

void register_handle(const void* p, HandleKind kind) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[p] = kind;
}

bool unregister_handle(const void* p, HandleKind kind) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(p);
  if (it == registry().end() || it->second != kind) return false;
  registry().erase(it);
  return true;
}

bool handle_is_live(const void* p, HandleKind kind) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(p);
  return it != registry().end() && it->second == kind;
}

}  // namespace gpufmm
