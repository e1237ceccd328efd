// The CUDA treecode's evaluate (src/cxx/treecode/plan.hpp; the plan's
// arrays on the device: cuda_plan.cuh, built by plan.cu), every stage on the
// device, data resident:
//   k_charges        charges to sorted order (working precision + double)
//   k_modified       modified charges of each chunk of a source cluster
//                    (eqs. 14-15: the 1D Lagrange values of a tile of points
//                    in shared memory, one proxy per thread), partial sums
//   k_reduce         the chunks of a cluster summed in order -> charges of
//                    its proxies
//   near field       nearfield::cuda::k_p2p_bpb (the FMM's P2P) over the
//                    rows: batches (with gradients), then target proxy sets
//   k_output         downward interpolation of the target clusters' proxy
//                    potentials (CP, CC) and the outputs in the user's order
// The math is treecode/geometry.hpp and the kernel structs, as on the CPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/error.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/staging.hpp"
#include "cuda/nearfield/p2p.cuh"
#include "cuda/nearfield/p2p_units.cuh"
#include "cuda/nearfield/user_kernel.cuh"
#include "cuda/treecode/cuda_plan.cuh"
#include "plan/checks.hpp"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace treecode {

namespace nf = gpufmm::nearfield::cuda;
using gpufmm::cuda::check_launch;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::grid_for;
using gpufmm::cuda::gstride;
using gpufmm::cuda::gtid;

void CudaPlanDeleter::operator()(CudaPlan* g) const { delete g; }

namespace {

// Proxy tiles of k_modified: points per shared-memory tile.
constexpr int kTile = 32;
constexpr int kModBlock = 256;

template <class S, class T>
__global__ void k_charges(int64_t n, const int32_t* __restrict__ perm, const S* __restrict__ in, T* __restrict__ q,
                          double* __restrict__ qd) {
  for (int64_t i = gtid(); i < n; i += gstride()) {
    const double v = double(in[perm[i]]);
    qd[i] = v;
    q[i] = T(v);
  }
}

// One block per chunk: part[c * np3 + k] = sum over the chunk's points j of
// qd[j] L_k1(y_j1) L_k2(y_j2) L_k3(y_j3), in point order.
__global__ void __launch_bounds__(kModBlock)
    k_modified(int n, const double* __restrict__ u_in, const int32_t* __restrict__ chunk_cluster,
               const int32_t* __restrict__ chunk_begin, const int32_t* __restrict__ chunk_end,
               const Box* __restrict__ geom, const double* __restrict__ sxyz, const double* __restrict__ qd,
               double* __restrict__ part) {
  extern __shared__ double sh[];
  const int n1 = n + 1, np3 = n1 * n1 * n1;
  double* u = sh;                  // n1
  double* L = sh + n1;             // kTile x 3 n1
  double* qt = L + kTile * 3 * n1;  // kTile
  for (int k = threadIdx.x; k < n1; k += blockDim.x) u[k] = u_in[k];
  const int64_t c = blockIdx.x;
  const Box bx = geom[chunk_cluster[c]];
  const int32_t j0 = chunk_begin[c], j1 = chunk_end[c];
  for (int k0 = 0; k0 < np3; k0 += blockDim.x) {
    const int k = k0 + threadIdx.x;
    const int k3 = k % n1, k2 = (k / n1) % n1, k1 = k / (n1 * n1);
    double acc = 0;
    for (int32_t t0 = j0; t0 < j1; t0 += kTile) {
      const int m = min(kTile, j1 - t0);
      __syncthreads();
      for (int w = threadIdx.x; w < 3 * m; w += blockDim.x) {
        const int jj = w / 3, d = w % 3;
        const int64_t j = t0 + jj;
        approx::lagrange<double>(n, u, bx.c[d], bx.h[d], sxyz[3 * j + d], L + (jj * 3 + d) * n1, nullptr);
        if (d == 0) qt[jj] = qd[j];
      }
      __syncthreads();
      if (k < np3)
        for (int jj = 0; jj < m; ++jj) {
          const double* l = L + jj * 3 * n1;
          acc += qt[jj] * l[k1] * l[n1 + k2] * l[2 * n1 + k3];
        }
    }
    if (k < np3) part[c * np3 + k] = acc;
  }
}

template <class T>
__global__ void k_reduce(int64_t nsp, int np3, int64_t ns, const int32_t* __restrict__ first,
                         const double* __restrict__ part, T* __restrict__ q) {
  for (int64_t t = gtid(); t < nsp * np3; t += gstride()) {
    const int64_t p = t / np3, k = t % np3;
    double s = 0;
    for (int32_t c = first[p]; c < first[p + 1]; ++c) s += part[int64_t(c) * np3 + k];
    q[ns + t] = T(s);
  }
}

template <class T>
__global__ void k_to_double(int64_t n, const T* __restrict__ in, double* __restrict__ out) {
  for (int64_t i = gtid(); i < n; i += gstride()) out[i] = double(in[i]);
}

// Downward interpolation (target clusters with proxies among the ancestors
// of each target's batch) and the outputs in the user's order.
template <class T, class S>
__global__ void k_output(int64_t nt, int n, const double* __restrict__ u_in, bool down, const double* __restrict__ txyz,
                         const int32_t* __restrict__ leaf, const int32_t* __restrict__ parent,
                         const int32_t* __restrict__ tprox, const Box* __restrict__ geom,
                         const double* __restrict__ phi, const int32_t* __restrict__ perm, const T* __restrict__ pot,
                         const T* __restrict__ grad, S* __restrict__ pot_out, S* __restrict__ grad_out) {
  double u[approx::kMaxDegree + 1], L[3 * (approx::kMaxDegree + 1)], dL[3 * (approx::kMaxDegree + 1)];
  const int n1 = n + 1, np3 = n1 * n1 * n1;
  for (int k = 0; k < n1; ++k) u[k] = u_in[k];
  for (int64_t i = gtid(); i < nt; i += gstride()) {
    double v = double(pot[i]), g[3] = {0, 0, 0};
    if (grad_out)
      for (int d = 0; d < 3; ++d) g[d] = double(grad[3 * i + d]);
    if (down)
      for (int32_t A = leaf[i]; A >= 0; A = parent[A]) {
        const int32_t p = tprox[A];
        if (p < 0) continue;
        lagrange3(n, u, geom[A], txyz + 3 * i, L, grad_out ? dL : nullptr);
        interpolate(n, L, dL, phi + int64_t(p) * np3, v, grad_out ? g : nullptr);
      }
    const int64_t j = perm[i];
    if (pot_out) pot_out[j] = S(v);
    if (grad_out)
      for (int d = 0; d < 3; ++d) grad_out[3 * j + d] = S(g[d]);
  }
}

template <class T, class S>
void run(Plan& P, const S* charges, S* pot_out, S* grad_out, bool host) {
  CudaPlan& G = *P.gpu;
  Context& ctx = P.ctx;
  cudaStream_t s = stream_of(ctx);
  const int64_t ns = P.nsrc, nt = P.ntrg;
  const int n = P.par.degree, np1 = P.np1, np3 = P.np3;
  const int64_t nsp = int64_t(P.sprox_box.size()), ntp = int64_t(P.tprox_box.size());
  const int64_t nchunk = int64_t(P.chunk_cluster.size());
  const bool want_grad = grad_out != nullptr, want_pot = pot_out != nullptr;
  // A user kernel's outputs go through the staging buffers too: they are
  // checked for NaN and Inf before the user's outputs are written.
  const bool user = P.options.kernel.type == kernels::KernelType::kUser;
  const bool stage = host || user;
  if (G.q == nullptr) {
    G.q = G.alloc(sizeof(T) * size_t(P.nq_local + P.nq_remote), "treecode charges");
    G.qd = static_cast<double*>(G.alloc(sizeof(double) * size_t(ns), "treecode charges"));
    G.part = static_cast<double*>(G.alloc(sizeof(double) * size_t(nchunk * np3), "treecode partial charges"));
    G.pot = G.alloc(sizeof(T) * size_t(nt + ntp * np3), "treecode potentials");
    G.grad = G.alloc(sizeof(T) * size_t(3 * nt), "treecode gradients");
    G.phi = static_cast<double*>(G.alloc(sizeof(double) * size_t(ntp * np3), "treecode proxy potentials"));
  }
  if (stage && G.in_q == nullptr) {
    G.in_q = G.alloc(sizeof(double) * size_t(ns), "treecode input staging");
    G.out_pot = G.alloc(sizeof(double) * size_t(nt), "treecode output staging");
    G.out_grad = G.alloc(sizeof(double) * size_t(3 * nt), "treecode output staging");
  }
  const S* dq = charges;
  S* dpot = pot_out;
  S* dgrad = grad_out;
  if (host) {
    gpufmm::cuda::staged_upload(ctx, G.in_q, charges, sizeof(double) * size_t(ns), plan::parallel_copy);
    dq = static_cast<const S*>(G.in_q);
  }
  if (stage) {
    dpot = want_pot ? static_cast<S*>(G.out_pot) : nullptr;
    dgrad = want_grad ? static_cast<S*>(G.out_grad) : nullptr;
  }
  GPUFMM_CUDA_CHECK(cudaEventRecord(G.ev[0], s));
  T* q = static_cast<T*>(G.q);
  T* pot = static_cast<T*>(G.pot);
  T* grad = static_cast<T*>(G.grad);
  const double* du = G.u;

  k_charges<<<grid_for(ns, 256), 256, 0, s>>>(ns, G.src_perm, dq, q, G.qd);
  check_launch("treecode charges kernel");
  if (nchunk > 0) {
    const size_t shm = sizeof(double) * size_t(np1 + kTile * 3 * np1 + kTile);
    k_modified<<<unsigned(nchunk), kModBlock, shm, s>>>(n, du, G.chunk_cluster, G.chunk_begin, G.chunk_end,
                                                       G.sprox_geom, G.sxyz, G.qd, G.part);
    check_launch("treecode modified charges kernel");
    k_reduce<T><<<grid_for(nsp * np3, 256), 256, 0, s>>>(nsp, np3, ns, G.chunk_first, G.part, q);
    check_launch("treecode modified charges reduction");
  }
  if (P.exchange) {  // the charges of other ranks' sets (plan.hpp), through the host
    std::vector<T> lq(static_cast<size_t>(P.nq_local)), rq(static_cast<size_t>(P.nq_remote));
    if (!lq.empty()) gpufmm::cuda::staged_download(ctx, lq.data(), q, sizeof(T) * lq.size(), plan::parallel_copy);
    std::vector<double> local(lq.begin(), lq.end()), remote(rq.size());
    P.exchange(local.data(), remote.data());
    std::transform(remote.begin(), remote.end(), rq.begin(), [](double v) { return T(v); });
    if (!rq.empty())
      gpufmm::cuda::staged_upload(ctx, q + P.nq_local, rq.data(), sizeof(T) * rq.size(), plan::parallel_copy);
    if (nt == 0) {
      GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
      return;
    }
  }
  GPUFMM_CUDA_CHECK(cudaEventRecord(G.ev[1], s));

  gpufmm::cuda::DevSet R = G.targets(), Sset = G.sources();
  DevList l = G.list();
  if (user) {  // k_p2p_bpb as NVRTC compiled it (nearfield/user_kernel.cuh)
    const nf::UserKernels& uk = nf::user_kernels(ctx, P.options.kernel.user, P.options.precision);
    kernels::RadialParams<T> params = nf::user_params<T>(P.options.kernel.user);
    auto launch = [&](bool g, int64_t b0, int64_t nunits, const uint64_t* units) {
      if (nunits <= 0) return;
      const T* d = nullptr;
      T* gp = g ? grad : nullptr;
      T* hess = nullptr;
      void* args[] = {&params, &b0, &nunits, &units, &R, &Sset, &l, &G.sxyz, &G.txyz, &q, &d, &pot, &gp, &hess};
      nf::launch_user_kernel(uk.p2p[g], dim3(unsigned(std::min<int64_t>(nunits, 1 << 30))), nf::kP2PBlock, s, args,
                             "treecode near-field kernel (user kernel)");
    };
    launch(want_grad, 0, G.nunits_batch, G.units_batch);
    launch(false, P.nbatch, G.nunits_prox, G.units_prox);
  } else {
    kernels::with_builtin_kernel<T>(P.options.kernel, [&](const auto& kern) {
      using K = std::decay_t<decltype(kern)>;
      auto launch = [&](auto g_, int64_t b0, int64_t nunits, const uint64_t* units) {
        constexpr bool kG = decltype(g_)::value;
        if (nunits <= 0) return;
        const unsigned blocks = unsigned(std::min<int64_t>(nunits, 1 << 30));
        nf::k_p2p_bpb<K, T, true, false, kG><<<blocks, nf::kP2PBlock, 0, s>>>(
            kern, b0, nunits, units, R, Sset, l, G.sxyz, G.txyz, q, nullptr, pot, kG ? grad : nullptr, nullptr);
        check_launch("treecode near-field kernel");
      };
      if (want_grad)
        launch(kernels::Flag<true>{}, 0, G.nunits_batch, G.units_batch);
      else
        launch(kernels::Flag<false>{}, 0, G.nunits_batch, G.units_batch);
      launch(kernels::Flag<false>{}, P.nbatch, G.nunits_prox, G.units_prox);
    });
  }
  GPUFMM_CUDA_CHECK(cudaEventRecord(G.ev[2], s));
  if (ntp > 0) {
    k_to_double<T><<<grid_for(ntp * np3, 256), 256, 0, s>>>(ntp * np3, pot + nt, G.phi);
    check_launch("treecode proxy potentials");
  }
  k_output<T, S><<<grid_for(nt, 128), 128, 0, s>>>(nt, n, du, ntp > 0, G.txyz, G.trg_leaf, G.tparent, G.tprox,
                                                    G.tbox_geom, G.phi, G.trg_perm, pot, grad, dpot, dgrad);
  check_launch("treecode output kernel");
  GPUFMM_CUDA_CHECK(cudaEventRecord(G.ev[3], s));
  if (user) {
    // Checked on the host; then to the user's outputs.
    std::vector<S> hp(want_pot ? size_t(nt) : 0), hg(want_grad ? size_t(3 * nt) : 0);
    if (want_pot) gpufmm::cuda::staged_download(ctx, hp.data(), dpot, sizeof(S) * size_t(nt), plan::parallel_copy);
    if (want_grad)
      gpufmm::cuda::staged_download(ctx, hg.data(), dgrad, sizeof(S) * size_t(3 * nt), plan::parallel_copy);
    kernels::check_user_results(want_pot ? hp.data() : nullptr, want_grad ? hg.data() : nullptr, nt);
    if (host) {
      if (want_pot) std::copy(hp.begin(), hp.end(), pot_out);
      if (want_grad) std::copy(hg.begin(), hg.end(), grad_out);
    } else {
      if (want_pot)
        GPUFMM_CUDA_CHECK(cudaMemcpyAsync(pot_out, dpot, sizeof(S) * size_t(nt), cudaMemcpyDeviceToDevice, s));
      if (want_grad)
        GPUFMM_CUDA_CHECK(
            cudaMemcpyAsync(grad_out, dgrad, sizeof(S) * size_t(3 * nt), cudaMemcpyDeviceToDevice, s));
    }
  } else if (host) {
    if (want_pot) gpufmm::cuda::staged_download(ctx, pot_out, dpot, sizeof(double) * size_t(nt), plan::parallel_copy);
    if (want_grad)
      gpufmm::cuda::staged_download(ctx, grad_out, dgrad, sizeof(double) * size_t(3 * nt), plan::parallel_copy);
  }
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  float ms[3];
  for (int i = 0; i < 3; ++i) GPUFMM_CUDA_CHECK(cudaEventElapsedTime(&ms[i], G.ev[i], G.ev[i + 1]));
  P.times.upward = 1e-3 * ms[0];
  P.times.nearfield = 1e-3 * ms[1];
  P.times.downward = 1e-3 * ms[2];
}

}  // namespace

namespace detail {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void evaluate_cuda(Plan& P, const EvalArgs& a) {
  DeviceGuard guard(P.ctx);
  const double t0 = seconds();
  const int64_t nt = P.ntrg;
  if (P.exchange && !P.gpu) {  // an MPI rank with nothing to compute still takes part
    P.exchange(nullptr, nullptr);
  }
  if (nt == 0 && (!P.exchange || !P.gpu)) return;
  if (!P.gpu) {  // nothing acts: zeros
    const size_t b = a.on_context && P.options.precision == GPUFMM_FLOAT32 ? sizeof(float) : sizeof(double);
    if (a.on_context) {
      cudaStream_t s = stream_of(P.ctx);
      if (a.pot) GPUFMM_CUDA_CHECK(cudaMemsetAsync(a.pot, 0, b * size_t(nt), s));
      if (a.grad) GPUFMM_CUDA_CHECK(cudaMemsetAsync(a.grad, 0, 3 * b * size_t(nt), s));
      GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
    } else {
      if (a.pot) std::fill(static_cast<double*>(a.pot), static_cast<double*>(a.pot) + nt, 0.0);
      if (a.grad) std::fill(static_cast<double*>(a.grad), static_cast<double*>(a.grad) + 3 * nt, 0.0);
    }
    return;
  }
  if (P.options.precision == GPUFMM_FLOAT32) {
    if (a.on_context)
      run<float>(P, static_cast<const float*>(a.charges), static_cast<float*>(a.pot), static_cast<float*>(a.grad),
                 false);
    else
      run<float>(P, static_cast<const double*>(a.charges), static_cast<double*>(a.pot),
                 static_cast<double*>(a.grad), true);
  } else {
    run<double>(P, static_cast<const double*>(a.charges), static_cast<double*>(a.pot), static_cast<double*>(a.grad),
                !a.on_context);
  }
  P.times.total = seconds() - t0;
}

}  // namespace detail
}  // namespace treecode
}  // namespace gpufmm
