#!/usr/bin/env python3
"""Writes the generated parts of the docs from the code and the committed results: the
ladder tables of docs/ladder.md (from `gemmkit list --json -` and the runs under
bench/results), README.md's table of kernels (from `gemmkit list --json -`), the measured
tables of docs/reduce.md, docs/spmv.md and docs/conv1d.md (from their runs) and the index of runs in
bench/results/README.md (from their manifests).

    scripts/gen_docs.py [--check] [--gemmkit build/release/bin/gemmkit]

A generated part sits between `<!-- generated: NAME ... -->` and `<!-- end generated: NAME -->`;
everything else in those files is left alone. With --check nothing is written: it exits 1,
naming each part that is not current (and each rung whose registry summary is not the
first sentence of its kernel file's opening comment). Python 3 standard library only.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = "bench/results"
KERNEL_FILES = "src/ops/gemm/cuda"
SLOWER = 0.97  # a rung below this fraction of the rung before it, in the same column, is "slower here"

# The ladder tables. A table lists every `gemmkit list` GEMM entry its `rows` accepts, in
# registry order, and one column per measurement. A measurement names its run by device and
# suite (the manifest's), never by folder, so a newer run of the suite takes over by itself.
H200 = "NVIDIA H200"
EPYC = "AMD EPYC, 2 cores (AVX2 + FMA), no GPU"
TABLES = [
    {"name": "ladder-cpu",
     "rows": lambda e: e["backend"] == "cpu",
     "columns": [{"label": "f32 1024^3: GFLOP/s (% of OpenBLAS)", "device": EPYC, "suite": "cpu_ladder",
                  "file": "f32.json", "shape": (1024, 1024, 1024), "scale": 1.0, "compare": True}]},
    {"name": "ladder-simt",
     "rows": lambda e: e["backend"] == "cuda" and (e["name"] in ("cuda_cublas", "cuda_cublas_tf32") or (
         e["role"] == "ladder" and (1 <= e["rung"] <= 15 or e["rung"] == 23))),
     "columns": [{"label": f"f32 {n}^3: TFLOP/s (% of cuBLAS)", "device": H200, "suite": "cuda_ladder_f32",
                  "file": "square.json", "shape": (n, n, n), "scale": 1e-3, "compare": True} for n in (1024, 4096)]},
    {"name": "ladder-tensor",
     "rows": lambda e: e["backend"] == "cuda" and (
         e["name"] in ("cuda_cublas_bf16", "cuda_cublas_f16", "cuda_cublas_tf32", "cuda_cublas_i8") or (
         e["role"] == "ladder" and (16 <= e["rung"] <= 22 or e["rung"] in (0, 24)))),
     "columns": [{"label": f"{d} 4096^3: TFLOP/s (% of cuBLAS)", "device": H200, "suite": "tensor_ladder",
                  "file": f"tensor_{d}.json", "shape": (4096, 4096, 4096), "scale": 1e-3, "compare": True}
                 for d in ("bf16", "f16", "tf32")]
                + [{"label": "bf16 shape suite: geomean % of cuBLAS", "device": H200, "suite": "suite_tuning",
                    "file": "suite_all_bf16.json", "summary": True},
                   {"label": "i8 4096^3 B^T: TOPS (% of cuBLAS; median run)", "device": H200, "suite": "rung24_i8_squares",
                    "file": "i8_squares_tn_run*.json", "shape": (4096, 4096, 4096), "scale": 1e-3, "compare": False}]},
]


# Tables of one results file each, in the docs of the other operations: one row per entry
# of the file's list, the columns computed from it.
def _pct(v):
    return f"{v:.1f}%"


RUN_TABLES = [
    {"name": "reduce-f32-sum", "doc": "docs/reduce.md", "device": H200, "suite": "reduce",
     "file": "reduce_f32_sum.json", "list": "kernels",
     "columns": [("kernel", lambda r: r["kernel"]), ("rung", lambda r: "ref" if r["rung"] < 0 else str(r["rung"])),
                 ("median ms", lambda r: f"{r['median_s'] * 1e3:.4f}"), ("GB/s", lambda r: f"{r['gbs']:.0f}"),
                 ("% of CUB", lambda r: _pct(r["pct_of_cub"])), ("% copy read", lambda r: _pct(r["pct_of_copy_read"])),
                 ("% copy r+w", lambda r: _pct(r["pct_of_copy_read_plus_write"])),
                 ("same bits", lambda r: "yes" if r["bit_identical_runs"] else "no")]},
    {"name": "conv1d-f32-w7", "doc": "docs/conv1d.md", "device": H200, "suite": "conv1d",
     "file": "conv1d_f32_w7.json", "list": "rows",
     "columns": [("kernel", lambda r: r["kernel"]), ("median ms", lambda r: f"{r['median_s'] * 1e3:.3f}"),
                 ("GB/s", lambda r: f"{r['gb_per_s']:.0f}"), ("% of copy", lambda r: _pct(r["percent_of_copy"])),
                 ("max err / bound", lambda r: f"{r['max_error_over_bound']:.2f}" if "max_error_over_bound" in r else "")]},
]


def render_spmv(runs, root, problems):
    """docs/spmv.md: per dtype and matrix, each rung and cuSPARSE ALG2 as % of cuSPARSE's default."""
    run = runs.get((H200, "spmv"))
    if run is None:
        problems.append(f"docs/spmv.md: no run of suite `spmv` on {H200} in {RESULTS}")
        return ""
    folder, m = run
    kernels = ["scalar", "vector", "vector_groups", "merge_path", "cusparse_alg2"]
    lines = ["| dtype | matrix | cuSPARSE GB/s | scalar | vector | vector_groups | merge_path | cuSPARSE ALG2 "
             "| best of ours | auto |", "|" + "---|" * 10]
    files = []
    for dtype in ("f32", "f64"):
        name = f"spmv_{dtype}.json"
        path = root / RESULTS / folder / name
        if not path.exists():
            problems.append(f"docs/spmv.md: {RESULTS}/{folder} has no {name}")
            continue
        files.append(name)
        doc = json.loads(path.read_text())
        for mat in doc["matrices"]:
            by = {e["kernel"]: e for e in mat["entries"]}
            cells = [f"{by[k]['percent_of_cusparse']:.1f}%" if k in by and not by[k].get("skipped") else "–"
                     for k in kernels]
            lines.append(f"| {dtype} | {mat['pattern']} | {by['cusparse']['gbps']:.0f} | " + " | ".join(cells)
                         + f" | {mat['best']} ({mat['best_percent_of_cusparse']:.1f}%)"
                         + f" | {mat['auto']} ({mat['auto_percent_of_cusparse']:.1f}%) |")
        lines.append(f"| {dtype} | **geomean** | | | | | | | **{doc['geomean_best_percent_of_cusparse']:.1f}%** "
                     f"| **{doc['geomean_auto_percent_of_cusparse']:.1f}%** |")
    lines += ["", f"From `{RESULTS}/{folder}/` ({', '.join(files)}: {m['device']}, {m['date']}, commit {m['commit']})."]
    return "\n".join(lines)


def render_run_table(spec, runs, root, problems):
    run = runs.get((spec["device"], spec["suite"]))
    if run is None:
        problems.append(f"{spec['doc']}: no run of suite `{spec['suite']}` on {spec['device']} in {RESULTS}")
        return ""
    folder, m = run
    path = root / RESULTS / folder / spec["file"]
    if not path.exists():
        problems.append(f"{spec['doc']}: {RESULTS}/{folder} has no {spec['file']}")
        return ""
    rows = json.loads(path.read_text())[spec["list"]]
    lines = ["| " + " | ".join(h for h, _ in spec["columns"]) + " |", "|" + "---|" * len(spec["columns"])]
    for r in rows:
        lines.append("| " + " | ".join(f(r) for _, f in spec["columns"]) + " |")
    lines += ["", f"From `{RESULTS}/{folder}/{spec['file']}` ({m['device']}, {m['date']}, commit {m['commit']})."]
    return "\n".join(lines)


def sentence_of_kernel_file(path):
    """First sentence of the file's opening comment, without its `Rung N, ` lead."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("//"):
            break
        text = line[2:].strip()
        if not text:
            break
        lines.append(text)
    para = " ".join(lines)
    para = re.sub(r"^(?:Rung \d+|\w+ \(rung \d+\))\s*[,:]\s*", "", para)
    m = re.search(r"\.(\s|$)", para)
    return para[:m.start()] if m else para


def kernel_files(root):
    """(backend, rung) -> its kernel file: src/ops/gemm/cuda/TRACK/NN_*.cuh, or the src/ops/gemm/cpu file
    whose opening line names the rung (`// cpu_naive (rung 1): ...`)."""
    out = {}
    for path in sorted((root / KERNEL_FILES).glob("*/[0-9][0-9]_*.cuh")):
        out[("cuda", int(path.name[:2]))] = path
    for path in sorted((root / "src/ops/gemm/cpu").glob("*.cpp")):
        m = re.match(r"// \w+ \(rung (\d+)\):", path.read_text())
        if m:
            out[("cpu", int(m.group(1)))] = path
    return out


def list_entries(gemmkit):
    try:
        out = subprocess.run([gemmkit, "list", "--json", "-", "--operation", "gemm"], capture_output=True,
                             text=True, timeout=60)
    except OSError as e:
        sys.exit(f"gen_docs.py: cannot run {gemmkit}: {e}")
    if out.returncode != 0:
        sys.exit(f"gen_docs.py: `{gemmkit} list --json -` failed: {out.stderr.strip()}")
    return json.loads(out.stdout)["rows"]


def load_runs(root):
    """(device, suite) -> (folder name, manifest)."""
    runs = {}
    for path in sorted((root / RESULTS).glob("*/MANIFEST.json")):
        doc = json.loads(path.read_text())
        runs[(doc["device"], doc["suite"])] = (path.parent.name, doc)
    return runs


def check_summaries(entries, files, root):
    """The first entry of each rung with a kernel file carries that file's first sentence."""
    problems = []
    seen = set()
    for e in entries:
        key = (e["backend"], e["rung"])
        if e["role"] != "ladder" or key in seen or key not in files:
            continue
        seen.add(key)
        want = sentence_of_kernel_file(files[key])
        if e["summary"] != want:
            problems.append(f"{e['name']} (rung {e['rung']}): registry summary \"{e['summary']}\" is not the first "
                            f"sentence of {files[key].relative_to(root)}: \"{want}\"")
    return problems


def measure(col, runs, root, cache, problems):
    """kernel -> (value, percent) for one column, and the run it came from (None if absent)."""
    run = runs.get((col["device"], col["suite"]))
    if run is None:
        problems.append(f"no run of suite `{col['suite']}` on {col['device']} in {RESULTS} (column `{col['label']}`)")
        return {}, None
    folder, manifest = run
    # "file" may be a glob of several runs of the same command: each kernel then shows the
    # run of its median percentage (the lower middle one of an even count).
    paths = sorted((root / RESULTS / folder).glob(col["file"]))
    for path in paths:
        if path not in cache:
            cache[path] = json.loads(path.read_text())
    if not paths:
        problems.append(f"{RESULTS}/{folder} has no {col['file']} (column `{col['label']}`)")
        return {}, None
    if col.get("summary"):
        out = {}
        for s in (cache[paths[0]].get("suite") or {}).get("summary", []):
            if s.get("geomean_percent") is not None:
                out[s["kernel"]] = (None, s["geomean_percent"])
        return out, (folder, manifest)
    per_run = {}  # kernel -> [(percent, value)], one per file
    for path in paths:
        seen = set()
        for r in cache[path].get("rows") or cache[path].get("results") or []:
            if (r["m"], r["n"], r["k"]) != col["shape"] or r.get("skipped") or r.get("gflops") is None:
                continue
            if r.get("layout", "row") != "row" or r.get("batch", 1) != 1 or r["kernel"] in seen:
                continue
            seen.add(r["kernel"])
            per_run.setdefault(r["kernel"], []).append((r.get("percent_of_reference"), r["gflops"] * col["scale"]))
    out = {}
    for kernel, runs_of_kernel in per_run.items():
        runs_of_kernel.sort(key=lambda pv: (pv[0] is None, pv[0] or 0.0))
        pct, value = runs_of_kernel[(len(runs_of_kernel) - 1) // 2]
        out[kernel] = (value, pct)
    return out, (folder, manifest)


def fmt_value(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"


def render_table(table, entries, runs, root, problems):
    rows = [e for e in entries if table["rows"](e)]
    cache = {}
    cols = [(c, *measure(c, runs, root, cache, problems)) for c in table["columns"]]
    head = "| rung | kernel | what it changes | " + " | ".join(c["label"] for c, _, _ in cols) + " |"
    lines = [head, "|" + "---|" * (3 + len(cols))]
    # The best value of each rung per column, to say where a rung is slower than the one before.
    best = [{} for _ in cols]
    for i, (c, data, _) in enumerate(cols):
        for e in rows:
            if e["role"] == "ladder" and e["name"] in data and data[e["name"]][0] is not None:
                best[i][e["rung"]] = max(best[i].get(e["rung"], 0), data[e["name"]][0])
    for e in rows:
        cells = []
        notes = []
        for i, (c, data, run) in enumerate(cols):
            if e["name"] not in data:
                cells.append("–")
                continue
            value, pct = data[e["name"]]
            if value is None:
                cells.append(f"{pct:.1f}%")
            elif e["role"] == "reference" and pct is not None and abs(pct - 100) < 1e-9:
                cells.append(fmt_value(value))
            else:
                cells.append(fmt_value(value) + ("" if pct is None else f" ({pct:.0f}%)" if pct >= 10 else f" ({pct:.1f}%)"))
            below = [r for r in best[i] if r < e["rung"]]
            # Only the rung's best entry is compared: its variants are alternatives, not steps.
            if (c.get("compare") and e["role"] == "ladder" and e["rung"] > 0 and below and value is not None
                    and value == best[i][e["rung"]]):
                prev = max(below)
                if value < SLOWER * best[i][prev]:
                    reason = run[1].get("slower_because", {}).get(e["name"])
                    if reason is None:
                        problems.append(f"{e['name']} is slower than rung {prev} in `{c['label']}` "
                                        f"({RESULTS}/{run[0]}): its MANIFEST.json needs slower_because.{e['name']}")
                        reason = "(no reason recorded)"
                    where = c["label"].split(":")[0]
                    notes.append(f"slower here than rung {prev} at {where} because {reason}")
        what = e["summary"] + ("" if not notes else " *" + "; ".join(dict.fromkeys(notes)) + ".*")
        rung = "ref" if e["role"] == "reference" else str(e["rung"])
        lines.append(f"| {rung} | `{e['name']}` | {what} | " + " | ".join(cells) + " |")
    sources = {}  # folder -> files, in column order
    for c, _, run in cols:
        if run is None:
            continue
        sources.setdefault(run[0], (run[1], []))[1].append(c["file"])
    lines.append("")
    lines.append("Measured: " + "; ".join(
        f"`{RESULTS}/{folder}/` ({', '.join(dict.fromkeys(files))}: {m['device']}, {m['date']}, commit {m['commit']})"
        for folder, (m, files) in sources.items())
        + ". Medians, each kernel timed beside the reference in the same run; \"–\": not in that run.")
    return "\n".join(lines)


def render_kernels(entries):
    """README's overview: one row per rung (its entries together); references, and the entries
    off the ladder (rung 0: the exact and emulated GEMMs), each on their own."""
    lines = ["| rung | kernels | backend | what it is |", "|---|---|---|---|"]
    groups = {}
    for e in entries:
        alone = e["role"] == "reference" or e["rung"] == 0
        key = (e["backend"], e["name"]) if alone else (e["backend"], e["rung"])
        groups.setdefault(key, []).append(e)
    for es in groups.values():
        main = es[0]
        rung = "ref" if main["role"] == "reference" else str(main["rung"])
        names = ", ".join(f"`{e['name']}`" for e in es)
        lines.append(f"| {rung} | {names} | {main['backend']} | {main['summary']} |")
    return "\n".join(lines)


def render_index(runs):
    lines = ["| run | suite | device | driver, CUDA | what |", "|---|---|---|---|---|"]
    for (device, suite), (folder, m) in sorted(runs.items(), key=lambda kv: kv[1][0]):
        gpu = "–" if m.get("driver") is None else f"{m['driver']}, {m.get('cuda')}"
        lines.append(f"| [{folder}]({folder}/MANIFEST.json) | `{suite}` | {device} | {gpu} | {m['about']} |")
    return "\n".join(lines)


def replace_region(text, name, body, path, problems):
    start = re.compile(r"<!-- generated: " + re.escape(name) + r"\b[^>]*-->\n")
    end = f"<!-- end generated: {name} -->"
    m = start.search(text)
    j = text.find(end)
    if m is None or j < m.end():
        problems.append(f"{path}: no `<!-- generated: {name} -->` ... `{end}` markers")
        return text
    return text[:m.end()] + body + "\n" + text[j:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated part is not current")
    ap.add_argument("--gemmkit", default=str(ROOT / "build/release/bin/gemmkit"), help="the gemmkit CLI to ask")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="the repository's root")
    args = ap.parse_args()
    root = args.root.resolve()
    entries = list_entries(args.gemmkit)
    if not any(e["backend"] == "cuda" for e in entries):
        print("gen_docs.py: this gemmkit was built without the CUDA backend; the ladder tables need its "
              "entries: skipped", file=sys.stderr)
        return 77
    runs = load_runs(root)
    problems = check_summaries(entries, kernel_files(root), root)
    outputs = {}
    ladder = root / "docs/ladder.md"
    text = ladder.read_text()
    for table in TABLES:
        text = replace_region(text, table["name"], render_table(table, entries, runs, root, problems),
                              ladder, problems)
    outputs[ladder] = text
    for spec in RUN_TABLES:
        path = root / spec["doc"]
        text = outputs.get(path, path.read_text())
        outputs[path] = replace_region(text, spec["name"], render_run_table(spec, runs, root, problems), path, problems)
    spmv = root / "docs/spmv.md"
    outputs[spmv] = replace_region(spmv.read_text(), "spmv-ladder", render_spmv(runs, root, problems), spmv, problems)
    readme = root / "README.md"
    outputs[readme] = replace_region(readme.read_text(), "readme-kernels", render_kernels(entries), readme, problems)
    index = root / RESULTS / "README.md"
    outputs[index] = replace_region(index.read_text(), "results-index", render_index(runs), index, problems)
    stale = [p for p, t in outputs.items() if p.read_text() != t]
    if args.check:
        for p in stale:
            problems.append(f"{p.relative_to(root)}: generated part not current; run scripts/gen_docs.py")
    else:
        for p in stale:
            p.write_text(outputs[p])
            print(f"gen_docs.py: wrote {p.relative_to(root)}")
    for p in problems:
        print(f"gen_docs.py: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
