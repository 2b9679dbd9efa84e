#!/usr/bin/env python3
"""Writes src/ops/gemm/auto_table.inc, the table behind `--kernel auto` on the CUDA backend,
from a tuning run: the JSON files of `gemmkit bench --suite ... --json` (one per dtype) that
timed our kernels beside cuBLAS.

For every measured shape the table keeps the fastest of our kernels when it reaches
--threshold percent of cuBLAS (the same run, paired), and cuBLAS otherwise: auto never
picks a kernel of ours that measured slower than the reference where it was measured.

    bench/tune/make_auto_table.py --results bench/results/<run folder> [--results ...] [--threshold 100]

Several --results folders (runs on the same device) are read together: a dtype measured in a
later run (int8, say) joins the table without re-running the others.
"""
import argparse
import json
import pathlib
import sys

ELEMENT_BYTES = {"i8": 1, "bf16": 2, "f16": 2, "tf32": 4, "f32": 4, "f64": 8, "i32": 4, "i64": 8}
CPP_DTYPE = {"i8": "i8", "bf16": "bf16", "f16": "f16", "tf32": "tf32", "f32": "f32", "f64": "f64"}


def row_major(row):
    """(m, n, k, trans_a, trans_b) of the bench row as the kernels see it (row-major)."""
    m, n, k, ta, tb = row["m"], row["n"], row["k"], row["trans_a"], row["trans_b"]
    if row.get("layout", "row") == "col":  # C^T = op(B)^T op(A)^T, operands swapped
        return n, m, k, tb, ta
    return m, n, k, ta, tb


def rows_on_16_bytes(dtype, m, n, k, ta, tb):
    """The bench packs its operands (ld = the stored row's length) on fresh allocations."""
    e = ELEMENT_BYTES[dtype]
    lda = m if ta else k
    ldb = k if tb else n
    return (lda * e) % 16 == 0 and (ldb * e) % 16 == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", required=True, type=pathlib.Path, action="append",
                    help="folder of a tuning run's bench JSON files (suite_*.json); may be repeated")
    ap.add_argument("--threshold", type=float, default=100.0,
                    help="percent of cuBLAS one of ours must reach to be chosen (default 100)")
    ap.add_argument("--out", type=pathlib.Path,
                    default=pathlib.Path(__file__).resolve().parents[2] / "src/ops/gemm/auto_table.inc")
    args = ap.parse_args()

    files = [f for folder in args.results for f in sorted(folder.glob("*.json"))]
    if not files:
        sys.exit(f"make_auto_table.py: no JSON files in {', '.join(map(str, args.results))}")
    best = {}  # (dtype, m, n, k, batch, ta, tb) -> [reference name, our best (name, percent)]
    order = []
    meta = None
    for path in files:
        doc = json.loads(path.read_text())
        if "rows" not in doc or "percent_of" not in doc:
            continue
        meta = meta or doc["meta"]  # the first run's: device, date and commit in the header
        reference = doc["percent_of"]
        for row in doc["rows"]:
            if row.get("skipped") or row.get("failed") or not row.get("passed", True):
                continue
            dtype = row["dtype"]
            if dtype not in CPP_DTYPE:
                continue
            key = (dtype, *row_major(row)[:3], row.get("batch", 1), *row_major(row)[3:])
            if key not in best:
                best[key] = [reference, None]
                order.append(key)
            # `--kernels auto` rows time a choice, not a kernel of their own.
            if row["kernel"] == reference or row["reference"] or row["kernel"] == "auto":
                continue
            pct = row.get("percent_of_reference")
            if pct is None:
                continue
            if best[key][1] is None or pct > best[key][1][1]:
                best[key][1] = (row["kernel"], pct)
    if meta is None:
        sys.exit(f"make_auto_table.py: no bench results with a reference in {args.results}")

    lines = []
    for key in order:
        dtype, m, n, k, batch, ta, tb = key
        reference, ours = best[key]
        kernel, pct = (ours if ours and ours[1] >= args.threshold else (reference, 100.0))
        aligned = rows_on_16_bytes(dtype, m, n, k, ta, tb)
        lines.append(f"    {{DType::{CPP_DTYPE[dtype]}, {m}, {n}, {k}, {batch}, {str(ta).lower()}, "
                     f"{str(tb).lower()}, {str(aligned).lower()}, \"{kernel}\", {pct:.1f}}},")
    gpu = meta.get("gpu", {})
    cc = int(str(gpu.get("compute_capability", "0")).replace(".", "") or 0)
    root = pathlib.Path(__file__).resolve().parents[2]

    def shown(path):
        try:
            return str(path.resolve().relative_to(root))
        except ValueError:
            return str(path)

    folder = " + ".join(shown(path) for path in args.results)
    text = (
        "// Written by bench/tune/make_auto_table.py from the tuning run in\n"
        f"// {folder} ({meta.get('device')}, {meta.get('date')}, commit {meta.get('commit')}):\n"
        f"// per measured shape, the fastest of our kernels at >= {args.threshold:g}% of cuBLAS,\n"
        "// else cuBLAS. Included by auto_table.cpp only; do not edit by hand.\n"
        f"constexpr TuningRun kTuningRun{{\"{meta.get('device')}\", {cc}, \"{folder}\"}};\n"
        "constexpr TunedShape kTunedShapes[] = {\n" + "\n".join(lines) + "\n};\n")
    args.out.write_text(text)
    print(f"{args.out}: {len(lines)} shapes from {len(files)} files")


if __name__ == "__main__":
    main()
