/* An octree from C: build it (on the GPU if there is one), print its
 * statistics per level, and read one list back - the neighbours of the first
 * leaf box - to use in your own code.
 *
 * Exits non-zero if the tree is inconsistent (every leaf must list itself
 * among its neighbours, and the leaves must hold every point). */
#include <stdio.h>
#include <stdlib.h>

#include "gpufmm.h"

#define TRY(call)                                                            \
  do {                                                                       \
    gpufmm_status_t s_ = (call);                                             \
    if (s_ != GPUFMM_SUCCESS) {                                              \
      fprintf(stderr, "%s failed: %s\n", #call, gpufmm_last_error_message()); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main(void) {
  const int64_t n = 100000;
  double* xyz = malloc(sizeof(double) * 3 * n);
  gpufmm_context_t ctx;
  gpufmm_tree_options_t opt;
  gpufmm_tree_t tree;
  gpufmm_tree_stats_t st;
  int64_t rows, entries, i, leaf_points = 0, first_leaf;
  int64_t* offsets;
  int32_t* index;
  int64_t level_offsets[GPUFMM_TREE_MAX_LEVEL + 2];
  int l, self_found = 0;

  srand(7);
  for (i = 0; i < 3 * n; ++i) xyz[i] = rand() / (double)RAND_MAX;

  TRY(gpufmm_context_create(GPUFMM_DEVICE_DEFAULT, &ctx));
  TRY(gpufmm_tree_options_init(&opt));
  opt.s_max = 32; /* depth: no leaf holds more than 32 points */
  TRY(gpufmm_tree_build(ctx, &opt, n, xyz, n, NULL, &tree)); /* recv NULL: receivers = sources */
  TRY(gpufmm_tree_stats(tree, &st));

  printf("%lld points, l_max = %d, built in %.2f ms\n", (long long)n, st.l_max, 1e3 * st.time_total);
  printf("level  boxes  neighbours/box (mean)\n");
  for (l = 0; l <= st.l_max; ++l)
    printf("%5d %6lld %10.1f\n", l, (long long)st.source_boxes[l],
           st.list_levels[GPUFMM_TREE_NEIGHBORS][l].mean);
  printf("points per leaf: min %lld, mean %.1f, max %lld\n", (long long)st.source_leaf_min,
         st.source_leaf_mean, (long long)st.source_leaf_max);
  leaf_points = (int64_t)(st.source_leaf_mean * (double)st.source_boxes[st.l_max] + 0.5);

  /* the neighbour list, CSR: row b = receiver box b (global index) */
  TRY(gpufmm_tree_list_size(tree, GPUFMM_TREE_NEIGHBORS, &rows, &entries));
  offsets = malloc(sizeof(int64_t) * (size_t)(rows + 1));
  index = malloc(sizeof(int32_t) * (size_t)entries);
  TRY(gpufmm_tree_get_list(tree, GPUFMM_TREE_NEIGHBORS, rows, entries, offsets, index, NULL, NULL));
  TRY(gpufmm_tree_level_offsets(tree, GPUFMM_TREE_SOURCES, st.l_max + 2, level_offsets));
  first_leaf = level_offsets[st.l_max];
  printf("leaf box %lld has %lld neighbours:", (long long)first_leaf,
         (long long)(offsets[first_leaf + 1] - offsets[first_leaf]));
  for (i = offsets[first_leaf]; i < offsets[first_leaf + 1]; ++i) {
    printf(" %d", index[i]);
    if (index[i] == first_leaf) self_found = 1;
  }
  printf("\n");

  free(offsets);
  free(index);
  free(xyz);
  TRY(gpufmm_tree_destroy(tree));
  TRY(gpufmm_context_destroy(ctx));
  return (self_found && leaf_points == n) ? 0 : 1;
}
