#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs
# programs against it the way a user would, with no LD_LIBRARY_PATH: a C, a
# Fortran and an FMM3D program (fmm3d_user.f, on the drop-in
# libgpufmm_fmm3d) through find_package(gpufmm), the same three through
# pkg-config, and a Fortran program linked by hand with
#   -L<prefix>/lib -lgpufmm_fortran -lgpufmm -Wl,-rpath,<prefix>/lib
# (the executable's run path reaches only its own dependencies: the installed
# libgpufmm_fortran.so must find libgpufmm.so.0 beside it by itself, through
# its $ORIGIN run path: Debian 12's gfortran records libgpufmm_fortran.so.0
# only, dropping libgpufmm.so.0, which the program does not call directly).
# Every installed shared library must carry that run path.
# Usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"; here="$2"
unset LD_LIBRARY_PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
lib="$prefix/lib"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/c_user"
"$tmp/consumer/f_user"
"$tmp/consumer/fmm3d_user"
export PKG_CONFIG_PATH="$lib/pkgconfig"
rpath="-Wl,-rpath,$(pkg-config --variable=libdir gpufmm)"
cc "$here/main.c" $(pkg-config --cflags --libs gpufmm) "$rpath" -o "$tmp/pc_c_user"
"$tmp/pc_c_user"
gfortran "$here/main.f90" -I"$(pkg-config --variable=fmoddir gpufmm)" -lgpufmm_fortran \
  $(pkg-config --libs gpufmm) "$rpath" -o "$tmp/pc_f_user"
"$tmp/pc_f_user"
gfortran "$here/fmm3d_user.f" -lgpufmm_fmm3d $(pkg-config --libs gpufmm) "$rpath" -o "$tmp/pc_fmm3d_user"
"$tmp/pc_fmm3d_user" >/dev/null
gfortran "$here/main.f90" -I"$prefix/include/gpufmm/fortran" -L"$lib" -lgpufmm_fortran -lgpufmm \
  -Wl,-rpath,"$lib" -o "$tmp/f_user_by_hand"
"$tmp/f_user_by_hand"
for so in "$lib"/lib*.so.*.*; do
  readelf -d "$so" | grep -q 'R\(UN\)\?PATH.*\$ORIGIN' || { echo "no \$ORIGIN run path in $so" >&2; exit 1; }
done
"$prefix/bin/gpufmm" info >/dev/null
echo "install test passed"
