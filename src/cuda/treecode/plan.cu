// The CUDA treecode plan's set-up (src/cxx/treecode/plan.hpp; the host part,
// trees and sets, is plan.cpp's), every array built on the device:
//   k_traverse       the traversal, level by level: each pair of the level
//                    becomes a list entry or the pairs of the next level, by
//                    the steps of treecode/traverse.hpp (those of the host
//                    traversal); slots taken with one atomic per warp
//   radix sort       the entries (row, column) as 64-bit keys: rows and each
//                    row's columns ascending, as the host list sorts them
//   k_csr            the CSR offsets of the rows
//   k_list_stats     approximated and direct interactions (integer sums)
//   gather, k_proxies  the sorted points and the proxies (combined arrays)
//   k_batch_leaf     each sorted target's batch box
// then the near field's work units (nearfield::cuda::build_units).
#include <cub/cub.cuh>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "cuda/common/points.hpp"
#include "cuda/common/temp_storage.cuh"
#include "cuda/nearfield/p2p_units.cuh"
#include "cuda/nearfield/user_kernel.cuh"
#include "cuda/treecode/cuda_plan.cuh"
#include "treecode/traverse.hpp"

namespace gpufmm {
namespace treecode {

namespace nf = gpufmm::nearfield::cuda;
using gpufmm::cuda::check_launch;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::grid_for;
using gpufmm::cuda::gstride;
using gpufmm::cuda::gtid;
using gpufmm::cuda::StreamBuffer;

namespace {

// An item of the traversal: the pair (t, s) when s >= 0; when s < 0, the
// batches below target box t take column -s - 1 (an accepted or direct pair
// whose target box acts through its points).
struct Item {
  int32_t t, s;
};

constexpr int kTraverseBlock = 256;

__host__ __device__ inline uint64_t list_key(int64_t row, int32_t col) {
  return (uint64_t(row) << 32) | uint32_t(col);
}

// One level: next gets the children pairs, out the list entries; count[0]
// and count[1] are their running totals (slots past the capacities are
// counted, not written: the host then grows the buffers and runs the level
// again).
__global__ void __launch_bounds__(kTraverseBlock)
    k_traverse(int type, double theta, TreeView T, TreeView S, const int32_t* __restrict__ batch_index, int64_t nbatch,
               const Item* __restrict__ in, int64_t nin, Item* __restrict__ next, int64_t cap_next,
               uint64_t* __restrict__ out, int64_t cap_out, unsigned long long* __restrict__ count) {
  const int lane = int(threadIdx.x & 31);
  // Every thread of a block takes the same trips (warp-wide shuffles below).
  for (int64_t i0 = int64_t(blockIdx.x) * blockDim.x; i0 < nin; i0 += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = i0 + threadIdx.x;
    int nkids = 0, npair = 0;
    int32_t kid0 = 0, fixed = 0;
    bool kids_of_t = true;  // children (c, fixed) of t, else (fixed, c) of s
    uint64_t key = 0;
    if (i < nin) {
      const Item q = in[i];
      int32_t col = -1;  // >= 0: to the batches below t
      if (q.s < 0) {
        col = -q.s - 1;
      } else {
        const int step = pair_step(type, theta, T, q.t, S, q.s);
        if (step == kSplitTarget) {
          kid0 = T.child_begin[q.t];
          nkids = T.child_end[q.t] - kid0;
          fixed = q.s;
        } else if (step == kSplitSource) {
          kid0 = S.child_begin[q.s];
          nkids = S.child_end[q.s] - kid0;
          fixed = q.t;
          kids_of_t = false;
        } else {
          const bool accepted = step == kAccept;
          col = source_set(S, q.s, accepted);
          const int32_t row = target_proxy_set(T, q.t, accepted, nbatch);
          if (row >= 0) {
            npair = 1;
            key = list_key(row, col);
            col = -1;
          }
        }
      }
      if (col >= 0) {
        if (T.leaf[q.t]) {
          npair = 1;
          key = list_key(batch_index[q.t], col);
        } else {
          kid0 = T.child_begin[q.t];
          nkids = T.child_end[q.t] - kid0;
          fixed = -col - 1;
        }
      }
    }
    // Slots: a warp-wide prefix sum of (children, entries), one atomic per
    // warp and counter (a warp asks at most 256 children and 32 entries).
    const uint32_t mine = uint32_t(nkids) | (uint32_t(npair) << 16);
    const uint32_t incl = gpufmm::cuda::warp_inclusive_scan(mine, lane);
    const uint32_t total = __shfl_sync(0xffffffffu, incl, 31);
    unsigned long long base_k = 0, base_p = 0;
    if (lane == 31) {
      if (total & 0xffffu) base_k = atomicAdd(&count[0], (unsigned long long)(total & 0xffffu));
      if (total >> 16) base_p = atomicAdd(&count[1], (unsigned long long)(total >> 16));
    }
    base_k = __shfl_sync(0xffffffffu, base_k, 31);
    base_p = __shfl_sync(0xffffffffu, base_p, 31);
    const uint32_t excl = incl - mine;
    const int64_t at_k = int64_t(base_k) + (excl & 0xffffu), at_p = int64_t(base_p) + (excl >> 16);
    for (int c = 0; c < nkids; ++c)
      if (at_k + c < cap_next) next[at_k + c] = kids_of_t ? Item{kid0 + c, fixed} : Item{fixed, kid0 + c};
    if (npair && at_p < cap_out) out[at_p] = key;
  }
}

// The sorted keys as CSR: index[k] their columns, offsets[r] the first
// entry of row r (rows without entries included), offsets[nrows] = n.
__global__ void k_csr(int64_t n, int64_t nrows, const uint64_t* __restrict__ keys, int32_t* __restrict__ index,
                      int64_t* __restrict__ offsets) {
  for (int64_t k = gtid(); k < n; k += gstride()) {
    const int64_t row = int64_t(keys[k] >> 32);
    index[k] = int32_t(uint32_t(keys[k]));
    const int64_t prev = k > 0 ? int64_t(keys[k - 1] >> 32) : -1;
    for (int64_t r = prev + 1; r <= row; ++r) offsets[r] = k;
    if (k == n - 1)
      for (int64_t r = row + 1; r <= nrows; ++r) offsets[r] = n;
  }
}

// sums[0] += the approximated interactions, sums[1] += the direct ones
// (traverse.hpp's is_approximation, as the host list counts them).
__global__ void k_list_stats(int64_t nrows, int64_t nbatch, int64_t nsbox, int64_t nsets_s_local,
                             const uint8_t* __restrict__ remote, const int64_t* __restrict__ off,
                             const int32_t* __restrict__ idx, const int32_t* __restrict__ tb,
                             const int32_t* __restrict__ te, const int32_t* __restrict__ sb,
                             const int32_t* __restrict__ se, unsigned long long* __restrict__ sums) {
  unsigned long long a = 0, d = 0;
  for (int64_t r = gtid(); r < nrows; r += gstride()) {
    const unsigned long long nt = (unsigned long long)(te[r] - tb[r]);
    for (int64_t e = off[r]; e < off[r + 1]; ++e) {
      const int32_t c = idx[e];
      const unsigned long long v = nt * (unsigned long long)(se[c] - sb[c]);
      if (is_approximation(r, c, nbatch, nsbox, nsets_s_local, remote))
        a += v;
      else
        d += v;
    }
  }
  if (a) atomicAdd(&sums[0], a);
  if (d) atomicAdd(&sums[1], d);
}

// The proxies of nclusters boxes, cluster after cluster (plan.hpp's layout).
__global__ void k_proxies(int n, const double* __restrict__ u, int64_t nclusters, const Box* __restrict__ geom,
                          double* __restrict__ out) {
  const int64_t np3 = int64_t(n + 1) * (n + 1) * (n + 1);
  for (int64_t t = gtid(); t < nclusters * np3; t += gstride())
    proxy_point(n, u, geom[t / np3], int(t % np3), out + 3 * t);
}

// leaf[i] = the box of the batch that holds sorted target i.
__global__ void k_batch_leaf(int64_t nbatch, const int32_t* __restrict__ batch_box,
                             const int32_t* __restrict__ point_begin, const int32_t* __restrict__ point_end,
                             int32_t* __restrict__ leaf) {
  for (int64_t k = blockIdx.x; k < nbatch; k += gridDim.x) {
    const int32_t b = batch_box[k];
    for (int32_t i = point_begin[b] + int32_t(threadIdx.x); i < point_end[b]; i += int32_t(blockDim.x)) leaf[i] = b;
  }
}

std::unique_ptr<StreamBuffer> buffer(Context& ctx, size_t bytes, const char* what) {
  return std::make_unique<StreamBuffer>(ctx, std::max<size_t>(bytes, 16), what);
}

// The box arrays of one side on the device.
TreeView device_view(CudaPlan& G, const Boxes& b, const std::vector<int32_t>& prox, const TreeView* same) {
  TreeView v;
  v.n = b.n;
  if (same) {
    v = *same;
  } else {
    v.box = G.upload(b.box, "treecode traversal boxes");
    v.child_begin = G.upload(b.child_begin, "treecode traversal boxes");
    v.child_end = G.upload(b.child_end, "treecode traversal boxes");
    v.leaf = G.upload(b.leaf, "treecode traversal boxes");
  }
  v.prox = G.upload(prox, "treecode traversal boxes");
  return v;
}

// The traversal of the local sources from start_pairs over the box arrays
// T and S (device_view), then the pairs of other ranks' sources (P.pairs),
// as G's list; the statistics into P.stats.
void device_list(Plan& P, CudaPlan& G, const TreeView& T, const TreeView& S) {
  Context& ctx = P.ctx;
  cudaStream_t s = stream_of(ctx);
  const int32_t* batch_index = G.upload(P.batch_index, "treecode traversal boxes");

  std::vector<Item> starts;
  for (const auto& e : start_pairs(P, P.sbox)) starts.push_back({e.first, e.second});
  const int64_t nhost = int64_t(P.pairs.size());
  // First capacities that the lists of the default sizes about fill (the
  // small plans of the tests outgrow them, which runs the growth below).
  int64_t cap_items = 8 * int64_t(starts.size()) + 1024;
  int64_t cap_out = 32 * P.nsets_t + nhost + 1024;
  auto in = buffer(ctx, sizeof(Item) * size_t(cap_items), "treecode traversal");
  auto next = buffer(ctx, sizeof(Item) * size_t(cap_items), "treecode traversal");
  auto out = buffer(ctx, sizeof(uint64_t) * size_t(cap_out), "treecode list");
  auto count = buffer(ctx, 2 * sizeof(unsigned long long), "treecode traversal");
  unsigned long long* dcount = static_cast<unsigned long long*>(count->get());
  if (!starts.empty())
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(in->get(), starts.data(), sizeof(Item) * starts.size(), cudaMemcpyHostToDevice, s));
  int64_t nin = int64_t(starts.size()), nout = 0;
  while (nin > 0) {
    unsigned long long h[2] = {0, (unsigned long long)nout};
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(dcount, h, sizeof(h), cudaMemcpyHostToDevice, s));
    k_traverse<<<grid_for(nin, kTraverseBlock), kTraverseBlock, 0, s>>>(int(P.options.type), P.par.theta, T, S, batch_index, P.nbatch,
                                                static_cast<const Item*>(in->get()), nin,
                                                static_cast<Item*>(next->get()), cap_items,
                                                static_cast<uint64_t*>(out->get()), cap_out - nhost, dcount);
    check_launch("treecode traversal kernel");
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, dcount, sizeof(h), cudaMemcpyDeviceToHost, s));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
    const int64_t nnext = int64_t(h[0]), nend = int64_t(h[1]);
    if (nnext > cap_items || nend + nhost > cap_out) {  // grow, keep what is done, run the level again
      const int64_t ci = std::max(cap_items, 2 * nnext), co = std::max(cap_out, 2 * (nend + nhost));
      auto in2 = buffer(ctx, sizeof(Item) * size_t(ci), "treecode traversal");
      auto out2 = buffer(ctx, sizeof(uint64_t) * size_t(co), "treecode list");
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(in2->get(), in->get(), sizeof(Item) * size_t(nin), cudaMemcpyDeviceToDevice, s));
      if (nout > 0)
        GPUFMM_CUDA_CHECK(
            cudaMemcpyAsync(out2->get(), out->get(), sizeof(uint64_t) * size_t(nout), cudaMemcpyDeviceToDevice, s));
      in = std::move(in2);
      out = std::move(out2);
      next = buffer(ctx, sizeof(Item) * size_t(ci), "treecode traversal");
      cap_items = ci;
      cap_out = co;
      continue;
    }
    nout = nend;
    nin = nnext;
    std::swap(in, next);
  }
  if (nhost > 0) {  // other ranks' sources (the host's traversal of their trees)
    std::vector<uint64_t> keys(static_cast<size_t>(nhost));
    for (int64_t e = 0; e < nhost; ++e) keys[size_t(e)] = list_key(P.pairs[size_t(e)].first, P.pairs[size_t(e)].second);
    gpufmm::cuda::staged_upload(ctx, static_cast<uint64_t*>(out->get()) + nout, keys.data(),
                                sizeof(uint64_t) * keys.size(), plan::parallel_copy);
    nout += nhost;
  }
  require(nout < (int64_t(1) << 31), GPUFMM_ERROR_INVALID_ARGUMENT, "the treecode's list has ", nout,
          " entries, more than 2^31: raise leaf_size or batch_size");

  // Sorted by (row, column), then CSR, then the statistics.
  const int64_t nrows = P.nsets_t;
  int end_bit = 32;
  while (end_bit < 64 && (uint64_t(nrows) >> (end_bit - 32)) != 0) ++end_bit;
  G.list_index = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * size_t(nout), "treecode lists"));
  G.list_offsets = static_cast<int64_t*>(G.alloc(sizeof(int64_t) * size_t(nrows + 1), "treecode lists"));
  const uint64_t* keys = static_cast<const uint64_t*>(out->get());
  uint64_t* sorted = nullptr;
  unsigned long long* sums = nullptr;
  const int n = int(nout);
  auto sort = [&](void* t, size_t& b) { return cub::DeviceRadixSort::SortKeys(t, b, keys, sorted, n, 0, end_bit, s); };
  gpufmm::cuda::TempStorage tmp(ctx, "treecode list");
  tmp.add(sorted, nout);
  tmp.add(sums, 2);
  tmp.add_cub(sort, "cub::DeviceRadixSort::SortKeys (temp storage query)");
  tmp.allocate();
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * sizeof(unsigned long long), s));
  if (nout > 0) {
    tmp.run_cub(sort, "cub::DeviceRadixSort::SortKeys");
    k_csr<<<grid_for(nout, 256), 256, 0, s>>>(nout, nrows, sorted, G.list_index, G.list_offsets);
    check_launch("treecode list offsets kernel");
  } else {
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(G.list_offsets, 0, sizeof(int64_t) * size_t(nrows + 1), s));
  }
  const uint8_t* remote = P.remote_proxy.empty() ? nullptr : G.upload(P.remote_proxy, "treecode remote sets");
  k_list_stats<<<grid_for(nrows, 128), 128, 0, s>>>(nrows, P.nbatch, P.sbox.n, P.nsets_s_local, remote,
                                                    G.list_offsets, G.list_index, G.tset_begin, G.tset_end,
                                                    G.sset_begin, G.sset_end, sums);
  check_launch("treecode list statistics kernel");
  unsigned long long h[2];
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, sums, sizeof(h), cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  P.stats.approx_pairs += int64_t(h[0]);
  P.stats.direct_pairs += int64_t(h[1]);
  P.stats.list_entries = nout;
}

// The boxes of the proxy clusters `prox_box` of `boxes`, on the device.
const Box* cluster_boxes(CudaPlan& G, const Boxes& boxes, const std::vector<int32_t>& prox_box) {
  std::vector<Box> geom(prox_box.size());
  for (size_t p = 0; p < prox_box.size(); ++p) geom[p] = boxes.box[size_t(prox_box[p])];
  return G.upload(geom, "treecode cluster boxes");
}

// A combined coordinate array (plan.hpp): the user's points `user` in the
// order of `perm` (n of them), then the proxies of the np clusters whose
// boxes are `geom` (cluster_boxes); `extra` more points are left for the
// caller.
double* device_points(Plan& P, CudaPlan& G, const double* user, const int32_t* perm, int64_t n, const Box* geom,
                      int64_t np, int64_t extra) {
  Context& ctx = P.ctx;
  double* d = static_cast<double*>(
      G.alloc(sizeof(double) * 3 * size_t(n + np * P.np3 + extra), "treecode points"));
  gpufmm::cuda::gather_points(ctx, user, perm, n, d);
  if (np > 0) {
    k_proxies<<<grid_for(np * P.np3, 256), 256, 0, stream_of(ctx)>>>(P.par.degree, G.u, np, geom, d + 3 * n);
    check_launch("treecode proxies kernel");
  }
  return d;
}

}  // namespace

namespace detail {

void setup_cuda(Plan& P) {
  Context& ctx = P.ctx;
  DeviceGuard guard(ctx);
  P.gpu.reset(new CudaPlan);
  CudaPlan& G = *P.gpu;
  G.ctx = &ctx;
  G.device = ctx.device;
  cudaStream_t s = stream_of(ctx);
  std::vector<double> u(static_cast<size_t>(P.np1));
  approx::cheb_units(P.par.degree, u.data());
  G.u = G.upload(u, "treecode nodes");

  // Coordinates: the sorted points (the trees' permutations of the user's
  // points, uploaded by plan_build), then the proxies; other ranks' points
  // (MPI) from the host. Targets at the sources in one tree: the sorted
  // points are the same, and so are the proxies where both sides have them;
  // the shorter array is then a prefix of the longer, built once.
  const int64_t nsrc = P.nsrc, ntrg = P.ntrg, nsp = int64_t(P.sprox_box.size()), ntp = int64_t(P.tprox_box.size());
  const int32_t* sperm = nsrc > 0 ? P.S().perm : nullptr;
  const int32_t* tperm = ntrg > 0 ? P.R().perm : nullptr;
  const double* tuser = P.dev_targets ? P.dev_targets : P.dev_sources;
  const bool shared = !P.ttree && (P.tprox_box.empty() || P.sprox_box == P.tprox_box ||
                                   (P.sprox_box.empty() && P.nq_remote == 0));
  // The box arrays once: the traversal's views, the proxies' and the
  // evaluate's geometry (the target side shares the sources' arrays when
  // the targets are the sources in one tree).
  const TreeView S = device_view(G, P.sbox, P.sprox, nullptr);
  const TreeView T = device_view(G, P.tbox, P.tprox, P.ttree ? nullptr : &S);
  G.sprox_geom = cluster_boxes(G, P.sbox, P.sprox_box);
  const Box* tprox_geom = shared && P.sprox_box == P.tprox_box ? G.sprox_geom : cluster_boxes(G, P.tbox, P.tprox_box);
  G.tbox_geom = T.box;
  G.tprox = T.prox;
  auto sources = [&] {
    double* d = device_points(P, G, P.dev_sources, sperm, nsrc, G.sprox_geom, nsp, P.nq_remote);
    if (P.nq_remote > 0)
      gpufmm::cuda::staged_upload(ctx, d + 3 * P.nq_local, P.sxyz.data() + 3 * P.nq_local,
                                  sizeof(double) * 3 * size_t(P.nq_remote), plan::parallel_copy);
    return d;
  };
  if (shared) {
    const bool s_longer = nsp * P.np3 + P.nq_remote >= ntp * P.np3;
    G.sxyz = G.txyz = s_longer ? sources() : device_points(P, G, tuser, tperm, ntrg, tprox_geom, ntp, 0);
  } else {
    G.sxyz = sources();
    G.txyz = device_points(P, G, tuser, tperm, ntrg, tprox_geom, ntp, 0);
  }
  G.src_perm = sperm;
  G.trg_perm = tperm;
  G.trg_leaf = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * size_t(ntrg), "treecode target leaves"));
  if (ntrg > 0 && P.nbatch > 0) {
    const int32_t* batch_box = G.upload(P.batch_box, "treecode batches");
    k_batch_leaf<<<unsigned(std::min<int64_t>(P.nbatch, 1 << 16)), 256, 0, s>>>(
        P.nbatch, batch_box, P.R().point_begin, P.R().point_end, G.trg_leaf);
    check_launch("treecode target leaves kernel");
  }

  G.tset_center = G.upload(P.tset_center, "treecode target sets");
  G.tset_begin = G.upload(P.tset_begin, "treecode target sets");
  G.tset_end = G.upload(P.tset_end, "treecode target sets");
  G.sset_begin = G.upload(P.sset_begin, "treecode source sets");
  G.sset_end = G.upload(P.sset_end, "treecode source sets");

  // The traversal and the list (their time is the plan's `lists`).
  const double t = seconds();
  device_list(P, G, T, S);
  P.times.lists += seconds() - t;

  G.chunk_cluster = G.upload(P.chunk_cluster, "treecode chunks");
  G.chunk_begin = G.upload(P.chunk_begin, "treecode chunks");
  G.chunk_end = G.upload(P.chunk_end, "treecode chunks");
  {
    std::vector<int32_t> first(size_t(nsp + 1), int32_t(P.chunk_cluster.size()));
    for (int64_t c = int64_t(P.chunk_cluster.size()) - 1; c >= 0; --c) first[P.chunk_cluster[c]] = int32_t(c);
    for (int64_t p = nsp - 1; p >= 0; --p) first[p] = std::min(first[p], first[p + 1]);
    G.chunk_first = G.upload(first, "treecode chunks");
  }
  G.tparent = G.upload(P.tbox.parent, "treecode target tree");
  const gpufmm::cuda::DevSet rows = G.targets(), cols = G.sources();
  const DevList l = G.list();
  auto alloc = [&](size_t b, const char* what) { return G.alloc(b, what); };
  G.nunits_batch = nf::build_units(ctx, s, 0, P.nbatch, rows, cols, l, alloc, &G.units_batch, "treecode batch units");
  G.nunits_prox = nf::build_units(ctx, s, P.nbatch, P.nsets_t - P.nbatch, rows, cols, l, alloc, &G.units_prox,
                                  "treecode proxy units");
  // A user kernel is compiled now (cached in the context): an expression
  // that does not compile fails the plan, not a later evaluate.
  if (P.options.kernel.type == kernels::KernelType::kUser)
    nf::user_kernels(ctx, P.options.kernel.user, P.options.precision);
  for (auto& e : G.ev) GPUFMM_CUDA_CHECK(cudaEventCreate(&e));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace detail
}  // namespace treecode
}  // namespace gpufmm
