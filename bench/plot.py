#!/usr/bin/env python3
"""Plot gemmkit benchmark results: GFLOP/s against size, one line per kernel.

Usage: plot.py RESULTS.json [RESULTS.json ...] -o PLOT.png [--title TEXT]

Reads the JSON written by `gemmkit bench --json` (several files are merged, so a CPU
and a GPU run can share one figure). The x axis is the cube root of M*N*K, which is
the size for square problems. The PNG is written under a temporary name and renamed,
so a failed run leaves no partial file.
"""
import argparse
import json
import os
import sys
import tempfile


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="JSON files from gemmkit bench --json")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"plot.py: error: {sys.executable} has no matplotlib "
              "(apt-get install python3-matplotlib)", file=sys.stderr)
        return 1

    series = {}  # kernel -> [(size, gflops)]
    subtitle = []
    for path in args.results:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"plot.py: error: cannot read {path}: {e}", file=sys.stderr)
            return 2
        env = data.get("environment", {})
        gpu = env.get("gpu")
        where = gpu["name"] if gpu else env.get("cpu", "?")
        subtitle.append(f"{where}, {data.get('dtype', '?')}, {env.get('date', '?')[:10]}, "
                        f"commit {env.get('commit', '?')}")
        for r in data.get("results", []):
            size = (r["m"] * r["n"] * r["k"]) ** (1.0 / 3.0)
            label = r["kernel"] + (" (reference)" if r.get("reference") else "")
            series.setdefault(label, []).append((size, r["gflops"]))

    if not series:
        print("plot.py: error: no results to plot", file=sys.stderr)
        return 2

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for label, points in sorted(series.items()):
        points.sort()
        style = "--" if "(reference)" in label else "-"
        ax.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size N (cube root of M*N*K)")
    ax.set_ylabel("GFLOP/s (median)")
    ax.set_title(args.title or "gemmkit: GEMM throughput by kernel")
    fig.text(0.5, 0.005, "; ".join(sorted(set(subtitle))), ha="center", fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout(rect=(0, 0.03, 1, 1))

    out_dir = os.path.dirname(os.path.abspath(args.output))
    fd, tmp = tempfile.mkstemp(prefix=".plot-", suffix=".png", dir=out_dir)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120)
        os.chmod(tmp, 0o644)
        os.replace(tmp, args.output)
    except Exception as e:  # noqa: BLE001 - any failure must remove the temporary file
        os.unlink(tmp)
        print(f"plot.py: error: cannot write {args.output}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
