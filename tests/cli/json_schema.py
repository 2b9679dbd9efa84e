#!/usr/bin/env python3
"""Every --json document of every subcommand against docs/gemmkit.schema.json.

Usage: json_schema.py PATH/TO/gemmkit PATH/TO/gemmkit.schema.json

Runs each subcommand that writes JSON on small inputs (CPU backend; the --bench runs of
reduce, spmv and conv1d only where a CUDA device is present), to a file and to standard
output (`--json -`, where stdout must then hold the document alone), and validates every
document with Debian's python3-jsonschema (draft 2020-12). Fails when a document does not
match, when a subcommand of the schema's list was never checked, or when the validator
accepts documents made wrong on purpose. Exits 77 (skipped) without jsonschema.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

gemmkit, schema_path = sys.argv[1], sys.argv[2]
with open(schema_path) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

failures = []
checked = {}  # command -> documents validated
last_stdout = [""]  # of the last from_file run


def run(args, expect=(0,)):
    r = subprocess.run([gemmkit, *args], capture_output=True, text=True, timeout=300)
    if r.returncode not in expect:
        failures.append(f"gemmkit {' '.join(args)}: exit {r.returncode}, expected {expect}: {r.stderr.strip()}")
    return r


def check(document, what):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        if e.context:  # oneOf/anyOf: the branch that came nearest
            e = jsonschema.exceptions.best_match(e.context)
        path = "/".join(str(p) for p in e.absolute_path) or "(top)"
        failures.append(f"{what}: at {path}: {e.message[:300]}")
    if not errors:
        checked.setdefault(document.get("command"), []).append(what)
    print(f"{what}: {'ok' if not errors else f'{len(errors)} error(s)'}")


def from_file(args, path, expect=(0,)):
    """gemmkit ARGS --json PATH; the document written."""
    r = run([*args, "--json", path], expect)
    last_stdout[0] = r.stdout
    what = "gemmkit " + " ".join(args)
    if not os.path.exists(path):
        failures.append(f"{what}: wrote no {path} (exit {r.returncode}: {r.stderr.strip()})")
        return None
    with open(path) as f:
        document = json.load(f)
    check(document, what)
    os.remove(path)
    return document


def from_stdout(args, expect=(0,)):
    """gemmkit ARGS --json -: standard output is the document and nothing else."""
    r = run([*args, "--json", "-"], expect)
    what = "gemmkit " + " ".join(args) + " --json -"
    try:
        document = json.loads(r.stdout)
    except json.JSONDecodeError as e:
        failures.append(f"{what}: stdout is not one JSON document ({e}): {r.stdout[:200]!r}")
        return None
    check(document, what)
    return document


with tempfile.TemporaryDirectory() as d:
    p = lambda name: os.path.join(d, name)  # noqa: E731
    out = p("out.json")
    for name, rows, cols, seed, dtype in (("A.npy", 6, 5, 1, "f32"), ("B.npy", 5, 4, 2, "f32"),
                                          ("Ai.npy", 6, 5, 1, "i64"), ("Bi.npy", 5, 4, 2, "i64"),
                                          ("X.csv", 3, 4, 3, "f64")):
        run(["gen", str(rows), str(cols), "-o", p(name), "--seed", str(seed), "--dtype", dtype])
    with open(p("G.txt"), "w") as f:
        f.write("a b\nb c\nc a\na c\n")
    with open(p("A.mtx"), "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2\n1 3 1\n2 2 3\n3 1 -1\n")
    with open(p("x.csv"), "w") as f:
        f.write("1\n2\n3\n")
    with open(p("mask.csv"), "w") as f:
        f.write("0.25\n0.5\n0.25\n")
    with open(p("suite.txt"), "w") as f:
        f.write("# A test-only suite.\n8x8x8 # square\n8x4x6 A^T col # transposed\n")

    # multiply
    from_file(["multiply", p("A.npy"), p("B.npy"), "-o", p("C.npy"), "--backend", "cpu"], out)
    from_file(["multiply", p("Ai.npy"), p("Bi.npy"), "-o", p("C.npy"), "--backend", "cpu"], out)
    from_stdout(["multiply", p("A.npy"), p("B.npy"), "-o", p("C.csv"), "--backend", "cpu"])
    # bench: shapes, a suite, and the noisy/spread fields of every row
    bench = from_file(["bench", "--backend", "cpu", "--sizes", "8,12", "--reps", "3", "--warmup", "0",
                       "--kernels", "cpu_naive,cpu_blocked"], out)
    if bench:
        # Every row that ran carries its spread, and the row's flag is its timing's; the table
        # marks as many rows noisy ("%*" after the spread) and says what the mark means.
        for row in bench["rows"]:
            t = row["timing"]
            if t is None or row["noisy"] != t["noisy"] or not t["min_s"] <= t["median_s"] <= t["max_s"]:
                failures.append(f"bench row {row['kernel']} {row['m']}: noisy {row['noisy']}, timing {t}")
        table = last_stdout[0]
        marks, noisy = table.count("%*"), sum(row["noisy"] for row in bench["rows"])
        if marks != noisy or "spread: (max - min) / median" not in table:
            failures.append(f"bench table: {marks} rows marked noisy, {noisy} in the JSON:\n{table}")
    from_stdout(["bench", "--backend", "cpu", "--suite", p("suite.txt"), "--reps", "2", "--warmup", "0",
                 "--kernels", "cpu_naive"])
    # list, list --auto, explain, device
    catalogue = from_stdout(["list"])
    cuda_kernels = bool(catalogue) and any(
        r["backend"] == "cuda" and r["operation"] == "gemm" for r in catalogue["rows"])
    from_file(["list", "--operation", "gemm"], out)
    from_stdout(["list", "--auto", "16x64x64"])
    if cuda_kernels:  # explain shows CUDA kernels (recorded resources without a device)
        from_stdout(["explain", "cuda_tiled16", "--shape", "70x200x64", "--thread", "0,0,1,2", "--recorded"])
        from_file(["explain", "warp_shuffle", "--shape", "100000", "--recorded"], out)
    else:
        print("no CUDA kernels in this build: explain's document is not checked")
    device = from_file(["device"], out, expect=(0, 1))
    have_device = bool(device and device.get("devices"))
    # walks: the counts in the document, or where -o wrote them
    walks = from_file(["walks", p("G.txt"), "--length", "3"], out)
    if walks and walks["answer"]["counts"] is None:
        failures.append("walks --json without -o: no counts in the answer")
    from_file(["walks", p("G.txt"), "--length", "3", "--from", "a", "--to", "c", "--all-lengths"], out)
    walks = from_file(["walks", p("G.txt"), "--length", "2", "-o", p("w.csv")], out)
    if walks and walks["answer"]["output"] != p("w.csv"):
        failures.append(f"walks -o --json: the answer does not say where: {walks['answer']}")
    from_stdout(["walks", p("G.txt"), "--length", "2", "--mode", "float"])
    # Standard output for two outputs is a usage error: one line, exit 2, nothing written.
    r = run(["multiply", p("A.npy"), p("B.npy"), "-o", "-", "--json", "-"], expect=(2,))
    if r.stdout or r.stderr.count("\n") != 1 or "standard output" not in r.stderr:
        failures.append(f"multiply -o - --json -: {r.stdout[:100]!r} on stdout, {r.stderr!r} on stderr")
    # reduce, spmv, conv1d
    from_file(["reduce", p("X.csv"), "--backend", "cpu"], out)
    from_stdout(["reduce", p("X.csv"), "--op", "max", "--backend", "cpu"])
    from_file(["spmv", p("A.mtx"), p("x.csv"), "--backend", "cpu", "-o", p("y.csv")], out)
    from_file(["conv1d", p("x.csv"), p("mask.csv"), "--backend", "cpu", "-o", p("y.csv")], out)
    if have_device:
        from_file(["reduce", "--bench", "--n", "100000", "--reps", "3", "--warmup", "1"], out)
        from_file(["spmv", "--bench", "--rows", "1000", "--reps", "3", "--warmup", "1"], out)
        from_file(["conv1d", "--bench", "--n", "100000", "--reps", "3", "--warmup", "1"], out)
    else:
        print("no CUDA device: the --bench documents of reduce, spmv and conv1d are not checked")

    # The validator is not one that accepts anything: documents made wrong on purpose fail.
    if bench:
        wrong = []
        w = copy.deepcopy(bench); del w["meta"]["commit"]; wrong.append(("no meta.commit", w))
        w = copy.deepcopy(bench); w["command"] = "frobnicate"; wrong.append(("unknown command", w))
        w = copy.deepcopy(bench); w["rows"][0]["median_ms"] = "fast"; wrong.append(("a string median", w))
        w = copy.deepcopy(bench); del w["rows"]; wrong.append(("no rows", w))
        for what, document in wrong:
            if validator.is_valid(document):
                failures.append(f"the schema accepts a bench document with {what}")

unchecked = set() if cuda_kernels else {"explain"}
missing = [c for c in schema["properties"]["command"]["enum"] if c not in checked and c not in unchecked]
if missing:
    failures.append(f"no document of {', '.join(missing)} was checked")
print(f"{sum(len(v) for v in checked.values())} documents of {len(checked)} subcommands valid")
if failures:
    print("\n".join(["FAILED:"] + failures), file=sys.stderr)
    sys.exit(1)
