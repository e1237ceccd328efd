// M2L as dense products (m2l=gemm): the plan's part (m2l_gemm_build) and
// the evaluate's (m2l_gemm_run). Design: m2l_gemm.cuh.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <cub/cub.cuh>

#include "cuda/common/cublas_handle.cuh"
#include "cuda/common/temp_storage.cuh"
#include "cuda/fmm/laplace/gpu_data.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

namespace {

constexpr size_t kGemmBufferMax = size_t(1) << 30;      // default bytes per buffer, at most 1/32 of the device's
constexpr size_t kCublasWorkspace = size_t(32) << 20;    // cuBLAS's recommendation for Hopper
constexpr size_t kOpBuildBytes = size_t(64) << 20;       // the operators' columns per build pass

// The receivers' CSR: per entry its receiver (key) and (p'^2 << 32) |
// position (value); count[r] += 1.
__global__ void k_gemm_rcv_keys(int32_t nseg, DevM2LGroups grp, const int32_t* __restrict__ op_p,
                                uint32_t* __restrict__ key, uint64_t* __restrict__ val, int32_t* __restrict__ count) {
  for (int32_t s = blockIdx.x; s < nseg; s += gridDim.x) {
    const int pp = op_p[grp.seg_op[s]];
    const uint64_t np = uint64_t(pp) * uint64_t(pp);
    for (int32_t e = grp.seg_begin[s] + threadIdx.x; e < grp.seg_begin[s + 1]; e += blockDim.x) {
      const uint32_t dst = uint32_t(grp.ent[e] & 0xffffffffu);
      key[e] = dst;
      val[e] = (np << 32) | uint64_t(uint32_t(e));
      atomicAdd(&count[dst], 1);
    }
  }
}

// Column j of the operator build: the translation of e_k of its operator u
// (L row `col0 + j`, p^2 apart) -> ops + dst[j], np[j] values.
template <class T>
__global__ void k_gemm_pack(int64_t ncols, int64_t p2, const T* __restrict__ Lt, const int64_t* __restrict__ dst,
                            const int32_t* __restrict__ np, T* __restrict__ ops) {
  for (int64_t j = blockIdx.x; j < ncols; j += gridDim.x)
    for (int i = threadIdx.x; i < np[j]; i += blockDim.x) ops[dst[j] + i] = Lt[j * p2 + i];
}

// Chunk segments [s0, s1): buf column (e - e0) = the first p'^2
// coefficients of the source's multipole, a warp per entry.
template <class T>
__global__ void k_gemm_gather(int32_t s0, int32_t s1, int64_t e0, DevM2LGroups grp, const int32_t* __restrict__ op_p,
                              int64_t p2, const T* __restrict__ M, T* __restrict__ buf) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int32_t s = s0 + blockIdx.x; s < s1; s += gridDim.x) {
    const int pp = op_p[grp.seg_op[s]];
    const int np = pp * pp;
    for (int32_t e = grp.seg_begin[s] + warp; e < grp.seg_begin[s + 1]; e += nw) {
      const T* src = M + int64_t(grp.ent[e] >> 32) * p2;
      T* d = buf + (int64_t(e) - e0) * p2;
      for (int i = lane; i < np; i += 32) d[i] = src[i];
    }
  }
}

// Receivers [r0, r1): L_r += its products in class order; has_local set.
template <class T>
__global__ void k_gemm_reduce(int64_t r0, int64_t r1, int64_t e0, int64_t p2, const int32_t* __restrict__ off,
                              const uint64_t* __restrict__ ent, const T* __restrict__ buf, T* __restrict__ L,
                              uint8_t* __restrict__ has_local) {
  for (int64_t r = r0 + blockIdx.x; r < r1; r += gridDim.x) {
    const int32_t a = off[r], b = off[r + 1];
    if (a == b) continue;
    if (threadIdx.x == 0) has_local[r] = 1;
    for (int i = threadIdx.x; i < p2; i += blockDim.x) {
      T acc = L[r * p2 + i];
      for (int32_t k = a; k < b; ++k) {
        const uint64_t v = ent[k];
        if (i < int(v >> 32)) acc += buf[(int64_t(uint32_t(v)) - e0) * p2 + i];
      }
      L[r * p2 + i] = acc;
    }
  }
}

cublasStatus_t gemm_grouped(cublasHandle_t h, M2LGemm& g, int32_t s, int32_t n, const double*) {
  return cublasDgemmGroupedBatched(h, g.op_n.data() + s, g.op_n.data() + s, g.seg_np.data() + s, g.seg_n.data() + s,
                                   g.seg_np.data() + s, g.one_d.data() + s,
                                   reinterpret_cast<const double* const*>(g.dA) + s, g.seg_np.data() + s,
                                   reinterpret_cast<const double* const*>(g.dB) + s, g.ldp.data() + s,
                                   g.zero_d.data() + s, reinterpret_cast<double* const*>(g.dC) + s, g.ldp.data() + s, n,
                                   g.ones.data() + s);
}
cublasStatus_t gemm_grouped(cublasHandle_t h, M2LGemm& g, int32_t s, int32_t n, const float*) {
  return cublasSgemmGroupedBatched(h, g.op_n.data() + s, g.op_n.data() + s, g.seg_np.data() + s, g.seg_n.data() + s,
                                   g.seg_np.data() + s, g.one_f.data() + s,
                                   reinterpret_cast<const float* const*>(g.dA) + s, g.seg_np.data() + s,
                                   reinterpret_cast<const float* const*>(g.dB) + s, g.ldp.data() + s,
                                   g.zero_f.data() + s, reinterpret_cast<float* const*>(g.dC) + s, g.ldp.data() + s, n,
                                   g.ones.data() + s);
}

// T_c of every operator that a segment names, packed (column-major, p'^2
// square): the grouped kernel run on unit multipoles, a few operators per
// pass. Returns each operator's offset (elements) in G.gemm.ops.
template <class T>
std::vector<int64_t> build_operators(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab,
                                     const std::vector<int32_t>& op_p, const std::vector<int32_t>& seg_op,
                                     cudaStream_t s0) {
  const int p = P.p;
  const int64_t p2 = int64_t(p) * p;
  std::vector<int32_t> used(seg_op);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  std::vector<int64_t> off(op_p.size(), -1);
  int64_t total = 0;
  for (int32_t op : used) {
    off[size_t(op)] = total;
    total += int64_t(op_p[size_t(op)]) * op_p[size_t(op)] * op_p[size_t(op)] * op_p[size_t(op)];
  }
  T* ops = static_cast<T*>(G.alloc(size_t(total) * sizeof(T), "laplace M2L dense operators"));
  G.gemm.ops = ops;
  G.gemm.ops_bytes = size_t(total) * sizeof(T);
  // Unit multipoles: box k = e_k.
  std::vector<T> unit(size_t(p2 * p2), T(0));
  for (int64_t k = 0; k < p2; ++k) unit[size_t(k * p2 + k)] = T(1);
  const int64_t cap = std::max<int64_t>(p2, int64_t(kOpBuildBytes / (size_t(p2) * sizeof(T))));
  gpufmm::cuda::TempStorage tmp(*G.ctx, "laplace M2L dense operators");
  T *Mu = nullptr, *Lt = nullptr;
  int32_t *gseg = nullptr, *sop = nullptr, *sbeg = nullptr, *np_d = nullptr;
  uint64_t* ent = nullptr;
  int64_t* dst_d = nullptr;
  uint8_t* hl = nullptr;
  const int64_t nu = int64_t(used.size());
  tmp.add(Mu, p2 * p2);
  tmp.add(Lt, cap * p2);
  tmp.add(gseg, nu + 1);
  tmp.add(sop, nu);
  tmp.add(sbeg, nu + 1);
  tmp.add(ent, cap);
  tmp.add(dst_d, cap);
  tmp.add(np_d, cap);
  tmp.add(hl, cap);
  tmp.allocate();
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(Mu, unit.data(), unit.size() * sizeof(T), cudaMemcpyHostToDevice, s0));
  const size_t smem = m2l_group_smem_bytes<T, 4>(p);
  auto kern = k_m2l_group<T, 4, 256>;
  if (smem > (48u << 10))
    GPUFMM_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  for (int64_t u0 = 0; u0 < nu;) {
    // Operators [u0, u1): one group of one segment each, entry k of
    // operator u = (k << 32) | column.
    std::vector<int32_t> hgseg{0}, hsop, hsbeg{0}, hnp;
    std::vector<uint64_t> hent;
    std::vector<int64_t> hdst;
    int64_t u1 = u0;
    while (u1 < nu) {
      const int32_t op = used[size_t(u1)];
      const int64_t np = int64_t(op_p[size_t(op)]) * op_p[size_t(op)];
      if (!hent.empty() && int64_t(hent.size()) + np > cap) break;
      for (int64_t k = 0; k < np; ++k) {
        hent.push_back((uint64_t(k) << 32) | uint64_t(hent.size()));
        hdst.push_back(off[size_t(op)] + k * np);
        hnp.push_back(int32_t(np));
      }
      hsop.push_back(op);
      hsbeg.push_back(int32_t(hent.size()));
      hgseg.push_back(int32_t(hsop.size()));
      ++u1;
    }
    const int64_t nb = u1 - u0, ncols = int64_t(hent.size());
    auto up = [&](auto* d, const auto& h) {
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(d, h.data(), h.size() * sizeof(h[0]), cudaMemcpyHostToDevice, s0));
    };
    up(gseg, hgseg);
    up(sop, hsop);
    up(sbeg, hsbeg);
    up(ent, hent);
    up(dst_d, hdst);
    up(np_d, hnp);
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(Lt, 0, size_t(ncols * p2) * sizeof(T), s0));
    DevM2LGroups g;
    g.ngroups = nb;
    g.gseg = gseg;
    g.seg_op = sop;
    g.seg_begin = sbeg;
    g.ent = ent;
    kern<<<unsigned(nb), 256, smem, s0>>>(p, tab, g, Mu, Lt, hl);
    check_launch("laplace M2L dense operator kernel");
    k_gemm_pack<T><<<blocks_for(G, ncols, 1), 128, 0, s0>>>(ncols, p2, Lt, dst_d, np_d, ops);
    check_launch("laplace M2L dense operator pack kernel");
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));  // the host arrays of this pass are freed next
    u0 = u1;
  }
  return off;
}

template <class T>
void build_typed(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab, const std::vector<int32_t>& op_p,
                 cudaStream_t s0) {
  M2LGemm& g = G.gemm;
  const tree::PointSet& R = P.tree->receivers();
  const int64_t p2 = int64_t(P.p) * P.p;
  const int64_t nent = m2l_entry_count(P, s0);
  // Receivers per group: the buffers' columns over the mean entries per
  // receiver of the levels that have entries.
  const size_t buf_bytes = gemm_buffer_bytes(G);
  const int64_t cols = std::max<int64_t>(1, int64_t(buf_bytes / (size_t(p2) * sizeof(T))));
  const int64_t nrecv = std::max<int64_t>(1, R.level_offset[P.l_max + 1] - R.level_offset[std::min(P.l_max, 1)]);
  const double per = std::max(1.0, double(nent) / double(nrecv));
  g.gsize = int(std::max<int64_t>(1, std::min<int64_t>(int64_t(cols / per), 1 << 30)));
  build_m2l_groups(G, P, g.gsize, true, g.grp, s0);
  g.nent = nent;
  const int64_t ng = g.grp.ngroups;
  if (ng == 0 || nent == 0) {
    g.built = true;
    return;
  }
  // The segments on the host: sizes, classes, group boundaries.
  std::vector<int32_t> gseg(static_cast<size_t>(ng) + 1);
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(gseg.data(), g.grp.gseg, gseg.size() * 4, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  const int32_t nseg = gseg[size_t(ng)];
  std::vector<int32_t> sbeg(static_cast<size_t>(nseg) + 1), sop(static_cast<size_t>(nseg));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(sbeg.data(), g.grp.seg_begin, sbeg.size() * 4, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(sop.data(), g.grp.seg_op, sop.size() * 4, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  const std::vector<int64_t> off = build_operators<T>(G, P, tab, op_p, sop, s0);

  // Chunks: runs of groups whose entries fit the buffers (a larger group
  // alone). The groups span levels: group i holds the receivers [i gsize,
  // (i + 1) gsize), so a class's entries of every level are one product.
  auto g_r0 = [&](int64_t i) { return i * g.gsize; };
  auto g_r1 = [&](int64_t i) { return std::min<int64_t>((i + 1) * g.gsize, R.nboxes); };
  int64_t max_cols = 0;
  for (int64_t a = 0; a < ng;) {
    int64_t b = a + 1;
    while (b < ng && int64_t(sbeg[size_t(gseg[size_t(b + 1)])]) - sbeg[size_t(gseg[size_t(a)])] <= cols) ++b;
    M2LGemmChunk c;
    c.s0 = gseg[size_t(a)];
    c.s1 = gseg[size_t(b)];
    c.e0 = sbeg[size_t(c.s0)];
    c.e1 = sbeg[size_t(c.s1)];
    c.r0 = g_r0(a);
    c.r1 = g_r1(b - 1);
    if (c.e1 > c.e0) {
      g.chunks.push_back(c);
      max_cols = std::max(max_cols, c.e1 - c.e0);
    }
    a = b;
  }
  g.buf_m = G.alloc(size_t(max_cols * p2) * sizeof(T), "laplace M2L gathered multipoles");
  g.buf_l = G.alloc(size_t(max_cols * p2) * sizeof(T), "laplace M2L products");

  // The grouped call's arrays, per segment.
  const size_t ns = size_t(nseg);
  g.seg_np.resize(ns);
  g.seg_n.resize(ns);
  g.ones.assign(ns, 1);
  g.ldp.assign(ns, int(p2));
  g.op_n.assign(ns, CUBLAS_OP_N);
  g.one_d.assign(ns, 1.0);
  g.zero_d.assign(ns, 0.0);
  g.one_f.assign(ns, 1.0f);
  g.zero_f.assign(ns, 0.0f);
  std::vector<const void*> hA(ns), hB(ns);
  std::vector<void*> hC(ns);
  for (const M2LGemmChunk& c : g.chunks)
    for (int32_t s = c.s0; s < c.s1; ++s) {
      const int32_t op = sop[size_t(s)];
      g.seg_np[size_t(s)] = op_p[size_t(op)] * op_p[size_t(op)];
      g.seg_n[size_t(s)] = sbeg[size_t(s) + 1] - sbeg[size_t(s)];
      hA[size_t(s)] = static_cast<const T*>(g.ops) + off[size_t(op)];
      hB[size_t(s)] = static_cast<const T*>(g.buf_m) + (sbeg[size_t(s)] - c.e0) * p2;
      hC[size_t(s)] = static_cast<T*>(g.buf_l) + (sbeg[size_t(s)] - c.e0) * p2;
    }
  g.dA = static_cast<const void**>(G.alloc(ns * sizeof(void*), "laplace M2L product pointers"));
  g.dB = static_cast<const void**>(G.alloc(ns * sizeof(void*), "laplace M2L product pointers"));
  g.dC = static_cast<void**>(G.alloc(ns * sizeof(void*), "laplace M2L product pointers"));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.dA, hA.data(), ns * sizeof(void*), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.dB, hB.data(), ns * sizeof(void*), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.dC, hC.data(), ns * sizeof(void*), cudaMemcpyHostToDevice, s0));

  // Per receiver its entries in class order: a stable sort by receiver of
  // the entries in segment order (the classes of a group increase).
  {
    const int64_t nr = R.nboxes;
    int32_t* rcv_off = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * size_t(nr + 1), "laplace M2L receiver rows"));
    uint64_t* rcv_ent = static_cast<uint64_t*>(G.alloc(sizeof(uint64_t) * size_t(nent), "laplace M2L receiver rows"));
    gpufmm::cuda::TempStorage tmp(*G.ctx, "laplace M2L receiver rows");
    uint32_t *key = nullptr, *key_s = nullptr;
    uint64_t* val = nullptr;
    int32_t* cnt = nullptr;
    int32_t* op_p_d = nullptr;
    tmp.add(key, nent);
    tmp.add(key_s, nent);
    tmp.add(val, nent);
    tmp.add(cnt, nr + 1);
    tmp.add(op_p_d, int64_t(op_p.size()));
    int end_bit = 1;
    while ((int64_t(1) << end_bit) < nr) ++end_bit;
    const int n = int(nent);
    auto sort = [&](void* t, size_t& b) {
      return cub::DeviceRadixSort::SortPairs(t, b, key, key_s, val, rcv_ent, n, 0, end_bit, s0);
    };
    auto scan = [&](void* t, size_t& b) {
      return cub::DeviceScan::ExclusiveSum(t, b, cnt, rcv_off, nr + 1, s0);
    };
    tmp.add_cub(sort, "cub::DeviceRadixSort::SortPairs (M2L receiver rows)");
    tmp.add_cub(scan, "cub::DeviceScan::ExclusiveSum (M2L receiver rows)");
    tmp.allocate();
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(op_p_d, op_p.data(), op_p.size() * 4, cudaMemcpyHostToDevice, s0));
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(cnt, 0, sizeof(int32_t) * size_t(nr + 1), s0));
    k_gemm_rcv_keys<<<blocks_for(G, int64_t(nseg) * 128, 128), 128, 0, s0>>>(nseg, g.grp, op_p_d, key, val, cnt);
    check_launch("laplace M2L receiver row kernel");
    tmp.run_cub(sort, "cub::DeviceRadixSort::SortPairs (M2L receiver rows)");
    tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum (M2L receiver rows)");
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    g.rcv_off = rcv_off;
    g.rcv_ent = rcv_ent;
  }

  plan_cublas(G);
  g.built = true;
}

}  // namespace

size_t gemm_buffer_bytes(const GpuData& G) {
  size_t buf_bytes = size_t(G.k.m2l_gemm_mb) << 20;
  if (buf_bytes == 0) {
    size_t free_b = 0, total_b = 0;
    GPUFMM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    buf_bytes = std::min(kGemmBufferMax, total_b / 32);
  }
  return buf_bytes;
}

cublasHandle_t plan_cublas(GpuData& G) {
  M2LGemm& g = G.gemm;
  if (g.handle == nullptr) {
    gpufmm::cuda::check_cublas(cublasCreate(&g.handle), "cublasCreate");
    void* ws = G.alloc(kCublasWorkspace, "laplace cuBLAS workspace");
    GPUFMM_CUBLAS_CHECK(cublasSetWorkspace(g.handle, ws, kCublasWorkspace));
  }
  return g.handle;
}

void m2l_gemm_build(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  if (P.single())
    build_typed<float>(G, P, G.tab_f, P.tables_f->op_p, s0);
  else
    build_typed<double>(G, P, G.tab_d, P.tables_d->op_p, s0);
}

template <class T>
void m2l_gemm_run(GpuData& G, int p, const T* M, T* L, uint8_t* has_local, cudaStream_t s) {
  M2LGemm& g = G.gemm;
  require(g.built, GPUFMM_ERROR_INTERNAL, "laplace: m2l=gemm without its plan data");
  if (g.chunks.empty()) return;  // no M2L entry (and no cuBLAS handle)
  const int64_t p2 = int64_t(p) * p;
  const int32_t* op_p = std::is_same<T, float>::value ? G.tab_f.op_p : G.tab_d.op_p;
  GPUFMM_CUBLAS_CHECK(cublasSetStream(g.handle, s));
  T* bm = static_cast<T*>(g.buf_m);
  const int nt = int(std::min<int64_t>(512, (p2 + 31) / 32 * 32));
  for (const M2LGemmChunk& c : g.chunks) {
    k_gemm_gather<T><<<unsigned(std::min<int64_t>(c.s1 - c.s0, 1 << 30)), 256, 0, s>>>(c.s0, c.s1, c.e0, g.grp, op_p,
                                                                                        p2, M, bm);
    check_launch("laplace M2L gather kernel");
    GPUFMM_CUBLAS_CHECK(gemm_grouped(g.handle, g, c.s0, c.s1 - c.s0, static_cast<const T*>(nullptr)));
    k_gemm_reduce<T><<<unsigned(std::min<int64_t>(c.r1 - c.r0, 1 << 30)), nt, 0, s>>>(
        c.r0, c.r1, c.e0, p2, g.rcv_off, g.rcv_ent, static_cast<const T*>(g.buf_l), L, has_local);
    check_launch("laplace M2L sum kernel");
  }
}

template void m2l_gemm_run<double>(GpuData&, int, const double*, double*, uint8_t*, cudaStream_t);
template void m2l_gemm_run<float>(GpuData&, int, const float*, float*, uint8_t*, cudaStream_t);

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
