// Errors inside the library are C++ exceptions of type gpufmm::Error; the C
// thunks (bindings/c) turn them into a status and a thread-local message, so
// no exception ever crosses the C boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/gpufmm_types.h"

namespace gpufmm {

class Error : public std::runtime_error {
 public:
  Error(gpufmm_status_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  gpufmm_status_t status() const noexcept { return status_; }

 private:
  gpufmm_status_t status_;
};

namespace detail {
inline void append(std::ostringstream&) {}
template <class A, class... R>
void append(std::ostringstream& os, A&& a, R&&... r) {
  os << std::forward<A>(a);
  append(os, std::forward<R>(r)...);
}
}  // namespace detail

// fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'rank' = ", rank, " is not in 1..3")
template <class... A>
[[noreturn]] void fail(gpufmm_status_t status, A&&... parts) {
  std::ostringstream os;
  detail::append(os, std::forward<A>(parts)...);
  throw Error(status, os.str());
}

template <class... A>
void require(bool ok, gpufmm_status_t status, A&&... parts) {
  if (!ok) fail(status, std::forward<A>(parts)...);
}

// Sets the calling thread's last error message (used by the thunks), and
// reads it ("" if none yet; gpufmm_last_error_message).
void set_last_error(gpufmm_status_t status, const std::string& message);
const std::string& last_error() noexcept;

namespace detail {
// A C API call on the calling thread begins / ends: the handles it looked up
// are leased from begin_call to end_call (core/handles.hpp).
size_t begin_call() noexcept;
void end_call(size_t mark) noexcept;

struct CallScope {
  size_t mark = begin_call();
  ~CallScope() { end_call(mark); }
};
}  // namespace detail

// Runs f, which allocates host memory for `what` (about `bytes` bytes, 0:
// not known): a std::bad_alloc becomes OUT_OF_MEMORY naming it (issue 14),
// "cannot allocate host memory for the Laplace FMM workspace (about
// 4.3e+09 bytes)". Code inside an OpenMP parallel region must not allocate
// what can fail (an exception may not leave the region): it allocates
// before, in such a call.
// As backend_alloc, a request beyond the host's physical memory is refused
// up front: Linux overcommits, and such a request would "succeed" and have
// the process killed when its pages are touched.
long long host_physical_memory();  // core/context.cpp

template <class F>
auto allocating(const char* what, double bytes, F&& f) -> decltype(f()) {
  auto out_of_memory = [&](const char* why) {
    std::ostringstream os;
    os << "cannot allocate host memory for " << what;
    if (bytes > 0) os << " (about " << bytes << " bytes)";
    os << why;
    return Error(GPUFMM_ERROR_OUT_OF_MEMORY, os.str());
  };
  const double phys = double(host_physical_memory());
  if (phys > 0 && bytes > phys) throw out_of_memory(": more than the host's physical memory");
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw out_of_memory("");
  }
}

// Runs f and converts any exception into a status and last-error message.
// `where` is the C function's name, prefixed to the message. The handles f
// looks up stay leased until it returns.
template <class F>
gpufmm_status_t guard(const char* where, F&& f) noexcept {
  const detail::CallScope call;
  try {
    f();
    return GPUFMM_SUCCESS;
  } catch (const Error& e) {
    set_last_error(e.status(), std::string(where) + ": " + e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    // Allocations that can be large are named where they happen (allocating);
    // this is the rest, small bookkeeping.
    set_last_error(GPUFMM_ERROR_OUT_OF_MEMORY, std::string(where) + ": host memory allocation failed (std::bad_alloc)");
    return GPUFMM_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(GPUFMM_ERROR_INTERNAL, std::string(where) + ": internal error: " + e.what());
    return GPUFMM_ERROR_INTERNAL;
  } catch (...) {
    set_last_error(GPUFMM_ERROR_INTERNAL, std::string(where) + ": internal error (unknown exception)");
    return GPUFMM_ERROR_INTERNAL;
  }
}

// The int a C or Fortran caller passed for an enum-typed parameter, read
// from its bytes: an out-of-range value (42) loaded as the enum is undefined
// behaviour in C++, so every enum argument is validated as an int first and
// converted only then.
template <class E>
int enum_arg(const E& e) {
  static_assert(std::is_enum<E>::value && sizeof(E) == sizeof(int), "an enum of the C API");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Checks a 0/1 flag field of an options struct, named `field`.
inline void require_flag(int v, const char* field) {
  require(v == 0 || v == 1, GPUFMM_ERROR_INVALID_ARGUMENT, "options field '", field, "' = ", v,
          " is neither 0 nor 1");
}

// Checks an output pointer argument.
template <class P>
void require_out(P* p, const char* name) {
  require(p != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "output argument '", name, "' is NULL");
}

}  // namespace gpufmm
