// The body of the OpenMP driver (see fmm/pipeline.hpp), included several
// times by pipeline.hpp, each time inside its own namespace and, on x86,
// under its own "#pragma GCC target" (generic, AVX2, AVX-512), so that the
// expansion's math, inlined here, is vectorised for the CPU that runs it.
// No #pragma once and no #includes on purpose: pipeline.hpp includes what
// this needs before each inclusion.
//
// Entry point of each copy: run_typed<E>(plan, workspace, expansion, args).

inline double now() { return omp_get_wtime(); }

// out[n * per] <- density k of in (nd densities interleaved, see EvalArgs)
// in the order perm.
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

// p2p_leaf with the Hessian (the kernel's accumulate_hess).
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

// The expansion's operators, one call each. GPUFMM_PIPELINE_FLATTEN
// (flatten on GCC) inlines the whole call tree of the math into each
// wrapper, so that it is compiled for this copy's ISA; the math templates
// themselves are baseline code.
template <class E, class R, class V, class C>
GPUFMM_PIPELINE_FLATTEN void op_p2m(const E& e, int l, R h, int n, const R* rel, const V* q, const V* d, C* M) {
  e.p2m(l, h, n, rel, q, d, M);
}
template <class E, class R, class V, class C>
GPUFMM_PIPELINE_FLATTEN void op_p2l(const E& e, int l, R h, int n, const R* rel, const V* q, const V* d, C* L) {
  e.p2l(l, h, n, rel, q, d, L);
}
template <class E, class R, class V, class C>
GPUFMM_PIPELINE_FLATTEN void op_l2p(const E& e, int l, R h, const C* L, int n, const R* rel, V* pot, V* grad,
                                    V* hess) {
  e.l2p(l, h, L, n, rel, pot, grad, hess);
}
template <class E, class R, class V, class C>
GPUFMM_PIPELINE_FLATTEN void op_m2p(const E& e, int l, R h, const C* M, int n, const R* rel, V* pot, V* grad,
                                    V* hess) {
  e.m2p(l, h, M, n, rel, pot, grad, hess);
}
template <class E, class C>
GPUFMM_PIPELINE_FLATTEN void op_m2m(const E& e, int l, int octant, const C* child, C* parent, C* work) {
  e.m2m(l, octant, child, parent, work);
}
template <class E, class C>
GPUFMM_PIPELINE_FLATTEN void op_l2l(const E& e, int l, int octant, const C* parent, C* child, C* work) {
  e.l2l(l, octant, parent, child, work);
}
template <class E, class C>
GPUFMM_PIPELINE_FLATTEN void op_m2l(const E& e, int l, int cls, const C* M, C* L, C* work) {
  e.m2l(l, cls, M, L, work);
}
template <int W, class E, class X, class C>
GPUFMM_PIPELINE_FLATTEN void op_m2l_lanes(const E& e, int l, int cls, const X& x, const Lanes<C, W>* in,
                                          Lanes<C, W>* out, Lanes<C, W>* work) {
  e.template m2l_lanes<W>(l, cls, x, in, out, work);
}

template <class E>
struct Pipeline {
  using T = typename E::Real;
  using C = typename E::Coef;
  using V = typename E::Value;
  using WS = Workspace<C, V, typename E::LaneTables>;
  PlanCore& P;
  WS& W;
  const E& ex;
  const tree::Tree& tr;
  const tree::PointSet& S;
  const tree::PointSet& R;
  const int L;
  CoefLayout ms, ls;  // where each source box's multipole and each receiver box's local start
  int64_t max_ncoef = 0;
  bool has_q = false, has_d = false, want_pot = false, want_grad = false, want_hess = false;
  // The density being evaluated: its inputs (sorted order) and outputs.
  const V *q_ = nullptr, *d_ = nullptr;
  V *pot_ = nullptr, *grad_ = nullptr, *hess_ = nullptr;
  // Per-thread scratch of P2M / L2P (relative coordinates) and P2P (gathered
  // sources), allocated in run() before the parallel regions (allocating).
  std::vector<std::vector<T>> rel_;
  std::vector<nearfield::Sources<double, V>> near_;

  Pipeline(PlanCore& plan, WS& w, const E& e)
      : P(plan), W(w), ex(e), tr(*plan.tree), S(plan.tree->src), R(plan.tree->receivers()), L(plan.l_max) {
    auto n = [&e](int l) { return e.ncoef(l); };
    ms.build(S, L, n);
    ls.build(R, L, n);
    for (int l = 0; l <= L; ++l) max_ncoef = std::max(max_ncoef, n(l));
  }

  double box_size(int level) const { return tree::box_size(tr.cube, level); }
  C* mult(int64_t b, int l) { return W.M.data() + ms.at(b, l); }
  C* local(int64_t b, int l) { return W.L.data() + ls.at(b, l); }

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
        C* Lb = local(b, l);
        for (int64_t e = A.x_off[size_t(r)]; e < A.x_off[size_t(r) + 1]; ++e) {
          const int32_t a = A.x[size_t(e)];
          const int64_t pb = S.point_begin[a], pe = S.point_end[a];
          relative(P.src_xyz.data(), pb, pe, f, R.box_key[b], rel.data());
          op_p2l(ex, l, h, int(pe - pb), rel.data(), q_ ? q_ + pb : nullptr, d_ ? d_ + 3 * pb : nullptr, Lb);
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
          op_m2p(ex, lc, T(box_size(lc)), mult(c, lc), int(te - tb), rel.data(), pot_ ? pot_ + tb : nullptr,
                 grad_ ? grad_ + 3 * tb : nullptr, hess_ ? hess_ + 6 * tb : nullptr);
        }
      }
    }
  }

  // P2M into the boxes of the far schedule that take it (the leaves, and the
  // boxes with no M2L source below them), at their levels.
  void p2m() {
    const FarSchedule& f = P.far;
    const int64_t nb = static_cast<int64_t>(f.p2m.size());
#pragma omp parallel
    {
      std::vector<T>& rel = rel_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 8)
      for (int64_t k = 0; k < nb; ++k) {
        const int64_t b = f.p2m[k];
        const int l = f.p2m_level[k];
        C* M = mult(b, l);
        std::fill(M, M + ms.n[size_t(l)], C(0));
        const int64_t pb = S.point_begin[b], pe = S.point_end[b];
        relative(P.src_xyz.data(), pb, pe, tree::level_frame(tr.cube, l), S.box_key[b], rel.data());
        op_p2m(ex, l, T(box_size(l)), int(pe - pb), rel.data(), q_ ? q_ + pb : nullptr, d_ ? d_ + 3 * pb : nullptr,
               M);
      }
    }
  }

  void m2m() {
    const std::vector<uint8_t>& mode = P.far.m;
    for (int l = L - 1; l >= 2; --l) {
      const int64_t b0 = S.level_offset[l], b1 = S.level_offset[l + 1];
#pragma omp parallel
      {
        std::vector<C> work(static_cast<size_t>(ex.work_size()));
#pragma omp for schedule(dynamic, 8)
        for (int64_t b = b0; b < b1; ++b) {
          if (mode[b] != FarSchedule::kM2M) continue;
          C* M = mult(b, l);
          std::fill(M, M + ms.n[size_t(l)], C(0));
          for (int64_t c = S.child_offset[b]; c < S.child_offset[b + 1]; ++c)
            op_m2m(ex, l + 1, int(S.box_key[c] & 7u), mult(c, l + 1), M, work.data());
        }
      }
    }
  }

  // Level of the source boxes of an M2L list's entries for receivers of
  // level l (type 2: one level finer, papers/000 sec. 2.2.3).
  int m2l_source_level(int list, int l) const { return list == lists::kType2 ? l + 1 : l; }

  // Adds the M2L translations of one CSR row into Lb.
  int64_t m2l_row(int list, int l, int64_t b, C* Lb, C* work) {
    const lists::List& li = P.lists->list[list];
    const int ls_ = m2l_source_level(list, l);
    const int64_t e0 = li.offsets[b], e1 = li.offsets[b + 1];
    for (int64_t e = e0; e < e1; ++e) op_m2l(ex, l, int(li.cls[e]), mult(li.index[e], ls_), Lb, work);
    return e1 - e0;
  }

  // Starts L_b of box b at level l: zero, plus L2L from its parent when the
  // parent has a local expansion (levels >= 2). Returns the translations done.
  int64_t local_from_parent(int l, int64_t b, C* Lb, C* work) {
    std::fill(Lb, Lb + ls.n[size_t(l)], C(0));
    if (l < 2) return 0;
    const int32_t par = R.parent[b];
    if (!W.has_local[par]) return 0;
    op_l2l(ex, l, int(R.box_key[b] & 7u), local(par, l - 1), Lb, work);
    return 1;
  }

  // The M2L lists of receivers of level l.
  template <class F>
  void m2l_lists(int l, F&& f) {
    if (P.modified) {
      if (l >= 2) f(int(lists::kType1));
      f(int(lists::kType2));
    } else {
      f(int(lists::kM2L));
    }
  }

  // ---- downward pass, batched M2L (E::kBatchedM2L and ex.batch_m2l())
  static constexpr int kW = kLanesOf<C>;
  using LanesC = Lanes<C, kW>;

  struct Entry {
    int32_t cls, box, src;  // box: index within the block
  };

  void downward_batched() {
    if constexpr (E::kBatchedM2L) {
      if (W.ext.rot.empty() && W.ext.coax.empty()) ex.lane_tables(W.ext);
      const int nthreads = omp_get_max_threads();
      for (int l = P.modified ? 1 : 2; l <= L; ++l) {
        const int64_t nc = ls.n[size_t(l)];
        // Groups of kW receivers per block: the block's accumulators (kmax
        // groups x ncoef lanes) stay in cache while its classes go by.
        const int64_t kmax = std::max<int64_t>(1, std::min<int64_t>(16, (256 << 10) / (nc * int64_t(sizeof(LanesC)))));
        const int64_t b0 = R.level_offset[l], b1 = R.level_offset[l + 1], nb = b1 - b0;
        const int64_t groups = (nb + kW - 1) / kW;
        const int64_t kg = std::max<int64_t>(1, std::min<int64_t>(kmax, groups / (4 * nthreads)));
        const int64_t nblocks = (groups + kg - 1) / kg;
#pragma omp parallel
        {
          std::vector<C> work(static_cast<size_t>(ex.work_size()));
          std::vector<LanesC> lwork(static_cast<size_t>(ex.work_size()));
          std::vector<LanesC> in(static_cast<size_t>(max_ncoef));
          std::vector<LanesC> acc(static_cast<size_t>(kg * nc));
          std::vector<Entry> entries, sorted;
          std::vector<int32_t> count(tree::kNumClasses + 1, 0);
#pragma omp for schedule(dynamic, 1)
          for (int64_t blk = 0; blk < nblocks; ++blk) {
            const int64_t first = b0 + blk * kg * kW, last = std::min(b1, first + kg * kW);
            collect_block(l, first, last, work.data(), entries);
            // Counting sort by class (stable: boxes ascending within a class).
            for (const Entry& e : entries) ++count[e.cls + 1];
            for (int c = 0; c < tree::kNumClasses; ++c) count[c + 1] += count[c];
            sorted.resize(entries.size());
            for (const Entry& e : entries) sorted[count[e.cls]++] = e;
            std::fill(count.begin(), count.end(), 0);
            std::fill(acc.begin(), acc.end(), LanesC(C(0)));
            translate_sorted(l, sorted, in, acc, lwork);
            for (int64_t b = first; b < last; ++b) {
              if (P.far.l[b] == FarSchedule::kNone) continue;
              const int64_t j = b - first;
              const LanesC* a = acc.data() + (j / kW) * nc;
              const int lane = int(j % kW);
              C* Lb = local(b, l);
              for (int64_t k = 0; k < nc; ++k) Lb[k] += a[k].v[lane];
            }
          }
        }
        p2l_level(l);
      }
    }
  }

  // The receivers [first, last) of level l: each local started (L2L), its
  // M2L entries collected, has_local set.
  void collect_block(int l, int64_t first, int64_t last, C* work, std::vector<Entry>& entries) {
    entries.clear();
    for (int64_t b = first; b < last; ++b) {
      if (P.far.l[b] == FarSchedule::kNone) continue;
      int64_t n = local_from_parent(l, b, local(b, l), work);
      m2l_lists(l, [&](int k) {
        const lists::List& list = P.lists->list[k];
        for (int64_t e = list.offsets[b]; e < list.offsets[b + 1]; ++e)
          entries.push_back({list.cls[e], int32_t(b - first), list.index[e]});
        n += list.offsets[b + 1] - list.offsets[b];
      });
      W.has_local[b] = n > 0 ? 1 : 0;
    }
  }

  // The sorted entries of one block, kW receivers (one group) at a time per
  // class: the sources' coefficients gathered into lanes, translated at once.
  void translate_sorted(int l, const std::vector<Entry>& sorted, std::vector<LanesC>& in, std::vector<LanesC>& acc,
                        std::vector<LanesC>& lwork) {
    if constexpr (E::kBatchedM2L) {
      const int64_t nc = ls.n[size_t(l)];
      size_t i = 0;
      while (i < sorted.size()) {
        const int cls = sorted[i].cls;
        const int64_t np = ex.m2l_inputs(cls);
        const int lsrc = cls >= tree::kNumSameLevelClasses ? l + 1 : l;  // type 2: one level finer
        while (i < sorted.size() && sorted[i].cls == cls) {
          const int32_t g = sorted[i].box / kW;
          std::fill(in.begin(), in.begin() + np, LanesC(C(0)));
          while (i < sorted.size() && sorted[i].cls == cls && sorted[i].box / kW == g) {
            const int lane = sorted[i].box % kW;
            const C* Ms = mult(sorted[i].src, lsrc);
            for (int64_t k = 0; k < np; ++k) in[k].v[lane] = Ms[k];
            ++i;
          }
          op_m2l_lanes<kW>(ex, l, cls, W.ext, in.data(), acc.data() + int64_t(g) * nc, lwork.data());
        }
      }
    }
  }

  void downward() {
    if constexpr (E::kBatchedM2L) {
      if (ex.batch_m2l()) {
        downward_batched();
        return;
      }
    }
    for (int l = P.modified ? 1 : 2; l <= L; ++l) {
      const int64_t b0 = R.level_offset[l], b1 = R.level_offset[l + 1];
#pragma omp parallel
      {
        std::vector<C> work(static_cast<size_t>(ex.work_size()));
#pragma omp for schedule(dynamic, 4)
        for (int64_t b = b0; b < b1; ++b) {
          if (P.far.l[b] == FarSchedule::kNone) continue;
          C* Lb = local(b, l);
          int64_t n = local_from_parent(l, b, Lb, work.data());
          m2l_lists(l, [&](int k) { n += m2l_row(k, l, b, Lb, work.data()); });
          W.has_local[b] = n > 0 ? 1 : 0;
        }
      }
      p2l_level(l);
    }
  }

  // L2P from the terminal boxes of the far schedule (the leaves, and the
  // boxes with no M2L receiver below them), at their levels.
  void l2p() {
    const FarSchedule& f = P.far;
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
        op_l2p(ex, l, T(box_size(l)), local(b, l), int(pe - pb), rel.data(), pot_ ? pot_ + pb : nullptr,
               grad_ ? grad_ + 3 * pb : nullptr, hess_ ? hess_ + 6 * pb : nullptr);
      }
    }
  }

  // The near field (E's kernel; the sources' charges / dipoles, the
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
    V* pot = pot_;
    V* grad = grad_;
    const typename E::Kernel kern = ex.kernel();
#pragma omp parallel
    {
      nearfield::Sources<double, V>& g = near_[static_cast<size_t>(omp_get_thread_num())];
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

  // Every allocation of the evaluate, before its parallel regions.
  void allocate(int nd, bool far) {
    const int64_t ns = P.nsrc, nt = P.ntrg;
    const size_t nds = static_cast<size_t>(nd);
    const size_t threads = static_cast<size_t>(omp_get_max_threads());
    const int64_t rel_n = 3 * std::max<int64_t>({P.far.max_points, P.alists ? P.max_leaf_points : 0, 1});
    const int64_t near_n = nearfield::padded(P.max_near_sources);
    const int64_t nm = far ? ms.total(S, L) : 0, nl = far ? ls.total(R, L) : 0;
    const double bytes = sizeof(C) * double(nm + nl) +
                         sizeof(V) * (10.0 * double(nd) * double(ns + nt) + double(threads) * 4 * double(near_n)) +
                         sizeof(T) * double(threads) * double(rel_n) +
                         double(threads) * 3 * sizeof(double) * double(near_n);
    allocating("the FMM workspace (expansions, densities, results, per-thread scratch)", bytes, [&] {
      W.q.resize(has_q ? nds * static_cast<size_t>(ns) : 0);
      W.d.resize(has_d ? nds * static_cast<size_t>(3 * ns) : 0);
      if (far) {
        W.M.resize(static_cast<size_t>(nm));
        W.L.resize(static_cast<size_t>(nl));
      }
      W.has_local.assign(static_cast<size_t>(R.nboxes), 0);
      W.pot.assign(want_pot ? nds * static_cast<size_t>(nt) : 0, V(0));
      W.grad.assign(want_grad ? nds * static_cast<size_t>(3 * nt) : 0, V(0));
      W.hess.assign(want_hess ? nds * static_cast<size_t>(6 * nt) : 0, V(0));
      rel_.assign(threads, std::vector<T>(static_cast<size_t>(far ? rel_n : 0)));
      near_.resize(threads);
      for (auto& g : near_) g.resize(near_n);
      if constexpr (E::kBatchedM2L)
        if (far && ex.batch_m2l() && W.ext.rot.empty() && W.ext.coax.empty()) ex.lane_tables(W.ext);
    });
  }

  // The far field and the near field of the current density.
  void one_density(StageTimes& tm, bool far) {
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
    if (P.nsrc > 0 && P.ntrg > 0) {
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

  template <class S_>
  void run(const EvalArgs& a) {
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
    const bool far = L >= 2 && ns > 0 && nt > 0;
    allocate(nd, far);
    StageTimes& tm = P.last;
    tm = StageTimes();
    // One density at a time through the same tree, lists and tables.
    for (int k = 0; k < nd; ++k) {
      q_ = has_q ? W.q.data() + size_t(k) * ns : nullptr;
      d_ = has_d ? W.d.data() + size_t(k) * 3 * ns : nullptr;
      pot_ = want_pot ? W.pot.data() + size_t(k) * nt : nullptr;
      grad_ = want_grad ? W.grad.data() + size_t(k) * 3 * nt : nullptr;
      hess_ = want_hess ? W.hess.data() + size_t(k) * 6 * nt : nullptr;
      if (has_q) permute_in(ns, S.perm, charges, 1, nd, k, W.q.data() + size_t(k) * ns);
      if (has_d) permute_in(ns, S.perm, dipoles, 3, nd, k, W.d.data() + size_t(k) * 3 * ns);
      one_density(tm, far);
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

template <class E>
void run_typed(PlanCore& plan, Workspace<typename E::Coef, typename E::Value, typename E::LaneTables>& w,
               const E& ex, const EvalArgs& a) {
  Pipeline<E> pl(plan, w, ex);
  if (a.dtype == GPUFMM_FLOAT32)
    pl.template run<float>(a);
  else
    pl.template run<double>(a);
}
