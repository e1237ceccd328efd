// The CUDA tree builder. Everything runs on the context's stream and stays on
// the device; the host waits twice (for the depth and box counts, to size the
// allocations, and at the end). Produces exactly what the OpenMP builder
// produces (src/cxx/tree/tree_cpu.cpp):
//   keys       bounding box (two-stage reduction), cube, Morton keys, checks
//   sort       cub::DeviceRadixSort::SortPairs (stable), inverse permutation
//   hierarchy  histogram of common levels of neighbouring keys (-> depth and
//              box counts per level), sync, cub::DeviceSelect of box starts
//              level by level, parent links (adaptive trees: cub::DeviceSelect
//              of the children of crowded boxes, level by level, one sync
//              per level), then child ranges, leaf flags and centres, and the
//              tight bounds by cub::DeviceSegmentedReduce over every box
#include <cuda_runtime.h>

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "cuda/common/bounds.cuh"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/temp_storage.cuh"
#include "tree/tree.hpp"

namespace gpufmm {
namespace tree {
namespace detail {

namespace {

using cuda::check;
using cuda::check_launch;

constexpr unsigned long long kNoneU = ULLONG_MAX;
constexpr int kBlock = 256;
constexpr unsigned kFull = 0xffffffffu;

// Device-side bookkeeping, read back by the host at the two sync points.
struct Status {
  unsigned long long bad[4];  // first non-finite (src, recv), first outside (src, recv)
  unsigned long long hist[2][kMaxLevel + 1];
  int cmax[2];
  Cube cube;
  long long selected[2][kMaxLevel + 1];  // boxes found per set and level
};

struct Offsets {
  int64_t v[kMaxLevel + 2];
};

inline unsigned blocks_for(int64_t n, int block, int64_t cap) {
  const int64_t b = (n + block - 1) / block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(b, cap)));
}

// ---------------------------------------------------------------- keys

__global__ void init_status_kernel(Status* st) {
  const int i = threadIdx.x;
  if (i < 4) st->bad[i] = kNoneU;
  if (i < 2) st->cmax[i] = -1;
  if (i < 2 * (kMaxLevel + 1)) {
    st->hist[i / (kMaxLevel + 1)][i % (kMaxLevel + 1)] = 0;
    st->selected[i / (kMaxLevel + 1)][i % (kMaxLevel + 1)] = 0;
  }
}

// One block: combines the partial boxes of both sets into the cube.
__global__ void __launch_bounds__(cuda::kBoxBlock)
cube_kernel(const double* __restrict__ part, int nparts, bool given, double cx, double cy,
            double cz, double side, Status* st) {
  __shared__ double sh[6][cuda::kBoxBlock];
  double v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (int b = threadIdx.x; b < nparts; b += blockDim.x)
    for (int k = 0; k < 3; ++k) {
      v[k] = fmin(v[k], part[6 * b + k]);
      v[3 + k] = fmax(v[3 + k], part[6 * b + 3 + k]);
    }
  cuda::block_box_reduce(v, sh);
  if (threadIdx.x != 0) return;
  if (given) {
    const double c[3] = {cx, cy, cz};
    st->cube = cube_from_center(c, side);
    return;
  }
  double lo[3] = {sh[0][0], sh[1][0], sh[2][0]}, hi[3] = {sh[3][0], sh[4][0], sh[5][0]};
  if (!(lo[0] <= hi[0])) {  // no (finite) points at all
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = 0.0;
  }
  st->cube = cube_from_bbox(lo, hi);
}

__global__ void __launch_bounds__(kBlock)
keys_kernel(const double* __restrict__ p, int64_t n, const Status* __restrict__ st, bool check_inside,
            uint64_t* __restrict__ keys, int32_t* __restrict__ vals,
            unsigned long long* __restrict__ bad_outside) {
  const Cube q = st->cube;
  unsigned long long first = kNoneU;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double cx = cube_cells(q, 0, p[3 * i]), cy = cube_cells(q, 1, p[3 * i + 1]),
                 cz = cube_cells(q, 2, p[3 * i + 2]);
    if (check_inside && first == kNoneU &&
        !(cells_inside(cx) && cells_inside(cy) && cells_inside(cz)))
      first = static_cast<unsigned long long>(i);
    keys[i] = morton_encode(cell_index(cx), cell_index(cy), cell_index(cz));
    vals[i] = static_cast<int32_t>(i);
  }
  if (first != kNoneU) atomicMin(bad_outside, first);
}

// ---------------------------------------------------------------- sort, levels

__global__ void iperm_kernel(const int32_t* __restrict__ perm, int64_t n, int32_t* __restrict__ iperm) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    iperm[perm[i]] = static_cast<int32_t>(i);
}

__global__ void __launch_bounds__(kBlock)
scan_levels_kernel(const uint64_t* __restrict__ k, int64_t n, int s_max,
                   unsigned long long* __restrict__ hist, int* __restrict__ cmax) {
  __shared__ unsigned int h[kMaxLevel + 1];
  if (threadIdx.x <= kMaxLevel) h[threadIdx.x] = 0;
  __syncthreads();
  int c_hi = -1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t start = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t i = start; i < n; i += stride) {
    if (i >= 1) atomicAdd(&h[common_levels(k[i - 1], k[i])], 1u);
    if (s_max > 0 && i + s_max < n) c_hi = max(c_hi, common_levels(k[i], k[i + s_max]));
  }
  __syncthreads();
  if (threadIdx.x <= kMaxLevel && h[threadIdx.x] != 0)
    atomicAdd(&hist[threadIdx.x], static_cast<unsigned long long>(h[threadIdx.x]));
  for (int o = 16; o > 0; o >>= 1) c_hi = max(c_hi, __shfl_xor_sync(kFull, c_hi, o));
  if ((threadIdx.x & 31) == 0 && c_hi >= 0) atomicMax(cmax, c_hi);
}

// ---------------------------------------------------------------- hierarchy

struct LeafStart {
  const uint64_t* k;
  int shift;
  __device__ bool operator()(int i) const {
    return i == 0 || (k[i] >> shift) != (k[i - 1] >> shift);
  }
};

struct ParentStart {
  const uint64_t* k;  // child keys of one level
  __device__ bool operator()(int j) const { return j == 0 || (k[j] >> 3) != (k[j - 1] >> 3); }
};

__global__ void leaf_boxes_kernel(const int32_t* __restrict__ starts, int64_t nl, int64_t n,
                                  const uint64_t* __restrict__ keys, int shift, int64_t off,
                                  uint64_t* __restrict__ box_key,
                                  int32_t* __restrict__ pb, int32_t* __restrict__ pe) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < nl;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t s = starts[j];
    box_key[off + j] = keys[s] >> shift;
    pb[off + j] = s;
    pe[off + j] = j + 1 < nl ? starts[j + 1] : static_cast<int32_t>(n);
  }
}

__global__ void parent_boxes_kernel(const int32_t* __restrict__ starts, int64_t np, int64_t nc,
                                    int64_t po, int64_t co, uint64_t* __restrict__ box_key,
                                    int32_t* __restrict__ pb, int32_t* __restrict__ pe,
                                    int32_t* __restrict__ parent) {
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < np;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t cb = starts[p], ce = p + 1 < np ? starts[p + 1] : nc;
    box_key[po + p] = box_key[co + cb] >> 3;
    pb[po + p] = pb[co + cb];
    pe[po + p] = pe[co + ce - 1];
    for (int64_t c = cb; c < ce; ++c) parent[co + c] = static_cast<int32_t>(po + p);
  }
}

__global__ void root_kernel(int32_t* parent) {
  if (threadIdx.x == 0 && blockIdx.x == 0) parent[0] = -1;
}

// Adaptive trees: the root level (key 0, all points).
__global__ void adaptive_root_kernel(uint64_t* key, int32_t* begin, int32_t* end, int32_t* parent,
                                     int32_t n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    key[0] = 0;
    begin[0] = 0;
    end[0] = n;
    parent[0] = -1;
  }
}

// Adaptive trees: the level-(l+1) boxes from their selected first points.
__global__ void adaptive_level_kernel(const int32_t* __restrict__ starts, int64_t m, int64_t n,
                                      AdaptiveStart a, int64_t po, uint64_t* __restrict__ key,
                                      int32_t* __restrict__ begin, int32_t* __restrict__ end,
                                      int32_t* __restrict__ parent) {
  const int sh = level_shift(a.level + 1);
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < m;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t s = starts[j], p = a.parent_of(s);
    const int32_t stop = j + 1 < m ? starts[j + 1] : static_cast<int32_t>(n);
    key[j] = a.keys[s] >> sh;
    begin[j] = s;
    end[j] = min(stop, a.end[p]);
    parent[j] = static_cast<int32_t>(po + p);
  }
}

// Child ranges (from the parent links), leaf flags and centres of every box.
__global__ void finish_kernel(const uint64_t* __restrict__ box_key, const int32_t* __restrict__ parent,
                              int64_t nb, Offsets off, int l_max, const Status* __restrict__ st,
                              int32_t* __restrict__ child, uint8_t* __restrict__ leaf,
                              double* __restrict__ center) {
  const Cube q = st->cube;
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < nb;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int l = 0;
    while (l < l_max && b >= off.v[l + 1]) ++l;
    const int64_t on = off.v[l + 1], nn = l < l_max ? off.v[l + 2] - on : 0;
    const int32_t cb = first_child(parent, on, nn, static_cast<int32_t>(b)),
                  ce = first_child(parent, on, nn, static_cast<int32_t>(b + 1));
    child[b] = cb;
    leaf[b] = cb == ce ? 1 : 0;
    if (b == 0) child[nb] = static_cast<int32_t>(nb);
    int32_t x, y, z;
    morton_decode(box_key[b], x, y, z);
    center[3 * b] = box_center(q, 0, l, x);
    center[3 * b + 1] = box_center(q, 1, l, y);
    center[3 * b + 2] = box_center(q, 2, l, z);
  }
}

// ---------------------------------------------------------------- host side

class Events {
 public:
  explicit Events(int n) : n_(n) {
    for (int i = 0; i < n_; ++i) {
      cudaError_t err = cudaEventCreate(&e_[i]);
      if (err != cudaSuccess) {
        made_ = i;
        cuda::throw_cuda_error(err, "cudaEventCreate");
      }
      made_ = i + 1;
    }
  }
  ~Events() {
    for (int i = 0; i < made_; ++i)
      if (cudaEventDestroy(e_[i]) != cudaSuccess) (void)cudaGetLastError();
  }
  void record(int i, cudaStream_t s) { check(cudaEventRecord(e_[i], s), "cudaEventRecord"); }
  double seconds(int a, int b) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e_[a], e_[b]), "cudaEventElapsedTime");
    return 1e-3 * ms;
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

 private:
  cudaEvent_t e_[8] = {};
  int n_ = 0, made_ = 0;
};

Offsets offsets_of(const PointSet& ps) {
  Offsets o;
  for (int i = 0; i < kMaxLevel + 2; ++i)
    o.v[i] = i < static_cast<int>(ps.level_offset.size()) ? ps.level_offset[static_cast<size_t>(i)]
             : (ps.level_offset.empty() ? 0 : ps.level_offset.back());
  return o;
}

// Adaptive trees: the boxes of one set and level (keys, point ranges,
// parents), in an allocation of their own until allocate_boxes() has sized
// the set's box arrays.
struct AdaptiveLevel {
  std::unique_ptr<cuda::TempStorage> buf;
  uint64_t* key = nullptr;
  int32_t *begin = nullptr, *end = nullptr, *parent = nullptr;
  int64_t count;
};

AdaptiveLevel new_level(Context& ctx, int64_t m) {
  AdaptiveLevel v;
  v.buf = std::make_unique<cuda::TempStorage>(ctx, "adaptive tree level");
  v.buf->add(v.key, m);
  v.buf->add(v.begin, m);
  v.buf->add(v.end, m);
  v.buf->add(v.parent, m);
  v.buf->allocate();
  v.count = m;
  return v;
}

// Grid sizes stop at 8 blocks per SM (the kernels loop over the rest).
int64_t grid_cap_of_device() {
  int dev = 0, sms = 1;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  return static_cast<int64_t>(sms) * 8;
}

// One build on the context's stream: the sets, the launch shape, the
// scratch (CUB temporaries sized for the largest use, the unsorted keys,
// the Status), and the steps of build_cuda, which calls them in order.
struct Build {
  Build(Tree& tree, cudaStream_t s, const double* src, const double* recv)
      : t(tree), ctx(tree.ctx), stream(s), grid_cap(grid_cap_of_device()), nsets(tree.same_sets ? 1 : 2),
        sets{&tree.src, &tree.recv_own}, n{tree.src.n, tree.same_sets ? 0 : tree.recv_own.n},
        nmax(std::max(n[0], n[1])),
        gb{n[0] > 0 ? blocks_for(n[0], kBlock, grid_cap) : 0u, n[1] > 0 ? blocks_for(n[1], kBlock, grid_cap) : 0u},
        nparts(static_cast<int>(gb[0] + gb[1])), coords{src, recv}, scratch(tree.ctx, "tree build scratch") {}
  Build(const Build&) = delete;
  Build& operator=(const Build&) = delete;

  void allocate_scratch(bool on_device);
  void upload();
  void keys();
  void sort();
  void scan_levels(LevelScan scans[2]);
  void adaptive_levels(int s, std::vector<AdaptiveLevel>& lv);
  void copy_adaptive_boxes(const std::vector<AdaptiveLevel> lv[2]);
  void uniform_boxes(int s);
  void finish_boxes(int s);
  void check_counts(bool adaptive);

  Tree& t;
  Context& ctx;
  const cudaStream_t stream;
  const int64_t grid_cap;
  const int nsets;
  PointSet* const sets[2];
  const int64_t n[2];
  const int64_t nmax;
  const unsigned gb[2];  // blocks of the partial bounding boxes, per set
  const int nparts;
  const double* coords[2];  // on the device after upload()
  double* up[2] = {nullptr, nullptr};
  uint64_t* keys_in[2] = {nullptr, nullptr};
  int32_t* idx_in[2] = {nullptr, nullptr};
  int32_t* starts = nullptr;
  double* parts = nullptr;
  Status* st = nullptr;
  cuda::TempStorage scratch;
};

// The scratch: the coordinates of host input, the keys and indices before
// the sort, the box starts, the partial boxes, the Status, and room for
// the largest CUB call.
void Build::allocate_scratch(bool on_device) {
  if (!on_device) {
    scratch.add(up[0], 3 * n[0]);
    scratch.add(up[1], 3 * n[1]);
  }
  for (int s = 0; s < 2; ++s) scratch.add(keys_in[s], n[s]);
  for (int s = 0; s < 2; ++s) scratch.add(idx_in[s], n[s]);
  scratch.add(starts, std::max<int64_t>(nmax, 1));
  scratch.add(parts, 6 * std::max(nparts, 1));
  scratch.add(st, 1);
  for (int s = 0; s < nsets; ++s)
    scratch.add_cub([&](void* tmp, size_t& b) {
      return cub::DeviceRadixSort::SortPairs(tmp, b, static_cast<const uint64_t*>(nullptr),
                                             static_cast<uint64_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                             static_cast<int32_t*>(nullptr), static_cast<int>(n[s]), 0, 63, stream);
    }, "cub::DeviceRadixSort::SortPairs (size query)");
  scratch.add_cub([&](void* tmp, size_t& b) {
    return cub::DeviceSelect::If(tmp, b, thrust::counting_iterator<int>(0), static_cast<int32_t*>(nullptr),
                                 static_cast<long long*>(nullptr), static_cast<int64_t>(nmax), LeafStart{nullptr, 0},
                                 stream);
  }, "cub::DeviceSelect::If (size query)");
  scratch.add_cub([&](void* tmp, size_t& b) {
    return cub::DeviceSelect::If(tmp, b, thrust::counting_iterator<int>(0), static_cast<int32_t*>(nullptr),
                                 static_cast<long long*>(nullptr), static_cast<int64_t>(nmax), AdaptiveStart{},
                                 stream);
  }, "cub::DeviceSelect::If (size query)");
  scratch.allocate();
}

// Host coordinates to the scratch (on_device: nothing to do).
void Build::upload() {
  for (int s = 0; s < nsets; ++s) {
    if (n[s] == 0) continue;
    check(cudaMemcpyAsync(up[s], coords[s], sizeof(double) * 3 * static_cast<size_t>(n[s]),
                          cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync (tree coordinates, host to device)");
    coords[s] = up[s];
  }
}

// The bounding box of both sets, the cube, the point arrays, the Morton
// keys (the first point outside a given cube noted in the Status).
void Build::keys() {
  init_status_kernel<<<1, 64, 0, stream>>>(st);
  check_launch("init_status_kernel");
  for (int s = 0; s < nsets; ++s) {
    if (n[s] == 0) continue;
    cuda::box_partial_kernel<<<gb[s], cuda::kBoxBlock, 0, stream>>>(coords[s], n[s],
                                                                     parts + 6 * (s == 0 ? 0 : gb[0]), &st->bad[s]);
    check_launch("box_partial_kernel");
  }
  cube_kernel<<<1, cuda::kBoxBlock, 0, stream>>>(parts, nparts, t.options.cube_given, t.options.cube_center[0],
                                   t.options.cube_center[1], t.options.cube_center[2],
                                   t.options.cube_side, st);
  check_launch("cube_kernel");
  allocate_points(t);
  for (int s = 0; s < nsets; ++s) {
    if (n[s] == 0) continue;
    keys_kernel<<<blocks_for(n[s], kBlock, grid_cap), kBlock, 0, stream>>>(
        coords[s], n[s], st, t.options.cube_given, keys_in[s], idx_in[s], &st->bad[2 + s]);
    check_launch("keys_kernel");
  }
}

// The points of each set in key order (stable), and the inverse permutation.
void Build::sort() {
  for (int s = 0; s < nsets; ++s) {
    if (n[s] == 0) continue;
    scratch.run_cub(
        [&](void* tmp, size_t& b) {
          return cub::DeviceRadixSort::SortPairs(tmp, b, keys_in[s], sets[s]->keys, idx_in[s], sets[s]->perm,
                                                 static_cast<int>(n[s]), 0, 63, stream);
        },
        "cub::DeviceRadixSort::SortPairs");
    iperm_kernel<<<blocks_for(n[s], kBlock, grid_cap), kBlock, 0, stream>>>(sets[s]->perm, n[s],
                                                                           sets[s]->iperm);
    check_launch("iperm_kernel");
  }
}

// Sync 1: the histograms of common levels of neighbouring keys (depth and
// box counts per level) read back with the bad points and the cube; the
// bad points fail here, the cube goes to t.
void Build::scan_levels(LevelScan scans[2]) {
  const int s_max = t.options.l_max < 0 ? t.options.s_max : 0;
  for (int s = 0; s < nsets; ++s) {
    if (n[s] == 0) continue;
    scan_levels_kernel<<<blocks_for(n[s], kBlock, grid_cap), kBlock, 0, stream>>>(
        sets[s]->keys, n[s], s_max, st->hist[s], &st->cmax[s]);
    check_launch("scan_levels_kernel");
  }
  Status hs;
  check(cudaMemcpyAsync(&hs, st, sizeof(Status), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (tree status, device to host)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  for (int kind = 0; kind < 2; ++kind)
    for (int s = 0; s < nsets; ++s)
      if (hs.bad[2 * kind + s] != kNoneU)
        fail_bad_point(kind, s == 1, static_cast<int64_t>(hs.bad[2 * kind + s]));
  t.cube = hs.cube;
  require(std::isfinite(t.cube.side) && t.cube.scale > 0, GPUFMM_ERROR_INVALID_ARGUMENT,
          "the coordinates span a range too wide for double precision (cube side ", t.cube.side,
          ")");
  for (int s = 0; s < 2; ++s) {
    for (int c = 0; c <= kMaxLevel; ++c)
      scans[s].hist[c] = s < nsets ? static_cast<int64_t>(hs.hist[s][c]) : 0;
    scans[s].cmax = s < nsets ? hs.cmax[s] : -1;
  }
}

// Adaptive trees, set s: the levels from the root down, each from
// cub::DeviceSelect of the first points of the children of crowded boxes,
// one sync per level for its count; ps.level_offset and ps.nboxes follow.
void Build::adaptive_levels(int s, std::vector<AdaptiveLevel>& lv) {
  PointSet& ps = *sets[s];
  ps.level_offset.assign(1, 0);
  if (n[s] == 0) return;
  lv.push_back(new_level(ctx, 1));
  adaptive_root_kernel<<<1, 1, 0, stream>>>(lv[0].key, lv[0].begin, lv[0].end,
                                             lv[0].parent, static_cast<int32_t>(n[s]));
  check_launch("adaptive_root_kernel");
  ps.level_offset.push_back(1);
  for (int l = 0; l < t.options.max_level; ++l) {
    const AdaptiveLevel& cur = lv.back();
    const AdaptiveStart a{ps.keys, cur.key, cur.begin, cur.end, cur.count, l, t.options.s_max};
    scratch.run_cub(
        [&](void* tmp, size_t& b) {
          return cub::DeviceSelect::If(tmp, b, thrust::counting_iterator<int>(0), starts, &st->selected[s][l + 1],
                                       n[s], a, stream);
        },
        "cub::DeviceSelect::If (adaptive boxes)");
    long long m = 0;
    check(cudaMemcpyAsync(&m, &st->selected[s][l + 1], sizeof m, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (box count, device to host)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (m == 0) break;
    AdaptiveLevel next = new_level(ctx, m);
    adaptive_level_kernel<<<blocks_for(m, kBlock, grid_cap), kBlock, 0, stream>>>(
        starts, m, n[s], a, ps.level_offset[static_cast<size_t>(l)], next.key, next.begin, next.end,
        next.parent);
    check_launch("adaptive_level_kernel");
    lv.push_back(std::move(next));
    ps.level_offset.push_back(ps.level_offset.back() + m);
  }
  ps.nboxes = ps.level_offset.back();
}

// Adaptive trees: the levels of both sets into their box arrays.
void Build::copy_adaptive_boxes(const std::vector<AdaptiveLevel> lv[2]) {
  for (int s = 0; s < nsets; ++s) {
    PointSet& ps = *sets[s];
    for (size_t l = 0; l < lv[s].size(); ++l) {
      const AdaptiveLevel& v = lv[s][l];
      const int64_t o = ps.level_offset[l];
      check(cudaMemcpyAsync(ps.box_key + o, v.key, sizeof(uint64_t) * v.count, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (adaptive boxes)");
      check(cudaMemcpyAsync(ps.point_begin + o, v.begin, sizeof(int32_t) * v.count, cudaMemcpyDeviceToDevice,
                            stream),
            "cudaMemcpyAsync (adaptive boxes)");
      check(cudaMemcpyAsync(ps.point_end + o, v.end, sizeof(int32_t) * v.count, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (adaptive boxes)");
      check(cudaMemcpyAsync(ps.parent + o, v.parent, sizeof(int32_t) * v.count, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (adaptive boxes)");
    }
  }
}

// Uniform trees, set s (points present): the leaf boxes from
// cub::DeviceSelect of their first points, then level by level upwards
// the parents from the first children and the parent links.
void Build::uniform_boxes(int s) {
  PointSet& ps = *sets[s];
  const int L = t.l_max;
  const std::vector<int64_t>& off = ps.level_offset;
  const int sh = level_shift(L);
  scratch.run_cub(
      [&](void* tmp, size_t& b) {
        return cub::DeviceSelect::If(tmp, b, thrust::counting_iterator<int>(0), starts, &st->selected[s][L], n[s],
                                     LeafStart{ps.keys, sh}, stream);
      },
      "cub::DeviceSelect::If (leaf boxes)");
  const int64_t nl = off[L + 1] - off[L];
  leaf_boxes_kernel<<<blocks_for(nl, kBlock, grid_cap), kBlock, 0, stream>>>(
      starts, nl, n[s], ps.keys, sh, off[L], ps.box_key, ps.point_begin, ps.point_end);
  check_launch("leaf_boxes_kernel");
  for (int l = L - 1; l >= 0; --l) {
    const int64_t co = off[l + 1], nc = off[l + 2] - off[l + 1], po = off[l], np = off[l + 1] - off[l];
    scratch.run_cub(
        [&](void* tmp, size_t& b) {
          return cub::DeviceSelect::If(tmp, b, thrust::counting_iterator<int>(0), starts, &st->selected[s][l], nc,
                                       ParentStart{ps.box_key + co}, stream);
        },
        "cub::DeviceSelect::If (parent boxes)");
    parent_boxes_kernel<<<blocks_for(np, kBlock, grid_cap), kBlock, 0, stream>>>(
        starts, np, nc, po, co, ps.box_key, ps.point_begin, ps.point_end, ps.parent);
    check_launch("parent_boxes_kernel");
  }
  root_kernel<<<1, 1, 0, stream>>>(ps.parent);
  check_launch("root_kernel");
}

// Both kinds, set s: child ranges, leaf flags, centres, and the tight
// bounds of every box (cub::DeviceSegmentedReduce, its own temporaries).
void Build::finish_boxes(int s) {
  PointSet& ps = *sets[s];
  const int32_t nb = static_cast<int32_t>(ps.nboxes);
  if (nb == 0) {
    check(cudaMemsetAsync(ps.child_offset, 0, sizeof(int32_t), stream), "cudaMemsetAsync");
    return;
  }
  finish_kernel<<<blocks_for(nb, kBlock, grid_cap), kBlock, 0, stream>>>(
      ps.box_key, ps.parent, nb, offsets_of(ps), t.l_max, st, ps.child_offset, ps.leaf, ps.center);
  check_launch("finish_kernel");
  const auto pts = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                                   PointBounds{coords[s], ps.perm});
  const Bounds none{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  auto bounds = [&](void* tmp, size_t& b) {
    return cub::DeviceSegmentedReduce::Reduce(tmp, b, pts, ps.bounds, nb, ps.point_begin, ps.point_end,
                                              BoundsMerge{}, none, stream);
  };
  cuda::TempStorage rtmp(ctx, "tree bounds temporaries");
  rtmp.add_cub(bounds, "cub::DeviceSegmentedReduce::Reduce (size query)");
  rtmp.allocate();
  rtmp.run_cub(bounds, "cub::DeviceSegmentedReduce::Reduce (box bounds)");
}

// Sync 2: the box counts found by the selects of uniform trees against
// those the key histogram predicted.
void Build::check_counts(bool adaptive) {
  Status hs;
  check(cudaMemcpyAsync(&hs, st, sizeof(Status), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (tree status, device to host)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  for (int s = 0; s < nsets && !adaptive; ++s) {
    if (n[s] == 0) continue;
    for (int l = 0; l <= t.l_max; ++l)
      require(hs.selected[s][l] == sets[s]->boxes_at(l), GPUFMM_ERROR_INTERNAL,
              "tree build: found ", hs.selected[s][l], " boxes at level ", l,
              " where the key histogram predicted ", sets[s]->boxes_at(l));
  }
}

}  // namespace

void build_cuda(Tree& t, const double* src, const double* recv, bool on_device) {
  Context& ctx = t.ctx;
  cuda::DeviceGuard guard(ctx);
  cudaStream_t stream = cuda::stream_of(ctx);
  cuda::clear_last_error();
  Build b(t, stream, src, recv);
  b.allocate_scratch(on_device);

  Events ev(5);
  ev.record(0, stream);
  if (!on_device) b.upload();
  ev.record(1, stream);
  b.keys();
  ev.record(2, stream);
  b.sort();
  ev.record(3, stream);

  // ---- hierarchy: depth and box counts (sync 1), then boxes and parent links
  LevelScan scans[2];
  b.scan_levels(scans);
  const bool adaptive = t.options.kind == Kind::Adaptive;
  std::vector<AdaptiveLevel> lv[2];  // freed (stream-ordered) at the end
  if (adaptive) {
    for (int s = 0; s < b.nsets; ++s) b.adaptive_levels(s, lv[s]);
    finish_adaptive_levels(t);
    allocate_boxes(t);
    b.copy_adaptive_boxes(lv);
  } else {
    finish_levels(t, scans);
    allocate_boxes(t);
  }
  for (int s = 0; s < b.nsets; ++s) {
    if (b.n[s] > 0 && !adaptive) b.uniform_boxes(s);
    b.finish_boxes(s);
  }
  ev.record(4, stream);

  b.check_counts(adaptive);
  t.timings.upload = on_device ? 0.0 : ev.seconds(0, 1);
  t.timings.keys = ev.seconds(1, 2);
  t.timings.sort = ev.seconds(2, 3);
  t.timings.hierarchy = ev.seconds(3, 4);
}

}  // namespace detail
}  // namespace tree
}  // namespace gpufmm
