#!/usr/bin/env python3
"""FMM3D (fmm3dpy, CPU, all cores) on the same problems as bench_laplace, as
the peer in the GPU benchmark of issue 5. Prints a table and writes CSV.

  python3 bench/fmm3d_peer.py --n 1e5,1e6 --eps 1e-3,1e-6,1e-9 --dist uniform,ellipsoid --csv out.csv

Potential + gradient, sources = targets, random charges in [-1, 1]. The
achieved relative L2 error (papers/000 eq. 36) is measured on 1000 sampled
targets against a direct sum in double precision (numpy), so FMM3D's
1/(4 pi r) normalisation (if any) cancels in the ratio.
"""
import argparse
import csv
import os
import sys
import time

import numpy as np


def points(n, dist, rng):
    if dist == "uniform":
        return rng.random((3, n))
    if dist == "ellipsoid":  # surface of an ellipsoid with axes 1:5:1 (papers/004)
        v = rng.standard_normal((3, n))
        v /= np.linalg.norm(v, axis=0)
        v *= np.array([[0.5], [2.5], [0.5]])
        return v
    raise ValueError(dist)


def direct(src, q, trg):
    pot = np.zeros(trg.shape[1])
    grad = np.zeros((3, trg.shape[1]))
    for i in range(trg.shape[1]):
        r = trg[:, i:i + 1] - src
        r2 = np.einsum("ij,ij->j", r, r)
        mask = r2 > 0
        inv = np.zeros_like(r2)
        inv[mask] = 1.0 / np.sqrt(r2[mask])
        pot[i] = np.dot(q, inv)
        grad[:, i] = -(r * (q * inv ** 3)).sum(axis=1)
    return pot, grad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1e5,1e6")
    ap.add_argument("--eps", default="1e-3,1e-6,1e-9")
    ap.add_argument("--dist", default="uniform,ellipsoid")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    import fmm3dpy

    rows = []
    print(f"FMM3D {getattr(fmm3dpy, '__version__', '?')} on {os.cpu_count()} cores "
          f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})")
    print(f"{'dist':>10} {'N':>9} {'eps':>7} {'time_s':>9} {'err_pot':>9} {'err_grad':>9}")
    for dist in a.dist.split(","):
        for n in [int(float(x)) for x in a.n.split(",")]:
            rng = np.random.default_rng(20261122 + n)
            src = np.asfortranarray(points(n, dist, rng))
            q = rng.uniform(-1, 1, n)
            idx = rng.choice(n, min(a.samples, n), replace=False)
            ref_p, ref_g = direct(src, q, src[:, idx])
            for eps in [float(x) for x in a.eps.split(",")]:
                best = 1e30
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    out = fmm3dpy.lfmm3d(eps=eps, sources=src, charges=q, pg=2)
                    best = min(best, time.perf_counter() - t0)
                pot, grad = out.pot[idx], out.grad[:, idx]
                r = ref_p[0] / pot[0]  # normalisation of the peer: exactly 1 or 4 pi
                s = 4 * np.pi if abs(r - 4 * np.pi) < 1 else 1.0
                ep = np.linalg.norm(pot * s - ref_p) / np.linalg.norm(ref_p)
                eg = np.linalg.norm(grad * s - ref_g) / np.linalg.norm(ref_g)
                print(f"{dist:>10} {n:>9} {eps:>7.0e} {best:>9.4f} {ep:>9.2e} {eg:>9.2e}")
                sys.stdout.flush()
                rows.append(dict(code="fmm3d", dist=dist, n=n, eps=eps, time_s=best, err_pot=ep, err_grad=eg))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
