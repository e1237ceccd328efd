// The registry of live handles. A public handle (gpufmm_array_t, ...) is not
// the object's address but an opaque id, issued once from a 64-bit counter
// and never again: a NULL, foreign or destroyed handle is refused
// (GPUFMM_ERROR_INVALID_HANDLE) whatever the allocator later does with the
// object's memory.
//
// A handle looked up inside a C API call (gpufmm::guard) is leased until
// that call returns. Destroy retires the handle: lookups fail at once, then
// it waits for the leases of the calls already running, so no call ever sees
// a freed object. Outside a C API call (the C++ tests and benchmarks reach
// objects through the checked_* helpers) nothing is leased: the caller owns
// the lifetime.
#pragma once

#include <functional>

#include "core/error.hpp"

namespace gpufmm {

enum class HandleKind { Context, Array, TreePlan, LaplacePlan, TreecodePlan, FftPlan };

const char* handle_kind_name(HandleKind kind);

// Registers obj and returns its new public handle.
void* register_handle(void* obj, HandleKind kind);
// The object of a live handle of `kind` (leased inside a C API call); else
// throws INVALID_HANDLE naming the argument.
void* lease_handle(const void* handle, HandleKind kind, const char* argname);
// Makes a live handle of `kind` invalid, waits until no running call holds
// it, runs `check` (which may throw: the handle is then live again and the
// error propagates) and returns the object, which the caller frees. Throws
// INVALID_HANDLE naming the argument if the handle is not live. Must not be
// called on a handle the calling thread holds.
void* retire_handle(const void* handle, HandleKind kind, const char* argname,
                    const std::function<void(void*)>& check = {});

template <class T, class H>
T* checked_handle(H* handle, HandleKind kind, const char* argname) {
  return static_cast<T*>(lease_handle(handle, kind, argname));
}

template <class T, class H>
T* retired_handle(H* handle, HandleKind kind, const char* argname) {
  return static_cast<T*>(retire_handle(handle, kind, argname));
}

}  // namespace gpufmm
