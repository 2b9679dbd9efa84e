#!/usr/bin/env python3
"""Plot gemmkit benchmark results: GFLOP/s against size, one line per kernel.

Usage: plot.py RESULTS.json [RESULTS.json ...] -o PLOT.png [--title TEXT]

Reads the JSON written by `gemmkit bench --json` (several files are merged, so a CPU
and a GPU run can share one figure). Only square shapes (M = N = K) are drawn, against
N; non-square shapes and skipped rows stay in the JSON and CSV. The reference libraries
are drawn in black (cuBLAS of the dtype solid, cuBLAS TF32 dashed, OpenBLAS dotted) so they
read as references; each ladder kernel gets its own colour and marker, in ladder order.
The PNG is written under a temporary name and renamed, so a failed run leaves no
partial file.
"""
import argparse
import json
import os
import re
import sys
import tempfile


def accuracy_of(row: dict):
    """The lower precision a kernel computes in (results before the field existed: by name)."""
    return row.get("accuracy") or ("tf32" if "tf32" in row["kernel"] else None)


def natural_key(text: str):
    """cuda_tiled8 before cuda_tiled16."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def reference_label(row: dict) -> str:
    """Legend label: the kernel, with what a reference library stands for."""
    name = row["kernel"]
    if not row.get("reference"):
        return name
    if name.startswith("cuda_cublas"):
        what = "cuBLAS " + (accuracy_of(row) or row.get("dtype", "f32")).upper()
    elif "openblas" in name:
        what = "OpenBLAS"
    else:
        what = "reference"
    return f"{name} ({what})"


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

    series = {}  # label -> {"points": [(n, gflops)], "reference", "accuracy", "rung", "backend"}
    subtitle = []
    for path in args.results:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"plot.py: error: cannot read {path}: {e}", file=sys.stderr)
            return 2
        # Schema 1 ("meta", "rows"); earlier results said "environment" and "results".
        env = data.get("meta", data.get("environment", {}))
        gpu = env.get("gpu")
        where = gpu["name"] if gpu else env.get("cpu", "?")
        subtitle.append(f"{where}, {data.get('dtype', '?')}, {env.get('date', '?')[:10]}, "
                        f"commit {env.get('commit', '?')}")
        for r in data.get("rows", data.get("results", [])):
            if r.get("skipped") or r.get("gflops") is None:
                continue
            if not (r["m"] == r["n"] == r["k"]):
                continue  # non-square shapes: in the JSON and CSV, not on this axis
            s = series.setdefault(reference_label(r), {
                "points": [], "reference": bool(r.get("reference")),
                "accuracy": accuracy_of(r), "rung": r.get("rung", 0),
                "backend": r.get("backend", data.get("backend", "")), "kernel": r["kernel"]})
            s["points"].append((r["m"], r["gflops"]))

    if not series:
        print("plot.py: error: no square-shape results to plot (M = N = K)", file=sys.stderr)
        return 2

    references = [k for k, s in series.items() if s["reference"]]
    ladder = [k for k, s in series.items() if not s["reference"]]
    references.sort(key=lambda k: (series[k]["backend"] != "cuda", series[k]["accuracy"] is not None, k))
    ladder.sort(key=lambda k: (series[k]["backend"], series[k]["rung"], natural_key(k)))

    fig, ax = plt.subplots(figsize=(12, 6.5))
    # References: black, told apart by line style; drawn thick and on top.
    ref_styles = ["-", "--", ":", "-."]
    for i, label in enumerate(references):
        s = series[label]
        style = "--" if s["accuracy"] else ref_styles[i % len(ref_styles)]
        if not s["accuracy"] and style == "--":
            style = "-."
        pts = sorted(s["points"])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color="black", linewidth=2.4,
                marker=None, label=label, zorder=5)
    # Ladder kernels: distinct colours (tab10, then Dark2 and Set1: 27 before one repeats,
    # and then with another marker) and a cycle of markers.
    markers = ["o", "s", "^", "v", "D", "P", "X", "<", ">", "p", "h", "*", "d"]
    palette = [plt.get_cmap(name)(i) for name, count in (("tab10", 10), ("Dark2", 8), ("Set1", 9))
               for i in range(count)]
    for i, label in enumerate(ladder):
        s = series[label]
        pts = sorted(s["points"])
        color = palette[i % len(palette)]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color, linewidth=1.4,
                marker=markers[i % len(markers)], markersize=5, label=label, zorder=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({p[0] for s in series.values() for p in s["points"]})
    # Powers of two only when there are some: 4000 beside 4096 would print over it.
    sizes = [n for n in sizes if n & (n - 1) == 0] or sizes
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(n) for n in sizes])
    ax.set_xlabel("N (square GEMM, M = N = K)")
    ax.set_ylabel("GFLOP/s (median)")
    ax.set_title(args.title or "gemmkit: GEMM throughput by kernel")
    fig.text(0.5, 0.005, "; ".join(sorted(set(subtitle))), ha="center", fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              ncol=1 if len(series) <= 24 else 2)
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
