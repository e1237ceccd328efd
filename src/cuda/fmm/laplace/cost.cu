// The device side of the Laplace cost model (fmm/laplace/cost.hpp):
// laplace_choose_depth_device, the counts of each candidate depth from the
// sorted Morton keys that the keys-only tree holds on the device, so that
// neither the keys (8 bytes per point) nor the scan's passes over them go
// through the host. Per level l and point set: the boxes (keys >> shift,
// run-length encoded: box keys and point counts); the children's counts by
// octant of every source box at l-1; then one thread per target box at l-1
// runs depth_parent (fmm/laplace/cost.hpp, the host scan's arithmetic) and
// the block sums go to three accumulators. The driver (laplace_depth_scan)
// is the host's; per level two small copies come back (box counts, sums).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <cub/cub.cuh>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/temp_storage.cuh"
#include "fmm/laplace/cost.hpp"
#include "fmm/laplace/plan.hpp"
#include "tree/morton.hpp"
#include "tree/stencil.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::check_launch;
using gpufmm::cuda::clear_last_error;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::grid_for;
using gpufmm::cuda::StreamBuffer;
using gpufmm::cuda::stream_of;

namespace {

constexpr int kBlock = 256;

__global__ void k_shift_keys(const uint64_t* __restrict__ keys, int64_t n, int sh, uint64_t* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = keys[i] >> sh;
}

// The children (level l: keys c_key, counts c_cnt) of the source boxes at
// level l-1 (keys p_key): q_cnt[8 q + octant] = count, q_mask[q] |= octant bit.
__global__ void k_child_counts(const uint64_t* __restrict__ c_key, const int64_t* __restrict__ c_cnt, int64_t nc,
                               const uint64_t* __restrict__ p_key, int64_t np, int64_t* __restrict__ q_cnt,
                               unsigned* __restrict__ q_mask) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nc;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t q = tree::find_key(p_key, np, c_key[i] >> 3);
    if (q < 0) continue;  // cannot happen: every box has its parent one level up
    const unsigned oc = static_cast<unsigned>(c_key[i] & 7u);
    q_cnt[8 * q + oc] = c_cnt[i];
    atomicOr(&q_mask[q], 1u << oc);
  }
}

// Source box lookup at level l-1 (binary search over its keys).
struct FindBox {
  const uint64_t* keys;
  int64_t n;
  int level;
  GPUFMM_HD int64_t operator()(int32_t x, int32_t y, int32_t z) const {
    return tree::find_box(keys, 0, n, level, x, y, z);
  }
};

// One thread per target box P at level l-1 (keys tp_key), its children in
// tb_key / tb_cnt found by binary search; block sums added to acc.
__global__ void __launch_bounds__(kBlock)
k_depth_parents(DepthStencilView st, const uint64_t* __restrict__ tp_key, int64_t ntp, FindBox find,
                const int64_t* __restrict__ q_cnt, const unsigned* __restrict__ q_mask,
                const uint64_t* __restrict__ tb_key, const int64_t* __restrict__ tb_cnt, int64_t ntb, bool with_far,
                bool with_up, double* __restrict__ acc, unsigned long long* __restrict__ acc_m2l) {
  double pairs = 0, far = 0;
  int64_t m2l = 0;
  for (int64_t P = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; P < ntp;
       P += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t pk = tp_key[P];
    const int64_t b0 = tree::lower_bound_key(tb_key, ntb, pk << 3), b1 = tree::lower_bound_key(tb_key, ntb, (pk << 3) + 8);
    depth_parent(st, pk, find, q_cnt, q_mask, tb_key, tb_cnt, b0, b1, with_far, with_up, pairs, far, m2l);
  }
  using RD = cub::BlockReduce<double, kBlock>;
  using RI = cub::BlockReduce<long long, kBlock>;
  __shared__ union {
    typename RD::TempStorage d;
    typename RI::TempStorage i;
  } tmp;
  const double sp = RD(tmp.d).Sum(pairs);
  __syncthreads();
  const double sf = RD(tmp.d).Sum(far);
  __syncthreads();
  const long long sm = RI(tmp.i).Sum(static_cast<long long>(m2l));
  if (threadIdx.x == 0) {
    if (sp != 0) atomicAdd(&acc[0], sp);
    if (sf != 0) atomicAdd(&acc[1], sf);
    if (sm != 0) atomicAdd(acc_m2l, static_cast<unsigned long long>(sm));
  }
}

// The boxes of one point set at the current and the previous level.
struct LevelSet {
  const uint64_t* keys = nullptr;  // sorted point keys (device)
  int64_t n = 0;
  uint64_t* shifted = nullptr;
  uint64_t* key[2] = {nullptr, nullptr};
  int64_t* cnt[2] = {nullptr, nullptr};
  int64_t nb[2] = {0, 0};
  int cur = 0;  // key[cur] / cnt[cur]: the current level; 1 - cur: the previous
};

class DeviceDepthLevels : public DepthLevels {
 public:
  DeviceDepthLevels(Context& ctx, const uint64_t* sk, int64_t ns, const uint64_t* tk, int64_t nt)
      : ctx_(ctx), s_(stream_of(ctx)), same_(tk == nullptr), tmp_(ctx, "laplace depth scan") {
    sets_[0].keys = sk;
    sets_[0].n = ns;
    sets_[1].keys = tk;
    sets_[1].n = nt;
    tmp_.add(small_, 8);  // sums [0, 3), box counts [4, 6)
    const int nsets = same_ ? 1 : 2;
    for (int k = 0; k < nsets; ++k) {
      LevelSet& S = sets_[k];
      const int64_t n = std::max<int64_t>(S.n, 1);
      tmp_.add(S.shifted, n);
      for (int j = 0; j < 2; ++j) {
        tmp_.add(S.key[j], n);
        tmp_.add(S.cnt[j], n);
      }
      tmp_.add_cub([this, k](void* t, size_t& b) { return rle(k, t, b); }, "cub::DeviceRunLengthEncode::Encode (depth scan)");
    }
    tmp_.allocate();
  }

  DepthLevel level(int l, const DepthStencil& st) override {
    const int nsets = same_ ? 1 : 2;
    // The boxes of level l (run-length encoded shifted keys), both counts down.
    for (int k = 0; k < nsets; ++k) {
      LevelSet& S = sets_[k];
      S.cur = 1 - S.cur;
      if (S.n == 0) continue;
      k_shift_keys<<<std::min<unsigned>(grid_for(S.n, kBlock), 4096u), kBlock, 0, s_>>>(
          S.keys, S.n, tree::level_shift(l), S.shifted);
      check_launch("laplace depth scan key kernel");
      tmp_.run_cub([this, k](void* t, size_t& b) { return rle(k, t, b); }, "cub::DeviceRunLengthEncode::Encode (depth scan)");
    }
    int64_t runs[2] = {0, 0};
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(runs, runs_d(0), 2 * sizeof(int64_t), cudaMemcpyDeviceToHost, s_));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s_));
    for (int k = 0; k < nsets; ++k) sets_[k].nb[sets_[k].cur] = sets_[k].n > 0 ? runs[k] : 0;
    LevelSet& Sset = sets_[0];
    LevelSet& Tset = same_ ? sets_[0] : sets_[1];
    DepthLevel d;
    d.src_boxes = Sset.nb[Sset.cur];
    d.trg_boxes = Tset.nb[Tset.cur];
    if (l == 0) return d;  // pairs: the driver's
    const int sp = 1 - Sset.cur, tp = 1 - Tset.cur;  // level l-1
    const int64_t nq = Sset.nb[sp], ntp = Tset.nb[tp];
    if (nq == 0 || ntp == 0) return d;
    upload_stencil(st);
    StreamBuffer qbuf(ctx_, static_cast<size_t>(nq) * (8 * sizeof(int64_t) + sizeof(unsigned)), "laplace depth scan");
    int64_t* q_cnt = static_cast<int64_t*>(qbuf.get());
    unsigned* q_mask = reinterpret_cast<unsigned*>(q_cnt + 8 * nq);
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(qbuf.get(), 0, static_cast<size_t>(nq) * (8 * sizeof(int64_t) + sizeof(unsigned)), s_));
    double* acc = reinterpret_cast<double*>(small_);
    unsigned long long* acc_m2l = reinterpret_cast<unsigned long long*>(acc + 2);
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(acc, 0, 2 * sizeof(double) + sizeof(unsigned long long), s_));
    const int64_t nsb = Sset.nb[Sset.cur];
    k_child_counts<<<std::min<unsigned>(grid_for(nsb, kBlock), 4096u), kBlock, 0, s_>>>(
        Sset.key[Sset.cur], Sset.cnt[Sset.cur], nsb, Sset.key[sp], nq,
        q_cnt, q_mask);
    check_launch("laplace depth scan child kernel");
    const bool with_far = l >= 2, with_up = with_far && st.modified;
    const FindBox find{Sset.key[sp], nq, l - 1};
    k_depth_parents<<<std::min<unsigned>(grid_for(ntp, kBlock), 4096u), kBlock, 0, s_>>>(
        view_, Tset.key[tp], ntp, find, q_cnt, q_mask, Tset.key[Tset.cur],
        Tset.cnt[Tset.cur], Tset.nb[Tset.cur], with_far, with_up, acc, acc_m2l);
    check_launch("laplace depth scan parent kernel");
    unsigned char h[3 * 8];
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, acc, sizeof h, cudaMemcpyDeviceToHost, s_));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s_));
    unsigned long long m2l = 0;
    std::memcpy(&d.pairs, h, 8);
    std::memcpy(&d.far, h + 8, 8);
    std::memcpy(&m2l, h + 16, 8);
    d.m2l = static_cast<int64_t>(m2l);
    return d;
  }

 private:
  int64_t* runs_d(int k) const { return small_ + 4 + k; }
  // The boxes of the current level of set k: its shifted keys run-length
  // encoded (CUB's two phases: t = nullptr sizes the storage).
  cudaError_t rle(int k, void* t, size_t& b) {
    LevelSet& S = sets_[k];
    return cub::DeviceRunLengthEncode::Encode(t, b, S.shifted, S.key[S.cur], S.cnt[S.cur], runs_d(k), S.n, s_);
  }

  // The stencil tables to the device, once per scan.
  void upload_stencil(const DepthStencil& st) {
    if (stencil_) return;
    const size_t a = st.w_same.size() * 8, b = st.n_same.size() * 4, c = st.w_up.size() * 8,
                 d = st.n_up.size() * 4, e = sizeof st.near_k, f = sizeof st.near_oc;
    host_.assign(a + b + c + d + e + f, 0);
    unsigned char* h = host_.data();
    std::memcpy(h, st.w_same.data(), a);
    std::memcpy(h + a, st.w_up.data(), c);
    std::memcpy(h + a + c, st.n_same.data(), b);
    std::memcpy(h + a + c + b, st.n_up.data(), d);
    std::memcpy(h + a + c + b + d, st.near_k, e);
    std::memcpy(h + a + c + b + d + e, st.near_oc, f);
    stencil_ = std::make_unique<StreamBuffer>(ctx_, host_.size(), "laplace depth scan stencil");
    unsigned char* dv = static_cast<unsigned char*>(stencil_->get());
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(dv, h, host_.size(), cudaMemcpyHostToDevice, s_));
    view_.w_same = reinterpret_cast<const double*>(dv);
    view_.w_up = reinterpret_cast<const double*>(dv + a);
    view_.n_same = reinterpret_cast<const int32_t*>(dv + a + c);
    view_.n_up = reinterpret_cast<const int32_t*>(dv + a + c + b);
    view_.near_k = reinterpret_cast<const int8_t*>(dv + a + c + b + d);
    view_.near_oc = reinterpret_cast<const int8_t*>(dv + a + c + b + d + e);
  }

  Context& ctx_;
  cudaStream_t s_;
  bool same_;
  LevelSet sets_[2];
  gpufmm::cuda::TempStorage tmp_;
  int64_t* small_ = nullptr;
  std::unique_ptr<StreamBuffer> stencil_;
  std::vector<unsigned char> host_;
  DepthStencilView view_;
};

}  // namespace

template <class T>
DepthChoice laplace_choose_depth_device(Context& ctx, const uint64_t* sk, int64_t ns, const uint64_t* tk,
                                               int64_t nt, bool modified, const LaplaceTables<T>& tab,
                                               const LaplaceCostConstants& c) {
  if (tk == nullptr) nt = ns;
  if (ns == 0 || nt == 0) return DepthChoice{};
  DeviceGuard guard(ctx);
  clear_last_error();
  DeviceDepthLevels levels(ctx, sk, ns, tk, nt);
  return laplace_depth_scan<T>(ns, nt, modified, tab, c, levels);
}

template DepthChoice laplace_choose_depth_device<double>(Context&, const uint64_t*, int64_t, const uint64_t*,
                                                                int64_t, bool, const LaplaceTables<double>&,
                                                                const LaplaceCostConstants&);
template DepthChoice laplace_choose_depth_device<float>(Context&, const uint64_t*, int64_t, const uint64_t*,
                                                               int64_t, bool, const LaplaceTables<float>&,
                                                               const LaplaceCostConstants&);

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
