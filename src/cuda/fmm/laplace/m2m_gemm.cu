// M2M as dense products (m2m=gemm): the plan's part (m2m_gemm_build) and
// the evaluate's (m2m_gemm_level). Design: M2MGemm in m2l_gemm.cuh.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "cuda/common/cublas_handle.cuh"
#include "cuda/common/temp_storage.cuh"
#include "cuda/fmm/laplace/gpu_data.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

namespace {

// Children [c0, c0 + nc): buf column col[c] = M_c.
template <class T>
__global__ void k_m2m_gather(int64_t c0, int64_t nc, int64_t p2, const int32_t* __restrict__ col,
                             const T* __restrict__ M, T* __restrict__ buf) {
  for (int64_t j = blockIdx.x; j < nc; j += gridDim.x) {
    const T* src = M + (c0 + j) * p2;
    T* d = buf + int64_t(col[c0 + j]) * p2;
    for (int i = threadIdx.x; i < p2; i += blockDim.x) d[i] = src[i];
  }
}

// Parents [b0, b0 + nb): M_b = the sum of its children's products, in
// child order from zero (the BpB M2M's order); a box without children (an
// adaptive tree's leaf) keeps its P2M.
template <class T>
__global__ void k_m2m_sum(int64_t b0, int64_t nb, int64_t p2, const int32_t* __restrict__ child_offset,
                          const int32_t* __restrict__ col, const T* __restrict__ prod, T* __restrict__ M) {
  for (int64_t t = blockIdx.x; t < nb; t += gridDim.x) {
    const int64_t b = b0 + t;
    const int32_t e0 = child_offset[b], e1 = child_offset[b + 1];
    if (e0 == e1) continue;
    for (int i = threadIdx.x; i < p2; i += blockDim.x) {
      T a = T(0);
      for (int32_t c = e0; c < e1; ++c) a += prod[int64_t(col[c]) * p2 + i];
      M[b * p2 + i] = a;
    }
  }
}

cublasStatus_t gemm(cublasHandle_t h, int n, int k, const double* A, const double* B, double* C) {
  const double one = 1.0, zero = 0.0;
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &one, A, n, B, n, &zero, C, n);
}
cublasStatus_t gemm(cublasHandle_t h, int n, int k, const float* A, const float* B, float* C) {
  const float one = 1.0f, zero = 0.0f;
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &one, A, n, B, n, &zero, C, n);
}

// T_o, column k = the BpB M2M kernel's translation of e_k from octant o:
// p^2 "parents" of one child each, child k the unit multipole e_k with the
// key of octant o.
template <class T>
void build_operators(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab, T* ops, cudaStream_t s0) {
  const int p = P.p;
  const int64_t p2 = int64_t(p) * p;
  std::vector<T> unit(size_t(p2 * p2), T(0));
  for (int64_t k = 0; k < p2; ++k) unit[size_t(k * p2 + k)] = T(1);
  std::vector<int32_t> rows(size_t(p2) + 1);
  std::iota(rows.begin(), rows.end(), 0);
  gpufmm::cuda::TempStorage tmp(*G.ctx, "laplace M2M dense operators");
  T* Mu = nullptr;
  int32_t* rows_d = nullptr;
  uint64_t* key = nullptr;
  tmp.add(Mu, p2 * p2);
  tmp.add(rows_d, p2 + 1);
  tmp.add(key, p2);
  tmp.allocate();
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(Mu, unit.data(), unit.size() * sizeof(T), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(rows_d, rows.data(), rows.size() * sizeof(int32_t), cudaMemcpyHostToDevice, s0));
  const size_t smem = bpb_smem_bytes<T>(p, 1);
  auto kern = k_translate_bpb<T, kBpbM2M>;
  if (smem > (48u << 10))
    GPUFMM_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  for (int o = 0; o < 8; ++o) {
    const std::vector<uint64_t> keys(static_cast<size_t>(p2), static_cast<uint64_t>(o));
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(key, keys.data(), keys.size() * sizeof(uint64_t), cudaMemcpyHostToDevice, s0));
    kern<<<unsigned(p2), kBpbThreads, smem, s0>>>(0, p2, p, 1, tab, rows_d, nullptr, key, nullptr, nullptr, nullptr,
                                                 Mu, ops + o * p2 * p2, nullptr);
    check_launch("laplace M2M dense operator kernel");
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));  // keys is freed next
  }
}

template <class T>
void build_typed(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab, cudaStream_t s0) {
  M2MGemm& g = G.m2m_gemm;
  const tree::PointSet& S = P.tree->src;
  const int L = P.l_max;
  const int64_t p2 = int64_t(P.p) * P.p;
  g.lv.assign(size_t(std::max(L, 0)) + 1, M2MGemm::Level{});
  g.built = true;
  const size_t buf_bytes = gemm_buffer_bytes(G);
  const size_t ops_bytes = size_t(8 * p2 * p2) * sizeof(T);
  if (L < 3 || ops_bytes > buf_bytes) return;  // no M2M, or every level through BpB
  const int64_t cols = int64_t(buf_bytes / (size_t(p2) * sizeof(T)));
  // Columns: per level with at most `cols` children, octant-major, boxes in
  // order within an octant.
  std::vector<uint64_t> key(size_t(S.nboxes));
  backend_download(P.ctx, key.data(), S.box_key, sizeof(uint64_t) * key.size(), false);
  std::vector<int32_t> col(size_t(S.nboxes), -1);
  int64_t max_cols = 0;
  for (int l = 2; l < L; ++l) {
    M2MGemm::Level& v = g.lv[size_t(l)];
    v.c0 = S.level_offset[size_t(l) + 1];
    v.nc = S.level_offset[size_t(l) + 2] - v.c0;
    if (v.nc == 0 || v.nc > cols) continue;
    int64_t cnt[8] = {};
    for (int64_t c = v.c0; c < v.c0 + v.nc; ++c) ++cnt[key[size_t(c)] & 7u];
    for (int o = 0; o < 8; ++o) v.off[o + 1] = v.off[o] + cnt[o];
    int64_t next[8];
    std::copy(v.off, v.off + 8, next);
    for (int64_t c = v.c0; c < v.c0 + v.nc; ++c) col[size_t(c)] = int32_t(next[key[size_t(c)] & 7u]++);
    v.dense = true;
    max_cols = std::max(max_cols, v.nc);
  }
  if (max_cols == 0) return;
  int32_t* col_d = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * col.size(), "laplace M2M columns"));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(col_d, col.data(), sizeof(int32_t) * col.size(), cudaMemcpyHostToDevice, s0));
  g.col = col_d;
  T* ops = static_cast<T*>(G.alloc(ops_bytes, "laplace M2M dense operators"));
  build_operators<T>(G, P, tab, ops, s0);
  g.ops = ops;
  g.buf_m = G.alloc(size_t(max_cols * p2) * sizeof(T), "laplace M2M gathered multipoles");
  g.buf_l = G.alloc(size_t(max_cols * p2) * sizeof(T), "laplace M2M products");
  plan_cublas(G);
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));  // col is freed next
}

}  // namespace

void m2m_gemm_build(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  if (P.single())
    build_typed<float>(G, P, G.tab_f, s0);
  else
    build_typed<double>(G, P, G.tab_d, s0);
}

template <class T>
bool m2m_gemm_level(GpuData& G, int p, int l, int64_t b0, int64_t nb, const int32_t* child_offset, T* M,
                    cudaStream_t s) {
  M2MGemm& g = G.m2m_gemm;
  if (!g.built || l < 0 || size_t(l) >= g.lv.size() || !g.lv[size_t(l)].dense) return false;
  const M2MGemm::Level& v = g.lv[size_t(l)];
  const int64_t p2 = int64_t(p) * p;
  T* bm = static_cast<T*>(g.buf_m);
  T* bl = static_cast<T*>(g.buf_l);
  const T* ops = static_cast<const T*>(g.ops);
  const int nt = int(std::min<int64_t>(256, (p2 + 31) / 32 * 32));
  k_m2m_gather<T><<<unsigned(std::min<int64_t>(v.nc, 1 << 30)), nt, 0, s>>>(v.c0, v.nc, p2, g.col, M, bm);
  check_launch("laplace M2M gather kernel");
  cublasHandle_t h = plan_cublas(G);
  GPUFMM_CUBLAS_CHECK(cublasSetStream(h, s));
  for (int o = 0; o < 8; ++o) {
    const int64_t n = v.off[o + 1] - v.off[o];
    if (n > 0)
      GPUFMM_CUBLAS_CHECK(gemm(h, int(p2), int(n), ops + o * p2 * p2, bm + v.off[o] * p2, bl + v.off[o] * p2));
  }
  k_m2m_sum<T><<<unsigned(std::max<int64_t>(1, std::min<int64_t>(nb, 1 << 30))), nt, 0, s>>>(b0, nb, p2,
                                                                                              child_offset, g.col,
                                                                                              bl, M);
  check_launch("laplace M2M sum kernel");
  return true;
}

template bool m2m_gemm_level<double>(GpuData&, int, int, int64_t, int64_t, const int32_t*, double*, cudaStream_t);
template bool m2m_gemm_level<float>(GpuData&, int, int, int64_t, int64_t, const int32_t*, float*, cudaStream_t);

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
