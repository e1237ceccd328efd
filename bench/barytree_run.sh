#!/usr/bin/env bash
# One run of the peer BaryTree (CPU + MPI, one rank per core) on the points
# and parameters of a gpufmm treecode benchmark, for issues 16 and 22.
#
#   bench/barytree_run.sh PEER BENCH OUTDIR N RANKS KERNEL THETA DEGREE LEAF [LABEL]
#
# PEER is a BaryTree driver built beside the project (not in it) that reads
# its points from a file: `mpirun -np R PEER PARAMS POINTS`, POINTS holding
# x, y, z, q per point as little-endian doubles, rank r taking the slice
# [r N / R, (r + 1) N / R), then BaryTree's Zoltan RCB and treedriver, with
# a params file in the format of BaryTree's examples/ (written below). Such
# a driver is BaryTree's examples/random_cube.c with the points read from
# the file, linked to libBaryTree_cpu.a and Zoltan (docs/performance.md,
# "BaryTree"). BENCH is
# bench_treecode_mpi, whose --dump writes the benchmark's own points and
# charges for N. PC, Lagrange, size check 1, kappa 0.5 for Yukawa, the
# error from BaryTree's direct sum at about 10^4 targets. Lines (prefixed
# "barytree LABEL np R N n:") are appended to OUTDIR/barytree.txt; each run
# is limited to RUN_LIMIT seconds (default 600).
set -uo pipefail
peer="$1" bench="$2" out="$3" n="$4" ranks="$5" kernel="$6" theta="$7" degree="$8" leaf="$9" label="${10:-}"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nint=$(printf '%.0f' "$n")
pts="${TMPDIR:-/tmp}/barytree_points_$nint.bin"
[ -s "$pts" ] || "$bench" --dump "$pts" --n "$nint" >/dev/null 2>&1 || { echo "barytree_run: --dump failed"; exit 1; }
params=$(mktemp)
slice=$(( nint / 10000 > 1 ? nint / 10000 : 1 ))
cat > "$params" <<PARAMS
degree $degree
theta $theta
max_per_source_leaf $leaf
max_per_target_leaf $leaf
kernel_name $kernel
kernel_params 0.5
approximation lagrange
compute_type particle-cluster
size_check 1.0
run_direct 1
slice $slice
verbosity 0
PARAMS
# BaryTree's one-sided windows fail with Open MPI's rdma component: pt2pt.
timeout "${RUN_LIMIT:-600}" mpirun --mca osc pt2pt -np "$ranks" --bind-to core "$peer" "$params" "$pts" 2>&1 |
  grep -E "RCB time|migrate time|Total time|Treedriver|Build LET|Compute local|Compute remote|Relative 2 norm" |
  sed "s/^/barytree $label np $ranks N $nint: /" | tee -a "$out/barytree.txt"
rm -f "$params"
