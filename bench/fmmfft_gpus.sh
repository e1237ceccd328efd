#!/usr/bin/env bash
# Issues 18 and 21: the distributed FMM-FFT against cuFFTXt's multi-GPU 1D
# FFT, in the same call:
#   - for each G of the GPU counts, in one process (bench_fft_gpus):
#     cuFFTXt over GPUs 0..G-1, the FMM-FFT over the same GPUs (NCCL), and
#     NCCL's all-to-all and all-gather bandwidth between them; then the
#     FMM-FFT over G MPI ranks, one GPU each (bench_fmmfft_mpi --gpu; the
#     messages staged through host memory);
#   - SHARED=1 (a machine with one GPU): cuFFTXt over {0, ..., 0} (G times)
#     and G MPI ranks sharing GPU 0, so both code paths run.
# N = NS (default "2^20 2^22 2^24 2^26 2^27 2^28"), complex128 then
# complex64 (TYPES, default "c128 c64"), forward, data resident; the MPI
# runs at MPI_NS (default NS: FFTW-MPI's reference on the host cores takes
# seconds per transform at the largest N).
#
#   bench/fmmfft_gpus.sh BUILD OUTDIR [GPU counts, default "2 4"]
#
# BUILD is the build directory (its bench/ holds both drivers). CSV:
# OUTDIR/fmmfft_gpus_process.csv (bench_fft_gpus) and
# OUTDIR/fmmfft_gpus_mpi.csv; the tables: OUTDIR/fmmfft_gpus.txt. Each
# driver call is limited to RUN_LIMIT seconds (default 240).
set -uo pipefail
build="$1"
out="$2"
gpus="${3:-2 4}"
ns="${NS:-2^20 2^22 2^24 2^26 2^27 2^28}"
types="${TYPES:-c128 c64}"
limit="${RUN_LIMIT:-240}"
shared="${SHARED:-0}"
mkdir -p "$out"
txt="$out/fmmfft_gpus.txt"
ncores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee -a "$txt"
nlist=$(echo $ns | tr ' ' ',')
mpilist=$(echo ${MPI_NS:-$ns} | tr ' ' ',')
for g in $gpus; do
  if [ "$shared" = 1 ]; then
    list=$(printf '0%.0s,' $(seq "$g")); list=${list%,}
    label="shared"
    visible=0
  else
    list=$(seq -s, 0 $((g - 1)))
    label="gpus"
    visible=$list
  fi
  for t in $types; do
    single=(); [ "$t" = c64 ] && single=(--single)
    echo "# cuFFTXt and the FMM-FFT (one process, NCCL) over GPUs $list, $t" | tee -a "$txt"
    timeout "$limit" "$build/bench/bench_fft_gpus" --gpus "$list" --n "$nlist" "${single[@]}" \
      --csv "$out/fmmfft_gpus_process.csv" --label "$label" 2>&1 | tee -a "$txt"
    echo "# FMM-FFT over $g MPI rank(s) on GPUs $visible, $t, OMP_NUM_THREADS=$((ncores / g))" | tee -a "$txt"
    CUDA_VISIBLE_DEVICES=$visible OMP_NUM_THREADS=$((ncores / g)) timeout "$limit" mpirun -np "$g" --bind-to none \
      -x CUDA_VISIBLE_DEVICES -x OMP_NUM_THREADS -x LD_LIBRARY_PATH \
      "$build/bench/bench_fmmfft_mpi" --gpu --n "$mpilist" "${single[@]}" \
      --csv "$out/fmmfft_gpus_mpi.csv" --label "$label" 2>&1 | tee -a "$txt"
  done
done
