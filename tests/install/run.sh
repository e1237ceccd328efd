#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a C and
# a Fortran program against it through find_package(gpufmm), and a C program
# through pkg-config. Usage: run.sh BUILD_DIR SOURCE_DIR
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
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc "$here/main.c" $(pkg-config --cflags --libs gpufmm) -o "$tmp/pc_user"
"$tmp/pc_user"
"$tmp/prefix/bin/gpufmm" info >/dev/null
echo "install test passed"
