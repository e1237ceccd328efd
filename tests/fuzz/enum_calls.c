/* The fuzzer's calls of C functions with enum-typed parameters, made from C
 * as a C caller (or a Fortran bind(c) interface) makes them: the raw int
 * converts implicitly to the enum type, whatever its value. (In C++ the
 * same conversion of an out-of-range value would be undefined in the
 * fuzzer itself.) */
#include "gpufmm.h"

gpufmm_status_t fuzz_array_create(gpufmm_context_t ctx, int dtype, int rank, const int64_t* dims,
                                  gpufmm_array_t* out) {
  return gpufmm_array_create(ctx, dtype, rank, dims, out);
}

gpufmm_status_t fuzz_tree_list_size(gpufmm_tree_t tree, int list, int64_t* rows, int64_t* entries) {
  return gpufmm_tree_list_size(tree, list, rows, entries);
}
