// M2L as dense products (m2l=gemm): the plan's part (m2l_gemm_build) and
// the evaluate's (m2l_gemm_run). Design: m2l_gemm.cuh.
#include <algorithm>
#include <cstdint>
#include <tuple>
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

// The receivers' CSR: per entry its receiver (key) and (op << 48) |
// (p'^2 << 32) | its column in the buffers (value); count[r] += 1.
__global__ void k_gemm_rcv_keys(int32_t nseg, DevM2LGroups grp, const int32_t* __restrict__ op_p,
                                const int64_t* __restrict__ seg_pos, uint32_t* __restrict__ key,
                                uint64_t* __restrict__ val, int32_t* __restrict__ count) {
  for (int32_t s = blockIdx.x; s < nseg; s += gridDim.x) {
    const int op = grp.seg_op[s];
    const int pp = op_p[op];
    const uint64_t np = uint64_t(pp) * uint64_t(pp);
    for (int32_t e = grp.seg_begin[s] + threadIdx.x; e < grp.seg_begin[s + 1]; e += blockDim.x) {
      const uint32_t dst = uint32_t(grp.ent[e] & 0xffffffffu);
      key[e] = dst;
      val[e] = (uint64_t(op) << 48) | (np << 32) | uint64_t(uint32_t(seg_pos[s] + (e - grp.seg_begin[s])));
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

// Chunk segments [s0, s1): buf column (seg_pos[s] + e - seg_begin[s] -
// e0) = the first p'^2 coefficients of the source's multipole, a warp per
// entry.
template <class T>
__global__ void k_gemm_gather(int32_t s0, int32_t s1, int64_t e0, DevM2LGroups grp, const int64_t* __restrict__ seg_pos,
                              const int32_t* __restrict__ op_p, int64_t p2, const T* __restrict__ M,
                              T* __restrict__ buf) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int32_t s = s0 + blockIdx.x; s < s1; s += gridDim.x) {
    const int pp = op_p[grp.seg_op[s]];
    const int np = pp * pp;
    for (int32_t e = grp.seg_begin[s] + warp; e < grp.seg_begin[s + 1]; e += nw) {
      const T* src = M + int64_t(grp.ent[e] >> 32) * p2;
      T* d = buf + (seg_pos[s] + e - grp.seg_begin[s] - e0) * p2;
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
        if (i < int((v >> 32) & 0xffffu)) acc += buf[(int64_t(uint32_t(v)) - e0) * p2 + i];
      }
      L[r * p2 + i] = acc;
    }
  }
}

// m2l_rcr: per op cos(m a), sin(m a), m < p (laplace_rotate_z_cs, the
// angle additions of the RCR kernels), a thread per op.
template <class T>
__global__ void k_rcr_cs(int nops, int p, DevTables<T> tab, T* __restrict__ cs) {
  const int op = blockIdx.x * blockDim.x + threadIdx.x;
  if (op < nops && tab.op_p[op] > 0) laplace_rotate_z_cs(p, tab.cos_a[op], tab.sin_a[op], cs + 2 * op * p, cs + (2 * op + 1) * p);
}

// m2l_rcr, chunk segments [s0, s1): buf column (as k_gemm_gather's) =
// F? A(a) M_src, the first RCR step of the entry's op (as k_m2l_group's), a
// warp per entry.
template <class T>
__global__ void k_rcr_gather(int32_t s0, int32_t s1, int64_t e0, DevM2LGroups grp, const int64_t* __restrict__ seg_pos,
                             DevTables<T> tab, const T* __restrict__ cs, int p, const T* __restrict__ M,
                             T* __restrict__ buf) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  const int64_t p2 = int64_t(p) * p;
  for (int32_t s = s0 + blockIdx.x; s < s1; s += gridDim.x) {
    const int op = grp.seg_op[s];
    const int pp = tab.op_p[op];
    const bool flip = tab.op_flip[op] != 0;
    const T* c = cs + 2 * op * p;
    for (int32_t e = grp.seg_begin[s] + warp; e < grp.seg_begin[s + 1]; e += nw) {
      const T* src = M + int64_t(grp.ent[e] >> 32) * p2;
      T* d = buf + (seg_pos[s] + e - grp.seg_begin[s] - e0) * p2;
      for (int i = lane; i < pp * pp; i += 32) {
        const int n = int(sqrtf(float(i) + 0.5f)), m = i - n * n - n, am = m < 0 ? -m : m;
        T v = laplace_rotate_z_elem(c[am], c[p + am], src, n, m);
        if (flip && laplace_flip_negates(n, m)) v = -v;
        d[i] = v;
      }
    }
  }
}

// m2l_rcr, receivers [r0, r1): L_r += A(a)^T F? (its rotated-back
// products), the last RCR step of each entry's op, in class order.
template <class T>
__global__ void k_rcr_reduce(int64_t r0, int64_t r1, int64_t e0, int p, DevTables<T> tab, const T* __restrict__ cs,
                             const int32_t* __restrict__ off, const uint64_t* __restrict__ ent, const T* __restrict__ buf,
                             T* __restrict__ L, uint8_t* __restrict__ has_local) {
  const int64_t p2 = int64_t(p) * p;
  for (int64_t r = r0 + blockIdx.x; r < r1; r += gridDim.x) {
    const int32_t a = off[r], b = off[r + 1];
    if (a == b) continue;
    if (threadIdx.x == 0) has_local[r] = 1;
    for (int i = threadIdx.x; i < p2; i += blockDim.x) {
      const int n = int(sqrtf(float(i) + 0.5f)), m = i - n * n - n, am = m < 0 ? -m : m;
      T acc = L[r * p2 + i];
      for (int32_t k = a; k < b; ++k) {
        const uint64_t v = ent[k];
        if (i >= int((v >> 32) & 0xffffu)) continue;
        const int op = int(v >> 48);
        const bool flip = tab.op_flip[op] != 0;
        const T* col = buf + (int64_t(uint32_t(v)) - e0) * p2 + n * n + n;
        T x = col[am];
        if (flip && laplace_flip_negates(n, am)) x = -x;
        if (m != 0) {
          T y = col[-am];
          if (flip && laplace_flip_negates(n, -am)) y = -y;
          const T* c = cs + 2 * op * p;
          x = laplace_rotate_z_pair(c[am], T(-c[p + am]), x, y, m);
        }
        acc += x;
      }
      L[r * p2 + i] = acc;
    }
  }
}

// Groups [g0, g0 + n) of a call through cublas[DS]gemmGroupedBatched (f).
template <class T, class F>
cublasStatus_t gemm_grouped(F f, cublasHandle_t h, GemmGroups& g, int64_t g0, int n, const std::vector<T>& one,
                            const std::vector<T>& zero) {
  return f(h, g.ta.data() + g0, g.tb.data() + g0, g.m.data() + g0, g.n.data() + g0, g.k.data() + g0,
           one.data() + g0, reinterpret_cast<const T* const*>(g.dA) + g0, g.lda.data() + g0,
           reinterpret_cast<const T* const*>(g.dB) + g0, g.ldb.data() + g0, zero.data() + g0,
           reinterpret_cast<T* const*>(g.dC) + g0, g.ldc.data() + g0, n, g.ones.data() + g0);
}
cublasStatus_t gemm_grouped(cublasHandle_t h, GemmGroups& g, int64_t g0, int n, const double*) {
  return gemm_grouped(cublasDgemmGroupedBatched, h, g, g0, n, g.one_d, g.zero_d);
}
cublasStatus_t gemm_grouped(cublasHandle_t h, GemmGroups& g, int64_t g0, int n, const float*) {
  return gemm_grouped(cublasSgemmGroupedBatched, h, g, g0, n, g.one_f, g.zero_f);
}

const DevTables<double>& dev_tables(const GpuData& G, const double*) { return G.tab_d; }
const DevTables<float>& dev_tables(const GpuData& G, const float*) { return G.tab_f; }

// The device copies of a call's pointer arrays (after its last chunk).
void upload_groups(GpuData& G, GemmGroups& g, cudaStream_t s0) {
  const size_t ng = g.ta.size();
  g.ones.assign(ng, 1);
  g.one_d.assign(ng, 1.0);
  g.zero_d.assign(ng, 0.0);
  g.one_f.assign(ng, 1.0f);
  g.zero_f.assign(ng, 0.0f);
  g.dA = static_cast<const void**>(G.alloc(ng * sizeof(void*), "laplace M2L product pointers"));
  g.dB = static_cast<const void**>(G.alloc(ng * sizeof(void*), "laplace M2L product pointers"));
  g.dC = static_cast<void**>(G.alloc(ng * sizeof(void*), "laplace M2L product pointers"));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.dA, g.hA.data(), ng * sizeof(void*), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.dB, g.hB.data(), ng * sizeof(void*), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(g.dC, g.hC.data(), ng * sizeof(void*), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));  // the host arrays may change after this
}

// Chunk c of a call: its groups in one grouped cuBLAS call.
template <class T>
void run_groups(cublasHandle_t h, GemmGroups& g, size_t c) {
  const int64_t g0 = g.g_off[c], ng = g.g_off[c + 1] - g0;
  if (ng > 0) GPUFMM_CUBLAS_CHECK(gemm_grouped(h, g, g0, int(ng), static_cast<const T*>(nullptr)));
}

// The order of a chunk's segments: by coax matrix, rotation table, flip.
template <class T>
std::tuple<int32_t, int32_t, int8_t> rcr_key(const LaplaceTables<T>& ht, const std::vector<int32_t>& sop, int32_t s) {
  const int32_t op = sop[size_t(s)];
  return std::make_tuple(ht.op_coax[size_t(op)], ht.op_rot[size_t(op)], ht.op_flip[size_t(op)]);
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

// The part of both forms: the entries in groups and segments, the chunks,
// each chunk's segments in the order of (coax, rotation, flip) (for the RCR
// factors: classes that differ in the azimuth alone share both, so their
// entries are one run of columns; the dense products take any order), the
// buffers of the gathered multipoles and of the products, the receivers'
// CSR.
template <class T>
void build_common(GpuData& G, const LaplacePlan& P, const LaplaceTables<T>& ht, cudaStream_t s0) {
  M2LGemm& g = G.gemm;
  const std::vector<int32_t>& op_p = ht.op_p;
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
  g.built = true;
  const int64_t ng = g.grp.ngroups;
  if (ng == 0 || nent == 0) return;
  // The segments on the host: sizes, classes, group boundaries.
  std::vector<int32_t> gseg(static_cast<size_t>(ng) + 1);
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(gseg.data(), g.grp.gseg, gseg.size() * 4, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  const int32_t nseg = gseg[size_t(ng)];
  std::vector<int32_t>& sbeg = g.h_sbeg;
  std::vector<int32_t>& sop = g.h_sop;
  sbeg.resize(static_cast<size_t>(nseg) + 1);
  sop.resize(static_cast<size_t>(nseg));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(sbeg.data(), g.grp.seg_begin, sbeg.size() * 4, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(sop.data(), g.grp.seg_op, sop.size() * 4, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));

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
  g.max_cols = max_cols;
  g.buf_m = G.alloc(size_t(max_cols * p2) * sizeof(T), "laplace M2L gathered multipoles");
  g.buf_l = G.alloc(size_t(max_cols * p2) * sizeof(T), "laplace M2L products");

  // Per chunk its segments by (coax, rotation, flip); per segment the
  // column of its first entry.
  std::vector<int64_t>& pos = g.h_pos;
  pos.assign(size_t(nseg), 0);
  for (M2LGemmChunk& c : g.chunks) {
    std::vector<int32_t>& ord = c.ord;
    for (int32_t s = c.s0; s < c.s1; ++s) ord.push_back(s);
    std::stable_sort(ord.begin(), ord.end(), [&](int32_t x, int32_t y) { return rcr_key(ht, sop, x) < rcr_key(ht, sop, y); });
    int64_t at = c.e0;
    for (int32_t s : ord) {
      pos[size_t(s)] = at;
      at += sbeg[size_t(s) + 1] - sbeg[size_t(s)];
    }
  }
  int64_t* seg_pos = static_cast<int64_t*>(G.alloc(pos.size() * sizeof(int64_t), "laplace M2L segment columns"));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(seg_pos, pos.data(), pos.size() * sizeof(int64_t), cudaMemcpyHostToDevice, s0));
  g.seg_pos = seg_pos;

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
    k_gemm_rcv_keys<<<blocks_for(G, int64_t(nseg) * 128, 128), 128, 0, s0>>>(nseg, g.grp, op_p_d, seg_pos, key,
                                                                             val, cnt);
    check_launch("laplace M2L receiver row kernel");
    tmp.run_cub(sort, "cub::DeviceRadixSort::SortPairs (M2L receiver rows)");
    tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum (M2L receiver rows)");
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    g.rcv_off = rcv_off;
    g.rcv_ent = rcv_ent;
  }
  plan_cublas(G);
}

// The dense form: T_c of every class a segment names, one product per
// segment.
template <class T>
void build_dense(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab, const LaplaceTables<T>& ht,
                 cudaStream_t s0) {
  M2LGemm& g = G.gemm;
  const std::vector<int32_t>& op_p = ht.op_p;
  const std::vector<int32_t>& sop = g.h_sop;
  const std::vector<int32_t>& sbeg = g.h_sbeg;
  const int64_t p2 = int64_t(P.p) * P.p;
  const std::vector<int64_t> off = build_operators<T>(G, P, tab, op_p, sop, s0);
  for (const M2LGemmChunk& c : g.chunks) {
    for (int32_t s = c.s0; s < c.s1; ++s) {
      const int32_t op = sop[size_t(s)];
      const int np = op_p[size_t(op)] * op_p[size_t(op)];
      const int64_t c0 = g.h_pos[size_t(s)] - c.e0;
      g.dense.add(CUBLAS_OP_N, CUBLAS_OP_N, np, sbeg[size_t(s) + 1] - sbeg[size_t(s)], np,
                  static_cast<const T*>(g.ops) + off[size_t(op)], np, static_cast<const T*>(g.buf_m) + c0 * p2,
                  int(p2), static_cast<T*>(g.buf_l) + c0 * p2, int(p2));
    }
    g.dense.end_chunk();
  }
  upload_groups(G, g.dense, s0);
  g.dense_built = true;
}

// The RCR factors: the rotation tables in the products' order, the
// azimuths, the rotated vectors' buffers, and per run of columns that
// share a rotation (a coax matrix) its products (see m2l_gemm.cuh).
template <class T>
void build_rcr(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab, const LaplaceTables<T>& ht,
               cudaStream_t s0) {
  M2LGemm& g = G.gemm;
  const std::vector<int32_t>& op_p = ht.op_p;
  const std::vector<int32_t>& sop = g.h_sop;
  const std::vector<int32_t>& sbeg = g.h_sbeg;
  const std::vector<int64_t>& pos = g.h_pos;
  const int p = P.p;
  const int64_t p2 = int64_t(p) * p;
  const int64_t rc = int64_t(p) * (2 * p - 1);  // columns of an entry's rotated vector
  g.buf_e = G.alloc(size_t(g.max_cols * rc) * sizeof(T), "laplace M2L rotated multipoles");
  g.buf_f = G.alloc(size_t(g.max_cols * rc) * sizeof(T), "laplace M2L rotated products");
  // The B(b) tables with each m < 0 block in the p^2 layout's order (m =
  // -n first): a degree's coefficients are then one matrix.
  std::vector<T> rev(ht.rot);
  for (int t = 0; t < ht.nrot; ++t)
    for (int n = 1; n < ht.p; ++n) {
      const size_t o = size_t(t) * ht.rot_stride + laplace_rotation_offset(n) + size_t(n + 1) * (n + 1);
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) rev[o + size_t(a * n + b)] = ht.rot[o + size_t((n - 1 - a) * n + (n - 1 - b))];
    }
  T* rr = static_cast<T*>(G.alloc(rev.size() * sizeof(T), "laplace M2L rotation tables (rcr)"));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(rr, rev.data(), rev.size() * sizeof(T), cudaMemcpyHostToDevice, s0));
  T* cs = static_cast<T*>(G.alloc(size_t(2) * kNumOps * p * sizeof(T), "laplace M2L azimuths (rcr)"));
  k_rcr_cs<T><<<(kNumOps + 127) / 128, 128, 0, s0>>>(kNumOps, p, tab, cs);
  check_launch("laplace M2L azimuth kernel");
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));  // rev is freed next
  g.rot_rev = rr;
  g.cs = cs;
  const cublasOperation_t N = CUBLAS_OP_N, Tr = CUBLAS_OP_T;
  const int ldo = 2 * p - 1;
  for (const M2LGemmChunk& c : g.chunks) {
    const std::vector<int32_t>& ord = c.ord;
    const int64_t nc = c.e1 - c.e0;  // the leading dimension of E and F
    auto col = [&](int n, int m) { return (int64_t(n) * ldo + m + p - 1) * nc; };
    // Runs [i, j) of ord whose segments share key(s): body(first segment,
    // first column, columns).
    auto runs = [&](auto key, auto body) {
      for (size_t i = 0; i < ord.size();) {
        size_t j = i + 1;
        while (j < ord.size() && key(ord[j]) == key(ord[i])) ++j;
        const int32_t first = ord[i], last = ord[j - 1];
        body(first, pos[size_t(first)] - c.e0,
             int(pos[size_t(last)] + sbeg[size_t(last) + 1] - sbeg[size_t(last)] - pos[size_t(first)]));
        i = j;
      }
    };
    runs([&](int32_t s) { return rcr_key(ht, sop, s); }, [&](int32_t s, int64_t c0, int ns) {
      const int32_t op = sop[size_t(s)];
      const int pp = op_p[size_t(op)];
      const bool flip = ht.op_flip[size_t(op)] != 0;
      const T* B = rr + size_t(ht.op_rot[size_t(op)]) * ht.rot_stride;
      const T* X = static_cast<const T*>(g.buf_m) + c0 * p2;
      T* Gb = static_cast<T*>(g.buf_l) + c0 * p2;
      T* E = static_cast<T*>(g.buf_e) + c0;
      T* F = static_cast<T*>(g.buf_f) + c0;
      const int ld = int(nc);
      for (int n = 0; n < pp; ++n) {
        const T* bc = B + laplace_rotation_offset(n);  // row-major (n+1)^2: B(m, j) = bc[m (n+1) + j]
        const T* bs = bc + (n + 1) * (n + 1);          // n^2, orders -n .. -1
        // E_n = X_n^T B'^T with B' = B, or B^T when flipped (bc read
        // column-major is B^T).
        g.rot_f.add(Tr, flip ? Tr : N, ns, n + 1, n + 1, X + n * n + n, int(p2), bc, n + 1, E + col(n, 0), ld);
        if (n > 0) g.rot_f.add(Tr, flip ? Tr : N, ns, n, n, X + n * n, int(p2), bs, n, E + col(n, -n), ld);
        // G_n = B'' F_n^T with B'' = B^T, or B when flipped.
        g.rot_b.add(flip ? Tr : N, Tr, n + 1, ns, n + 1, bc, n + 1, F + col(n, 0), ld, Gb + n * n + n, int(p2));
        if (n > 0) g.rot_b.add(flip ? Tr : N, Tr, n, ns, n, bs, n, F + col(n, -n), ld, Gb + n * n, int(p2));
      }
    });
    runs([&](int32_t s) { return ht.op_coax[size_t(sop[size_t(s)])]; }, [&](int32_t s, int64_t c0, int ns) {
      const int32_t cx = ht.op_coax[size_t(sop[size_t(s)])];
      const int pp = ht.coax_p[size_t(cx)];
      const T* C = tab.coax + ht.coax_offset[size_t(cx)];
      const T* E = static_cast<const T*>(g.buf_e) + c0;
      T* F = static_cast<T*>(g.buf_f) + c0;
      for (int m = 1 - pp; m < pp; ++m) {
        // F_m = E_m C_m^T: the order-|m| block, row-major (n, n'), read
        // column-major is C_m^T.
        const int am = m < 0 ? -m : m, w = pp - am;
        g.coax.add(N, N, ns, w, w, E + col(am, m), int(ldo * nc), C + laplace_coax_offset(pp, pp, am), w,
                   F + col(am, m), int(ldo * nc));
      }
    });
    g.rot_f.end_chunk();
    g.coax.end_chunk();
    g.rot_b.end_chunk();
  }
  upload_groups(G, g.rot_f, s0);
  upload_groups(G, g.coax, s0);
  upload_groups(G, g.rot_b, s0);
  g.rcr_built = true;
}

template <class T>
void build_typed(GpuData& G, const LaplacePlan& P, const DevTables<T>& tab, const LaplaceTables<T>& ht, bool rcr,
                 cudaStream_t s0) {
  M2LGemm& g = G.gemm;
  if (!g.built) build_common<T>(G, P, ht, s0);
  if (g.chunks.empty()) return;
  if (rcr && !g.rcr_built) build_rcr<T>(G, P, tab, ht, s0);
  if (!rcr && !g.dense_built) build_dense<T>(G, P, tab, ht, s0);
}

}  // namespace

void GemmGroups::add(cublasOperation_t opa, cublasOperation_t opb, int mm, int nn, int kk, const void* A, int la,
                     const void* B, int lb, void* C, int lc) {
  ta.push_back(opa);
  tb.push_back(opb);
  m.push_back(mm);
  n.push_back(nn);
  k.push_back(kk);
  hA.push_back(A);
  lda.push_back(la);
  hB.push_back(B);
  ldb.push_back(lb);
  hC.push_back(C);
  ldc.push_back(lc);
}

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

void m2l_gemm_build(GpuData& G, const LaplacePlan& P, bool rcr, cudaStream_t s0) {
  if (P.single())
    build_typed<float>(G, P, G.tab_f, *P.tables_f, rcr, s0);
  else
    build_typed<double>(G, P, G.tab_d, *P.tables_d, rcr, s0);
}

template <class T>
void m2l_gemm_run(GpuData& G, int p, const T* M, T* L, uint8_t* has_local, cudaStream_t s) {
  M2LGemm& g = G.gemm;
  const bool rcr = G.k.m2l_rcr > 0;
  require(g.built && (g.chunks.empty() || (rcr ? g.rcr_built : g.dense_built)), GPUFMM_ERROR_INTERNAL,
          "laplace: m2l=gemm without its plan data");
  if (g.chunks.empty()) return;  // no M2L entry (and no cuBLAS handle)
  const int64_t p2 = int64_t(p) * p;
  const DevTables<T>& tab = dev_tables(G, static_cast<const T*>(nullptr));
  GPUFMM_CUBLAS_CHECK(cublasSetStream(g.handle, s));
  T* bm = static_cast<T*>(g.buf_m);
  const T* bl = static_cast<const T*>(g.buf_l);
  const T* cs = static_cast<const T*>(g.cs);
  const int nt = int(std::min<int64_t>(512, (p2 + 31) / 32 * 32));
  for (size_t ci = 0; ci < g.chunks.size(); ++ci) {
    const M2LGemmChunk& c = g.chunks[ci];
    const unsigned nsb = unsigned(std::min<int64_t>(c.s1 - c.s0, 1 << 30));
    const unsigned nrb = unsigned(std::min<int64_t>(c.r1 - c.r0, 1 << 30));
    if (rcr) {
      k_rcr_gather<T><<<nsb, 256, 0, s>>>(c.s0, c.s1, c.e0, g.grp, g.seg_pos, tab, cs, p, M, bm);
      check_launch("laplace M2L gather kernel (rcr)");
      run_groups<T>(g.handle, g.rot_f, ci);
      run_groups<T>(g.handle, g.coax, ci);
      run_groups<T>(g.handle, g.rot_b, ci);
      k_rcr_reduce<T><<<nrb, nt, 0, s>>>(c.r0, c.r1, c.e0, p, tab, cs, g.rcv_off, g.rcv_ent, bl, L, has_local);
      check_launch("laplace M2L sum kernel (rcr)");
    } else {
      k_gemm_gather<T><<<nsb, 256, 0, s>>>(c.s0, c.s1, c.e0, g.grp, g.seg_pos, tab.op_p, p2, M, bm);
      check_launch("laplace M2L gather kernel");
      run_groups<T>(g.handle, g.dense, ci);
      k_gemm_reduce<T><<<nrb, nt, 0, s>>>(c.r0, c.r1, c.e0, p2, g.rcv_off, g.rcv_ent, bl, L, has_local);
      check_launch("laplace M2L sum kernel");
    }
  }
}

template void m2l_gemm_run<double>(GpuData&, int, const double*, double*, uint8_t*, cudaStream_t);
template void m2l_gemm_run<float>(GpuData&, int, const float*, float*, uint8_t*, cudaStream_t);

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
