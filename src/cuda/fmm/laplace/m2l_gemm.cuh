// M2L as dense products (m2l=gemm): the translations of one operator class
// share one linear map of the p'^2 multipole coefficients to the p'^2 local
// ones (the expansions are scaled to their boxes, so the class alone fixes
// it), so a class's translations are one product T_c [M_1 .. M_n], a GEMM
// that cuBLAS runs on the FP64 tensor cores (DMMA) in double.
//
// Why: the grouped kernel (m2l_group.cuh) does the RCR steps of 8
// translations at a time at ~17 % of the SM's issue rate, latency bound
// (docs/laplace_gpu.md). The dense map costs p'^4 multiply-adds per
// translation against ~(8/3) p'^3 for RCR, but at the tensor cores' rate.
//
// Plan (m2l_gemm_build, m2l_gemm.cu):
//  - the entries: build_m2l_groups with groups as large as the buffers
//    allow (M2LGemm::gsize consecutive receivers, of any levels: a
//    class's translations of every level are one product), i.e. per group
//    its entries sorted by class into segments; a chunk is a run of groups
//    whose entries fit the buffers;
//  - T_c of every class that a segment names, built by running the grouped
//    kernel itself on unit multipoles (so no formula is repeated: the
//    columns of T_c are k_m2l_group's translations of e_1 .. e_{p'^2}),
//    packed p'^2 x p'^2, column-major;
//  - per receiver its entries in class order (a CSR), for the sums.
// Evaluate (m2l_gemm_run), per chunk: gather the sources' multipoles
// (segment after segment) into a buffer, one grouped cuBLAS call (a product
// per segment), then per receiver add its products in class order to L.
// Deterministic: no atomics; the order of the sums is fixed by the plan.
//
// With m2l_rcr the operator is not formed: T_c = A^T B^T C B A (eq. 33,
// flipped as eq. 34), and the products are the factors': the gather applies
// A (and F), three grouped calls the block-diagonal B (per degree), C (per
// order) and B^T, the sums A^T (and F). ~2 p'^3 multiply-adds per
// translation instead of p'^4, in products of at most p' x p' operators;
// the vectors between the calls are stored entries fastest, with degree n,
// order m at column n (2p - 1) + m + p - 1, so that a degree's and an
// order's coefficients are both a matrix of uniform stride.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <vector>

#include "cuda/fmm/laplace/m2l_group.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

// A run of consecutive groups: entries [e0, e1), segments [s0, s1),
// receivers [r0, r1) (global box indices).
struct M2LGemmChunk {
  int64_t e0 = 0, e1 = 0;
  int32_t s0 = 0, s1 = 0;
  int64_t r0 = 0, r1 = 0;
  std::vector<int32_t> ord;  // its segments in the order of their columns
};

// One grouped cuBLAS call (cublas[DS]gemmGroupedBatched): a group of one
// product C = op(A) op(B) each; the groups of chunk c are [g_off[c],
// g_off[c + 1]). Host: the sizes and operations; device: the pointers.
struct GemmGroups {
  std::vector<cublasOperation_t> ta, tb;
  std::vector<int> m, n, k, lda, ldb, ldc, ones;
  std::vector<double> one_d, zero_d;
  std::vector<float> one_f, zero_f;
  std::vector<const void*> hA, hB;
  std::vector<void*> hC;
  std::vector<int64_t> g_off{0};
  const void** dA = nullptr;
  const void** dB = nullptr;
  void** dC = nullptr;
  void add(cublasOperation_t opa, cublasOperation_t opb, int mm, int nn, int kk, const void* A, int la,
           const void* B, int lb, void* C, int lc);
  void end_chunk() { g_off.push_back(int64_t(ta.size())); }
};

struct M2LGemm {
  bool built = false;        // the entries, chunks, buffers and CSR of both forms
  bool dense_built = false;  // the dense operators and their products
  bool rcr_built = false;    // the RCR factors' tables and products (k.m2l_rcr)
  int gsize = 0;     // receivers per group (consecutive global indices)
  DevM2LGroups grp;  // entries sorted by (group, class)
  int64_t nent = 0;
  // Receiver r's entries: rcv_ent[rcv_off[r] .. rcv_off[r + 1]), each
  // (op << 48) | (p'^2 << 32) | position in grp.ent, in class order.
  const int32_t* rcv_off = nullptr;
  const uint64_t* rcv_ent = nullptr;
  const void* ops = nullptr;  // the packed T_c (the plan's precision; dense)
  const int64_t* seg_pos = nullptr;  // per segment: the column of its first entry in the buffers
  // Dense: one product per segment, T_c times the gathered multipoles.
  // RCR (rcr): per segment and degree n (orders m >= 0 and m < 0 apart)
  // the rotation B(b) or its transpose, per order the coaxial block, per
  // degree the rotation back; the azimuthal rotation A(a) and the flip F
  // (eq. 34) in the gather and in the sums (rotation.hpp's element
  // functions).
  GemmGroups dense, rot_f, coax, rot_b;
  const void* rot_rev = nullptr;  // rcr: the B(b) tables, the m < 0 blocks in the p^2 layout's order
  const void* cs = nullptr;       // rcr: per op cos(m a), sin(m a), m < p ([kNumOps][2 p])
  std::vector<M2LGemmChunk> chunks;
  int64_t max_cols = 0;                      // the most entries of a chunk
  std::vector<int32_t> h_sbeg, h_sop;        // host copies of grp.seg_begin, grp.seg_op
  std::vector<int64_t> h_pos;                // host copy of seg_pos
  void *buf_m = nullptr, *buf_l = nullptr;  // [max chunk entries * p^2] each
  // rcr: the rotated vectors, entries fastest ([p (2 p - 1)][entries] per
  // segment), before and after the coaxial products.
  void *buf_e = nullptr, *buf_f = nullptr;
  cublasHandle_t handle = nullptr;
  size_t ops_bytes = 0;
};

// M2M as dense products (m2m=gemm, m2m_gemm.cu). The scaled M2M of a child
// in octant o is one linear map T_o of its p^2 coefficients, the same at
// every level; T_0 .. T_7 are built by the BpB M2M kernel on unit
// multipoles (no formula repeated). Per level: the children's multipoles
// gathered octant by octant into a buffer, eight GEMMs (DMMA in double),
// and per parent the sum of its children's products in child order (the
// BpB M2M's order), written once; a leaf keeps its P2M.
// Why: an adaptive tree's levels hold a few hundred parents, and at high
// p the BpB M2M (a block per parent, its children one after the other,
// each RCR step latency bound) left most of the GPU idle: 3.1 ms of the
// upward pass of 1e5 Plummer points at p = 34 (H200).
struct M2MGemm {
  bool built = false;
  const void* ops = nullptr;   // T_0 .. T_7: p^2 x p^2 each, column-major
  int32_t* col = nullptr;      // [boxes]: a child's column in its level's buffers
  struct Level {               // parents at this level, children at the next
    bool dense = false;        // false: the level goes through the BpB M2M
    int64_t c0 = 0, nc = 0;    // the children: boxes [c0, c0 + nc)
    int64_t off[9] = {};       // columns of octant o: [off[o], off[o + 1])
  };
  std::vector<Level> lv;       // [l_max + 1]
  void *buf_m = nullptr, *buf_l = nullptr;  // [largest level's children * p^2]
};

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
