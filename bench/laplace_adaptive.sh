#!/usr/bin/env bash
# Issue 19: the Laplace FMM with the uniform tree, the adaptive tree at
# several s_max and the automatic choice, on every distribution of
# tools/common/distributions.hpp (papers/000's setting: potential and
# gradient, charges in (0, 1), sources = targets, double unless FLOAT=1;
# p calibrated on charges by test evaluates at plan creation, or with MODEL=1
# from the worst-case error model: issue 19 item 2).
#   bench/laplace_adaptive.sh [gpufmm CLI] [N] [eps] [smax list] [dists]
# Prints one line per configuration: dist, tree, s_max, p, l_max, plan and
# evaluate seconds, the stage times, the achieved errors (200 sampled
# targets against the direct sum) and the error the calibration measured
# (empty with MODEL=1), of the fastest of REPEAT runs (default 3;
# the host transfers make single totals vary by up to 2x).
set -uo pipefail
cli="${1:-build/bin/gpufmm}"
n="${2:-1000000}"
eps="${3:-1e-6}"
smaxes="${4:-64 128 256 512}"
dists="${5:-uniform ellipsoid plummer clusters patch}"
extra=()
[ "${FLOAT:-0}" = 1 ] && extra+=(--float)
[ "${MODEL:-0}" = 1 ] && extra+=(--model)
[ -n "${BACKEND:-}" ] && extra+=("--$BACKEND")
echo "dist,tree,smax,p,l_max,plan_s,p2m_s,up_s,down_s,l2p_s,p2p_s,total_s,err_pot,err_grad,measured"
repeat="${REPEAT:-3}"
run() {  # dist tree smax
  local out best="" bt=""
  for ((k = 0; k < repeat; ++k)); do
    out=$("$cli" fmm --n "$n" --eps "$eps" --dist "$1" --grad --tree "$2" --smax "$3" --check "$([ $k = 0 ] && echo 200 || echo 0)" "${extra[@]}" 2>&1)
    local t=$(awk '/^seconds/ {print $7}' <<<"$out")
    [ -z "$t" ] && break
    if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN {exit !(a < b)}'; then bt=$t; best=$out; fi
    [ $k = 0 ] && errs=$(grep 'relative L2' <<<"$out")
  done
  [ -n "$best" ] && out="$(grep -v 'relative L2' <<<"$best")"$'\n'"$errs"
  local p=$(sed -n 's/^p = \([0-9-]*\),.*/\1/p' <<<"$out")
  local kind=$(sed -n 's/^p = .*(\([a-z]*\) tree).*/\1/p' <<<"$out")
  local lmax=$(sed -n 's/.*l_max = \([0-9]*\).*/\1/p' <<<"$out")
  local plan=$(sed -n 's/^plan: \([0-9.e+-]*\) s.*/\1/p' <<<"$out")
  local measured=$(sed -n 's/^plan: .*measured error \([0-9.e+-]*\)).*/\1/p' <<<"$out")
  local st=$(awk '/^seconds/ {print $2","$3","$4","$5","$6","$7}' <<<"$out")
  local ep=$(sed -n 's/.*pot \([0-9.e+-]*\).*/\1/p' <<<"$out")
  local eg=$(sed -n 's/.*grad \([0-9.e+-]*\).*/\1/p' <<<"$out")
  [ -z "$st" ] && { echo "$1,$2,$3,failed: $(tail -1 <<<"$out")"; return; }
  echo "$1,$2${kind:+($kind)},$3,$p,$lmax,$plan,$st,$ep,$eg,$measured"
}
for d in $dists; do
  run "$d" uniform -1
  run "$d" auto -1
  for s in $smaxes; do run "$d" adaptive "$s"; done
done
