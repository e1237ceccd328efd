#!/usr/bin/env python3
"""What the plan cache of the FMM3D drop-in (libgpufmm_fmm3d, docs/fmm3d.md)
saves per call: a legacy solver calling lfmm3d_s_c_g again and again on one
geometry with new charges. Prints a table and writes CSV.

  python3 bench/fmm3d_cache.py build/libgpufmm_fmm3d.so --n 1e4,1e5,1e6 --eps 1e-6 --csv out.csv

For each N (uniform points in the unit cube, potential and gradient at the
sources, new random charges every call), --repeat rounds of: the cache
cleared, a first call, a second call on the same geometry (interleaved, so
that a machine shared with other work disturbs both alike):
  first_s   the first call on the geometry: hash + plan + evaluate (median)
  repeat_s  the second call: hash + evaluate (median)
  saving_s  first_s - repeat_s: what every call would cost more without the
            cache (GPUFMM_FMM3D_CACHE=0 builds the plan on every call)
  ratio     first_s / repeat_s
  min_first_s, min_repeat_s  the fastest of each
The backend is the drop-in's (GPUFMM_FMM3D_BACKEND, default: GPU 0 if any,
else the CPU with OMP_NUM_THREADS threads). Timings are wall times of the
ctypes call and nothing else.
"""
import argparse
import csv
import ctypes as C
import os
import statistics
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lib", help="path to libgpufmm_fmm3d.so")
    ap.add_argument("--n", default="1e4,1e5,1e6", help="comma-separated numbers of points")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=5, help="rounds per N (first and repeated call; medians reported)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--csv", help="write the rows here")
    a = ap.parse_args()
    lib = C.CDLL(a.lib)
    rng = np.random.default_rng(a.seed)
    eps = C.c_double(a.eps)
    rows = []
    print(f"plan cache of libgpufmm_fmm3d: lfmm3d_s_c_g, uniform points, eps {a.eps:g}, "
          f"backend {os.environ.get('GPUFMM_FMM3D_BACKEND', 'auto')}, OMP_NUM_THREADS "
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, {os.cpu_count()} CPUs")
    print(f"{'N':>9} {'first_s':>9} {'repeat_s':>9} {'saving_s':>9} {'ratio':>6} {'min_first_s':>11} {'min_repeat_s':>12}")
    for n in (int(float(v)) for v in a.n.split(",")):
        src = np.asfortranarray(rng.random((3, n)))
        pot = np.empty(n)
        grad = np.empty((3, n), order="F")
        ns = C.c_int64(n)
        ier = C.c_int64()

        def call():
            q = rng.uniform(-1, 1, n)
            t0 = time.perf_counter()
            lib.lfmm3d_s_c_g_(C.byref(eps), C.byref(ns), src.ctypes.data_as(C.c_void_p),
                              q.ctypes.data_as(C.c_void_p), pot.ctypes.data_as(C.c_void_p),
                              grad.ctypes.data_as(C.c_void_p), C.byref(ier))
            t = time.perf_counter() - t0
            if ier.value != 0:
                raise SystemExit(f"lfmm3d_s_c_g: ier {ier.value}")
            return t

        firsts, repeats = [], []
        for _ in range(a.repeat):
            lib.gpufmm_fmm3d_cache_clear()
            firsts.append(call())
            repeats.append(call())
        first, repeat = statistics.median(firsts), statistics.median(repeats)
        row = dict(n=n, eps=a.eps, first_s=first, repeat_s=repeat, saving_s=first - repeat, ratio=first / repeat,
                   min_first_s=min(firsts), min_repeat_s=min(repeats))
        rows.append(row)
        print(f"{n:>9} {first:>9.4f} {repeat:>9.4f} {first - repeat:>9.4f} {first / repeat:>6.1f} "
              f"{min(firsts):>11.4f} {min(repeats):>12.4f}", flush=True)
    lib.gpufmm_fmm3d_cache_clear()
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
