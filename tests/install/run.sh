#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a C
# program, a Fortran program and a program written for FMM3D (the drop-in
# libgpufmm_fmm3d) against it through find_package(gpufmm), and a C program
# and the FMM3D program through pkg-config. Usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"; here="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
export LD_LIBRARY_PATH="$tmp/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$tmp/consumer/c_user"
"$tmp/consumer/f_user"
"$tmp/consumer/fmm3d_user"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc "$here/main.c" $(pkg-config --cflags --libs gpufmm) -o "$tmp/pc_user"
"$tmp/pc_user"
gfortran "$here/fmm3d_user.f" -lgpufmm_fmm3d $(pkg-config --libs gpufmm) -o "$tmp/pc_fmm3d_user"
"$tmp/pc_fmm3d_user" >/dev/null
"$tmp/prefix/bin/gpufmm" info >/dev/null
echo "install test passed"
