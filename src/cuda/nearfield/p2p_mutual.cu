// nearfield::cuda::build_mutual_passes (p2p_mutual.cuh): the leaf pairs of
// the mutual near field's passes, from the neighbour rows of one level, in
// the order of the flow schedule.
#include <algorithm>
#include <tuple>
#include <vector>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/temp_storage.cuh"
#include "cuda/nearfield/p2p_mutual.cuh"
#include "tree/morton.hpp"

namespace gpufmm {
namespace nearfield {
namespace cuda {

namespace {

// The pass of the pair (a, c) from a's row: 0 when c == a; 1 + 2 dir +
// parity when c - a is one of the 13 offsets whose first non-zero component
// is +1 (dir: its index among them, parity: a's coordinate on that axis);
// -1 when the pair is c's (the opposite offset), -2 when c is not adjacent.
__device__ __forceinline__ int mutual_pass(const DevSet& R, int32_t a, int32_t c) {
  if (a == c) return 0;
  int32_t ia[3], ic[3];
  tree::morton_decode(R.box_key[a], ia[0], ia[1], ia[2]);
  tree::morton_decode(R.box_key[c], ic[0], ic[1], ic[2]);
  int o[3];
  for (int k = 0; k < 3; ++k) {
    o[k] = ic[k] - ia[k];
    if (o[k] < -1 || o[k] > 1) return -2;
  }
  const int idx = (o[0] + 1) * 9 + (o[1] + 1) * 3 + (o[2] + 1);  // 13: o = 0
  if (idx < 13) return -1;
  const int axis = o[0] != 0 ? 0 : o[1] != 0 ? 1 : 2;
  return 1 + 2 * (idx - 14) + (ia[axis] & 1);
}

// count[]: the pairs per pass, then a row naming a non-adjacent leaf, then
// the largest block per pass, then the work of all blocks (MutualPasses).
constexpr int kCountNonAdjacent = kMutualPasses, kCountLargest = kMutualPasses + 1,
              kCountWork = 2 * kMutualPasses + 1, kCounts = 2 * kMutualPasses + 2;

// kFill false: the counts above; true: the pairs at mp.offset[pass] + a
// slot taken from count[pass] (the order within a pass does not matter: its
// blocks write disjoint leaves).
template <bool kFill>
__global__ void k_mutual_pairs(int64_t b0, int64_t nb, DevSet R, DevList nbl, unsigned long long* __restrict__ count,
                               MutualPasses mp) {
  for (int64_t t = gpufmm::cuda::gtid(); t < nb; t += gpufmm::cuda::gstride()) {
    const int32_t a = int32_t(b0 + t);
    for (int64_t e = nbl.offsets[a]; e < nbl.offsets[a + 1]; ++e) {
      const int32_t c = nbl.index[e];
      const int k = mutual_pass(R, a, c);
      if (k == -2 && !kFill) atomicAdd(&count[kCountNonAdjacent], 1ull);
      if (k < 0) continue;
      const unsigned long long slot = atomicAdd(&count[k], 1ull);
      if (kFill) {
        mp.pairs[mp.offset[k] + int64_t(slot)] = make_int2(a, c);
      } else {
        const unsigned long long w = (unsigned long long)(R.point_end[a] - R.point_begin[a]) *
                                     (unsigned long long)(R.point_end[c] - R.point_begin[c]);
        atomicMax(&count[kCountLargest + k], w);
        atomicAdd(&count[kCountWork], w);
      }
    }
  }
}

// The flow schedule's order and waits (MutualPasses), on the host: pass by
// pass, the pairs sorted by the later of their leaves' last positions so
// far (then by leaves: the same order in every run); need = the pairs of
// earlier passes that hold each leaf.
void order_for_flow(std::vector<int2>& pairs, std::vector<int2>& need, const MutualPasses& mp) {
  const int64_t b0 = mp.b0;
  std::vector<int64_t> last(size_t(mp.nb), -1);
  std::vector<int> count(size_t(mp.nb), 0);
  need.resize(pairs.size());
  std::vector<std::tuple<int64_t, int32_t, int32_t>> keyed;
  for (int k = 0; k < kMutualPasses; ++k) {
    keyed.clear();
    for (int64_t u = mp.offset[k]; u < mp.offset[k + 1]; ++u) {
      const int2 pr = pairs[size_t(u)];
      keyed.emplace_back(std::max(last[size_t(pr.x - b0)], last[size_t(pr.y - b0)]), pr.x, pr.y);
    }
    std::sort(keyed.begin(), keyed.end());
    int64_t u = mp.offset[k];
    for (const auto& t : keyed) {
      const int32_t a = std::get<1>(t), c = std::get<2>(t);
      pairs[size_t(u)] = make_int2(a, c);
      need[size_t(u)] = make_int2(count[size_t(a - b0)], count[size_t(c - b0)]);
      ++count[size_t(a - b0)];
      if (c != a) ++count[size_t(c - b0)];
      last[size_t(a - b0)] = last[size_t(c - b0)] = u;
      ++u;
    }
  }
}

}  // namespace

MutualPasses build_mutual_passes(Context& ctx, cudaStream_t s0, int64_t b0, int64_t nb, DevSet R, DevList list,
                                 const std::function<void*(size_t, const char*)>& alloc, const char* what) {
  using gpufmm::cuda::check_launch;
  using gpufmm::cuda::grid_for;
  MutualPasses mp;
  if (nb <= 0) return mp;
  mp.b0 = b0;
  mp.nb = nb;
  gpufmm::cuda::TempStorage tmp(ctx, what);
  unsigned long long* count = nullptr;
  tmp.add(count, kCounts);
  tmp.allocate();
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(count, 0, kCounts * sizeof(unsigned long long), s0));
  k_mutual_pairs<false><<<grid_for(nb, 128), 128, 0, s0>>>(b0, nb, R, list, count, mp);
  check_launch("mutual P2P pair count kernel");
  unsigned long long h[kCounts];
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, count, sizeof h, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  if (h[kCountNonAdjacent] != 0) return mp;  // not a grid of neighbours
  for (int k = 0; k < kMutualPasses; ++k) {
    mp.offset[k + 1] = mp.offset[k] + int64_t(h[k]);
    mp.tail += double(h[kCountLargest + k]);
  }
  mp.work = double(h[kCountWork]);
  if (mp.offset[kMutualPasses] == 0) return MutualPasses{};
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(count, 0, kMutualPasses * sizeof(unsigned long long), s0));
  const int64_t total = mp.offset[kMutualPasses];
  mp.pairs = static_cast<int2*>(alloc(sizeof(int2) * size_t(total), what));
  k_mutual_pairs<true><<<grid_for(nb, 128), 128, 0, s0>>>(b0, nb, R, list, count, mp);
  check_launch("mutual P2P pair fill kernel");
  std::vector<int2> pairs(static_cast<size_t>(total)), need;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(pairs.data(), mp.pairs, sizeof(int2) * pairs.size(), cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  order_for_flow(pairs, need, mp);
  mp.need = static_cast<int2*>(alloc(sizeof(int2) * size_t(total), what));
  mp.counters = static_cast<unsigned*>(alloc(sizeof(unsigned) * size_t(nb + 1), what));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(mp.pairs, pairs.data(), sizeof(int2) * pairs.size(), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(mp.need, need.data(), sizeof(int2) * need.size(), cudaMemcpyHostToDevice, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));  // the host vectors go out of scope
  return mp;
}

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
