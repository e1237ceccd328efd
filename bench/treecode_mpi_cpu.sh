#!/usr/bin/env bash
# Issue 16: the treecode over MPI on the CPU ranks of one host (no GPU):
# strong scaling at STRONG points (P ranks x CORES / P OpenMP threads) and
# weak scaling at PER_RANK points per rank (P ranks x WEAK_THREADS threads),
# P in the rank list; uniform points, sources = targets, Coulomb (KERNEL),
# PC, potential and gradient, theta THETA, degree DEGREE, leaves and batches
# of LEAF points; the error at 100 targets against the direct sum.
#
#   bench/treecode_mpi_cpu.sh BENCH OUTDIR ["1 2 4 8 16"] [PEER]
#
# BENCH: bench_treecode_mpi. PEER (optional): BaryTree's point-file driver
# (bench/barytree_run.sh), run on one rank per core that gpufmm used, on the
# same points: the strong N on CORES ranks, and the weak N of the first and
# last P (BT_WEAK overrides that list) on P x WEAK_THREADS ranks.
# Defaults: STRONG 4e6, PER_RANK 1e6, THETA 0.7, DEGREE 4, LEAF 500, CORES
# nproc, WEAK_THREADS CORES / (largest P), REPEAT 2 (evaluates per run, the
# best kept). Rows: OUTDIR/treecode_mpi_cpu.csv
# (bench_treecode_mpi's columns) and .txt; each run is limited to RUN_LIMIT
# seconds (default 300).
set -uo pipefail
bench="$1" out="$2" ranks="${3:-1 2 4 8 16}" peer="${4:-}"
strong="${STRONG:-4e6}" per_rank="${PER_RANK:-1e6}" theta="${THETA:-0.7}" degree="${DEGREE:-4}" leaf="${LEAF:-500}"
kernel="${KERNEL:-coulomb}" cores="${CORES:-$(nproc)}" limit="${RUN_LIMIT:-300}" repeat="${REPEAT:-2}"
pmax=$(echo $ranks | tr ' ' '\n' | sort -n | tail -1)
wt="${WEAK_THREADS:-$((cores / pmax))}"
mkdir -p "$out"
csv="$out/treecode_mpi_cpu.csv" txt="$out/treecode_mpi_cpu.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma
echo "# $(hostname): $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $cores used; $kernel theta $theta n $degree leaf $leaf" | tee -a "$txt"
run() {  # label P threads size-args...
  local label="$1" p="$2" t="$3"
  shift 3
  echo "# $label: $p rank(s) x $t thread(s)" | tee -a "$txt"
  OMP_NUM_THREADS="$t" timeout "$limit" mpirun -np "$p" --bind-to none --oversubscribe "$bench" --kernel "$kernel" "$@" \
    --theta "$theta" --degree "$degree" --leaf "$leaf" --repeat "$repeat" --check 100 --csv "$csv" --label "$label" 2>&1 |
    grep -v "^bench_treecode_mpi: evaluate" | tee -a "$txt"
}
for p in $ranks; do run strong "$p" $((cores / p)) --n "$strong"; done
for p in $ranks; do run weak "$p" "$wt" --n-per-rank "$per_rank"; done
[ -n "$peer" ] || exit 0
bt() { bench/barytree_run.sh "$peer" "$bench" "$out" "$1" "$2" "$kernel" "$theta" "$degree" "$leaf" "$3" | tee -a "$txt"; }
bt "$strong" "$cores" strong
for p in ${BT_WEAK:-$(echo $ranks | awk '{print $1}') $pmax}; do
  bt "$(awk -v a="$per_rank" -v p="$p" 'BEGIN{printf "%.0f", a * p}')" $((p * wt)) weak
done
