// User kernels on the GPU: NVRTC compiles the library's near-field kernel
// templates with the user's expressions (user_kernel.cuh).
#include "cuda/nearfield/user_kernel.cuh"

#include <nvrtc.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/nearfield/user_kernel_headers.hpp"

namespace gpufmm {
namespace nearfield {
namespace cuda {

using gpufmm::cuda::check;
using gpufmm::cuda::clear_last_error;

namespace {

// The standard headers that the embedded headers include, as NVRTC gets
// them: it has the CUDA math functions and the runtime's types built in and
// no host C++ library. The fixed-width integers are the host's (LP64), so
// that kernel arguments have the layout the host passes.
const char* const kStdHeaders[][2] = {
    {"cstdint",
     "#pragma once\n"
     "typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;\n"
     "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;\n"
     "typedef unsigned long uint64_t;\n"
     "namespace std { using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t; using ::uint8_t;\n"
     "using ::uint16_t; using ::uint32_t; using ::uint64_t; }\n"},
    {"cmath", "#pragma once\n"},
    {"math.h", "#pragma once\n"},
    {"cuda_runtime.h", "#pragma once\n"},
};

const char* real_name(gpufmm_dtype_t precision) { return precision == GPUFMM_FLOAT32 ? "float" : "double"; }

// The kernel templates' instances, in the order of UserKernels' fields
// (direct[0], direct[1], p2p[0], p2p[1]).
std::vector<std::string> instances(gpufmm_dtype_t precision) {
  const std::string T = real_name(precision);
  std::vector<std::string> out;
  for (const char* name : {"gpufmm::nearfield::cuda::direct_kernel", "gpufmm::nearfield::cuda::k_p2p_bpb"})
    for (const char* g : {"false", "true"})
      out.push_back(std::string("&") + name + "<gpufmm_user::Kernel, " + T + ", true, false, " + g + ">");
  return out;
}

void nvrtc_check(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS) fail(GPUFMM_ERROR_DEVICE, call, " failed: ", nvrtcGetErrorString(r));
}

// An NVRTC program, destroyed on scope exit.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) (void)nvrtcDestroyProgram(&p);
  }
};

// The architecture option for the current device: its real architecture
// (CUBIN) when this NVRTC knows it, else the newest virtual one NVRTC knows
// below it (PTX, which the driver compiles).
std::string architecture(bool& cubin) {
  int dev = 0, major = 0, minor = 0;
  GPUFMM_CUDA_CHECK(cudaGetDevice(&dev));
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  const int want = 10 * major + minor;
  int n = 0;
  nvrtc_check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(n));
  if (n > 0) nvrtc_check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  cubin = std::find(archs.begin(), archs.end(), want) != archs.end();
  if (cubin) return "--gpu-architecture=sm_" + std::to_string(want);
  int best = 0;
  for (int a : archs)
    if (a <= want) best = std::max(best, a);
  require(best > 0, GPUFMM_ERROR_NOT_SUPPORTED, "user kernels: NVRTC cannot compile for compute capability ",
          major, ".", minor);
  return "--gpu-architecture=compute_" + std::to_string(best);
}

struct Module {
  cudaLibrary_t library = nullptr;
  UserKernels kernels;
};

// Compiles u in `precision` and loads the module on the current device.
Module compile(const kernels::UserKernel& u, gpufmm_dtype_t precision) {
  std::vector<const char*> names, texts;
  for (const auto& h : kStdHeaders) names.push_back(h[0]), texts.push_back(h[1]);
  for (int i = 0; i < kNumUserKernelHeaders; ++i)
    names.push_back(kUserKernelHeaders[i].name), texts.push_back(kUserKernelHeaders[i].text);
  const std::string src = user_kernel_source(u, precision);
  Program prog;
  nvrtc_check(nvrtcCreateProgram(&prog.p, src.c_str(), "gpufmm_user_kernel.cu", int(names.size()), texts.data(),
                                 names.data()),
              "nvrtcCreateProgram");
  const std::vector<std::string> inst = instances(precision);
  for (const std::string& e : inst) nvrtc_check(nvrtcAddNameExpression(prog.p, e.c_str()), "nvrtcAddNameExpression");
  bool cubin = false;
  const std::string arch = architecture(cubin);
  const char* opts[] = {arch.c_str(), "-std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog.p, 2, opts);
  if (r == NVRTC_ERROR_COMPILATION) {
    size_t n = 0;
    nvrtc_check(nvrtcGetProgramLogSize(prog.p, &n), "nvrtcGetProgramLogSize");
    std::string log(n, '\0');
    if (n > 0) nvrtc_check(nvrtcGetProgramLog(prog.p, &log[0]), "nvrtcGetProgramLog");
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    fail(GPUFMM_ERROR_INVALID_ARGUMENT, "kernel (user): the expressions 'value_expr' = \"", u.value_expr,
         "\" and 'deriv_expr' = \"", u.deriv_expr, "\" do not compile (", real_name(precision),
         "; NVRTC log):\n", log);
  }
  nvrtc_check(r, "nvrtcCompileProgram");
  size_t size = 0;
  nvrtc_check(cubin ? nvrtcGetCUBINSize(prog.p, &size) : nvrtcGetPTXSize(prog.p, &size), "nvrtcGet(CUBIN|PTX)Size");
  std::vector<char> image(size);
  nvrtc_check(cubin ? nvrtcGetCUBIN(prog.p, image.data()) : nvrtcGetPTX(prog.p, image.data()), "nvrtcGet(CUBIN|PTX)");
  Module m;
  clear_last_error();
  GPUFMM_CUDA_CHECK(cudaLibraryLoadData(&m.library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t* f[4] = {&m.kernels.direct[0], &m.kernels.direct[1], &m.kernels.p2p[0], &m.kernels.p2p[1]};
  for (size_t i = 0; i < inst.size(); ++i) {
    const char* lowered = nullptr;
    nvrtc_check(nvrtcGetLoweredName(prog.p, inst[i].c_str(), &lowered), "nvrtcGetLoweredName");
    const cudaError_t e = cudaLibraryGetKernel(f[i], m.library, lowered);
    if (e != cudaSuccess) {
      (void)cudaLibraryUnload(m.library);
      check(e, "cudaLibraryGetKernel (user kernel)");
    }
  }
  return m;
}

// The modules of one context.
struct Cache {
  std::mutex mutex;
  std::map<std::string, Module> modules;
};

Cache& cache_of(Context& ctx) {
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (ctx.user_kernels == nullptr) ctx.user_kernels = new Cache;
  return *static_cast<Cache*>(ctx.user_kernels);
}

}  // namespace

std::string user_kernel_source(const kernels::UserKernel& u, gpufmm_dtype_t precision) {
  std::string s;
  s += "// A user kernel (GPUFMM_KERNEL_USER) in the near-field kernels of gpufmm.\n";
  s += "#include <cstdint>\n#include \"kernels/radial.hpp\"\n";
  s += "#include \"cuda/nearfield/direct_kernel.cuh\"\n#include \"cuda/nearfield/p2p.cuh\"\n";
  s += "namespace gpufmm_user {\n";
  s += std::string("typedef ") + real_name(precision) + " real;\n";
  s += "__device__ real g(real r, const real* p) {\n  return real(\n" + u.value_expr + "\n  );\n}\n";
  s += "__device__ real dg(real r, const real* p) {\n  return real(\n" + u.deriv_expr + "\n  );\n}\n";
  s += "struct Fn : gpufmm::kernels::RadialParams<real> {\n";
  s += "  __device__ real value(real r) const { return g(r, this->p); }\n";
  s += "  __device__ real deriv(real r) const { return dg(r, this->p); }\n};\n";
  s += std::string("typedef gpufmm::kernels::Radial<real, Fn, ") + (u.r0_included ? "true" : "false") +
       "> Kernel;\n";
  s += "static_assert(sizeof(Kernel) == sizeof(gpufmm::kernels::RadialParams<real>),\n";
  s += "              \"the host passes the kernel as RadialParams\");\n";
  s += "}  // namespace gpufmm_user\n";
  return s;
}

const UserKernels& user_kernels(Context& ctx, const kernels::UserKernel& u, gpufmm_dtype_t precision) {
  Cache& c = cache_of(ctx);
  const std::string key = std::string(real_name(precision)) + (u.r0_included ? " r0 " : " ") + u.value_expr +
                          '\0' + u.deriv_expr;
  std::lock_guard<std::mutex> lock(c.mutex);  // one compile at a time per context
  auto it = c.modules.find(key);
  if (it == c.modules.end()) it = c.modules.emplace(key, compile(u, precision)).first;
  return it->second.kernels;
}

void launch_user_kernel(cudaKernel_t f, dim3 grid, unsigned block, cudaStream_t stream, void** args,
                        const char* what) {
  clear_last_error();
  check(cudaLaunchKernel(reinterpret_cast<const void*>(f), grid, dim3(block), args, 0, stream), what);
}

int user_kernel_occupancy(cudaKernel_t f, int block) {
  int n = 0;
  GPUFMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, reinterpret_cast<const void*>(f), block, 0));
  return n;
}

void release_user_kernels(Context& ctx) noexcept {
  auto* c = static_cast<Cache*>(ctx.user_kernels);
  if (c == nullptr) return;
  for (auto& m : c->modules)
    if (cudaLibraryUnload(m.second.library) != cudaSuccess) clear_last_error();
  delete c;
  ctx.user_kernels = nullptr;
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
