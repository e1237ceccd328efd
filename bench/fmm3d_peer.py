#!/usr/bin/env python3
"""FMM3D (fmm3dpy, CPU, all cores) on the same problems as bench_laplace, as
the peer in the GPU benchmark of issue 5. Prints a table and writes CSV.

  python3 bench/fmm3d_peer.py --n 1e5,1e6 --eps 1e-3,1e-6,1e-9 --dist uniform,ellipsoid --csv out.csv

Potential + gradient, sources = targets, random charges in [-1, 1]. The
achieved relative L2 error (papers/000 eq. 36) is measured on 1000 sampled
targets against a direct sum in double precision (numpy), so FMM3D's
1/(4 pi r) normalisation (if any) cancels in the ratio.

time_s is the wall time of the fastest of --repeat lfmm3d calls and nothing
else (no direct sum, no error check, no input conversion: the sources are
already a Fortran-ordered float64 (3, n) array, which f2py passes without a
copy). cpu_s is the process CPU time (all threads) of that call and
cpu_per_wall = cpu_s / time_s the number of cores it kept busy (about 1:
FMM3D ran on one core); busy_threads counts the threads that did a fair share
of that CPU time, which shows threading even where other processes share the
cores. first_s is the first call's wall time.

The fmm3dpy wheels on PyPI (2.1.0 at least) are built without OpenMP (their
extension modules neither link libgomp nor call GOMP_*), so they run on one
core whatever OMP_NUM_THREADS says; the header says which kind is installed,
column openmp records it and column threads the OpenMP threads allowed (1
without OpenMP). FMM3D built from the same sdist with OpenMP, and with
FAST_KER (its vectorised direct kernels, which also pick larger leaves:
lndiv_fast.f), is the multi-core peer; see tools/gpu-check.
"""
import argparse
import csv
import glob
import os
import sys
import time

import numpy as np

# libgomp reads OMP_NUM_THREADS once, when fmm3dpy is imported; default to the
# cores this process may run on (the affinity mask, not the whole host).
NCPU = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
os.environ.setdefault("OMP_NUM_THREADS", str(NCPU))


def points(n, dist, rng):
    if dist == "uniform":
        return rng.random((3, n))
    if dist == "ellipsoid":  # surface of an ellipsoid with axes 1:5:1 (papers/004)
        v = rng.standard_normal((3, n))
        v /= np.linalg.norm(v, axis=0)
        v *= np.array([[0.5], [2.5], [0.5]])
        return v
    raise ValueError(dist)


def direct(src, q, trg, block=4):
    """1/r potential and its gradient at trg (3, m) from charges q at src
    (3, n), the self term (r = 0) dropped; `block` targets per task, on all
    usable cores (numpy releases the GIL in these loops; no BLAS, so no BLAS
    threads left spinning when FMM3D runs)."""
    from concurrent.futures import ThreadPoolExecutor
    pot = np.empty(trg.shape[1])
    grad = np.empty((3, trg.shape[1]))

    def task(i):
        t = trg[:, i:i + block]
        d = [t[k][:, None] - src[k][None, :] for k in range(3)]  # (b, n) each
        r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        with np.errstate(divide="ignore"):
            inv = 1.0 / np.sqrt(r2)
        inv[r2 == 0] = 0.0
        pot[i:i + block] = np.einsum("ij,j->i", inv, q)
        w = inv * inv * inv * q
        for k in range(3):
            grad[k, i:i + block] = -np.einsum("ij,ij->i", d[k], w)

    with ThreadPoolExecutor(max_workers=NCPU) as ex:
        list(ex.map(task, range(0, trg.shape[1], block)))
    return pot, grad


def openmp_build(mod):
    """(built with OpenMP?, what was found) for the Fortran extension modules
    of fmm3dpy: an OpenMP build references GOMP_*/omp_* and needs libgomp
    (vendored as libgomp-<hash>.so by auditwheel, or the system one)."""
    d = os.path.dirname(mod.__file__)
    found = []
    for so in sorted(glob.glob(os.path.join(d, "lfmm3d_fortran*.so"))):
        with open(so, "rb") as f:
            b = f.read()
        for key in (b"libgomp", b"libiomp", b"GOMP_parallel", b"omp_get_max_threads"):
            if key in b:
                found.append(key.decode())
    return bool(found), (",".join(sorted(set(found))) or "no GOMP_*/omp_* symbols, no libgomp")


def omp_runtime_loaded():
    try:
        with open("/proc/self/maps") as f:
            libs = {l.split()[-1] for l in f if "omp" in l.rsplit("/", 1)[-1]}
        return ",".join(sorted(os.path.basename(x) for x in libs)) or "none"
    except OSError:
        return "?"


def thread_cpu():
    """CPU seconds of each thread of this process (Linux /proc), by thread id."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
            out[tid] = (int(st[11]) + int(st[12])) / tick  # utime + stime
    except OSError:
        pass
    return out


def busy_threads(before, after, cpu):
    """Threads that did at least a quarter of an even share of the call's CPU
    time: the threads FMM3D really used, even when the cores were shared."""
    per = [after[k] - before.get(k, 0.0) for k in after]
    share = max(cpu, 1e-9) / max(1, sum(1 for x in per if x > 0))
    return sum(1 for x in per if x > 0 and x >= 0.25 * share)


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

    omp, omp_why = openmp_build(fmm3dpy)
    try:  # OMP_NUM_THREADS may be a list (nested levels): the first counts
        threads = int(os.environ["OMP_NUM_THREADS"].split(",")[0]) if omp else 1
    except ValueError:
        threads = NCPU
    ver = getattr(fmm3dpy, "__version__", "")
    if not ver:
        try:
            from importlib.metadata import version
            ver = version("fmm3dpy")
        except Exception:
            ver = "?"
    print(f"FMM3D {ver} ({os.path.dirname(fmm3dpy.__file__)}), numpy {np.__version__}, "
          f"{NCPU} cores usable of {os.cpu_count()}")
    print("OpenMP build: " + ("yes" if omp else "NO") + f" ({omp_why}); " +
          ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in
                    ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY")))
    if not omp:
        print("WARNING: this fmm3dpy has no OpenMP: every lfmm3d call runs on ONE core, "
              "whatever OMP_NUM_THREADS says (cpu/wall below stays near 1). These are "
              "single-core FMM3D times, not FMM3D on all cores.")
    print(f"{'dist':>10} {'N':>9} {'eps':>7} {'time_s':>9} {'cpu_s':>9} {'cpu/wall':>8} "
          f"{'err_pot':>9} {'err_grad':>9}")
    sys.stdout.flush()

    fields = ["code", "dist", "n", "eps", "time_s", "err_pot", "err_grad",
              "cpu_s", "cpu_per_wall", "first_s", "threads", "openmp", "busy_threads"]
    f = open(a.csv, "w", newline="") if a.csv else None
    w = None
    if f:  # written row by row, so a run cut short keeps what it measured
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        f.flush()
    for dist in a.dist.split(","):
        for n in [int(float(x)) for x in a.n.split(",")]:
            rng = np.random.default_rng(20261122 + n)
            src = np.asfortranarray(points(n, dist, rng), dtype=np.float64)
            q = np.ascontiguousarray(rng.uniform(-1, 1, n), dtype=np.float64)
            idx = rng.choice(n, min(a.samples, n), replace=False)
            t0 = time.perf_counter()
            ref_p, ref_g = direct(src, q, src[:, idx])
            t_direct = time.perf_counter() - t0
            for eps in [float(x) for x in a.eps.split(",")]:
                calls = []  # (wall, cpu) of each lfmm3d call
                for _ in range(a.repeat):
                    th = thread_cpu()
                    c0 = time.process_time()
                    t0 = time.perf_counter()
                    out = fmm3dpy.lfmm3d(eps=eps, sources=src, charges=q, pg=2)
                    t = time.perf_counter() - t0
                    c = time.process_time() - c0
                    calls.append((t, c, busy_threads(th, thread_cpu(), c)))
                best, cpu, busy = min(calls)
                pot, grad = out.pot[idx], out.grad[:, idx]
                r = ref_p[0] / pot[0]  # normalisation of the peer: exactly 1 or 4 pi
                s = 4 * np.pi if abs(r - 4 * np.pi) < 1 else 1.0
                ep = np.linalg.norm(pot * s - ref_p) / np.linalg.norm(ref_p)
                eg = np.linalg.norm(grad * s - ref_g) / np.linalg.norm(ref_g)
                print(f"{dist:>10} {n:>9} {eps:>7.0e} {best:>9.4f} {cpu:>9.3f} {cpu / best:>8.2f} "
                      f"{ep:>9.2e} {eg:>9.2e}")
                print("#   calls (wall s / cpu s / cpu:wall / busy threads): " +
                      ", ".join(f"{t:.3f}/{c:.3f}/{c / t:.2f}/{b}" for t, c, b in calls) +
                      f"; ier {getattr(out, 'ier', '?')}; OpenMP runtime mapped: {omp_runtime_loaded()}" +
                      (f"; direct sum for the errors (untimed) {t_direct:.1f} s" if t_direct else ""))
                sys.stdout.flush()
                row = dict(code="fmm3d", dist=dist, n=n, eps=eps, time_s=best, err_pot=ep, err_grad=eg,
                           cpu_s=cpu, cpu_per_wall=cpu / best, first_s=calls[0][0],
                           threads=threads, openmp=int(omp), busy_threads=busy)
                if w:
                    w.writerow(row)
                    f.flush()
                t_direct = 0.0
    if f:
        f.close()


if __name__ == "__main__":
    main()
