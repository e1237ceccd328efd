// The CUDA driver of the Laplace FMM (issue 5): plan set-up (tables and
// sorted coordinates to the device) and evaluate, every stage on the GPU.
//
//   stream s0 (the context's)               stream s1 (near field)
//   [H2D inputs]  permute in (+ finite check)
//        |---------- event ------------------------> P2P (BpB / TpT)
//   P2M, M2M (levels L-1..2)                               |
//   per level l: LevelDown3 (L2L), LevelDown1 (type 1),    |
//                LevelDown2 (type 2)                       |
//   L2P  <------------------------ event -----------------'
//   permute out (far + near) [D2H outputs]
//
// Kernels: laplace_kernels.cuh. Design and measurements: docs/laplace_gpu.md.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda_backend.hpp"
#include "core/lru_cache.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/graph_cache.cuh"
#include "cuda/common/points.hpp"
#include "cuda/common/staging.hpp"
#include "cuda/common/temp_storage.cuh"
#include "plan/checks.hpp"
#include <cub/cub.cuh>

#include "cuda/fmm/laplace/kernels.cuh"
#include "cuda/fmm/laplace/m2l_group.cuh"
#include "cuda/nearfield/p2p.cuh"
#include "fmm/laplace/gpu.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::DeviceGuardNoThrow;
using gpufmm::cuda::check_launch;
using gpufmm::cuda::clear_last_error;
using gpufmm::cuda::stream_of;
namespace nf = gpufmm::nearfield::cuda;

namespace {

constexpr int kNumEvents = 10;
constexpr size_t kScratchBudget = size_t(512) << 20;  // per-thread work slots, bytes

// What makes the device work of two evaluates the same graph: the user's
// device pointers (or the staging buffers of the host API), what is given and
// wanted, the user's precision and the kernel strategies (laplace_gpu_kernels
// may change them between evaluates). Everything else (workspace, tables,
// tree) belongs to the plan and does not change between evaluates.
struct GraphKey {
  const void *q = nullptr, *d = nullptr;
  void *pot = nullptr, *grad = nullptr;
  int dtype = -1;
  LaplaceGpuKernels k;
  bool operator==(const GraphKey& o) const {
    return q == o.q && d == o.d && pot == o.pot && grad == o.grad && dtype == o.dtype && k == o.k;
  }
};

// Device data of one plan.
struct GpuData {
  Context* ctx = nullptr;
  int device = 0;
  int sms = 132;
  int max_threads_sm = 2048;
  size_t smem_optin = 48 << 10;
  cudaStream_t s1 = nullptr;
  cudaEvent_t ev[kNumEvents] = {};  // stage timing
  cudaEvent_t fork = nullptr, join = nullptr;  // s0 -> s1 -> s0 (no timing)
  // CUDA graph of the device work of an evaluate (LaplaceGpuKernels::graph):
  // replayed while the arguments (GraphKey) stay the same.
  gpufmm::cuda::GraphCache<GraphKey> graph;
  LaplaceGpuKernels k;  // the plan's options.gpu (laplace_gpu_kernels may change it)
  // Grouped M2L (m2l = GRP): receivers per group (k.m2l_group, else
  // m2l_group_size), entries.
  int grp_size = 0;
  DevM2LGroups grp;
  std::vector<void*> blocks;
  size_t bytes = 0;
  // tables (device memory shared with the device table cache and other plans)
  DevTables<double> tab_d;
  DevTables<float> tab_f;
  std::shared_ptr<const void> tables_mem;
  // sorted coordinates (txyz == sxyz when same_sets), target -> leaf
  double* sxyz = nullptr;
  const double* txyz = nullptr;
  int32_t* leaf_of = nullptr;
  uint64_t* p2p_units = nullptr;  // k_p2p_bpb work units (build_p2p_units)
  int64_t p2p_nunits = 0;
  unsigned long long* bad = nullptr;  // [2]
  // workspace (allocated on first use, in the plan's precision)
  void* M = nullptr;
  void* L = nullptr;
  uint8_t* has_local = nullptr;
  void *q = nullptr, *d = nullptr;
  void *near_pot = nullptr, *near_grad = nullptr, *far_pot = nullptr, *far_grad = nullptr;
  void *in_q = nullptr, *in_d = nullptr, *out_pot = nullptr, *out_grad = nullptr;  // host API staging
  void* scratch = nullptr;
  int64_t scratch_threads = 0;

  void* alloc(size_t b, const char* what) {
    void* p = backend_alloc(*ctx, std::max<size_t>(b, 16), what);
    blocks.push_back(p);
    bytes += b;
    return p;
  }
  ~GpuData() {
    DeviceGuardNoThrow g(device);
    if (!g.ok()) return;
    if (s1) {
      (void)cudaStreamSynchronize(s1);
      (void)cudaStreamDestroy(s1);
    }
    graph.reset();
    for (auto& e : ev)
      if (e) (void)cudaEventDestroy(e);
    if (fork) (void)cudaEventDestroy(fork);
    if (join) (void)cudaEventDestroy(join);
    for (void* p : blocks) backend_free(*ctx, p);
    (void)cudaGetLastError();
  }
};

GpuData& gpu_of(LaplacePlan& P) {
  require(P.gpu != nullptr, GPUFMM_ERROR_INTERNAL, "laplace: the plan's GPU data are missing");
  return *static_cast<GpuData*>(P.gpu.get());
}

// Device copy of a plan's tables: one allocation, rot | rotT | coax | cos |
// sin | coax_offset | op_p | op_rot | op_coax | op_flip | walk, built on the host
// (rotT: every (n+1)^2 "cos" and n^2 "sin" block of every rotation
// transposed) and uploaded. `mem` owns the allocation.
template <class T>
DevTables<T> upload_tables(Context& ctx, const LaplaceTables<T>& t, std::shared_ptr<void>& mem, size_t& bytes) {
  auto al = [](size_t x) { return (x + 255) / 256 * 256; };
  const size_t n_rot = t.rot.size() * sizeof(T), n_coax = t.coax.size() * sizeof(T),
               n_ang = kNumOps * sizeof(T), n_off = t.coax_offset.size() * sizeof(int64_t),
               n_i = kNumOps * sizeof(int32_t), n_f = kNumOps;
  const size_t o_rot = 0, o_rotT = o_rot + al(n_rot), o_coax = o_rotT + al(n_rot), o_cos = o_coax + al(n_coax),
               o_sin = o_cos + al(n_ang),
               o_off = o_sin + al(n_ang), o_p = o_off + al(n_off), o_r = o_p + al(n_i), o_c = o_r + al(n_i),
               o_f = o_c + al(n_i), o_w = o_f + al(n_f), total = o_w + al(sizeof(LaplaceWalkCoef<T>));
  std::vector<unsigned char> h(total, 0);
  auto put = [&](size_t o, const void* src, size_t n) {
    if (n) std::memcpy(h.data() + o, src, n);
  };
  put(o_rot, t.rot.data(), n_rot);
  {
    T* rt = reinterpret_cast<T*>(h.data() + o_rotT);
    for (size_t base = 0; base + t.rot_stride <= t.rot.size(); base += t.rot_stride)
      for (int n = 0; n < t.p; ++n) {
        const size_t o = base + laplace_rotation_offset(n);
        for (int blk = 0; blk < 2; ++blk) {
          const int w = blk == 0 ? n + 1 : n;
          const size_t ob = blk == 0 ? o : o + size_t(n + 1) * (n + 1);
          for (int i = 0; i < w; ++i)
            for (int j = 0; j < w; ++j) rt[ob + size_t(j) * w + i] = t.rot[ob + size_t(i) * w + j];
        }
      }
  }
  put(o_coax, t.coax.data(), n_coax);
  put(o_cos, t.op_cos_a.data(), n_ang);
  put(o_sin, t.op_sin_a.data(), n_ang);
  put(o_off, t.coax_offset.data(), n_off);
  put(o_p, t.op_p.data(), n_i);
  put(o_r, t.op_rot.data(), n_i);
  put(o_c, t.op_coax.data(), n_i);
  put(o_f, t.op_flip.data(), n_f);
  {
    LaplaceWalkCoef<T> w;
    laplace_walk_coef_fill(w);
    put(o_w, &w, sizeof w);
  }
  void* raw = backend_alloc(ctx, total, "laplace translation tables");
  const int device = ctx.device;
  mem = std::shared_ptr<void>(raw, [device](void* q) {  // no plan uses it any more
    DeviceGuardNoThrow g(device);
    if (g.ok() && cudaFree(q) != cudaSuccess) (void)cudaGetLastError();
  });
  bytes = total;
  backend_upload(ctx, raw, h.data(), total, false);
  const unsigned char* dv = static_cast<const unsigned char*>(raw);
  DevTables<T> d;
  d.p = t.p;
  d.rot_stride = t.rot_stride;
  d.rot = reinterpret_cast<const T*>(dv + o_rot);
  d.rotT = reinterpret_cast<const T*>(dv + o_rotT);
  d.coax = reinterpret_cast<const T*>(dv + o_coax);
  d.cos_a = reinterpret_cast<const T*>(dv + o_cos);
  d.sin_a = reinterpret_cast<const T*>(dv + o_sin);
  d.coax_offset = reinterpret_cast<const int64_t*>(dv + o_off);
  d.op_p = reinterpret_cast<const int32_t*>(dv + o_p);
  d.op_rot = reinterpret_cast<const int32_t*>(dv + o_r);
  d.op_coax = reinterpret_cast<const int32_t*>(dv + o_c);
  d.op_flip = reinterpret_cast<const int8_t*>(dv + o_f);
  d.walk = reinterpret_cast<const LaplaceWalkCoef<T>*>(dv + o_w);
  return d;
}

// The device tables of one (precision, p, variable truncation): `mem` owns
// the allocation that d / f point into.
struct DevTableImage {
  std::shared_ptr<void> mem;
  size_t bytes = 0;
  DevTables<double> d;
  DevTables<float> f;
};
struct DevTableKey {
  bool single;
  int p;
  bool vt;
  bool operator==(const DevTableKey& o) const { return single == o.single && p == o.p && vt == o.vt; }
};

// Process-wide cache of the device tables, one group per device: plans of a
// device share them (read only), so a plan whose tables are there skips the
// packing and the upload (1.4 ms per plan at p = 22 double on the H100
// host). kLaplaceTableCacheBytes per device; a device's entries are dropped
// when its last context is released; plans keep their tables alive.
// options.table_cache = false bypasses it, as it does the host cache.
LruCache<DevTableKey, DevTableImage>& dev_table_cache() {
  static auto* c = new LruCache<DevTableKey, DevTableImage>(kLaplaceTableCacheBytes);  // never destroyed
  return *c;
}

void drop_device_tables(int device) noexcept { dev_table_cache().drop_group(device); }

template <class T, class Image>  // Image: DevTableImage, const or not
auto& image_tables(Image& e) {
  if constexpr (std::is_same<T, float>::value)
    return e.f;
  else
    return e.d;
}

template <class T>
DevTables<T> device_tables(GpuData& G, const LaplaceTables<T>& t, bool vt, bool cache) {
  auto make = [&] {
    auto img = std::make_shared<DevTableImage>();
    image_tables<T>(*img) = upload_tables<T>(*G.ctx, t, img->mem, img->bytes);
    const size_t bytes = img->bytes;
    return std::make_pair(std::shared_ptr<const DevTableImage>(std::move(img)), bytes);
  };
  std::shared_ptr<const DevTableImage> img;
  if (cache) {
    static std::once_flag hook;
    std::call_once(hook, [] { gpufmm::cuda::at_last_context_release(drop_device_tables); });
    img = dev_table_cache().get(DevTableKey{sizeof(T) == sizeof(float), t.p, vt}, G.device, make);
  } else {
    img = make().first;
  }
  G.tables_mem = img;
  G.bytes += img->bytes;
  return image_tables<T>(*img);
}

DevSet dev_set(const tree::PointSet& s) {
  DevSet d;
  d.parent = s.parent;
  d.child_offset = s.child_offset;
  d.point_begin = s.point_begin;
  d.point_end = s.point_end;
  d.box_key = s.box_key;
  d.center = s.center;
  d.perm = s.perm;
  return d;
}

DevList dev_list(const lists::List& l) {
  DevList d;
  d.offsets = l.offsets;
  d.index = l.index;
  d.cls = l.cls;
  return d;
}

unsigned blocks_for(const GpuData& G, int64_t threads, int block) {
  const int64_t b = (threads + block - 1) / block;
  const int64_t cap = int64_t(G.sms) * (G.max_threads_sm / block) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(b, cap)));
}

double elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return ms * 1e-3;
}

// ------------------------------------------------------------ evaluate

template <class T>
struct Eval {
  LaplacePlan& P;
  GpuData& G;
  const DevTables<T>& tab;
  const tree::Tree& tr;
  const tree::PointSet& S;
  const tree::PointSet& R;
  cudaStream_t s0;
  int p, L;
  int64_t p2;

  Eval(LaplacePlan& plan, GpuData& g, const DevTables<T>& t)
      : P(plan), G(g), tab(t), tr(*plan.tree), S(plan.tree->src), R(plan.tree->receivers()),
        s0(stream_of(plan.ctx)), p(plan.p), L(plan.l_max), p2(int64_t(plan.p) * plan.p) {}

  T* ensure(void*& ptr, size_t count, const char* what) {
    if (ptr == nullptr) ptr = G.alloc(count * sizeof(T), what);
    return static_cast<T*>(ptr);
  }

  T* scratch() {
    if (G.scratch == nullptr) {
      const size_t per = size_t(3) * p2 * sizeof(T);
      int64_t want = std::max<int64_t>(S.nboxes, R.nboxes) * 32;
      want = std::min<int64_t>(want, int64_t(G.sms) * G.max_threads_sm);
      want = std::min<int64_t>(want, int64_t(kScratchBudget / per));
      want = std::max<int64_t>(128, want / 128 * 128);
      G.scratch = G.alloc(size_t(want) * per, "laplace translation scratch");
      G.scratch_threads = want;
    }
    return static_cast<T*>(G.scratch);
  }

  // Launch geometry of a translation kernel: (blocks, threads, dynamic smem).
  struct Geo {
    unsigned blocks;
    int threads;
    size_t smem;
    int use_smem;
  };
  Geo geo(int64_t work_items) {
    scratch();
    Geo g;
    const size_t per = size_t(2) * p2 * sizeof(T);
    g.use_smem = 0;
    g.threads = 128;
    g.smem = 0;
    if (G.k.work_smem && 32 * per <= G.smem_optin) {
      g.use_smem = 1;
      g.threads = 32;
      while (g.threads < 128 && 2 * g.threads * per <= G.smem_optin / 2) g.threads *= 2;
      g.smem = g.threads * per;
    }
    const int64_t b = (work_items + g.threads - 1) / g.threads;
    const int64_t cap = G.scratch_threads / g.threads;
    g.blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min(b, cap)));
    return g;
  }

  // Dynamic shared memory above the 48 KB default; the carveout preference
  // asks for the largest shared-memory configuration, so that several blocks
  // of a large-smem kernel can share an SM.
  template <class K>
  void set_smem(K kernel, size_t smem) {
    if (smem > (48u << 10)) {
      GPUFMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
      GPUFMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
    }
  }

  template <int KIND, int GG>
  void translate(int64_t b0, int64_t nb, const int32_t* rows32, const int64_t* rows64, const uint64_t* key,
                 const int32_t* idx, const int32_t* cls, const T* Min, T* Out, uint8_t* hl) {
    if (nb <= 0) return;
    const Geo g = geo(nb * GG);
    auto kern = k_translate<T, KIND, GG>;
    set_smem(kern, g.smem);
    kern<<<g.blocks, g.threads, g.smem, s0>>>(b0, nb, p, tab, rows32, rows64, key, idx, cls, Min, Out, hl,
                                              scratch(), g.use_smem);
    check_launch(KIND == kKindM2M ? "laplace M2M kernel" : "laplace M2L kernel");
  }

  // Slots of a BpB batch: about 4 elements per thread (S p^2 ~ 1024; H100,
  // p = 22 double: S = 2 15.6 ms, 4 17.3 ms, 8 19.1 ms for the downward pass
  // at N = 1e6, L = 4), at most 16 (kind_cap: 8 for M2M), shared memory <= 96 KB.
  int bpb_slots(int kind_cap) const {
    int S = G.k.bpb_slots > 0 ? G.k.bpb_slots : std::max(1, int((1024 + p2 / 2) / p2));
    S = std::min(S, std::min(16, kind_cap));
    while (S > 1 && bpb_smem_bytes<T>(p, S) > std::min<size_t>(G.smem_optin, 96u << 10)) --S;
    return S;
  }

  template <int KIND>
  void translate_bpb(int64_t b0, int64_t nb, const int32_t* rows32, const int64_t* rows64, const uint64_t* key,
                     const int32_t* idx, const int32_t* cls, const int32_t* parent, const T* Min, T* Out,
                     uint8_t* hl) {
    if (nb <= 0) return;
    const int S = bpb_slots(KIND == kBpbM2M ? 8 : 16);
    const size_t smem = bpb_smem_bytes<T>(p, S);
    auto kern = k_translate_bpb<T, KIND>;
    set_smem(kern, smem);
    const int64_t work = KIND == kBpbL2L ? (nb + S - 1) / S : nb;
    const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(work, 1 << 30)));
    kern<<<blocks, kBpbThreads, smem, s0>>>(b0, nb, p, S, tab, rows32, rows64, key, idx, cls, parent, Min, Out,
                                             hl);
    check_launch(KIND == kBpbM2M ? "laplace M2M kernel" : KIND == kBpbM2L ? "laplace M2L kernel"
                                                                          : "laplace L2L kernel");
  }

  template <int NL, int NT>
  void m2l_grouped_launch(const T* M, T* Lx, uint8_t* hl) {
    const size_t smem = m2l_group_smem_bytes<T, NL>(p);
    auto kern = k_m2l_group<T, NL, NT>;
    set_smem(kern, smem);
    const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(G.grp.ngroups, 1 << 30)));
    kern<<<blocks, NT, smem, s0>>>(p, tab, G.grp, M, Lx, hl);
    check_launch("laplace grouped M2L kernel");
  }

  // Lanes: k.m2l_lanes (8 by default, 4 where 8 do not fit); 512 threads
  // when p^2 > 256 (k.m2l_threads = 256 forces 256).
  template <int NL>
  void m2l_grouped_lanes(const T* M, T* Lx, uint8_t* hl) {
    if (p2 > 256 && G.k.m2l_threads != 256)
      m2l_grouped_launch<NL, 512>(M, Lx, hl);
    else
      m2l_grouped_launch<NL, 256>(M, Lx, hl);
  }

  void m2l_grouped(const T* M, T* Lx, uint8_t* hl) {
    if (G.grp.ngroups == 0) return;
    const int lanes = G.k.m2l_lanes > 0 ? G.k.m2l_lanes : G.grp_size >= 8 ? 8 : 4;
    if (lanes == 4 || m2l_group_smem_bytes<T, 8>(p) > G.smem_optin)
      m2l_grouped_lanes<4>(M, Lx, hl);
    else
      m2l_grouped_lanes<8>(M, Lx, hl);
  }

  void m2l_level(const lists::List& list, int l, T* M, T* Lx, uint8_t* hl) {
    const int64_t b0 = R.level_offset[l], nb = R.level_offset[l + 1] - b0;
    if (G.k.m2l == GPUFMM_STRATEGY_BPB)
      translate_bpb<kBpbM2L>(b0, nb, nullptr, list.offsets, nullptr, list.index, list.cls, nullptr, M, Lx, hl);
    else if (G.k.m2l == GPUFMM_STRATEGY_WPB)
      translate<kKindM2L, 32>(b0, nb, nullptr, list.offsets, nullptr, list.index, list.cls, M, Lx, hl);
    else
      translate<kKindM2L, 1>(b0, nb, nullptr, list.offsets, nullptr, list.index, list.cls, M, Lx, hl);
  }

  template <bool kC, bool kD, bool kG>
  void p2p_launch(const T* q, const T* d, T* pot, T* grad, cudaStream_t s) {
    const lists::List& nb = P.lists->list[lists::kNeighbors];
    const int64_t b0 = R.level_offset[L];
    const double* txyz = G.txyz;
    if (G.k.p2p == GPUFMM_STRATEGY_TPT) {
      nf::k_p2p_tpt<kernels::Laplace<T>, T, kC, kD, kG><<<blocks_for(G, P.ntrg, 128), 128, 0, s>>>(
          kernels::Laplace<T>{}, P.ntrg, dev_set(R), dev_set(S), dev_list(nb), G.leaf_of, G.sxyz, txyz, q, d, pot, grad);
    } else {
      const unsigned blocks =
          static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(G.p2p_nunits, 1 << 30)));
      nf::k_p2p_bpb<kernels::Laplace<T>, T, kC, kD, kG><<<blocks, nf::kP2PBlock, 0, s>>>(
          kernels::Laplace<T>{}, b0, G.p2p_nunits, G.p2p_units, dev_set(R), dev_set(S), dev_list(nb), G.sxyz, txyz, q,
          d, pot, grad);
    }
    check_launch("laplace P2P kernel");
  }

  // Device pointers of one evaluate: the inputs in the user's order (device
  // arrays, or the staging copies of host inputs), the workspace, the outputs
  // in the user's order (device arrays or staging buffers).
  template <class SS>
  struct Ptrs {
    const SS *uq = nullptr, *ud = nullptr;
    SS *up = nullptr, *ug = nullptr;
    T *q = nullptr, *d = nullptr, *np = nullptr, *ng = nullptr, *fp = nullptr, *fg = nullptr;
    T *M = nullptr, *Lx = nullptr;
    uint8_t* hl = nullptr;
  };

  // A stage-timing event. In a graph capture it becomes an event-record node
  // (cudaEventRecordExternal), so the stage times of a replay are measured too.
  void mark(int i, cudaStream_t s, bool capturing) {
    if (capturing)
      GPUFMM_CUDA_CHECK(cudaEventRecordWithFlags(G.ev[i], s, cudaEventRecordExternal));
    else
      GPUFMM_CUDA_CHECK(cudaEventRecord(G.ev[i], s));
  }

  // The device work of an evaluate, from the input check to the permutation
  // of the results into the user's order: stream operations only (no host
  // synchronisation, no allocation), so that it can be captured into a graph.
  template <class SS>
  void enqueue(const Ptrs<SS>& x, bool capturing) {
    const int64_t ns = P.nsrc, nt = P.ntrg;
    T *q = x.q, *d = x.d, *np = x.np, *ng = x.ng, *fp = x.fp, *fg = x.fg;
    mark(0, s0, capturing);
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(G.bad, 0xff, 2 * sizeof(unsigned long long), s0));
    if (ns > 0) {
      k_permute_in<T, SS><<<blocks_for(G, ns, 256), 256, 0, s0>>>(ns, S.perm, x.uq, x.ud, q, d, G.bad);
      check_launch("laplace permute-in kernel");
    }
    mark(1, s0, capturing);

    // Near field: on s1 concurrently with the far field (overlap), else on s0
    // after it (so that the stage events time each stage alone).
    cudaStream_t sn = G.k.overlap ? G.s1 : s0;
    auto near = [&]() {
      if (G.k.overlap) {
        GPUFMM_CUDA_CHECK(cudaEventRecord(G.fork, s0));
        GPUFMM_CUDA_CHECK(cudaStreamWaitEvent(G.s1, G.fork, 0));
      }
      mark(6, sn, capturing);
      if (ns > 0 && nt > 0) {
        kernels::with_sources<true>(q != nullptr, d != nullptr, ng != nullptr, [&](auto c_, auto d_, auto g_) {
          p2p_launch<decltype(c_)::value, decltype(d_)::value, decltype(g_)::value>(q, d, np, ng, sn);
        });
      } else if (nt > 0) {
        if (np) GPUFMM_CUDA_CHECK(cudaMemsetAsync(np, 0, size_t(nt) * sizeof(T), sn));
        if (ng) GPUFMM_CUDA_CHECK(cudaMemsetAsync(ng, 0, size_t(3 * nt) * sizeof(T), sn));
      }
      mark(7, sn, capturing);
      if (G.k.overlap) GPUFMM_CUDA_CHECK(cudaEventRecord(G.join, sn));
    };
    if (G.k.overlap) near();

    // Far field on s0.
    if (x.M) {
      T* M = x.M;
      T* Lx = x.Lx;
      uint8_t* hl = x.hl;
      // P2M
      {
        const int64_t b0 = S.level_offset[L], nb = S.level_offset[L + 1] - b0;
        const T h = T(tree::box_size(tr.cube, L));
        // bpb: blocks of nw warps (shared memory nw x p2m_bpb_warp_bytes:
        // 12320 B per warp at p = 22 double, 28448 B at p = 50), wpl warps
        // per leaf: 1 (each coefficient summed over the leaf's sources in
        // order, as on the CPU) when the leaves give >= 16 warps per SM,
        // else 2 or 4 while the leaves average > 32 sources per warp.
        const size_t p2m_wb = p2m_bpb_warp_bytes<T>(p);
        if (G.k.p2m == GPUFMM_STRATEGY_BPB && p2m_wb <= G.smem_optin) {
          int nw = kP2MMaxWarps;
          while (nw > 1 && nw * p2m_wb > std::min<size_t>(G.smem_optin, 96u << 10)) nw /= 2;
          int wpl = G.k.p2m_warps;
          if (wpl <= 0) {
            const double per_leaf = nb > 0 ? double(ns) / double(nb) : 0.0;
            wpl = 1;
            while (wpl < nw && nb * wpl < int64_t(G.sms) * 16 && per_leaf > 32.0 * wpl) wpl *= 2;
          }
          wpl = std::min(wpl, nw);
          const size_t smem = size_t(nw) * p2m_wb;
          const int per_block = nw / wpl;
          const unsigned blocks =
              static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((nb + per_block - 1) / per_block, 1 << 30)));
          if (d) {
            set_smem(k_p2m_bpb<T, true>, smem);
            k_p2m_bpb<T, true><<<blocks, 32 * nw, smem, s0>>>(b0, nb, p, h, wpl, dev_set(S), G.sxyz, q, d, M, tab.walk);
          } else {
            set_smem(k_p2m_bpb<T, false>, smem);
            k_p2m_bpb<T, false><<<blocks, 32 * nw, smem, s0>>>(b0, nb, p, h, wpl, dev_set(S), G.sxyz, q, d, M, tab.walk);
          }
        } else if (G.k.p2m != GPUFMM_STRATEGY_TPB) {  // wpb (also bpb where one warp's tile does not fit)
          const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, (nb * 32 + 127) / 128));
          k_p2m_wpb<T><<<blocks, 128, 0, s0>>>(b0, nb, p, h, dev_set(S), G.sxyz, q, d, M, tab.walk);
        } else {
          k_p2m_tpb<T><<<blocks_for(G, nb, 64), 64, 0, s0>>>(b0, nb, p, h, dev_set(S), G.sxyz, q, d, M, tab.walk);
        }
        check_launch("laplace P2M kernel");
      }
      mark(2, s0, capturing);
      // M2M, levels L-1 .. 2
      for (int l = L - 1; l >= 2; --l) {
        const int64_t b0 = S.level_offset[l], nb = S.level_offset[l + 1] - b0;
        if (G.k.m2m == GPUFMM_STRATEGY_BPB)
          translate_bpb<kBpbM2M>(b0, nb, S.child_offset, nullptr, S.box_key, nullptr, nullptr, nullptr, M, M,
                                 nullptr);
        else if (G.k.m2m == GPUFMM_STRATEGY_GPB)
          translate<kKindM2M, 8>(b0, nb, S.child_offset, nullptr, S.box_key, nullptr, nullptr, M, M, nullptr);
        else
          translate<kKindM2M, 1>(b0, nb, S.child_offset, nullptr, S.box_key, nullptr, nullptr, M, M, nullptr);
      }
      mark(3, s0, capturing);
      // Downward: L = 0, has_local = 0; then per level LevelDown3 (L2L),
      // LevelDown1 (type 1 / standard M2L), LevelDown2 (type 2).
      GPUFMM_CUDA_CHECK(cudaMemsetAsync(Lx, 0, size_t(R.nboxes * p2) * sizeof(T), s0));
      GPUFMM_CUDA_CHECK(cudaMemsetAsync(hl, 0, size_t(R.nboxes), s0));
      if (G.k.m2l == GPUFMM_STRATEGY_GRP) m2l_grouped(M, Lx, hl);  // every level at once, then L2L level by level
      for (int l = P.modified ? 1 : 2; l <= L; ++l) {
        const int64_t b0 = R.level_offset[l], nb = R.level_offset[l + 1] - b0;
        if (l >= 2 && nb > 0 && G.k.l2l == GPUFMM_STRATEGY_BPB) {
          translate_bpb<kBpbL2L>(b0, nb, nullptr, nullptr, R.box_key, nullptr, nullptr, R.parent, Lx, Lx, hl);
        } else if (l >= 2 && nb > 0) {
          const Geo g = geo(nb);
          set_smem(k_l2l<T>, g.smem);
          k_l2l<T><<<g.blocks, g.threads, g.smem, s0>>>(b0, nb, p, tab, dev_set(R), Lx, hl, scratch(),
                                                        g.use_smem);
          check_launch("laplace L2L kernel");
        }
        if (G.k.m2l == GPUFMM_STRATEGY_GRP) {
        } else if (P.modified) {
          if (l >= 2) m2l_level(P.lists->list[lists::kType1], l, M, Lx, hl);
          m2l_level(P.lists->list[lists::kType2], l, M, Lx, hl);
        } else {
          m2l_level(P.lists->list[lists::kM2L], l, M, Lx, hl);
        }
      }
      mark(4, s0, capturing);
      // L2P
      {
        const int64_t b0 = R.level_offset[L], nb = R.level_offset[L + 1] - b0;
        const T h = T(tree::box_size(tr.cube, L));
        if (G.k.l2p == GPUFMM_STRATEGY_BPB) {
          // bpb: one block per leaf, 32 .. 128 threads by the mean targets per leaf.
          const int64_t per_leaf = nb > 0 ? (nt + nb - 1) / nb : 1;
          const int threads = per_leaf > 64 ? 128 : per_leaf > 32 ? 64 : 32;
          const size_t smem = size_t(p2) * sizeof(T);
          set_smem(k_l2p_bpb<T>, smem);
          const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(nb, 1 << 30)));
          k_l2p_bpb<T><<<blocks, threads, smem, s0>>>(b0, nb, p, h, dev_set(R), G.txyz, Lx, hl, fp, fg, tab.walk);
        } else if (G.k.l2p == GPUFMM_STRATEGY_TPT)
          k_l2p_tpt<T><<<blocks_for(G, nt, 128), 128, 0, s0>>>(nt, p, h, dev_set(R), G.leaf_of, G.txyz, Lx, hl,
                                                               fp, fg, tab.walk);
        else
          k_l2p_tpb<T><<<blocks_for(G, nb, 64), 64, 0, s0>>>(b0, nb, p, h, dev_set(R), G.txyz, Lx, hl, fp, fg, tab.walk);
        check_launch("laplace L2P kernel");
      }
    } else {
      for (int i = 2; i <= 4; ++i) mark(i, s0, capturing);
    }
    mark(5, s0, capturing);
    if (G.k.overlap)
      GPUFMM_CUDA_CHECK(cudaStreamWaitEvent(s0, G.join, 0));
    else
      near();

    // Outputs (user order).
    if (nt > 0) {
      k_permute_out<T, SS><<<blocks_for(G, nt, 256), 256, 0, s0>>>(nt, R.perm, np, fp, ng, fg, x.up, x.ug, G.bad);
      check_launch("laplace permute-out kernel");
    }
  }

  template <class SS>
  void run(const LaplaceEvalArgs& a) {
    const auto w0 = std::chrono::steady_clock::now();
    const bool has_q = a.charges != nullptr, has_d = a.dipoles != nullptr;
    const bool want_pot = a.pot != nullptr, want_grad = a.grad != nullptr;
    const int64_t ns = P.nsrc, nt = P.ntrg;
    clear_last_error();

    // Inputs (user order) on the device; workspace and output staging (all
    // allocations before the device work, so that it can be a graph).
    Ptrs<SS> x;
    x.uq = has_q ? static_cast<const SS*>(a.charges) : nullptr;
    x.ud = has_d ? static_cast<const SS*>(a.dipoles) : nullptr;
    if (!a.on_context) {
      if (has_q && ns > 0) {
        if (G.in_q == nullptr) G.in_q = G.alloc(size_t(ns) * sizeof(SS), "laplace input staging");
        gpufmm::cuda::staged_upload(P.ctx, G.in_q, x.uq, size_t(ns) * sizeof(SS), plan::parallel_copy);
        x.uq = static_cast<const SS*>(G.in_q);
      }
      if (has_d && ns > 0) {
        if (G.in_d == nullptr) G.in_d = G.alloc(size_t(3 * ns) * sizeof(SS), "laplace input staging");
        gpufmm::cuda::staged_upload(P.ctx, G.in_d, x.ud, size_t(3 * ns) * sizeof(SS), plan::parallel_copy);
        x.ud = static_cast<const SS*>(G.in_d);
      }
    }
    x.q = has_q ? ensure(G.q, size_t(ns), "laplace charges") : nullptr;
    x.d = has_d ? ensure(G.d, size_t(3 * ns), "laplace dipoles") : nullptr;
    x.np = want_pot ? ensure(G.near_pot, size_t(nt), "laplace potentials") : nullptr;
    x.ng = want_grad ? ensure(G.near_grad, size_t(3 * nt), "laplace gradients") : nullptr;
    const bool far = L >= 2 && ns > 0 && nt > 0;
    x.fp = far && want_pot ? ensure(G.far_pot, size_t(nt), "laplace potentials") : nullptr;
    x.fg = far && want_grad ? ensure(G.far_grad, size_t(3 * nt), "laplace gradients") : nullptr;
    if (far) {
      x.M = ensure(G.M, size_t(S.nboxes * p2), "laplace multipoles");
      x.Lx = ensure(G.L, size_t(R.nboxes * p2), "laplace locals");
      if (G.has_local == nullptr)
        G.has_local = static_cast<uint8_t*>(G.alloc(size_t(R.nboxes), "laplace has_local"));
      x.hl = G.has_local;
    }
    x.up = static_cast<SS*>(a.pot);
    x.ug = static_cast<SS*>(a.grad);
    if (!a.on_context) {
      if (want_pot) {
        if (G.out_pot == nullptr) G.out_pot = G.alloc(size_t(nt) * sizeof(SS), "laplace output staging");
        x.up = static_cast<SS*>(G.out_pot);
      }
      if (want_grad) {
        if (G.out_grad == nullptr) G.out_grad = G.alloc(size_t(3 * nt) * sizeof(SS), "laplace output staging");
        x.ug = static_cast<SS*>(G.out_grad);
      }
    }

    GraphKey key;
    key.q = x.uq;
    key.d = x.ud;
    key.pot = x.up;
    key.grad = x.ug;
    key.dtype = int(a.dtype);
    key.k = G.k;
    G.graph.run(s0, key, G.k.graph, [&](bool capturing) { enqueue(x, capturing); });

    unsigned long long bad[2] = {kNoBad, kNoBad};
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(bad, G.bad, sizeof bad, cudaMemcpyDeviceToHost, s0));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    if (bad[0] != kNoBad || bad[1] != kNoBad) {
      const bool is_q = bad[0] != kNoBad;
      const int64_t i = static_cast<int64_t>(is_q ? bad[0] : bad[1]);
      SS v[3] = {SS(0), SS(0), SS(0)};
      const SS* base = static_cast<const SS*>(is_q ? a.charges : a.dipoles);
      const int per = is_q ? 1 : 3;
      if (a.on_context)
        backend_download(P.ctx, v, base + per * i, per * sizeof(SS), false);
      else
        for (int k = 0; k < per; ++k) v[k] = base[per * i + k];
      if (is_q)
        fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charges': charge ", i, " (0-based) is NaN or Inf (",
             double(v[0]), ")");
      fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'dipoles': dipole ", i,
           " (0-based) has a NaN or Inf component (", double(v[0]), ", ", double(v[1]), ", ", double(v[2]),
           ")");
    }
    if (!a.on_context && nt > 0) {  // staged through pinned chunks (cuda/common/staging.cu)
      if (want_pot) gpufmm::cuda::staged_download(P.ctx, a.pot, x.up, size_t(nt) * sizeof(SS), plan::parallel_copy);
      if (want_grad) gpufmm::cuda::staged_download(P.ctx, a.grad, x.ug, size_t(3 * nt) * sizeof(SS), plan::parallel_copy);
    }
    cudaEvent_t* ev = G.ev;
    LaplaceStageTimes& tm = P.last;
    tm = LaplaceStageTimes();
    tm.p2m = elapsed(ev[1], ev[2]);
    tm.upward = elapsed(ev[2], ev[3]);
    tm.downward = elapsed(ev[3], ev[4]);
    tm.l2p = elapsed(ev[4], ev[5]);
    tm.p2p = elapsed(ev[6], ev[7]);
    tm.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  }
};

template <class T>
void evaluate_typed(LaplacePlan& P, GpuData& G, const DevTables<T>& tab, const LaplaceEvalArgs& a) {
  Eval<T> e(P, G, tab);
  if (a.dtype == GPUFMM_FLOAT32)
    e.template run<float>(a);
  else
    e.template run<double>(a);
}

// Grouped M2L entries (laplace_m2l_group.cuh): the M2L lists of every level
// (modified stencil: type 1 at l >= 2, type 2 at l >= 1; standard: the M2L
// list at l >= 2) keyed by (group of grp_size receivers of a level, class),
// sorted, and cut into segments of one class.
// Work units of the BpB P2P (k_p2p_unit_count / _fill): one per pass of
// kP2PPass targets of a target leaf, sorted by modelled cost (targets of the
// pass x near sources of the leaf), the most expensive first (stable: ties in
// leaf order). A block per leaf made the crowded leaves of non-uniform data
// the tail of the launch (H100, N = 1e6 ellipsoid, L = 6: the SMs were busy
// 43 % of the P2P kernel's 26.8 ms under Nsight Compute, against 89 % of
// 12.3 ms for uniform data with the same instruction count).
void build_p2p_units(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  const tree::PointSet& R = P.tree->receivers();
  const tree::PointSet& S = P.tree->src;
  const int L = P.l_max;
  const int64_t b0 = R.level_offset[L], nb = R.level_offset[L + 1] - b0;
  if (nb <= 0) return;
  gpufmm::cuda::TempStorage count_tmp(*G.ctx, "laplace P2P unit set-up");
  int32_t *cnt = nullptr, *first = nullptr;
  int64_t* near = nullptr;
  count_tmp.add(cnt, nb + 1);
  count_tmp.add(first, nb + 1);
  count_tmp.add(near, nb);
  auto scan = [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, cnt, first, nb + 1, s0); };
  count_tmp.add_cub(scan, "cub::DeviceScan::ExclusiveSum (P2P units)");
  count_tmp.allocate();
  nf::k_p2p_unit_count<<<blocks_for(G, nb, 128), 128, 0, s0>>>(b0, nb, dev_set(R), dev_set(S),
                                                              dev_list(P.lists->list[lists::kNeighbors]), cnt, near);
  check_launch("laplace P2P unit count kernel");
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(cnt + nb, 0, sizeof(int32_t), s0));
  count_tmp.run_cub(scan, "cub::DeviceScan::ExclusiveSum (P2P units)");
  int32_t nu = 0;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&nu, first + nb, sizeof nu, cudaMemcpyDeviceToHost, s0));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  if (nu <= 0) return;
  gpufmm::cuda::TempStorage sort_tmp(*G.ctx, "laplace P2P unit set-up");
  uint64_t *key = nullptr, *key_s = nullptr, *unit = nullptr;
  sort_tmp.add(key, nu);
  sort_tmp.add(key_s, nu);
  sort_tmp.add(unit, nu);
  G.p2p_units = static_cast<uint64_t*>(G.alloc(sizeof(uint64_t) * nu, "laplace P2P units"));
  auto sort = [&](void* t, size_t& b) {
    return cub::DeviceRadixSort::SortPairs(t, b, key, key_s, unit, G.p2p_units, int64_t(nu), 0, 64, s0);
  };
  sort_tmp.add_cub(sort, "cub::DeviceRadixSort::SortPairs (P2P units)");
  sort_tmp.allocate();
  nf::k_p2p_unit_fill<<<blocks_for(G, nb, 128), 128, 0, s0>>>(b0, nb, dev_set(R), first, near, key, unit);
  check_launch("laplace P2P unit fill kernel");
  sort_tmp.run_cub(sort, "cub::DeviceRadixSort::SortPairs (P2P units)");
  G.p2p_nunits = nu;
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

void build_m2l_groups(GpuData& G, const LaplacePlan& P, cudaStream_t s0) {
  const tree::Tree& tr = *P.tree;
  const tree::PointSet& R = tr.receivers();
  const int L = P.l_max;
  if (L < 2 || R.nboxes == 0) return;
  require(L + 1 <= kGroupMaxLevels, GPUFMM_ERROR_INTERNAL, "laplace: tree too deep for grouped M2L");
  if (G.grp_size <= 0) G.grp_size = m2l_group_size(R, L, G.sms);
  GroupLevels lv{};
  lv.nlev = L + 1;
  lv.gsize = G.grp_size;
  int64_t ngroups = 0;
  for (int l = 0; l <= L; ++l) {
    lv.lo[l] = R.level_offset[l];
    lv.gbase[l] = ngroups;
    ngroups += (R.level_offset[l + 1] - R.level_offset[l] + G.grp_size - 1) / G.grp_size;
  }
  lv.lo[L + 1] = R.level_offset[L + 1];
  require(ngroups < (int64_t(1) << 22), GPUFMM_ERROR_INTERNAL, "laplace: too many M2L groups");
  struct Part {
    const lists::List* list;
    int lmin;
  };
  std::vector<Part> parts;
  if (P.modified) {
    parts.push_back({&P.lists->list[lists::kType1], 2});
    parts.push_back({&P.lists->list[lists::kType2], 1});
  } else {
    parts.push_back({&P.lists->list[lists::kM2L], 2});
  }
  // Entry range of each part (rows of levels lmin..L are contiguous).
  std::vector<int64_t> first(parts.size()), count(parts.size());
  int64_t nent = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    int64_t o[2] = {0, 0};
    const lists::List& li = *parts[k].list;
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&o[0], li.offsets + R.level_offset[parts[k].lmin], sizeof(int64_t),
                                      cudaMemcpyDeviceToHost, s0));
    GPUFMM_CUDA_CHECK(
        cudaMemcpyAsync(&o[1], li.offsets + R.level_offset[L + 1], sizeof(int64_t), cudaMemcpyDeviceToHost, s0));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    first[k] = o[0];
    count[k] = o[1] - o[0];
    nent += count[k];
  }
  G.grp.ngroups = ngroups;
  require(nent < (int64_t(1) << 31), GPUFMM_ERROR_INTERNAL, "laplace: too many M2L entries");
  int32_t* gseg = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * (ngroups + 1), "laplace M2L groups"));
  G.grp.gseg = gseg;
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
  for (size_t k = 0; k < parts.size(); ++k) {
    const int64_t r0 = R.level_offset[parts[k].lmin], r1 = R.level_offset[L + 1];
    if (count[k] > 0) {
      k_m2l_group_keys<<<blocks_for(G, r1 - r0, 128), 128, 0, s0>>>(r0, r1, lv, dev_list(*parts[k].list),
                                                                    first[k] - at, key, val);
      check_launch("laplace M2L group key kernel");
    }
    at += count[k];
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
  G.grp.seg_op = seg_op;
  G.grp.seg_begin = seg_begin;
  G.grp.ent = ent;
}

}  // namespace

void laplace_plan_setup(LaplacePlan& P) {
  require(P.ctx.on_gpu() && P.tree && P.tree->ctx.on_gpu(), GPUFMM_ERROR_INTERNAL,
          "laplace_plan_setup: the plan's tree is not on a GPU context");
  DeviceGuard guard(P.ctx);
  auto G = std::make_shared<GpuData>();
  G->ctx = &P.ctx;
  G->device = P.ctx.device;
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&G->sms, cudaDevAttrMultiProcessorCount, G->device));
  GPUFMM_CUDA_CHECK(
      cudaDeviceGetAttribute(&G->max_threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, G->device));
  int optin = 0;
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, G->device));
  G->smem_optin = static_cast<size_t>(optin);
  GPUFMM_CUDA_CHECK(cudaStreamCreateWithFlags(&G->s1, cudaStreamNonBlocking));
  for (auto& e : G->ev) GPUFMM_CUDA_CHECK(cudaEventCreate(&e));
  GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&G->fork, cudaEventDisableTiming));
  GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&G->join, cudaEventDisableTiming));
  G->k = P.options.gpu;
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
  // Grouped M2L needs the work vectors of 4 lanes in shared memory (p <= 44
  // in double on an H100); beyond, the BpB kernel.
  if (G->k.m2l == GPUFMM_STRATEGY_GRP && (P.single() ? m2l_group_smem_bytes<float, 4>(P.p)
                                                   : m2l_group_smem_bytes<double, 4>(P.p)) > G->smem_optin)
    G->k.m2l = GPUFMM_STRATEGY_BPB;
  if (G->k.m2l == GPUFMM_STRATEGY_GRP) build_m2l_groups(*G, P, s0);
  lap(P.plan_times.setup_groups);
  G->sxyz = static_cast<double*>(G->alloc(sizeof(double) * 3 * std::max<int64_t>(P.nsrc, 1), "laplace sources"));
  // Sorted coordinates: gathered on the device from the plan's device copy
  // of the user's (laplace_plan_create), or uploaded from host copies.
  if (P.nsrc > 0 && P.dev_sources != nullptr)
    gpufmm::cuda::gather_points(P.ctx, P.dev_sources, P.tree->src.perm, P.nsrc, G->sxyz);
  else if (P.nsrc > 0)
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(G->sxyz, P.src_xyz.data(), sizeof(double) * 3 * P.nsrc,
                                      cudaMemcpyHostToDevice, s0));
  if (P.same_sets) {
    G->txyz = G->sxyz;
  } else {
    double* t = static_cast<double*>(G->alloc(sizeof(double) * 3 * std::max<int64_t>(P.ntrg, 1), "laplace targets"));
    if (P.ntrg > 0 && P.dev_targets != nullptr)
      gpufmm::cuda::gather_points(P.ctx, P.dev_targets, P.tree->recv_own.perm, P.ntrg, t);
    else if (P.ntrg > 0)
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(t, P.trg_xyz.data(), sizeof(double) * 3 * P.ntrg, cudaMemcpyHostToDevice, s0));
    G->txyz = t;
  }
  G->bad = static_cast<unsigned long long*>(G->alloc(2 * sizeof(unsigned long long), "laplace flags"));
  G->leaf_of = static_cast<int32_t*>(G->alloc(sizeof(int32_t) * std::max<int64_t>(P.ntrg, 1), "laplace leaf map"));
  const tree::PointSet& R = P.tree->receivers();
  if (P.ntrg > 0 && R.nboxes > 0) {
    const int64_t b0 = R.level_offset[P.l_max], nb = R.level_offset[P.l_max + 1] - b0;
    k_leaf_of<<<blocks_for(*G, nb, 128), 128, 0, s0>>>(b0, nb, dev_set(R), G->leaf_of);
    check_launch("laplace leaf map kernel");
  }
  if (P.ntrg > 0 && P.nsrc > 0 && R.nboxes > 0) build_p2p_units(*G, P, s0);
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
  P.gpu = G;
}

LaplaceGpuKernels& laplace_gpu_kernels(LaplacePlan& P) { return gpu_of(P).k; }

size_t laplace_gpu_bytes(const LaplacePlan& P) {
  return P.gpu ? static_cast<const GpuData*>(P.gpu.get())->bytes : 0;
}

void laplace_evaluate(LaplacePlan& P, const LaplaceEvalArgs& a) {
  GpuData& G = gpu_of(P);
  DeviceGuard guard(P.ctx);
  if (P.single())
    evaluate_typed<float>(P, G, G.tab_f, a);
  else
    evaluate_typed<double>(P, G, G.tab_d, a);
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
