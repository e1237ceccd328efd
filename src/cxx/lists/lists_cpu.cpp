// The OpenMP list builder: per receiver box in parallel, the neighbour slots
// (binary searches in the level's sorted source keys, sorted), then the far
// rows of lists/rows.hpp counted, the offsets scanned, and the rows filled.
// It produces exactly what the CUDA builder produces
// (src/cuda/lists/lists_build.cu).
#include <algorithm>
#include <vector>

#include "lists/lists.hpp"
#include "tree/parallel.hpp"

namespace gpufmm {
namespace lists {
namespace detail {

using tree::detail::exclusive_scan;

void build_cpu(const tree::Tree& t, Lists& out) {
  const int64_t rows = t.receivers().nboxes;
  unsigned want = 0;
  for (int k = 0; k < kNumLists; ++k)
    if (out.list[k].built) want |= 1u << k;
  int64_t nnz[kNumLists] = {0, 0, 0, 0};
  if (want == 0 || rows == 0 || t.src.nboxes == 0) {
    for (int k = 0; k < kNumLists; ++k)
      if (out.list[k].built) std::fill(out.list[k].offsets, out.list[k].offsets + rows + 1, 0);
    allocate_entries(out, nnz);
    return;
  }
  RowView v = row_view(t, want);

  // Neighbours of every receiver box, ascending.
  std::vector<int32_t> nb(static_cast<size_t>(rows) * kSlots);
  std::vector<uint8_t> nn(static_cast<size_t>(rows));
#pragma omp parallel for schedule(dynamic, 512)
  for (int64_t r = 0; r < rows; ++r) {
    const Row row = make_row(v, r);
    int32_t* o = &nb[static_cast<size_t>(r) * kSlots];
    int m = 0;
    for (int k = 0; k < kSlots; ++k) {
      const int32_t g = neighbour_slot(v, row, k);
      if (g >= 0) o[m++] = g;
    }
    std::sort(o, o + m);
    nn[r] = static_cast<uint8_t>(m);
  }
  v.nb = nb.data();
  v.nn = nn.data();

  // Count the entries per row, scan, then fill.
  int64_t* const off[kNumLists] = {out.list[0].offsets, out.list[1].offsets, out.list[2].offsets,
                                   out.list[3].offsets};
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = 0; r < rows; ++r) {
    const Row row = make_row(v, r);
    int64_t cnt[kNumLists] = {nn[r], 0, 0, 0};
    far_row(v, row, [&](int k, int32_t, int32_t) { ++cnt[k]; });
    for (int k = 0; k < kNumLists; ++k)
      if (out.list[k].built) off[k][r] = cnt[k];
  }
  for (int k = 0; k < kNumLists; ++k) {
    if (!out.list[k].built) continue;
    off[k][rows] = 0;
    nnz[k] = exclusive_scan(off[k], rows + 1);
  }
  allocate_entries(out, nnz);
  int32_t* const idx[kNumLists] = {out.list[0].index, out.list[1].index, out.list[2].index,
                                   out.list[3].index};
  int32_t* const cls[kNumLists] = {nullptr, out.list[1].cls, out.list[2].cls, out.list[3].cls};
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = 0; r < rows; ++r) {
    const Row row = make_row(v, r);
    int64_t pos[kNumLists];
    for (int k = 0; k < kNumLists; ++k) pos[k] = out.list[k].built ? off[k][r] : 0;
    if (out.list[kNeighbors].built)
      std::copy(&nb[static_cast<size_t>(r) * kSlots], &nb[static_cast<size_t>(r) * kSlots] + nn[r],
                idx[kNeighbors] + pos[kNeighbors]);
    far_row(v, row, [&](int k, int32_t s, int32_t c) {
      const int64_t p = pos[k]++;
      idx[k][p] = s;
      cls[k][p] = c;
    });
  }
}

}  // namespace detail
}  // namespace lists
}  // namespace gpufmm
