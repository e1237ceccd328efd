// The translation tables of the CUDA Laplace driver on the device: packed on
// the host, uploaded once per (precision, p, variable truncation) and device,
// shared by the plans through a process-wide cache.
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/lru_cache.hpp"
#include "cuda/fmm/laplace/gpu_data.cuh"

namespace gpufmm {
namespace fmm {
namespace cuda {

namespace {

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

}  // namespace

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

template DevTables<double> device_tables<double>(GpuData&, const LaplaceTables<double>&, bool, bool);
template DevTables<float> device_tables<float>(GpuData&, const LaplaceTables<float>&, bool, bool);

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
