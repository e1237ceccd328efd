// Plan set-up of the CUDA Laplace driver (laplace_plan_setup): the tables
// to the device (tables.cu), the sorted coordinates, the target -> leaf map,
// the work units of the BpB P2P and the entries of the grouped M2L.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include <cub/cub.cuh>

#include "cuda/common/points.hpp"
#include "cuda/common/temp_storage.cuh"
#include "cuda/fmm/laplace/gpu_data.cuh"
#include "cuda/nearfield/p2p_units.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

namespace nf = gpufmm::nearfield::cuda;

namespace {

// leaf_of[i] = the leaf box (global index) of sorted target i.
__global__ void k_leaf_of(int64_t b0, int64_t nb, DevSet R, int32_t* leaf_of) {
  for (int64_t t = gtid(); t < nb; t += gstride()) {
    const int64_t b = b0 + t;
    for (int32_t i = R.point_begin[b]; i < R.point_end[b]; ++i) leaf_of[i] = static_cast<int32_t>(b);
  }
}

// key / value of the entries of rows [r0, r1) of one CSR list (out + the
// list's first entry offset of row r0 is entry 0 here).
__global__ void k_m2l_group_keys(int64_t r0, int64_t r1, GroupLevels lv, DevList list, int64_t first,
                                 uint32_t* __restrict__ key, uint64_t* __restrict__ val) {
  for (int64_t b = r0 + gtid(); b < r1; b += gstride()) {
    int l = 0;
    while (l + 1 < lv.nlev && b >= lv.lo[l + 1]) ++l;
    const uint32_t g = static_cast<uint32_t>(lv.gbase[l] + (b - lv.lo[l]) / lv.gsize);
    for (int64_t e = list.offsets[b]; e < list.offsets[b + 1]; ++e) {
      key[e - first] = g * 1024u + static_cast<uint32_t>(list.cls[e]);
      val[e - first] = (uint64_t(uint32_t(list.index[e])) << 32) | uint64_t(uint32_t(b));
    }
  }
}

// Segments -> gseg (first segment of each group), seg_op.
__global__ void k_m2l_group_segments(int32_t nseg, int64_t ngroups, const uint32_t* __restrict__ ukey,
                                     int32_t* __restrict__ gseg, int32_t* __restrict__ seg_op) {
  for (int64_t i = gtid(); i <= nseg; i += gstride()) {
    const int64_t g = i < nseg ? int64_t(ukey[i] >> 10) : ngroups;
    const int64_t gp = i == 0 ? -1 : int64_t(ukey[i - 1] >> 10);
    for (int64_t k = gp + 1; k <= g; ++k) gseg[k] = static_cast<int32_t>(i);
    if (i < nseg) seg_op[i] = static_cast<int32_t>(ukey[i] & 1023u);
  }
}

// Work units of the BpB P2P over the leaves (nf::build_units). A block per
// leaf made the crowded leaves of non-uniform data the tail of the launch
// (H100, N = 1e6 ellipsoid, L = 6: the SMs were busy 43 % of the P2P
// kernel's 26.8 ms under Nsight Compute, against 89 % of 12.3 ms for
// uniform data with the same instruction count).
// The receiver leaves as a set of their own (row r = leaf leaves[r]): point
// ranges, centres and keys, for the P2P work units and kernels.
// leaf_of[i] = the receiver leaf of target i (leaves of every level).
__global__ void k_leaf_of_list(int64_t n, const int32_t* __restrict__ leaves, DevSet R, int32_t* __restrict__ leaf_of) {
  for (int64_t r = gtid(); r < n; r += gstride()) {
    const int32_t b = leaves[r];
    for (int32_t i = R.point_begin[b]; i < R.point_end[b]; ++i) leaf_of[i] = b;
  }
}

__global__ void k_gather_leaves(int64_t n, const int32_t* __restrict__ leaves, DevSet R, int32_t* __restrict__ begin,
                                int32_t* __restrict__ end, double* __restrict__ center, uint64_t* __restrict__ key) {
  for (int64_t r = gtid(); r < n; r += gstride()) {
    const int32_t b = leaves[r];
    begin[r] = R.point_begin[b];
    end[r] = R.point_end[b];
    key[r] = R.box_key[b];
    for (int k = 0; k < 3; ++k) center[3 * r + k] = R.center[3 * int64_t(b) + k];
  }
}

// A host vector in device memory (the plan's).
template <class V>
V* upload(GpuData& G, const std::vector<V>& v, const char* what, cudaStream_t s0) {
  V* d = static_cast<V*>(G.alloc(sizeof(V) * std::max<size_t>(v.size(), 1), what));
  if (!v.empty()) GPUFMM_CUDA_CHECK(cudaMemcpyAsync(d, v.data(), sizeof(V) * v.size(), cudaMemcpyHostToDevice, s0));
  return d;
}

// Issue 19: an adaptive plan's lists and leaves on the device, and the P2P
// work units of its U rows.
void adaptive_setup(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  const lists::AdaptiveLists& A = *P.alists;
  const tree::Tree& t = *P.tree;
  const tree::PointSet& R = t.receivers();
  const tree::PointSet& S = t.src;
  GpuData::Adaptive& a = G.ad;
  a.nleaves = int64_t(A.leaves.size());
  a.nw = int64_t(A.w.size());
  a.nx = int64_t(A.x_box.size());
  a.leaves = upload(G, A.leaves, "laplace adaptive leaves", s0);
  a.u_off = upload(G, A.u_off, "laplace U list", s0);
  a.u = upload(G, A.u, "laplace U list", s0);
  a.w_off = upload(G, A.w_off, "laplace W list", s0);
  a.w = upload(G, A.w, "laplace W list", s0);
  a.x_box = upload(G, A.x_box, "laplace X list", s0);
  a.x_off = upload(G, A.x_off, "laplace X list", s0);
  a.x = upload(G, A.x, "laplace X list", s0);
  // Ranges per level: leaves and X rows are ascending global indices, i.e.
  // level-major.
  const int L = P.l_max;
  auto ranges = [L](const std::vector<int32_t>& boxes, const tree::PointSet& X) {
    std::vector<int64_t> r(size_t(L) + 2, 0);
    for (int l = 0; l <= L + 1; ++l)
      r[size_t(l)] = std::lower_bound(boxes.begin(), boxes.end(), int32_t(X.level_offset[size_t(l)])) - boxes.begin();
    return r;
  };
  a.leaf_level = ranges(A.leaves, R);
  std::vector<int32_t> sl;  // source leaves, level-major
  {
    std::vector<uint8_t> leaf(size_t(S.nboxes));
    if (S.nboxes > 0) backend_download(P.ctx, leaf.data(), S.leaf, leaf.size(), false);
    for (int64_t b = 0; b < S.nboxes; ++b)
      if (leaf[size_t(b)]) sl.push_back(int32_t(b));
  }
  a.nsrc_leaves = int64_t(sl.size());
  a.src_leaves = upload(G, sl, "laplace adaptive leaves", s0);
  for (int l = 0; l <= L + 1 && l < tree::kMaxLevel + 2; ++l) {
    a.soff.v[l] = S.level_offset[size_t(l)];
    a.roff.v[l] = R.level_offset[size_t(l)];
  }
  // The receiver leaves as a set of their own.
  const int64_t n = a.nleaves;
  int32_t* beg = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * std::max<int64_t>(n, 1), "laplace adaptive leaves"));
  int32_t* end = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * std::max<int64_t>(n, 1), "laplace adaptive leaves"));
  double* cen = static_cast<double*>(G.alloc(sizeof(double) * 3 * std::max<int64_t>(n, 1), "laplace adaptive leaves"));
  uint64_t* key = static_cast<uint64_t*>(G.alloc(sizeof(uint64_t) * std::max<int64_t>(n, 1), "laplace adaptive leaves"));
  if (n > 0) {
    k_gather_leaves<<<blocks_for(G, n, 128), 128, 0, s0>>>(n, a.leaves, dev_set(R), beg, end, cen, key);
    check_launch("laplace adaptive leaf kernel");
    k_leaf_of_list<<<blocks_for(G, n, 128), 128, 0, s0>>>(n, a.leaves, dev_set(R), G.leaf_of);
    check_launch("laplace leaf map kernel");
  }
  a.rleaf.point_begin = beg;
  a.rleaf.point_end = end;
  a.rleaf.center = cen;
  a.rleaf.box_key = key;
  if (n > 0 && P.nsrc > 0) {
    DevList ul;
    ul.offsets = a.u_off;
    ul.index = a.u;
    G.p2p_nunits = nf::build_units(*G.ctx, s0, 0, n, a.rleaf, dev_set(S), ul,
                                   [&](size_t b, const char* what) { return G.alloc(b, what); }, &G.p2p_units,
                                   "laplace P2P units");
  }
}

void build_p2p_units(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  const tree::PointSet& R = P.tree->receivers();
  const int L = P.l_max;
  const int64_t b0 = R.level_offset[L], nb = R.level_offset[L + 1] - b0;
  if (nb <= 0) return;
  G.p2p_nunits = nf::build_units(*G.ctx, s0, b0, nb, dev_set(R), dev_set(P.tree->src),
                                 dev_list(P.lists->list[lists::kNeighbors]),
                                 [&](size_t b, const char* what) { return G.alloc(b, what); }, &G.p2p_units,
                                 "laplace P2P units");
  if (P.same_sets)
    G.mutual = nf::build_mutual_passes(*G.ctx, s0, b0, nb, dev_set(R), dev_list(P.lists->list[lists::kNeighbors]),
                                       [&](size_t b, const char* what) { return G.alloc(b, what); },
                                       "laplace mutual P2P pairs");
}

// Receivers per group when options.gpu.m2l_group does not say: the
// largest of 16, 8, 4, 2, 1 that gives at least 1.5 groups per SM (3/4 of
// the block slots: two blocks of k_m2l_group per SM), since a block owns its
// group's receivers and the groups are the launch's only parallelism.
// Measured on the H100 (docs/laplace_gpu.md, "Group size"): N = 1e6 uniform
// (294 groups of 16) and ellipsoid (237) keep 16; N = 1e5 uniform, L = 3,
// 147 groups of 4: 2 is faster (M2L + L2L 3.7 ms with 16, 1.8 ms with 2);
// N = 1e5 ellipsoid, 245 groups of 4: 4 is faster than 2.
int m2l_group_size(const tree::PointSet& R, int L, int sms) {
  const int64_t want = 3 * int64_t(sms) / 2;
  int g = 16;
  for (; g > 1; g /= 2) {
    int64_t ngroups = 0;
    for (int l = 0; l <= L; ++l) ngroups += (R.level_offset[l + 1] - R.level_offset[l] + g - 1) / g;
    if (ngroups >= want) break;
  }
  return g;
}

// The parts of the M2L lists that the grouped strategies take (modified
// stencil: type 1 at l >= 2, type 2 at l >= 1; standard: the M2L list at
// l >= 2) and the entry range of each (rows of levels lmin..L are
// contiguous).
struct M2LParts {
  struct Part {
    const lists::List* list;
    int lmin;
    int64_t first, count;
  };
  std::vector<Part> parts;
  int64_t nent = 0;
};

M2LParts m2l_parts(const LaplacePlan& P, cudaStream_t s0) {
  const tree::PointSet& R = P.tree->receivers();
  const int L = P.l_max;
  M2LParts m;
  if (L < 2 || R.nboxes == 0) return m;
  if (P.modified) {
    m.parts.push_back({&P.lists->list[lists::kType1], 2, 0, 0});
    m.parts.push_back({&P.lists->list[lists::kType2], 1, 0, 0});
  } else {
    m.parts.push_back({&P.lists->list[lists::kM2L], 2, 0, 0});
  }
  for (auto& part : m.parts) {
    int64_t o[2] = {0, 0};
    const lists::List& li = *part.list;
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&o[0], li.offsets + R.level_offset[part.lmin], sizeof(int64_t),
                                      cudaMemcpyDeviceToHost, s0));
    GPUFMM_CUDA_CHECK(
        cudaMemcpyAsync(&o[1], li.offsets + R.level_offset[L + 1], sizeof(int64_t), cudaMemcpyDeviceToHost, s0));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    part.first = o[0];
    part.count = o[1] - o[0];
    m.nent += part.count;
  }
  return m;
}

}  // namespace

int64_t m2l_entry_count(const LaplacePlan& P, cudaStream_t s0) { return m2l_parts(P, s0).nent; }

// Grouped M2L entries (m2l_group.cuh): the entries of m2l_parts keyed by
// (group of gsize receivers of a level, or of consecutive receivers of any
// levels with span_levels, class), sorted, and cut into segments of one
// class.
void build_m2l_groups(GpuData& G, const LaplacePlan& P, int gsize, bool span_levels, DevM2LGroups& out,
                      cudaStream_t s0) {
  const tree::Tree& tr = *P.tree;
  const tree::PointSet& R = tr.receivers();
  const int L = P.l_max;
  if (L < 2 || R.nboxes == 0) return;
  require(L + 1 <= kGroupMaxLevels, GPUFMM_ERROR_INTERNAL, "laplace: tree too deep for grouped M2L");
  GroupLevels lv{};
  lv.nlev = span_levels ? 1 : L + 1;
  lv.gsize = gsize;
  int64_t ngroups = 0;
  for (int l = 0; l < lv.nlev; ++l) {
    lv.lo[l] = R.level_offset[l];
    lv.gbase[l] = ngroups;
    ngroups += (R.level_offset[span_levels ? L + 1 : l + 1] - R.level_offset[l] + gsize - 1) / gsize;
  }
  lv.lo[lv.nlev] = R.level_offset[L + 1];
  require(ngroups < (int64_t(1) << 22), GPUFMM_ERROR_INTERNAL, "laplace: too many M2L groups");
  const M2LParts mp = m2l_parts(P, s0);
  const int64_t nent = mp.nent;
  out.ngroups = ngroups;
  require(nent < (int64_t(1) << 31), GPUFMM_ERROR_INTERNAL, "laplace: too many M2L entries");
  int32_t* gseg = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * (ngroups + 1), "laplace M2L groups"));
  out.gseg = gseg;
  if (nent == 0) {
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(gseg, 0, sizeof(int32_t) * (ngroups + 1), s0));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    return;
  }
  // Temporaries: keys, values (in and sorted), unique keys, counts, CUB storage.
  const size_t n = static_cast<size_t>(nent);
  int end_bit = 10;
  while ((int64_t(1) << end_bit) < ngroups * 1024) ++end_bit;
  gpufmm::cuda::TempStorage tmp(*G.ctx, "laplace M2L group set-up");
  uint32_t *key = nullptr, *key_s = nullptr, *ukey = nullptr;
  uint64_t* val = nullptr;
  int32_t *cnt = nullptr, *nrun_d = nullptr, *seg_begin = nullptr;
  int32_t nseg = 0;
  tmp.add(key, nent);
  tmp.add(key_s, nent);
  tmp.add(val, nent);
  tmp.add(ukey, nent);
  tmp.add(cnt, nent + 1);
  tmp.add(nrun_d, 1);
  uint64_t* ent = static_cast<uint64_t*>(G.alloc(n * 8, "laplace M2L group entries"));
  auto sort = [&](void* t, size_t& b) {
    return cub::DeviceRadixSort::SortPairs(t, b, key, key_s, val, ent, nent, 0, end_bit, s0);
  };
  auto rle = [&](void* t, size_t& b) {
    return cub::DeviceRunLengthEncode::Encode(t, b, key_s, ukey, cnt, nrun_d, nent, s0);
  };
  // Sized for the counts of every entry, run on those of the nseg segments.
  int64_t nscan = nent + 1;
  auto scan = [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, cnt, seg_begin, nscan, s0); };
  tmp.add_cub(sort, "cub::DeviceRadixSort::SortPairs (M2L groups)");
  tmp.add_cub(rle, "cub::DeviceRunLengthEncode::Encode (M2L groups)");
  tmp.add_cub(scan, "cub::DeviceScan::ExclusiveSum (M2L groups)");
  tmp.allocate();
  int64_t at = 0;
  for (const auto& part : mp.parts) {
    const int64_t r0 = R.level_offset[part.lmin], r1 = R.level_offset[L + 1];
    if (part.count > 0) {
      k_m2l_group_keys<<<blocks_for(G, r1 - r0, 128), 128, 0, s0>>>(r0, r1, lv, dev_list(*part.list),
                                                                    part.first - at, key, val);
      check_launch("laplace M2L group key kernel");
    }
    at += part.count;
  }
  tmp.run_cub(sort, "cub::DeviceRadixSort::SortPairs (M2L groups)");
  tmp.run_cub(rle, "cub::DeviceRunLengthEncode::Encode (M2L groups)");
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&nseg, nrun_d, sizeof nseg, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  seg_begin = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * (size_t(nseg) + 1), "laplace M2L segments"));
  int32_t* seg_op = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * std::max(nseg, 1), "laplace M2L segments"));
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(cnt + nseg, 0, sizeof(int32_t), s0));
  nscan = nseg + 1;
  tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum (M2L groups)");
  k_m2l_group_segments<<<blocks_for(G, int64_t(nseg) + 1, 128), 128, 0, s0>>>(nseg, ngroups, ukey, gseg, seg_op);
  check_launch("laplace M2L group segment kernel");
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  out.seg_op = seg_op;
  out.seg_begin = seg_begin;
  out.ent = ent;
}

namespace {

// m2l = AUTO: GEMM where the dense operators (p'^4 values for every class
// that has a truncation number) take at most 1/32 of the device's memory
// and p <= kGemmAutoMaxP, or p <= kGemmAutoMaxPSmall on adaptive trees and
// on uniform ones of at most kGemmAutoSmallM2L translations; on those trees
// GEMM as the RCR factors beyond (m2l_rcr_auto); else GRP.
// Measured on an H200 (docs/laplace_gpu.md, "M2L as dense products" and
// "Dense M2L above p = 24"): GEMM is faster at p = 7 .. 19; at p = 27 .. 34
// 10-35 % faster on adaptive trees (1e5 .. 1e6 points) and uniform ones of
// up to 6e4 translations, on a par or up to 7 % slower on uniform trees of
// 2e5 and more (the p'^4 products outgrow the p'^3 of RCR where the grouped
// kernel fills the GPU); at p = 44 .. 45 its plan takes 30 s. The plan takes
// 0.2-1.3 s more at p = 27 .. 34 (the operators, at each p the calibration
// tries). The RCR factors at p = 37 .. 48 (eps 1e-10 .. 1e-12; H200,
// docs/laplace_gpu.md "The RCR factors as products"): the evaluate 13-45 %
// faster than GRP on adaptive trees and uniform ones of at most 1e5
// translations (1e5 and 1e6 points), 1-5 % slower on uniform ones of 1e5
// .. 2.1e5, no operators to build.
constexpr int kGemmAutoMaxP = 24;
constexpr int kGemmAutoMaxPSmall = 36;
constexpr int64_t kGemmAutoSmallM2L = 100000;

gpufmm_laplace_strategy_t m2l_auto(const LaplacePlan& P) {
  const bool small = P.adaptive || P.m2l_translations <= kGemmAutoSmallM2L;
  if (P.p > kGemmAutoMaxP && (!small || P.calibrating)) return GPUFMM_STRATEGY_GRP;
  if (P.p > kGemmAutoMaxPSmall) return GPUFMM_STRATEGY_GEMM;  // as the RCR factors (m2l_rcr_auto)
  const std::vector<int32_t>& op_p = P.single() ? P.tables_f->op_p : P.tables_d->op_p;
  double bytes = 0;
  for (int op = 0; op < kOpM2M; ++op) bytes += std::pow(double(op_p[size_t(op)]), 4.0);
  bytes *= P.single() ? sizeof(float) : sizeof(double);
  size_t free_b = 0, total_b = 0;
  GPUFMM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return bytes <= double(total_b) / 32 ? GPUFMM_STRATEGY_GEMM : GPUFMM_STRATEGY_GRP;
}

// m2m = AUTO: GEMM (dense products) in double from p = kM2MDenseP, where
// the BpB M2M translates one child at a time (bpb_slots: S = 1 from p^2 >
// 682), else BpB. H200, eps 1e-9 (p = 30-34), 1e5 points: the evaluate
// 12.26 -> 10.48 ms (Plummer), 11.50 -> 9.58 (two clusters), 4.87 -> 4.31
// (ellipsoid), 5.38 -> 5.15 (uniform); 1e6 points within 2 % either way.
// At eps 1e-6 and in float it gained nothing or lost up to 5 %. The
// calibration's test evaluates (P.calibrating) take BpB: the operators are
// built once, for the p it chooses (laplace_plan_strategies).
gpufmm_laplace_strategy_t m2m_auto(const LaplacePlan& P) {
  constexpr int kM2MDenseP = 27;
  return !P.single() && P.p >= kM2MDenseP && !P.calibrating ? GPUFMM_STRATEGY_GEMM : GPUFMM_STRATEGY_BPB;
}

// m2l_rcr = auto (m2l = GEMM): the RCR factors where m2l = AUTO takes no
// dense operators, p > kGemmAutoMaxPSmall. Up to there the dense products
// are faster (H200, p = 17 .. 34: the M2L alone 1.0-2.0x the dense one's
// time at 1e5 and 1e6 points); beyond, the operators take 30 s and more to
// build at p = 44.
bool m2l_rcr_auto(const LaplacePlan& P) { return P.p > kGemmAutoMaxPSmall; }

}  // namespace

void m2l_plan_data(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  if (G.k.m2m == GPUFMM_STRATEGY_AUTO) G.k.m2m = m2m_auto(P);
  if (G.k.m2m == GPUFMM_STRATEGY_GEMM && !G.m2m_gemm.built) m2m_gemm_build(G, P, s0);
  if (G.k.m2l == GPUFMM_STRATEGY_AUTO) G.k.m2l = m2l_auto(P);
  const bool grp = G.k.m2l == GPUFMM_STRATEGY_GRP, gemm = G.k.m2l == GPUFMM_STRATEGY_GEMM;
  if ((grp || gemm) &&
      (P.single() ? m2l_group_smem_bytes<float, 4>(P.p) : m2l_group_smem_bytes<double, 4>(P.p)) > G.smem_optin) {
    G.k.m2l = GPUFMM_STRATEGY_BPB;
    return;
  }
  if (grp && G.grp.gseg == nullptr) {
    if (G.grp_size <= 0) G.grp_size = m2l_group_size(P.tree->receivers(), P.l_max, G.sms);
    build_m2l_groups(G, P, G.grp_size, false, G.grp, s0);
  }
  if (gemm) {
    if (G.k.m2l_rcr < 0) G.k.m2l_rcr = m2l_rcr_auto(P) ? 1 : 0;
    m2l_gemm_build(G, P, G.k.m2l_rcr > 0, s0);
  }
}

void laplace_plan_setup(LaplacePlan& P) {
  require(P.ctx.on_gpu() && P.tree && P.tree->ctx.on_gpu(), GPUFMM_ERROR_INTERNAL,
          "laplace_plan_setup: the plan's tree is not on a GPU context");
  DeviceGuard guard(P.ctx);
  auto G = std::make_shared<GpuData>();
  // The near field's stream: the context's priority, or the least, so
  // that the far field's blocks go first where both wait
  // (k.p2p_low_priority). Automatically on adaptive plans and uniform ones
  // of depth >= kLowPriorityDepth, whose far field is a long chain of
  // dependent launches (M2M up, M2L and L2L down, level by level) that
  // waits behind near-field blocks. H200, eps 1e-6: adaptive 1e6 ellipsoid
  // and Plummer points 5-7 % faster; uniform trees at depth 6-7 (1e7
  // uniform points in a cube 1.78x theirs, 1e6 ellipsoid points) 3.4 % and
  // 8.3 % (float 5.8 %); at depths 4-5 (1e6-5e6 uniform points) it was
  // 0.7 % faster to 2.7 % slower (docs/laplace_gpu.md "Leaves between two
  // depths").
  constexpr int kLowPriorityDepth = 6;
  const int lp = P.options.gpu.p2p_low_priority;
  driver_init(*G, P, lp > 0 || (lp < 0 && (P.adaptive || P.l_max >= kLowPriorityDepth)));
  G->k = P.options.gpu;
  // The near field forked after the upward pass (k.p2p_after_up):
  // automatically on uniform trees of depth <= 3, where the P2M is one short
  // launch that the near field's blocks would otherwise hold back to their
  // end (H200, 1e5 uniform points, eps 1e-6: 1.41 -> 1.31 ms). On deeper and
  // adaptive trees it was 1-11 % slower (1e6 uniform 11.00 -> 12.21 ms):
  // there the upward pass is longer and the near field waits for it.
  constexpr int kAfterUpDepth = 3;
  const int au = P.options.gpu.p2p_after_up;
  G->near_after_up = au > 0 || (au < 0 && !P.adaptive && P.l_max <= kAfterUpDepth);
  G->grp_size = G->k.m2l_group;

  using clock = std::chrono::steady_clock;
  auto t = clock::now();
  auto lap = [&t](double& field) {
    const auto u = clock::now();
    field = std::chrono::duration<double>(u - t).count();
    t = u;
  };
  if (P.single())
    G->tab_f = device_tables<float>(*G, *P.tables_f, P.options.variable_truncation, P.options.table_cache);
  else
    G->tab_d = device_tables<double>(*G, *P.tables_d, P.options.variable_truncation, P.options.table_cache);
  lap(P.plan_times.setup_tables);

  const cudaStream_t s0 = stream_of(P.ctx);
  m2l_plan_data(*G, P, s0);
  lap(P.plan_times.setup_groups);
  driver_coordinates(*G, P, s0);
  const tree::PointSet& R = P.tree->receivers();
  if (P.adaptive) {
    adaptive_setup(*G, P, s0);
  } else {
    if (P.ntrg > 0 && R.nboxes > 0) {
      const int64_t b0 = R.level_offset[P.l_max], nb = R.level_offset[P.l_max + 1] - b0;
      k_leaf_of<<<blocks_for(*G, nb, 128), 128, 0, s0>>>(b0, nb, dev_set(R), G->leaf_of);
      check_launch("laplace leaf map kernel");
    }
    if (P.ntrg > 0 && P.nsrc > 0 && R.nboxes > 0) build_p2p_units(*G, P, s0);
  }
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  P.gpu = G;
}

LaplaceGpuKernels& laplace_gpu_kernels(LaplacePlan& P) { return gpu_of(P).k; }

void laplace_plan_strategies(LaplacePlan& P) {
  GpuData& G = gpu_of(P);
  DeviceGuard guard(P.ctx);
  if (P.options.gpu.m2m == GPUFMM_STRATEGY_AUTO) G.k.m2m = GPUFMM_STRATEGY_AUTO;
  if (P.options.gpu.m2l == GPUFMM_STRATEGY_AUTO) G.k.m2l = GPUFMM_STRATEGY_AUTO;
  if (P.options.gpu.m2l_rcr < 0) G.k.m2l_rcr = -1;
  m2l_plan_data(G, P, stream_of(P.ctx));
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
