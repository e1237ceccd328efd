#!/usr/bin/env python3
"""Plots for docs/performance.md from the CSV files in bench/results:
time vs N (GPU FMM, CPU FMM, GPU direct sum), achieved error vs eps, and the
FMM-FFT's time vs N against cuFFT and FFTW.
Tooling only (matplotlib from PyPI): python3 bench/plot_results.py"""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, "results")
DOCS = os.path.join(HERE, "..", "docs")


def rows(name):
    with open(os.path.join(RES, name)) as f:
        return list(csv.DictReader(f))


gpu = [r for r in rows("bench_laplace_gpu_h100.csv") if r["kernels"] == "default"]
cpu = rows("bench_laplace_cpu_h100host.csv")
direct = rows("bench_direct_h100.csv")

fig, ax = plt.subplots(figsize=(6.4, 4.4))
for eps, mk in (("0.001", "o"), ("1e-06", "s"), ("1e-09", "^")):
    g = sorted((int(r["n"]), float(r["eval_s"])) for r in gpu
               if r["dist"] == "uniform" and r["precision"] == "double" and float(r["eps"]) == float(eps))
    c = sorted((int(r["n"]), float(r["total_s"])) for r in cpu if float(r["eps"]) == float(eps))
    ax.loglog(*zip(*g), "-" + mk, label=f"GPU FMM, eps {float(eps):.0e}")
    ax.loglog(*zip(*c), "--" + mk, label=f"CPU FMM (16 cores), eps {float(eps):.0e}")
d = sorted((int(r["n"]), float(r["seconds_call"])) for r in direct
           if r["backend"] == "gpu" and r["precision"] == "double")
ax.loglog(*zip(*d), ":k", label="GPU direct sum")
ax.set_xlabel("N (sources = targets)")
ax.set_ylabel("evaluate time (s), potential + gradient, double")
ax.set_title("Laplace FMM on an H100 80GB HBM3")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "fmm_time_vs_n.png"), dpi=110)

fig, ax = plt.subplots(figsize=(6.4, 4.4))
for dist, prec, mk in (("uniform", "double", "o"), ("ellipsoid", "double", "s"),
                       ("uniform", "float", "x"), ("ellipsoid", "float", "+")):
    e = sorted((float(r["eps"]), float(r["err_pot"]), float(r["err_grad"])) for r in gpu
               if r["dist"] == dist and r["precision"] == prec and r["n"] == "1000000")
    if not e:
        continue
    ax.loglog([x[0] for x in e], [x[1] for x in e], mk + "-", label=f"{dist} {prec}: potential")
    ax.loglog([x[0] for x in e], [x[2] for x in e], mk + ":", label=f"{dist} {prec}: gradient")
ax.loglog([1e-9, 1e-3], [1e-9, 1e-3], "k-", lw=0.8, label="error = eps")
ax.set_xlabel("requested eps")
ax.set_ylabel("achieved relative L2 error (eq. 36)")
ax.set_title("GPU FMM accuracy, N = 1e6 (H100)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "fmm_error_vs_eps.png"), dpi=110)

# The FMM-FFT (issue 17) against the vendor FFTs, GPU and CPU.
fig, ax = plt.subplots(figsize=(6.4, 4.4))
for name, label in (("fmmfft_gpu_h100.csv", "H100"), ("fmmfft_cpu_h100host.csv", "16 CPU cores")):
    rs = rows(name)
    vendor = "cuFFT" if "gpu" in name else "FFTW"
    for prec, mk in (("c128", "o"), ("c64", "x")):
        f = sorted((int(r["n"]), float(r["t_fmmfft"]), float(r["t_vendor1d"])) for r in rs if r["precision"] == prec)
        ls = "-" if "gpu" in name else "--"
        ax.loglog([x[0] for x in f], [x[1] for x in f], ls + mk, label=f"FMM-FFT {prec}, {label}")
        ax.loglog([x[0] for x in f], [x[2] for x in f], ls, color="gray", alpha=0.6 if prec == "c128" else 0.3,
                  label=f"{vendor} 1D {prec}")
ax.set_xlabel("N")
ax.set_ylabel("transform time (s)")
ax.set_title("FMM-FFT against the vendor 1D FFT (H100 and its host)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=6)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "fmmfft_time_vs_n.png"), dpi=110)
print("wrote docs/fmm_time_vs_n.png, docs/fmm_error_vs_eps.png and docs/fmmfft_time_vs_n.png")
