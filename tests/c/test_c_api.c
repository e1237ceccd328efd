/* Compiled with -std=c99 -pedantic -Werror: gpufmm.h is strict C99, and the
 * basic C workflow (context, array, transfer, BLAS, reductions, errors)
 * works from C; its initializer GPUFMM_LAPLACE_OPTIONS_DEFAULT is C99 and
 * gives what gpufmm_laplace_options_init sets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpufmm.h"

#define CHECK(cond)                                               \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, \
              __LINE__, #cond, gpufmm_last_error_message());      \
      return 1;                                                   \
    }                                                             \
  } while (0)

int main(void) {
  gpufmm_context_t ctx = NULL;
  gpufmm_array_t x = NULL, y = NULL;
  int64_t dims[1] = {5};
  double hx[5] = {1, 2, 3, 4, 5}, hy[5] = {5, 4, 3, 2, 1}, alpha = 2.0, d = 0, s = 0, mn = 0;
  double out[5];
  int i;
  gpufmm_laplace_options_t lo_table = GPUFMM_LAPLACE_OPTIONS_DEFAULT, lo_init;

  CHECK(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx) == GPUFMM_SUCCESS);
  CHECK(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, dims, &x) == GPUFMM_SUCCESS);
  CHECK(gpufmm_array_create(ctx, GPUFMM_FLOAT64, 1, dims, &y) == GPUFMM_SUCCESS);
  CHECK(gpufmm_array_upload(x, hx, 5) == GPUFMM_SUCCESS);
  CHECK(gpufmm_array_upload(y, hy, 5) == GPUFMM_SUCCESS);
  CHECK(gpufmm_array_axpy(&alpha, x, y) == GPUFMM_SUCCESS); /* y = 2x + y */
  CHECK(gpufmm_array_download(y, out, 5) == GPUFMM_SUCCESS);
  for (i = 0; i < 5; ++i) CHECK(out[i] == 2 * hx[i] + hy[i]);
  CHECK(gpufmm_array_dot(x, y, &d) == GPUFMM_SUCCESS);
  CHECK(fabs(d - (7 + 2 * 8 + 3 * 9 + 4 * 10 + 5 * 11)) < 1e-12);
  CHECK(gpufmm_array_sum(y, &s) == GPUFMM_SUCCESS && s == 45.0);
  CHECK(gpufmm_array_min(y, &mn) == GPUFMM_SUCCESS && mn == 7.0);
  /* errors are values */
  CHECK(gpufmm_array_upload(x, hx, 4) == GPUFMM_ERROR_SIZE_MISMATCH);
  CHECK(strstr(gpufmm_last_error_message(), "count") != NULL);
  CHECK(gpufmm_array_destroy(x) == GPUFMM_SUCCESS);
  CHECK(gpufmm_array_download(x, out, 5) == GPUFMM_ERROR_INVALID_HANDLE);
  CHECK(gpufmm_array_destroy(y) == GPUFMM_SUCCESS);
  CHECK(gpufmm_context_destroy(ctx) == GPUFMM_SUCCESS);

  CHECK(gpufmm_laplace_options_init(&lo_init) == GPUFMM_SUCCESS);
  CHECK(lo_init.eps == lo_table.eps && lo_init.precision == lo_table.precision && lo_init.p == lo_table.p &&
        lo_init.l_max == lo_table.l_max && lo_init.s_max == lo_table.s_max && lo_init.stencil == lo_table.stencil);
  CHECK(lo_init.gpu_p2m == lo_table.gpu_p2m && lo_init.gpu_p2p == lo_table.gpu_p2p &&
        lo_init.tree == lo_table.tree && lo_init.calibrate == lo_table.calibrate &&
        lo_init.densities == lo_table.densities && lo_init.cube_padding == lo_table.cube_padding);
  printf("C API check passed\n");
  return 0;
}
