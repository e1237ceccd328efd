// C thunks: status strings, version, contexts. No math here: argument
// checks, then the core; every exception becomes a status (gpufmm::guard).
#include <omp.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "core/context.hpp"
#include "core/error.hpp"
#include "core/handles.hpp"
#include "gpufmm.h"

#ifdef GPUFMM_HAVE_CUDA
#include "core/cuda_backend.hpp"
#endif

using namespace gpufmm;

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) {
        auto s = line.substr(pos + 1);
        s.erase(0, s.find_first_not_of(" \t"));
        return s;
      }
    }
  }
  return "host CPU";
}

}  // namespace

extern "C" {

const char* gpufmm_status_string(gpufmm_status_t s) {
  switch (enum_arg(s)) {  // any int: read as one, never loaded as the enum
    case GPUFMM_SUCCESS: return "GPUFMM_SUCCESS: no error";
    case GPUFMM_ERROR_INVALID_ARGUMENT: return "GPUFMM_ERROR_INVALID_ARGUMENT: an argument is out of its allowed range";
    case GPUFMM_ERROR_INVALID_HANDLE: return "GPUFMM_ERROR_INVALID_HANDLE: a handle is NULL, was never created, or was destroyed";
    case GPUFMM_ERROR_OUT_OF_MEMORY: return "GPUFMM_ERROR_OUT_OF_MEMORY: a host or device allocation failed";
    case GPUFMM_ERROR_NO_DEVICE: return "GPUFMM_ERROR_NO_DEVICE: the requested GPU does not exist";
    case GPUFMM_ERROR_DEVICE: return "GPUFMM_ERROR_DEVICE: a CUDA, cuBLAS or cuFFT call failed";
    case GPUFMM_ERROR_NOT_SUPPORTED: return "GPUFMM_ERROR_NOT_SUPPORTED: not supported by this build or for this data type";
    case GPUFMM_ERROR_SIZE_MISMATCH: return "GPUFMM_ERROR_SIZE_MISMATCH: shapes or element counts disagree";
    case GPUFMM_ERROR_TYPE_MISMATCH: return "GPUFMM_ERROR_TYPE_MISMATCH: data types disagree or are not allowed here";
    case GPUFMM_ERROR_INTERNAL: return "GPUFMM_ERROR_INTERNAL: internal error in gpufmm (please report it)";
    case GPUFMM_ERROR_ACCURACY: return "GPUFMM_ERROR_ACCURACY: the requested accuracy cannot be met for this input in this precision";
    case GPUFMM_ERROR_COMMUNICATION: return "GPUFMM_ERROR_COMMUNICATION: an MPI call failed";
  }
  return "GPUFMM_ERROR_UNKNOWN: not a gpufmm status value";
}

const char* gpufmm_last_error_message(void) { return last_error().c_str(); }

const char* gpufmm_version(int* major, int* minor, int* patch) {
  if (major) *major = GPUFMM_VERSION_MAJOR;
  if (minor) *minor = GPUFMM_VERSION_MINOR;
  if (patch) *patch = GPUFMM_VERSION_PATCH;
  return GPUFMM_VERSION_STRING;
}

int gpufmm_cuda_built(void) {
#ifdef GPUFMM_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

gpufmm_status_t gpufmm_device_count(int* count) {
  return guard("gpufmm_device_count", [&] {
    require_out(count, "count");
#ifdef GPUFMM_HAVE_CUDA
    *count = cuda::device_count();
#else
    *count = 0;
#endif
  });
}

gpufmm_status_t gpufmm_context_create(int device, gpufmm_context_t* ctx) {
  return guard("gpufmm_context_create", [&] {
    require_out(ctx, "ctx");
    require(device >= GPUFMM_DEVICE_DEFAULT, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'device' = ", device,
            " is not a GPU ordinal (>= 0), GPUFMM_DEVICE_CPU (-1) or GPUFMM_DEVICE_DEFAULT (-2)");
    int ndev = 0;
#ifdef GPUFMM_HAVE_CUDA
    ndev = cuda::device_count();
#endif
    if (device == GPUFMM_DEVICE_DEFAULT) device = ndev > 0 ? 0 : GPUFMM_DEVICE_CPU;
    if (device >= 0) {
      if (!gpufmm_cuda_built())
        fail(GPUFMM_ERROR_NOT_SUPPORTED, "GPU ", device,
             " requested but this gpufmm was built without CUDA (use GPUFMM_DEVICE_CPU)");
      if (device >= ndev)
        fail(GPUFMM_ERROR_NO_DEVICE, "GPU ", device, " requested but ", ndev, " CUDA device(s) are visible");
    }
    auto c = std::make_unique<Context>();
    if (device >= 0) {
#ifdef GPUFMM_HAVE_CUDA
      c->backend = GPUFMM_BACKEND_CUDA;
      cuda::context_init(*c, device);
#endif
    }
    try {
      c->handle = register_handle(c.get(), HandleKind::Context);
    } catch (...) {
#ifdef GPUFMM_HAVE_CUDA
      if (c->on_gpu()) cuda::context_release(*c);
#endif
      throw;
    }
    *ctx = static_cast<gpufmm_context_t>(c.release()->handle);
  });
}

gpufmm_status_t gpufmm_context_destroy(gpufmm_context_t ctx) {
  if (ctx == nullptr) return GPUFMM_SUCCESS;
  return guard("gpufmm_context_destroy", [&] {
    // Once no call runs on the context, no child can appear.
    auto* c = static_cast<Context*>(retire_handle(ctx, HandleKind::Context, "ctx", [](void* obj) {
      const long long n = static_cast<Context*>(obj)->children.load();
      require(n == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "the context still owns ", n,
              " live object(s) (arrays, trees or plans): destroy them first");
    }));
#ifdef GPUFMM_HAVE_CUDA
    if (c->on_gpu()) cuda::context_release(*c);
#endif
    delete c;
  });
}

gpufmm_status_t gpufmm_context_backend(gpufmm_context_t ctx, gpufmm_backend_t* backend) {
  return guard("gpufmm_context_backend", [&] {
    Context* c = checked_context(ctx);
    require_out(backend, "backend");
    *backend = c->backend;
  });
}

gpufmm_status_t gpufmm_context_device_info(gpufmm_context_t ctx, gpufmm_device_info_t* info) {
  return guard("gpufmm_context_device_info", [&] {
    Context* c = checked_context(ctx);
    require_out(info, "info");
    gpufmm_device_info_t out;
    std::memset(&out, 0, sizeof out);
    if (c->on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
      cuda::device_info(c->device, &out);
#endif
    } else {
      std::string name = cpu_model_name();
      std::strncpy(out.name, name.c_str(), sizeof(out.name) - 1);
      out.backend = GPUFMM_BACKEND_CPU;
      out.device = GPUFMM_DEVICE_CPU;
      out.multiprocessors = omp_get_num_procs();
      out.total_memory = host_physical_memory();
      out.free_memory = host_available_memory();
    }
    *info = out;
  });
}

gpufmm_status_t gpufmm_context_synchronize(gpufmm_context_t ctx) {
  return guard("gpufmm_context_synchronize", [&] { backend_synchronize(*checked_context(ctx)); });
}

gpufmm_status_t gpufmm_context_stream(gpufmm_context_t ctx, void** stream) {
  return guard("gpufmm_context_stream", [&] {
    Context* c = checked_context(ctx);
    require_out(stream, "stream");
    *stream = c->stream;
  });
}

}  // extern "C"
