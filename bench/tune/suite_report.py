#!/usr/bin/env python3
"""Per suite file, the geometric mean and minimum of % of cuBLAS from `gemmkit bench
--suite all --json` results: for one kernel (e.g. auto), and for the best of our kernels at
each shape. Prints a Markdown table per dtype.

    bench/tune/suite_report.py RESULTS.json [...] [--kernel auto] [--shapes bench/shapes]
"""
import argparse
import json
import math
import pathlib
import re

SHAPE = re.compile(r"^\s*(\d+)x(\d+)x(\d+)((?:\s+(?:A\^T|B\^T|row|col))*)\s*(?:#.*)?$")


def suite_keys(path):
    """The (m, n, k, trans_a, trans_b, layout) of every line of a suite file."""
    keys = set()
    for line in path.read_text().splitlines():
        m = SHAPE.match(line)
        if not m:
            continue
        flags = m.group(4).split()
        keys.add((int(m.group(1)), int(m.group(2)), int(m.group(3)), "A^T" in flags, "B^T" in flags,
                  "col" if "col" in flags else "row"))
    return keys


def summary(values):
    if not values:
        return "-", "-", ""
    gm = math.exp(sum(math.log(v) for v, _ in values) / len(values))
    worst = min(values)
    return f"{gm:.1f}%", f"{worst[0]:.1f}%", worst[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=pathlib.Path)
    ap.add_argument("--kernel", default="auto", help="the kernel to report beside the best of ours")
    ap.add_argument("--shapes", type=pathlib.Path,
                    default=pathlib.Path(__file__).resolve().parents[1] / "shapes")
    args = ap.parse_args()
    suites = {p.stem: suite_keys(p) for p in sorted(args.shapes.glob("*.txt"))}
    for path in args.results:
        doc = json.loads(path.read_text())
        ours, named = {}, {}  # shape key -> (percent, label)
        for r in doc["rows"]:
            if r.get("skipped") or r.get("failed") or not r.get("passed", True):
                continue
            pct = r.get("percent_of_reference")
            if pct is None or r["reference"]:
                continue
            key = (r["m"], r["n"], r["k"], r["trans_a"], r["trans_b"], r.get("layout", "row"))
            label = f"{r['m']}x{r['n']}x{r['k']}" + "".join(
                f" {f}" for f, on in (("A^T", r["trans_a"]), ("B^T", r["trans_b"]),
                                      ("col", r.get("layout") == "col")) if on)
            if r["kernel"] == args.kernel:
                named[key] = (pct, label + (f" ({r['note'].removeprefix('auto ran ')})" if r.get("note") else ""))
            if r["kernel"] != "auto" and (key not in ours or pct > ours[key][0]):
                ours[key] = (pct, f"{label} ({r['kernel']})")
        print(f"\n{doc['dtype']} ({path.name}, {doc['meta'].get('device')}, commit {doc['meta'].get('commit')}):\n")
        print(f"| suite | shapes | {args.kernel}: geomean | min | at | best of ours: geomean | min | at |")
        print("|---|---|---|---|---|---|---|---|")
        for name, keys in list(suites.items()) + [("all", set().union(*suites.values()))]:
            a = [named[k] for k in keys if k in named]
            b = [ours[k] for k in keys if k in ours]
            if not a and not b:
                continue
            print(f"| {name} | {max(len(a), len(b))} | " + " | ".join(summary(a)) + " | " +
                  " | ".join(summary(b)) + " |")


if __name__ == "__main__":
    main()
