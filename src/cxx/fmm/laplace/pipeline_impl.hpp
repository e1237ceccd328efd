// The body of the OpenMP pipeline (see pipeline.cpp), included several
// times by pipeline.cpp, each time inside its own namespace and, on x86,
// under its own "#pragma GCC target" (generic, AVX2, AVX-512), so that the
// shared math of fmm/laplace*.hpp, inlined here, is vectorised for the CPU
// that runs it (the library itself is built for the baseline ISA). No
// #pragma once and no #includes on purpose: pipeline.cpp includes what
// this needs before each inclusion.
//
// Entry point of each copy: run_typed<T>(plan, workspace, tables, args).

double now() { return omp_get_wtime(); }

// out[n * per] <- density k of in (nd densities interleaved, see
// LaplaceEvalArgs) in the order perm.
template <class T, class S>
void permute_in(int64_t n, const int32_t* perm, const S* in, int per, int nd, int k, T* out) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = perm[i];
    for (int c = 0; c < per; ++c) out[per * i + c] = T(in[k + int64_t(nd) * (c + per * j)]);
  }
}

// Density k of out (nd interleaved) <- in[n * per] (sorted order).
template <class T, class S>
void permute_out(int64_t n, const int32_t* perm, const T* in, int per, int nd, int k, S* out) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = perm[i];
    for (int c = 0; c < per; ++c) out[k + int64_t(nd) * (c + per * j)] = S(in[per * i + c]);
  }
}

// Coordinates of points [b, e) of xyz relative to the centre of the box
// with key `key` in frame f (tree::box_relative: exact centre), rounded to T.
template <class T>
inline void relative(const double* xyz, int64_t b, int64_t e, const tree::LevelFrame& f, uint64_t key, T* out) {
  for (int64_t i = b; i < e; ++i) {
    double r[3];
    tree::box_relative3(f, key, xyz + 3 * i, r);
    for (int k = 0; k < 3; ++k) out[3 * (i - b) + k] = T(r[k]);
  }
}

// P2P of one target leaf: its targets [tb, te) against its n near sources,
// gathered (structure of arrays, room for whole lane groups) with their
// coordinates as given, so that each source-target difference is one
// correctly rounded subtraction of the user's doubles, as in the double
// direct sum (exact for close pairs), and only then rounded to T; the
// source loop is nearfield::sum_sources, the one CPU near field, here
// flattened into this copy's ISA.
template <bool kC, bool kD, bool kG, class K, class T>
GPUFMM_PIPELINE_FLATTEN void p2p_leaf(const K& k, int64_t tb, int64_t te, const double* txyz, int64_t n,
                                      const nearfield::Sources<double, T>& g, T* pot, T* grad) {
  for (int64_t i = tb; i < te; ++i) {
    T v, gx, gy, gz;
    nearfield::sum_sources<kC, kD, kG>(k, txyz[3 * i], txyz[3 * i + 1], txyz[3 * i + 2], 0, n, g, v, gx, gy, gz);
    if (pot) pot[i] += v;
    if (kG) {
      grad[3 * i] += gx;
      grad[3 * i + 1] += gy;
      grad[3 * i + 2] += gz;
    }
  }
}

// p2p_leaf with the Hessian (the Laplace kernel's accumulate_hess).
template <bool kC, bool kD, class K, class T>
GPUFMM_PIPELINE_FLATTEN void p2p_leaf_hess(const K& k, int64_t tb, int64_t te, const double* txyz, int64_t n,
                                           const nearfield::Sources<double, T>& g, T* pot, T* grad, T* hess) {
  for (int64_t i = tb; i < te; ++i) {
    T o[10];
    nearfield::sum_sources_hess<kC, kD>(k, txyz[3 * i], txyz[3 * i + 1], txyz[3 * i + 2], 0, n, g, o);
    if (pot) pot[i] += o[0];
    for (int c = 0; c < 3; ++c) grad[3 * i + c] += o[1 + c];
    for (int c = 0; c < 6; ++c) hess[6 * i + c] += o[4 + c];
  }
}

// Per-box operator calls. GPUFMM_PIPELINE_FLATTEN (flatten on GCC) inlines
// the whole call tree of the math into each wrapper, so that it is compiled
// for this copy's ISA; the out-of-line math templates are baseline code.
template <class T>
GPUFMM_PIPELINE_FLATTEN void rcr_one(int p_in, int p_out, T cos_a, T sin_a, const T* B, bool flip,
                                     const T* coax, const T* in, T* out, T* work) {
  laplace_rcr_apply<T>(p_in, p_out, cos_a, sin_a, B, flip, coax, in, out, work);
}

template <class T, int W>
GPUFMM_PIPELINE_FLATTEN void rcr_lanes(int pp, T cos_a, T sin_a, const Lanes<T, W>* B, bool flip,
                                       const Lanes<T, W>* coax, const Lanes<T, W>* in,
                                       Lanes<T, W>* out, Lanes<T, W>* work) {
  laplace_rcr_apply<Lanes<T, W>>(pp, pp, Lanes<T, W>(cos_a), Lanes<T, W>(sin_a), B, flip, coax, in,
                                 out, work);
}

// The walk's coefficient table (the same values as computed per point).
template <class T>
const LaplaceWalkCoef<T>* walk_coef() {
  static const LaplaceWalkCoef<T> c = [] {
    LaplaceWalkCoef<T> t;
    laplace_walk_coef_fill(t);
    return t;
  }();
  return &c;
}

template <class T>
GPUFMM_PIPELINE_FLATTEN void p2m_box(int p, T h, int n, const T* rel, const T* q, const T* d, T* M) {
  const T zero[3] = {T(0), T(0), T(0)};
  laplace_p2m<T>(p, h, zero, n, rel, q, d, M, walk_coef<T>());
}

template <class T>
GPUFMM_PIPELINE_FLATTEN void l2p_box(int p, T h, const T* L, int n, const T* rel, T* pot, T* grad, T* hess) {
  const T zero[3] = {T(0), T(0), T(0)};
  laplace_l2p<T>(p, h, zero, L, n, rel, pot, grad, walk_coef<T>(), hess);
}

template <class T>
GPUFMM_PIPELINE_FLATTEN void p2l_box(int p, T h, int n, const T* rel, const T* q, const T* d, T* L) {
  const T zero[3] = {T(0), T(0), T(0)};
  laplace_p2l<T>(p, h, zero, n, rel, q, d, L, walk_coef<T>());
}

template <class T>
GPUFMM_PIPELINE_FLATTEN void m2p_box(int p, T h, const T* M, int n, const T* rel, T* pot, T* grad, T* hess) {
  const T zero[3] = {T(0), T(0), T(0)};
  laplace_m2p<T>(p, h, zero, M, n, rel, pot, grad, walk_coef<T>(), hess);
}

// 32 bytes of lanes (4 doubles, 8 floats).
template <class T>
constexpr int kM2LLanes = 32 / int(sizeof(T));
// Above kBatchedM2LMaxP (plan.hpp) the lane tables (W x the scalar
// ones) outgrow the caches and the translations go one at a time.
constexpr int kM2LLanesMaxP = kBatchedM2LMaxP;

template <class T>
struct Pipeline {
  LaplacePlan& P;
  LaplaceWorkspace<T>& W;
  const LaplaceTables<T>& tab;
  const tree::Tree& tr;
  const tree::PointSet& S;
  const tree::PointSet& R;
  const int L;
  const int p;
  const int64_t p2;
  bool has_q = false, has_d = false, want_pot = false, want_grad = false, want_hess = false;
  // The density being evaluated: its inputs (sorted order) and outputs.
  const T *q_ = nullptr, *d_ = nullptr;
  T *pot_ = nullptr, *grad_ = nullptr, *hess_ = nullptr;
  // Per-thread scratch of P2M / L2P (relative coordinates) and P2P (gathered
  // sources), allocated in run() before the parallel regions (allocating).
  std::vector<std::vector<T>> rel_;
  std::vector<nearfield::Sources<double, T>> near_;

  Pipeline(LaplacePlan& plan, LaplaceWorkspace<T>& w, const LaplaceTables<T>& t)
      : P(plan), W(w), tab(t), tr(*plan.tree), S(plan.tree->src), R(plan.tree->receivers()),
        L(plan.l_max), p(plan.p), p2(int64_t(plan.p) * plan.p) {}

  double box_size(int level) const { return tree::box_size(tr.cube, level); }

  // Adaptive plans (issue 19): P2L of the X rows of level l into their
  // receivers' locals (after the level's L2L and M2L).
  void p2l_level(int l) {
    if (!P.alists) return;
    const lists::AdaptiveLists& A = *P.alists;
    const auto first = std::lower_bound(A.x_box.begin(), A.x_box.end(), int32_t(R.level_offset[l]));
    const auto last = std::lower_bound(A.x_box.begin(), A.x_box.end(), int32_t(R.level_offset[l + 1]));
    const int64_t r0 = first - A.x_box.begin(), r1 = last - A.x_box.begin();
    const tree::LevelFrame f = tree::level_frame(tr.cube, l);
    const T h = T(box_size(l));
#pragma omp parallel
    {
      std::vector<T>& rel = rel_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 4)
      for (int64_t r = r0; r < r1; ++r) {
        const int32_t b = A.x_box[size_t(r)];
        T* Lb = W.L.data() + int64_t(b) * p2;
        for (int64_t e = A.x_off[size_t(r)]; e < A.x_off[size_t(r) + 1]; ++e) {
          const int32_t a = A.x[size_t(e)];
          const int64_t pb = S.point_begin[a], pe = S.point_end[a];
          relative(P.src_xyz.data(), pb, pe, f, R.box_key[b], rel.data());
          p2l_box<T>(p, h, int(pe - pb), rel.data(), q_ ? q_ + pb : nullptr, d_ ? d_ + 3 * pb : nullptr, Lb);
        }
        W.has_local[b] = 1;
      }
    }
  }

  // Adaptive plans: M2P of the W rows (multipoles of finer source boxes at
  // the targets of a receiver leaf).
  void m2p() {
    if (!P.alists) return;
    const lists::AdaptiveLists& A = *P.alists;
    const int64_t nl = int64_t(A.leaves.size());
    const double* txyz = P.target_xyz();
#pragma omp parallel
    {
      std::vector<T>& rel = rel_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 4)
      for (int64_t r = 0; r < nl; ++r) {
        const int32_t b = A.leaves[size_t(r)];
        const int64_t tb = R.point_begin[b], te = R.point_end[b];
        for (int64_t e = A.w_off[size_t(r)]; e < A.w_off[size_t(r) + 1]; ++e) {
          const int32_t c = A.w[size_t(e)];
          const int lc = tree::level_of_box(S.level_offset, c);
          relative(txyz, tb, te, tree::level_frame(tr.cube, lc), S.box_key[c], rel.data());
          m2p_box<T>(p, T(box_size(lc)), W.M.data() + int64_t(c) * p2, int(te - tb), rel.data(),
                     pot_ ? pot_ + tb : nullptr, grad_ ? grad_ + 3 * tb : nullptr, hess_ ? hess_ + 6 * tb : nullptr);
        }
      }
    }
  }

  // P2M into the boxes of the far schedule that take it (the leaves, and the
  // boxes with no M2L source below them), at their levels.
  void p2m() {
    const LaplaceFarSchedule& f = P.far;
    const int64_t nb = static_cast<int64_t>(f.p2m.size());
#pragma omp parallel
    {
      std::vector<T>& rel = rel_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 8)
      for (int64_t k = 0; k < nb; ++k) {
        const int64_t b = f.p2m[k];
        const int l = f.p2m_level[k];
        T* M = W.M.data() + b * p2;
        std::fill(M, M + p2, T(0));
        const int64_t pb = S.point_begin[b], pe = S.point_end[b];
        relative(P.src_xyz.data(), pb, pe, tree::level_frame(tr.cube, l), S.box_key[b], rel.data());
        p2m_box<T>(p, T(box_size(l)), int(pe - pb), rel.data(), q_ ? q_ + pb : nullptr,
                   d_ ? d_ + 3 * pb : nullptr, M);
      }
    }
  }

  void m2m() {
    const std::vector<uint8_t>& mode = P.far.m;
    for (int l = L - 1; l >= 2; --l) {
      const int64_t b0 = S.level_offset[l], b1 = S.level_offset[l + 1];
#pragma omp parallel
      {
        std::vector<T> work(static_cast<size_t>(laplace_apply_work_size(p)));
#pragma omp for schedule(dynamic, 8)
        for (int64_t b = b0; b < b1; ++b) {
          if (mode[b] != LaplaceFarSchedule::kM2M) continue;
          T* M = W.M.data() + b * p2;
          std::fill(M, M + p2, T(0));
          for (int64_t c = S.child_offset[b]; c < S.child_offset[b + 1]; ++c) {
            const int op = kOpM2M + int(S.box_key[c] & 7u);
            rcr_one<T>(p, p, tab.op_cos_a[op], tab.op_sin_a[op], tab.rotation(op),
                       tab.op_flip[op] != 0, tab.coax_matrix(op), W.M.data() + c * p2, M,
                       work.data());
          }
        }
      }
    }
  }

  // Adds the M2L translations of one CSR row into Lb.
  int64_t m2l_row(const lists::List& list, int64_t b, T* Lb, T* work) const {
    const int64_t e0 = list.offsets[b], e1 = list.offsets[b + 1];
    for (int64_t e = e0; e < e1; ++e) {
      const int32_t s = list.index[e];
      const int op = list.cls[e];
      const int pp = tab.op_p[op];
      rcr_one<T>(pp, pp, tab.op_cos_a[op], tab.op_sin_a[op], tab.rotation(op),
                 tab.op_flip[op] != 0, tab.coax_matrix(op), W.M.data() + s * p2, Lb, work);
    }
    return e1 - e0;
  }

  // Starts L_b of box b at level l: zero, plus L2L from its parent when the
  // parent has a local expansion (levels >= 2). Returns the translations done.
  int64_t local_from_parent(int l, int64_t b, T* Lb, T* work) {
    std::fill(Lb, Lb + p2, T(0));
    if (l < 2) return 0;
    const int32_t par = R.parent[b];
    if (!W.has_local[par]) return 0;
    const int op = kOpL2L + int(R.box_key[b] & 7u);
    rcr_one<T>(p, p, tab.op_cos_a[op], tab.op_sin_a[op], tab.rotation(op), tab.op_flip[op] != 0,
               tab.coax_matrix(op), W.L.data() + int64_t(par) * p2, Lb, work);
    return 1;
  }

  // ---- downward pass, batched M2L (p <= kM2LLanesMaxP)
  using LanesT = Lanes<T, kM2LLanes<T>>;
  static constexpr int kW = kM2LLanes<T>;

  // The lanes copies of the rotation and coax tables (once per plan).
  void broadcast_tables() {
    if (!W.rot_lanes.empty() || tab.rot.empty()) return;
    W.rot_lanes.resize(tab.rot.size() * kW);
    W.coax_lanes.resize(tab.coax.size() * kW);
    for (size_t i = 0; i < tab.rot.size(); ++i)
      for (int k = 0; k < kW; ++k) W.rot_lanes[i * kW + k] = tab.rot[i];
    for (size_t i = 0; i < tab.coax.size(); ++i)
      for (int k = 0; k < kW; ++k) W.coax_lanes[i * kW + k] = tab.coax[i];
  }

  struct Entry {
    int32_t cls, box, src;  // box: index within the block
  };

  void downward_batched() {
    broadcast_tables();
    const bool modified = P.modified;
    const LanesT* rotL = reinterpret_cast<const LanesT*>(W.rot_lanes.data());
    const LanesT* coaxL = reinterpret_cast<const LanesT*>(W.coax_lanes.data());
    const int nthreads = omp_get_max_threads();
    // Groups of kW receivers per block: the block's accumulators (kmax
    // groups x p^2 lanes) stay in cache while its classes go by.
    const int64_t kmax = std::max<int64_t>(1, std::min<int64_t>(16, (256 << 10) / (p2 * int64_t(sizeof(LanesT)))));
    for (int l = modified ? 1 : 2; l <= L; ++l) {
      const int64_t b0 = R.level_offset[l], b1 = R.level_offset[l + 1], nb = b1 - b0;
      const int64_t groups = (nb + kW - 1) / kW;
      const int64_t kg = std::max<int64_t>(1, std::min<int64_t>(kmax, groups / (4 * nthreads)));
      const int64_t nblocks = (groups + kg - 1) / kg;
#pragma omp parallel
      {
        std::vector<T> work(static_cast<size_t>(laplace_apply_work_size(p)));
        std::vector<LanesT> lwork(static_cast<size_t>(laplace_apply_work_size(p)));
        std::vector<LanesT> in(static_cast<size_t>(p2));
        std::vector<LanesT> acc(static_cast<size_t>(kg * p2));
        std::vector<Entry> entries, sorted;
        std::vector<int32_t> count(tree::kNumClasses + 1, 0);
#pragma omp for schedule(dynamic, 1)
        for (int64_t blk = 0; blk < nblocks; ++blk) {
          const int64_t first = b0 + blk * kg * kW, last = std::min(b1, first + kg * kW);
          entries.clear();
          for (int64_t b = first; b < last; ++b) {
            if (P.far.l[b] == LaplaceFarSchedule::kNone) continue;
            T* Lb = W.L.data() + b * p2;
            int64_t n = local_from_parent(l, b, Lb, work.data());
            auto collect = [&](const lists::List& list) {
              for (int64_t e = list.offsets[b]; e < list.offsets[b + 1]; ++e)
                entries.push_back({list.cls[e], int32_t(b - first), list.index[e]});
              return list.offsets[b + 1] - list.offsets[b];
            };
            if (modified) {
              if (l >= 2) n += collect(P.lists->list[lists::kType1]);
              n += collect(P.lists->list[lists::kType2]);
            } else {
              n += collect(P.lists->list[lists::kM2L]);
            }
            W.has_local[b] = n > 0 ? 1 : 0;
          }
          // Counting sort by class (stable: boxes ascending within a class).
          for (const Entry& e : entries) ++count[e.cls + 1];
          for (int c = 0; c < tree::kNumClasses; ++c) count[c + 1] += count[c];
          sorted.resize(entries.size());
          for (const Entry& e : entries) sorted[count[e.cls]++] = e;
          std::fill(count.begin(), count.end(), 0);
          std::fill(acc.begin(), acc.end(), LanesT(T(0)));
          size_t i = 0;
          while (i < sorted.size()) {
            const int cls = sorted[i].cls;
            const int pp = tab.op_p[cls];
            const int np = pp * pp;
            const T cos_a = tab.op_cos_a[cls], sin_a = tab.op_sin_a[cls];
            const LanesT* B = rotL + size_t(tab.op_rot[cls]) * tab.rot_stride;
            const LanesT* C = coaxL + tab.coax_offset[tab.op_coax[cls]];
            const bool flip = tab.op_flip[cls] != 0;
            while (i < sorted.size() && sorted[i].cls == cls) {
              const int32_t g = sorted[i].box / kW;
              std::fill(in.begin(), in.begin() + np, LanesT(T(0)));
              while (i < sorted.size() && sorted[i].cls == cls && sorted[i].box / kW == g) {
                const int lane = sorted[i].box % kW;
                const T* Ms = W.M.data() + int64_t(sorted[i].src) * p2;
                for (int k = 0; k < np; ++k) in[k].v[lane] = Ms[k];
                ++i;
              }
              rcr_lanes<T, kW>(pp, cos_a, sin_a, B, flip, C, in.data(),
                               acc.data() + int64_t(g) * p2, lwork.data());
            }
          }
          for (int64_t b = first; b < last; ++b) {
            if (P.far.l[b] == LaplaceFarSchedule::kNone) continue;
            const int64_t j = b - first;
            const LanesT* a = acc.data() + (j / kW) * p2;
            const int lane = int(j % kW);
            T* Lb = W.L.data() + b * p2;
            for (int64_t k = 0; k < p2; ++k) Lb[k] += a[k].v[lane];
          }
        }
      }
      p2l_level(l);
    }
  }

  void downward() {
    if (p <= kM2LLanesMaxP) {
      downward_batched();
      return;
    }
    const bool modified = P.modified;
    for (int l = modified ? 1 : 2; l <= L; ++l) {
      const int64_t b0 = R.level_offset[l], b1 = R.level_offset[l + 1];
#pragma omp parallel
      {
        std::vector<T> work(static_cast<size_t>(laplace_apply_work_size(p)));
#pragma omp for schedule(dynamic, 4)
        for (int64_t b = b0; b < b1; ++b) {
          if (P.far.l[b] == LaplaceFarSchedule::kNone) continue;
          T* Lb = W.L.data() + b * p2;
          int64_t n = local_from_parent(l, b, Lb, work.data());
          if (modified) {
            if (l >= 2) n += m2l_row(P.lists->list[lists::kType1], b, Lb, work.data());
            n += m2l_row(P.lists->list[lists::kType2], b, Lb, work.data());
          } else {
            n += m2l_row(P.lists->list[lists::kM2L], b, Lb, work.data());
          }
          W.has_local[b] = n > 0 ? 1 : 0;
        }
      }
      p2l_level(l);
    }
  }

  // L2P from the terminal boxes of the far schedule (the leaves, and the
  // boxes with no M2L receiver below them), at their levels.
  void l2p() {
    const LaplaceFarSchedule& f = P.far;
    const int64_t nb = static_cast<int64_t>(f.l2p.size());
    const double* txyz = P.target_xyz();
#pragma omp parallel
    {
      std::vector<T>& rel = rel_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 8)
      for (int64_t k = 0; k < nb; ++k) {
        const int64_t b = f.l2p[k];
        const int l = f.l2p_level[k];
        if (!W.has_local[b]) continue;
        const int64_t pb = R.point_begin[b], pe = R.point_end[b];
        relative(txyz, pb, pe, tree::level_frame(tr.cube, l), R.box_key[b], rel.data());
        l2p_box<T>(p, T(box_size(l)), W.L.data() + b * p2, int(pe - pb), rel.data(), pot_ ? pot_ + pb : nullptr,
                   grad_ ? grad_ + 3 * pb : nullptr, hess_ ? hess_ + 6 * pb : nullptr);
      }
    }
  }

  // The near field (Laplace kernel; the sources' charges / dipoles, the
  // gradient and the Hessian (kH: then kG too) as compile-time flags): the
  // NEIGHBORS rows of the leaves, or an adaptive plan's U rows.
  template <bool kC, bool kD, bool kG, bool kH>
  void p2p() {
    if (P.alists) {
      const lists::AdaptiveLists& A = *P.alists;
      p2p_rows<kC, kD, kG, kH>(int64_t(A.leaves.size()), A.leaves.data(), 0, A.u_off.data(), A.u.data());
    } else {
      const lists::List& nb = P.lists->list[lists::kNeighbors];
      const int64_t b0 = R.level_offset[L], b1 = R.level_offset[L + 1];
      p2p_rows<kC, kD, kG, kH>(b1 - b0, nullptr, b0, nb.offsets + b0, nb.index);
    }
  }

  // Rows r < nrows: receiver box boxes[r] (or b0 + r), its sources the boxes
  // index[off[r] .. off[r + 1]).
  template <bool kC, bool kD, bool kG, bool kH>
  void p2p_rows(int64_t nrows, const int32_t* boxes, int64_t b0, const int64_t* off, const int32_t* index) {
    const double* txyz = P.target_xyz();
    const double* sxyz = P.src_xyz.data();
    T* pot = pot_;
    T* grad = grad_;
    const kernels::Laplace<T> kern;
#pragma omp parallel
    {
      nearfield::Sources<double, T>& g = near_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 4)
      for (int64_t r = 0; r < nrows; ++r) {
        const int64_t b = boxes ? boxes[r] : b0 + r;
        int64_t n = 0;
        for (int64_t e = off[r]; e < off[r + 1]; ++e) {
          const int32_t s = index[e];
          for (int64_t i = S.point_begin[s]; i < S.point_end[s]; ++i, ++n) {
            g.x[n] = sxyz[3 * i];
            g.y[n] = sxyz[3 * i + 1];
            g.z[n] = sxyz[3 * i + 2];
            if (kC) g.q[n] = q_[i];
            if (kD) {
              g.dx[n] = d_[3 * i];
              g.dy[n] = d_[3 * i + 1];
              g.dz[n] = d_[3 * i + 2];
            }
          }
        }
        if constexpr (kH)
          p2p_leaf_hess<kC, kD>(kern, R.point_begin[b], R.point_end[b], txyz, n, g, pot, grad, hess_);
        else
          p2p_leaf<kC, kD, kG>(kern, R.point_begin[b], R.point_end[b], txyz, n, g, pot, grad);
      }
    }
  }

  template <class S_>
  void run(const LaplaceEvalArgs& a) {
    const double t0 = now();
    const S_* charges = static_cast<const S_*>(a.charges);
    const S_* dipoles = static_cast<const S_*>(a.dipoles);
    const int nd = a.nd;
    has_q = charges != nullptr;
    has_d = dipoles != nullptr;
    want_pot = a.pot != nullptr;
    want_hess = a.hess != nullptr;
    want_grad = a.grad != nullptr || want_hess;  // the Hessian's walk gives the gradient too
    const int64_t ns = P.nsrc, nt = P.ntrg;
    const size_t nds = static_cast<size_t>(nd);
    const bool far = L >= 2 && ns > 0 && nt > 0;
    // Every allocation of the evaluate, before its parallel regions.
    const size_t threads = static_cast<size_t>(omp_get_max_threads());
    const int64_t rel_n = 3 * std::max<int64_t>({P.far.max_points, P.alists ? P.max_leaf_points : 0, 1}), near_n = nearfield::padded(P.max_near_sources);
    const double bytes = sizeof(T) * (double(far ? (S.nboxes + R.nboxes) * p2 : 0) + 10.0 * double(nd) * double(ns + nt) +
                                      double(threads) * double(rel_n + 4 * near_n)) +
                         double(threads) * 3 * sizeof(double) * double(near_n);
    allocating("the Laplace FMM workspace (expansions, charges, results, per-thread scratch)", bytes, [&] {
      W.q.resize(has_q ? nds * static_cast<size_t>(ns) : 0);
      W.d.resize(has_d ? nds * static_cast<size_t>(3 * ns) : 0);
      if (far) {
        W.M.resize(static_cast<size_t>(S.nboxes * p2));
        W.L.resize(static_cast<size_t>(R.nboxes * p2));
      }
      W.has_local.assign(static_cast<size_t>(R.nboxes), 0);
      W.pot.assign(want_pot ? nds * static_cast<size_t>(nt) : 0, T(0));
      W.grad.assign(want_grad ? nds * static_cast<size_t>(3 * nt) : 0, T(0));
      W.hess.assign(want_hess ? nds * static_cast<size_t>(6 * nt) : 0, T(0));
      rel_.assign(threads, std::vector<T>(static_cast<size_t>(far ? rel_n : 0)));
      near_.resize(threads);
      for (auto& g : near_) g.resize(near_n);
      if (far && p <= kM2LLanesMaxP) broadcast_tables();
    });
    LaplaceStageTimes& tm = P.last;
    tm = LaplaceStageTimes();
    // One density at a time through the same tree, lists and tables.
    for (int k = 0; k < nd; ++k) {
      q_ = has_q ? W.q.data() + size_t(k) * ns : nullptr;
      d_ = has_d ? W.d.data() + size_t(k) * 3 * ns : nullptr;
      pot_ = want_pot ? W.pot.data() + size_t(k) * nt : nullptr;
      grad_ = want_grad ? W.grad.data() + size_t(k) * 3 * nt : nullptr;
      hess_ = want_hess ? W.hess.data() + size_t(k) * 6 * nt : nullptr;
      if (has_q) permute_in(ns, S.perm, charges, 1, nd, k, W.q.data() + size_t(k) * ns);
      if (has_d) permute_in(ns, S.perm, dipoles, 3, nd, k, W.d.data() + size_t(k) * 3 * ns);
      double t = now();
      if (far) {
        p2m();
        tm.p2m += now() - t;
        t = now();
        m2m();
        tm.upward += now() - t;
        t = now();
        downward();
        tm.downward += now() - t;
        t = now();
        l2p();
        m2p();
        tm.l2p += now() - t;
        t = now();
      }
      if (ns > 0 && nt > 0) {
        if (want_hess)
          kernels::with_sources<true>(has_q, has_d, true, [&](auto c, auto d, auto) {
            p2p<decltype(c)::value, decltype(d)::value, true, true>();
          });
        else
          kernels::with_sources<true>(has_q, has_d, want_grad, [&](auto c, auto d, auto g) {
            p2p<decltype(c)::value, decltype(d)::value, decltype(g)::value, false>();
          });
      }
      tm.p2p += now() - t;
    }
    check_results(P, nd, W.pot, W.grad, W.hess);  // before any output is written
    for (int k = 0; k < nd; ++k) {
      if (want_pot) permute_out(nt, R.perm, W.pot.data() + size_t(k) * nt, 1, nd, k, static_cast<S_*>(a.pot));
      if (a.grad) permute_out(nt, R.perm, W.grad.data() + size_t(k) * 3 * nt, 3, nd, k, static_cast<S_*>(a.grad));
      if (want_hess) permute_out(nt, R.perm, W.hess.data() + size_t(k) * 6 * nt, 6, nd, k, static_cast<S_*>(a.hess));
    }
    tm.total = now() - t0;
  }
};

template <class T>
void run_typed(LaplacePlan& plan, LaplaceWorkspace<T>& w, const LaplaceTables<T>& tab,
               const LaplaceEvalArgs& a) {
  Pipeline<T> pl(plan, w, tab);
  if (a.dtype == GPUFMM_FLOAT32)
    pl.template run<float>(a);
  else
    pl.template run<double>(a);
}

