#!/usr/bin/env python3
"""Laplace FMM evaluate of two builds, measured in one run.

Runs bench_laplace_gpu of build A (the baseline) and build B alternately,
A B A B ..., `--rounds` times, each at N = 1e6, eps 1e-6, double and float,
uniform and ellipsoid (sources = targets, potential and gradient, device
arrays), and prints per case the median evaluate time of each build, the
ratio B / A and the spread of A's own runs (the noise floor of the
comparison). Writes every row as CSV.

    bench/compare_builds.py --a build-base/bench --b build-gpu/bench \
        [--rounds 5] [--sizes 1e6] [--csv out.csv]
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys


def run(binary, sizes, path):
    cmd = [binary, "--sizes", sizes, "--eps", "1e-6", "--dists", "uniform,ellipsoid", "--repeat", "3",
           "--no-strategies", "--csv", path]
    # A folder that holds its own libgpufmm (a copied baseline) is put first
    # on the library path, ahead of the binary's run path.
    env = dict(os.environ)
    folder = os.path.dirname(os.path.abspath(binary))
    if os.path.exists(os.path.join(folder, "libgpufmm.so.0")):
        env["LD_LIBRARY_PATH"] = folder + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"compare_builds: {' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    with open(path) as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True,
                    help="folder of the baseline's bench_laplace_gpu (with its libgpufmm.so.0 beside it, if copied)")
    ap.add_argument("--b", required=True, help="folder of the new build's bench_laplace_gpu")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="1e6")
    ap.add_argument("--csv", default="compare_builds.csv")
    args = ap.parse_args()
    times = {}  # (build, dist, precision, n) -> [eval_s]
    rows = []
    for r in range(args.rounds):
        for build, folder in (("A", args.a), ("B", args.b)):
            for row in run(folder + "/bench_laplace_gpu", args.sizes, f"/tmp/compare_{build}.csv"):
                key = (row["dist"], row["precision"], row["n"])
                times.setdefault((build,) + key, []).append(float(row["eval_s"]))
                rows.append(dict(row, build=build, round=r))
        print(f"round {r + 1}/{args.rounds} done", flush=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\nLaplace FMM evaluate, eps 1e-6, pot + grad, median of {args.rounds} runs each (A B A B ...)")
    print(f"{'dist':10} {'precision':9} {'N':>8} {'A (ms)':>9} {'B (ms)':>9} {'B/A':>7} {'A spread':>9}")
    for key in sorted({k[1:] for k in times}):
        a, b = times[("A",) + key], times[("B",) + key]
        ma, mb = statistics.median(a), statistics.median(b)
        spread = (max(a) - min(a)) / ma
        print(f"{key[0]:10} {key[1]:9} {float(key[2]):8.0e} {1e3 * ma:9.3f} {1e3 * mb:9.3f} {mb / ma:7.3f} "
              f"{100 * spread:8.1f}%")
    print(f"CSV: {args.csv}")


if __name__ == "__main__":
    main()
