// Translation tables of the Laplace FMM (layout: fmm/laplace/plan.hpp): the
// build (double precomputation rounded to T, in parallel, bitwise the same
// for any thread count) and the process-wide cache.
#include <omp.h>

#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include "core/lru_cache.hpp"
#include "fmm/laplace/math.hpp"
#include "fmm/laplace/plan.hpp"

namespace gpufmm {
namespace fmm {

template <class T>
size_t LaplaceTables<T>::bytes() const {
  return sizeof(T) * (rot.size() + coax.size() + 2 * kNumOps) +
         sizeof(int32_t) * 3 * kNumOps + kNumOps + sizeof(int64_t) * coax_offset.size();
}

namespace {

int64_t gcd64(int64_t a, int64_t b) { return b == 0 ? a : gcd64(b, a % b); }

// Two steps: the ops are walked in a fixed order, which numbers the distinct
// rotation tables and coax matrices (and sizes them); compute() then fills
// them, in parallel: each is a pure function of its own parameters, so the
// tables are bitwise the same for any thread count.
template <class T>
struct TableBuilder {
  LaplaceTables<T>& t;
  std::map<std::pair<int64_t, int64_t>, int> rot_index;  // reduced (tz^2, |t|^2)
  std::map<std::pair<int, int64_t>, int> coax_index;     // (kind, |t|^2 in its units)
  struct RotJob {
    double cos_b, sin_b;
  };
  struct CoaxJob {
    int kind, pp;
    double rd, rs;
  };
  std::vector<RotJob> rot_jobs;    // [nrot]
  std::vector<CoaxJob> coax_jobs;  // [ncoax]

  explicit TableBuilder(LaplaceTables<T>& tab) : t(tab) {}

  // Direction of the translation t (integer components in any unit).
  void direction(int op, int64_t tx, int64_t ty, int64_t tz) {
    const bool flip = tz < 0;  // tables only for cos(b) >= 0 (eq. 34)
    if (flip) {
      tx = -tx;
      ty = -ty;
      tz = -tz;
    }
    const LaplaceDirection<double> d =
        laplace_direction<double>(double(tx), double(ty), double(tz));
    const int64_t n2 = tx * tx + ty * ty + tz * tz, z2 = tz * tz;
    const int64_t g = gcd64(n2, z2);
    const std::pair<int64_t, int64_t> key{z2 / g, n2 / g};
    auto it = rot_index.find(key);
    int idx;
    if (it == rot_index.end()) {
      idx = t.nrot++;
      rot_index[key] = idx;
      rot_jobs.push_back({d.cos_b, d.sin_b});
    } else {
      idx = it->second;
    }
    t.op_rot[op] = idx;
    t.op_flip[op] = flip ? 1 : 0;
    t.op_cos_a[op] = T(d.cos_a);
    t.op_sin_a[op] = T(d.sin_a);
  }

  int add_coax(int kind, int64_t key, int pp, double rd, double rs) {
    auto it = coax_index.find({kind, key});
    if (it != coax_index.end()) return it->second;
    const int idx = static_cast<int>(t.coax_p.size());
    coax_index[{kind, key}] = idx;
    const int64_t off = t.coax_offset.back();
    const int64_t size = laplace_coax_size(pp, pp);
    coax_jobs.push_back({kind, pp, rd, rs});
    t.coax_p.push_back(pp);
    t.coax_offset.push_back(off + size);
    return idx;
  }

  // Fills rot and coax (jobs: the rotation tables, the coax matrices;
  // dynamic: coax sizes vary with p').
  void compute() {
    const int p = t.p;
    t.rot.assign(static_cast<size_t>(t.nrot) * t.rot_stride, T(0));
    t.coax.assign(static_cast<size_t>(t.coax_offset.back()), T(0));
    const int nrot = t.nrot, ncoax = static_cast<int>(coax_jobs.size()), jobs = nrot + ncoax;
#pragma omp parallel if (p >= 8 && omp_get_max_threads() > 1)
    {
      std::vector<double> scratch(static_cast<size_t>(laplace_rotation_scratch_size(p) + 9));
#pragma omp for schedule(dynamic, 1)
      for (int j = 0; j < jobs; ++j) {
        if (j < nrot) {
          const RotJob& r = rot_jobs[static_cast<size_t>(j)];
          laplace_rotation_precompute<T, double>(p, r.cos_b, r.sin_b,
                                                 t.rot.data() + static_cast<size_t>(j) * t.rot_stride,
                                                 scratch.data());
        } else {
          const int c = j - nrot;
          const CoaxJob& x = coax_jobs[static_cast<size_t>(c)];
          T* mat = t.coax.data() + t.coax_offset[static_cast<size_t>(c)];
          if (x.kind == 0)
            laplace_coax_ss<T>(x.pp, x.rd, x.rs, mat);  // rd = tau, rs = rho
          else if (x.kind == 1)
            laplace_coax_rr<T>(x.pp, x.rd, x.rs, mat);
          else
            laplace_coax_sr<T>(x.pp, x.pp, x.rd, x.rs, mat);
        }
      }
    }
  }
};

}  // namespace

template <class T>
void build_tables(int p, bool variable_truncation, LaplaceTables<T>& t) {
  t = LaplaceTables<T>();
  t.p = p;
  t.rot_stride = laplace_rotation_size(p);
  t.op_p.assign(kNumOps, 0);
  t.op_rot.assign(kNumOps, 0);
  t.op_coax.assign(kNumOps, 0);
  t.op_flip.assign(kNumOps, 0);
  t.op_cos_a.assign(kNumOps, T(1));
  t.op_sin_a.assign(kNumOps, T(0));
  t.coax_offset.assign(1, 0);
  TableBuilder<T> b(t);

  // M2M / L2L: child offset from the parent centre is v/2 h_child, v = +-1.
  const double tau = std::sqrt(3.0) / 4.0, rho = 0.5;
  const int ss = b.add_coax(0, 0, p, tau, rho);
  const int rr = b.add_coax(1, 0, p, tau, rho);
  for (int o = 0; o < 8; ++o) {
    const int64_t v[3] = {(o & 1) ? 1 : -1, (o & 2) ? 1 : -1, (o & 4) ? 1 : -1};
    b.direction(kOpM2M + o, -v[0], -v[1], -v[2]);  // t = parent - child
    t.op_p[kOpM2M + o] = p;
    t.op_coax[kOpM2M + o] = ss;
    b.direction(kOpL2L + o, v[0], v[1], v[2]);  // t = child - parent
    t.op_p[kOpL2L + o] = p;
    t.op_coax[kOpL2L + o] = rr;
  }

  // M2L classes (tree/stencil.hpp).
  for (int cls = 0; cls < tree::kNumClasses; ++cls) {
    bool to_parent = false;
    double off[3], eta = 0;
    if (!tree::decode_class(cls, to_parent, off, eta)) continue;
    const int pp = variable_truncation ? laplace_p_reduced(p, eta) : p;
    int64_t e[3];
    double rd, rs;
    int kind;
    if (!to_parent) {  // off = d (integers), t = -d h_l
      for (int k = 0; k < 3; ++k) e[k] = std::llround(off[k]);
      const double dist = std::sqrt(double(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]));
      rd = rs = 1.0 / dist;
      kind = 2;
    } else {  // off = e/2, t = -(e/2) h_{l+1}
      for (int k = 0; k < 3; ++k) e[k] = std::llround(2.0 * off[k]);
      const double dist = std::sqrt(double(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]));
      rd = 4.0 / dist;
      rs = 2.0 / dist;
      kind = 3;
    }
    b.direction(cls, -e[0], -e[1], -e[2]);
    t.op_p[cls] = pp;
    t.op_coax[cls] = b.add_coax(kind, e[0] * e[0] + e[1] * e[1] + e[2] * e[2], pp, rd, rs);
  }
  b.compute();
}

template void build_tables<double>(int, bool, LaplaceTables<double>&);
template void build_tables<float>(int, bool, LaplaceTables<float>&);

namespace {

struct TableKey {
  int p;
  bool vt;
  bool operator==(const TableKey& o) const { return p == o.p && vt == o.vt; }
};

template <class T>
LruCache<TableKey, LaplaceTables<T>>& table_cache() {
  static LruCache<TableKey, LaplaceTables<T>> c(kLaplaceTableCacheBytes);  // plans hold their own references
  return c;
}

}  // namespace

template <class T>
std::shared_ptr<const LaplaceTables<T>> laplace_tables_cached(int p, bool variable_truncation) {
  return table_cache<T>().get(TableKey{p, variable_truncation}, 0, [&] {
    auto built = std::make_shared<LaplaceTables<T>>();
    build_tables<T>(p, variable_truncation, *built);
    const size_t bytes = built->bytes();
    return std::make_pair(std::shared_ptr<const LaplaceTables<T>>(std::move(built)), bytes);
  });
}

template <class T>
std::shared_ptr<const LaplaceTables<T>> laplace_tables_get(int p, bool variable_truncation, bool cache) {
  if (cache) return laplace_tables_cached<T>(p, variable_truncation);
  auto t = std::make_shared<LaplaceTables<T>>();
  build_tables<T>(p, variable_truncation, *t);
  return t;
}

void laplace_tables_cache_clear() {
  table_cache<double>().clear();
  table_cache<float>().clear();
}

template std::shared_ptr<const LaplaceTables<double>> laplace_tables_cached<double>(int, bool);
template std::shared_ptr<const LaplaceTables<float>> laplace_tables_cached<float>(int, bool);
template std::shared_ptr<const LaplaceTables<double>> laplace_tables_get<double>(int, bool, bool);
template std::shared_ptr<const LaplaceTables<float>> laplace_tables_get<float>(int, bool, bool);
template struct LaplaceTables<double>;
template struct LaplaceTables<float>;

}  // namespace fmm
}  // namespace gpufmm
