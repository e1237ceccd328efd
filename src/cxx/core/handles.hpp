// A registry of live handles: every object handed out through the C API is
// registered on creation and removed on destroy, so a NULL, foreign or
// destroyed handle is detected (GPUFMM_ERROR_INVALID_HANDLE) instead of being
// dereferenced.
#pragma once

#include "core/error.hpp"

namespace gpufmm {

enum class HandleKind { Context, Array, TreePlan, LaplacePlan };

const char* handle_kind_name(HandleKind kind);

void register_handle(const void* p, HandleKind kind);
// Removes p; returns false if it was not registered as `kind`.
bool unregister_handle(const void* p, HandleKind kind);
bool handle_is_live(const void* p, HandleKind kind);

// Returns p as T* if it is a live handle of `kind`, else throws INVALID_HANDLE
// naming the argument.
template <class T>
T* checked_handle(T* p, HandleKind kind, const char* argname) {
  if (p == nullptr)
    fail(GPUFMM_ERROR_INVALID_HANDLE, handle_kind_name(kind), " handle '", argname, "' is NULL");
  if (!handle_is_live(p, kind))
    fail(GPUFMM_ERROR_INVALID_HANDLE, handle_kind_name(kind), " handle '", argname,
         "' is not a live handle (never created, or already destroyed)");
  return p;
}

}  // namespace gpufmm
