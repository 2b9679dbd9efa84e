"""`mpirun -np 4 gemmkit multiply ... --distributed` against the single-process command:
integer results byte for byte, floats within the f64/f32 reference tolerance (relative
Frobenius error; the tolerances of src/ops/gemm/verify/verify.cpp for these K), .npy inputs read in
parallel (C and Fortran order) and other inputs scattered from rank 0; and a bad input on rank
0 gives one error line naming the rank, exit 2 from mpirun, and no output file.
`walks --distributed` against the single-process `walks`: the output files byte for byte.
`bench --distributed`: its JSON rows and fields. With a working folder per rank, where one
rank's input is missing, malformed or of another shape: no hang (each run under a hard
timeout), the same exit status on every rank, one error line naming that rank, and no output
or temporary file left in any folder.

    cli_distributed.py GEMMKIT MPIEXEC
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np

gemmkit, mpiexec = os.path.abspath(sys.argv[1]), sys.argv[2]
failures = []


def run(args, np_=None, cwd=None):
    command = ([mpiexec, "-q", "--oversubscribe", "-np", str(np_)] if np_ else []) + [gemmkit] + args
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True)


def check(condition, what, result=None):
    if not condition:
        detail = f"\n  stdout: {result.stdout!r}\n  stderr: {result.stderr!r}" if result else ""
        failures.append(what + detail)
        print("FAIL:", what + detail)


with tempfile.TemporaryDirectory() as work:
    os.chdir(work)

    def gen(name, rows, cols, dtype, seed, dist=None):
        args = ["gen", str(rows), str(cols), "--dtype", dtype, "--seed", str(seed), "-o", name]
        if dist:
            args += ["--dist", dist]
        r = run(args)
        assert r.returncode == 0, r.stderr

    # Odd shapes, blocks that divide none of them, every grid of 4 processes.
    gen("a32.npy", 37, 41, "i32", 1, "ints:-1000:1000")
    gen("b32.npy", 41, 53, "i32", 2, "ints:-1000:1000")
    gen("a64.npy", 37, 41, "i64", 3)
    gen("b64.npy", 41, 53, "i64", 4)
    gen("c64.npy", 37, 53, "i64", 5)
    gen("af.npy", 37, 41, "f64", 6, "normal")
    gen("bf.npy", 41, 53, "f64", 7, "normal")
    gen("cf.npy", 37, 53, "f64", 8, "normal")
    gen("as.npy", 41, 37, "f32", 9)  # stored transposed: op(A) = A^T is 37 x 41
    gen("bs.npy", 41, 53, "f32", 10)
    np.save("af_fortran.npy", np.asfortranarray(np.load("af.npy")))  # read in parallel column by column
    np.save("bf_t.npy", np.load("bf.npy").T.copy())  # B stored transposed, 53 x 41
    gen("b32.csv", 41, 53, "i32", 2, "ints:-1000:1000")  # not .npy: scattered from rank 0

    cases = [
        ("i32", ["a32.npy", "b32.npy"], [], "1x4", 5),
        ("i64 beta", ["a64.npy", "b64.npy", "--c", "c64.npy", "--alpha", "3", "--beta", "-2"], [], "2x2", 7),
        ("i64 auto grid", ["a64.npy", "b64.npy"], [], None, 64),
        ("f64 beta", ["af.npy", "bf.npy", "--c", "cf.npy", "--alpha", "1.5", "--beta", "0.5"], [], "4x1", 6),
        ("f32 A^T", ["as.npy", "bs.npy", "--transpose-a"], [], "2x2", 9),
        ("f64 Fortran order, B^T", ["af_fortran.npy", "bf_t.npy", "--transpose-b"], [], "1x4", 10),
        ("f64 unverified", ["af.npy", "bf.npy"], ["--verify", "none"], "2x2", 8),
        ("i32 from .csv", ["a32.npy", "b32.csv"], [], "2x2", 3),
    ]
    for name, operands, extra, grid, block in cases:
        single = run(["multiply"] + operands + ["-o", "single.npy"] + extra)
        check(single.returncode == 0, f"{name}: single-process multiply failed", single)
        options = ["--distributed", "--block", str(block)] + (["--grid", grid] if grid else [])
        many = run(["multiply"] + operands + ["-o", "many.npy", "--json", "many.json"] + extra + options, np_=4)
        check(many.returncode == 0, f"{name}: distributed multiply failed", many)
        if single.returncode or many.returncode:
            continue
        # Rank 0 alone prints: one result line and one verification line.
        lines = many.stdout.splitlines()
        check(len(lines) == 2 and "summa(" in lines[0] and lines[1].startswith(("verified", "not verified (--verify none)")),
              f"{name}: output is not rank 0's two lines", many)
        check(many.stderr == "", f"{name}: something on stderr", many)
        x, y = np.load("single.npy"), np.load("many.npy")
        check(x.dtype == y.dtype and x.shape == y.shape, f"{name}: {y.dtype}{y.shape} vs {x.dtype}{x.shape}")
        if x.dtype.kind == "i":
            with open("single.npy", "rb") as f1, open("many.npy", "rb") as f2:
                check(f1.read() == f2.read(), f"{name}: the files differ")
        else:
            tol = 1e-12 if x.dtype == np.float64 else 2e-5
            error = np.linalg.norm(x.astype(np.float64) - y) / np.linalg.norm(x.astype(np.float64))
            check(error <= tol, f"{name}: relative error {error} > {tol}")
        report = json.load(open("many.json"))
        check(report["distributed"]["processes"] == 4 and report["verify"]["passed"], f"{name}: report {report}")
        parallel = all(x.endswith(".npy") for x in operands if x.endswith((".npy", ".csv")))
        check(report["distributed"]["parallel_read"] == parallel, f"{name}: parallel_read is not {parallel}")
        # Floats unverified: nothing whole on rank 0, C written in parallel.
        unverified = "none" in extra
        check(report["distributed"]["parallel_write"] == unverified, f"{name}: parallel_write is not {unverified}")
        os.remove("many.npy")

    # A bad input file on rank 0: one line naming the rank, exit 2, nothing written, and an
    # existing output left as it was.
    with open("bad.npy", "w") as f:
        f.write("not a matrix\n")
    with open("keep.npy", "w") as f:
        f.write("keep\n")
    before = sorted(os.listdir("."))
    for target in ["new.npy", "keep.npy"]:
        r = run(["multiply", "bad.npy", "b64.npy", "-o", target, "--distributed"], np_=4)
        check(r.returncode == 2, f"bad input: exit {r.returncode}, not 2", r)
        errors = r.stderr.splitlines()
        check(len(errors) == 1 and errors[0].startswith("gemmkit: error: rank 0: 'bad.npy'"),
              "bad input: not one error line naming rank 0 and the file", r)
        check(r.stdout == "", "bad input: something on stdout", r)
    check(sorted(os.listdir(".")) == before, f"bad input: files changed: {sorted(os.listdir('.'))}")
    check(open("keep.npy").read() == "keep\n", "bad input: the existing output was changed")

    # A grid that does not match the processes; a usage error before any reading.
    r = run(["multiply", "a64.npy", "b64.npy", "-o", "g.npy", "--distributed", "--grid", "3x3"], np_=4)
    check(r.returncode == 2 and r.stderr == "gemmkit: error: rank 0: grid 3x3 needs 9 processes, but there are 4\n",
          "wrong grid", r)
    # Shapes that do not match: the single-process message, from rank 0.
    r = run(["multiply", "a64.npy", "a64.npy", "-o", "s.npy", "--distributed"], np_=4)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "rank 0: shape mismatch" in r.stderr, "shape mismatch", r)
    check(not os.path.exists("g.npy") and not os.path.exists("s.npy"), "a failed run wrote its output")

    # --backend cuda: integers are refused on rank 0 (usage); without a GPU (CI) every rank
    # stops at the device with one line and exit 1 (or exit 2 in a build without NCCL).
    r = run(["multiply", "a64.npy", "b64.npy", "-o", "d.npy", "--distributed", "--backend", "cuda"], np_=2)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "f64, f32, f16 or bf16 with --backend cuda" in r.stderr,
          "--backend cuda with i64", r)
    has_gpu = run(["device"]).returncode == 0
    if not has_gpu:
        r = run(["multiply", "af.npy", "bf.npy", "-o", "d.npy", "--distributed", "--backend", "cuda"], np_=2)
        check(r.returncode in (1, 2) and r.stderr.count("\n") == 1 and r.stderr.startswith("gemmkit: error: rank 0: "),
              "--backend cuda without a GPU", r)
    check(not os.path.exists("d.npy"), "a failed --backend cuda run wrote its output")

    # The Ozaki emulation (--kernel cuda_ozaki_f64, _f32) spreads its moduli over one GPU per
    # process, not blocks over a grid: --grid, --backend cpu and a dtype the kernel does not take
    # are usage errors from rank 0 (a build without CUDA has no such kernel: an unknown name);
    # without a GPU (CI) every rank stops at the device, one line. With one, one process gives
    # the single-process command's C, byte for byte.
    cuda_built = json.loads(run(["device", "--json", "-"]).stdout or "{}").get("cuda_build", False)
    ozaki = ["--distributed", "--kernel", "cuda_ozaki_f64"]
    unknown = "unknown kernel 'cuda_ozaki_f64'"
    for args, says in [(["af.npy", "bf.npy", "-o", "z.npy", "--grid", "1x2"], "spreads its moduli over all the processes"),
                       (["af.npy", "bf.npy", "-o", "z.npy", "--backend", "cpu"], "runs on the cuda backend"),
                       (["a64.npy", "b64.npy", "-o", "z.npy"], "cuda_ozaki_f64 does not take dtype i64")]:
        says = says if cuda_built else unknown
        r = run(["multiply"] + args + ozaki, np_=2)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("gemmkit: error: rank 0: ")
              and says in r.stderr, "Ozaki --distributed: " + says, r)
    # SUMMA's local kernels take no moduli: the library's words say which kernels do.
    r = run(["multiply", "af.npy", "bf.npy", "-o", "z.npy", "--distributed", "--kernel", "cpu_blocked", "--moduli", "12"],
            np_=2)
    check(r.returncode == 2 and r.stderr.startswith("gemmkit: error: rank 0: moduli 12 is ")
          and "; not for cpu_blocked" in r.stderr, "--moduli with SUMMA", r)
    if not has_gpu:
        r = run(["multiply", "af.npy", "bf.npy", "-o", "z.npy"] + ozaki, np_=2)
        check(r.returncode in (1, 2) and r.stderr.count("\n") == 1 and r.stderr.startswith("gemmkit: error: rank 0: "),
              "Ozaki --distributed without a GPU", r)
    else:
        r = run(["multiply", "af.npy", "bf.npy", "-o", "z.npy", "--alpha", "2", "--beta", "-1", "--c", "cf.npy",
                 "--json", "z.json"] + ozaki, np_=1)
        check(r.returncode == 0 and "moduli over 1 processes" in r.stdout and "ozaki: " in r.stdout,
              "Ozaki --distributed on one GPU", r)
        r1 = run(["multiply", "af.npy", "bf.npy", "-o", "z1.npy", "--alpha", "2", "--beta", "-1", "--c", "cf.npy",
                  "--kernel", "cuda_ozaki_f64"])
        check(r1.returncode == 0 and open("z.npy", "rb").read() == open("z1.npy", "rb").read(),
              "Ozaki --distributed wrote another C than the single-process command", r1)
        with open("z.json") as f:
            report = json.load(f)
        check(report["distributed"]["spread"] == "moduli" and report["ozaki"]["moduli"] > 0,
              "Ozaki --distributed's JSON")
    check(not os.path.exists("z.npy") or has_gpu, "a failed Ozaki run wrote its output")

    # walks --distributed: the files of the single-process command, byte for byte (one length,
    # every length, counts needing several 64-bit words), on 4 and 3 processes.
    with open("g.txt", "w") as f:
        rng = np.random.default_rng(5)
        for _ in range(150):
            f.write(f"v{rng.integers(27)} v{rng.integers(27)} {rng.integers(-3, 4)}\n")
    walk_cases = [
        ("length 40 .csv", ["--length", "40"], "csv", 4),
        ("length 7 .npy", ["--length", "7"], "npy", 3),
        ("length 64 .npy (limbs)", ["--length", "64"], "npy", 4),
        ("lengths 1..9 .csv", ["--length", "9", "--all-lengths"], "csv", 4),
        ("lengths 1..30 .npy", ["--length", "30", "--all-lengths"], "npy", 3),
    ]
    for name, options, ext, processes in walk_cases:
        single = run(["walks", "g.txt", "-o", "single." + ext] + options)
        check(single.returncode == 0, f"walks {name}: single-process walks failed", single)
        many = run(["walks", "g.txt", "-o", "many." + ext, "--distributed", "--json", "walks.json"] + options,
                   np_=processes)
        check(many.returncode == 0 and many.stderr == "", f"walks {name}: distributed walks failed", many)
        check(len(many.stdout.splitlines()) == 1 and f"over {processes} processes" in many.stdout,
              f"walks {name}: not rank 0's one line", many)
        if single.returncode == 0 and many.returncode == 0:
            with open("single." + ext, "rb") as f1, open("many." + ext, "rb") as f2:
                check(f1.read() == f2.read(), f"walks {name}: the files differ")
            check(json.load(open("walks.json"))["distributed"] == {"processes": processes}, f"walks {name}: JSON")
    # Printed rather than written: rank 0's table, as the single process prints it.
    single = run(["walks", "g.txt", "--length", "5"])
    many = run(["walks", "g.txt", "--length", "5", "--distributed"], np_=4)
    check(many.returncode == 0 and many.stdout == single.stdout, "walks printed: not the single-process table", many)
    # What it does not offer, and a bad graph: one line naming rank 0, exit 2, nothing written.
    with open("keep.csv", "w") as f:
        f.write("keep\n")
    for options, says in [(["g.txt", "--from", "v1"], "rank 0: --distributed computes the whole exact table"),
                          (["g.txt", "--mode", "float"], "--mode float is not offered"),
                          (["bad.npy"], "rank 0: 'bad.npy'")]:
        r = run(["walks", "--length", "3", "-o", "keep.csv", "--distributed"] + options, np_=4)
        check(r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1 and says in r.stderr,
              f"walks {options}: not one error line with {says!r} and exit 2", r)
    check(open("keep.csv").read() == "keep\n", "walks: a failed run changed its output")

    # bench --distributed: a JSON row per shape with the fields the scaling runs read.
    r = run(["bench", "--distributed", "--sizes", "64,90", "--dtype", "f64", "--grid", "1x4", "--block", "16",
             "--reps", "2", "--json", "bench.json"], np_=4)
    check(r.returncode == 0 and r.stderr == "", "bench --distributed failed", r)
    if r.returncode == 0:
        report = json.load(open("bench.json"))
        rows = report["rows"]
        check([row["m"] for row in rows] == [64, 90] and all(row["n"] == row["k"] == row["m"] for row in rows),
              f"bench: rows {rows}")
        for row in rows:
            check(row["dtype"] == "f64" and row["reps"] == 2 and len(row["seconds"]) == 2 and row["gflops"] > 0
                  and row["median_ms"] >= row["min_ms"] > 0 and row["gflops_per_process"] * 4 == row["gflops"],
                  f"bench: row {row}")
            check(row["distributed"] == {"processes": 4, "grid": "1x4", "block": 16,
                                         "local_kernel": row["distributed"]["local_kernel"]},
                  f"bench: distributed {row['distributed']}")
        check("meta" in report and report["backend"] == "cpu", "bench: no meta or backend")
        check(len(r.stdout.splitlines()) == 5 and r.stdout.splitlines()[-1].startswith("spread: "),
              "bench: not rank 0's header, a line per size and the spread legend", r)
        check(all(row["noisy"] == row["timing"]["noisy"] and row["timing"]["samples"] == 2 for row in rows),
              "bench: the rows' noisy flag and timing", r)
    # --backend cuda: a usage error in a build without NCCL; without a GPU (CI) one line from
    # rank 0 and exit 1 or 2 either way.
    if not has_gpu:
        r = run(["bench", "--distributed", "--backend", "cuda", "--sizes", "64"], np_=2)
        check(r.returncode in (1, 2) and r.stderr.count("\n") == 1 and r.stderr.startswith("gemmkit: error: rank 0: ")
              and r.stdout == "", "bench --backend cuda without a GPU", r)


# ---- one working folder per rank ----------------------------------------------------------
# rank R of `mpirun -np 4` works in ROOT/rankR (a wrapper changes into it); each rank's exit
# status lands in ROOT/statusR, and the wrapper exits 0, since mpirun would end the others as
# soon as one exits with a failure, before they write theirs. A run past its timeout counts as
# hung: its whole process group is ended (mpirun passes SIGTERM on to the ranks).
PER_RANK = 'cd "$0/rank$OMPI_COMM_WORLD_RANK" && "$@"; echo $? > "$0/status$OMPI_COMM_WORLD_RANK"'


def run_per_rank(root, args, np_=4, timeout=60):
    for r in range(np_):
        if os.path.exists(os.path.join(root, f"status{r}")):
            os.remove(os.path.join(root, f"status{r}"))
    command = [mpiexec, "-q", "--oversubscribe", "-np", str(np_), "sh", "-c", PER_RANK, root, gemmkit] + args
    p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
        return subprocess.CompletedProcess(command, None, out, err)
    return subprocess.CompletedProcess(command, p.returncode, out, err)


def rank_statuses(root, np_=4):
    statuses = []
    for r in range(np_):
        path = os.path.join(root, f"status{r}")
        statuses.append(int(open(path).read()) if os.path.exists(path) else None)
    return statuses


def per_rank_folders(files, np_=4):
    """A fresh ROOT with rank0..rank{np-1}, each holding a copy of `files` (names in the
    test's folder); returns ROOT."""
    root = os.path.abspath(tempfile.mkdtemp(dir="."))
    for r in range(np_):
        os.mkdir(os.path.join(root, f"rank{r}"))
        for name in files:
            shutil.copy(name, os.path.join(root, f"rank{r}", name))
    return root


def folder_listing(root, np_=4):
    return [sorted(os.listdir(os.path.join(root, f"rank{r}"))) for r in range(np_)]


def check_agreed_failure(name, root, args, rank, says, status=2):
    """A run that must fail on `rank`: no hang, `status` on every rank, one error line from
    rank 0 naming `rank` and saying `says`, no file added or changed in any folder."""
    before = folder_listing(root)
    kept = open(os.path.join(root, "rank0", "keep.csv"), "rb").read() if os.path.exists(
        os.path.join(root, "rank0", "keep.csv")) else None
    r = run_per_rank(root, args)
    check(r.returncode is not None, f"{name}: hung (killed after the timeout)", r)
    statuses = rank_statuses(root)
    check(statuses == [status] * 4, f"{name}: exit statuses {statuses}, not {status} on every rank", r)
    errors = r.stderr.splitlines()
    says = [says] if isinstance(says, str) else says
    check(len(errors) == 1 and errors[0].startswith(f"gemmkit: error: rank {rank}: ") and
          all(x in errors[0] for x in says), f"{name}: not one error line naming rank {rank} and saying {says!r}", r)
    check(r.stdout == "", f"{name}: something on stdout", r)
    check(folder_listing(root) == before, f"{name}: files changed: {folder_listing(root)} (before: {before})")
    if kept is not None:
        check(open(os.path.join(root, "rank0", "keep.csv"), "rb").read() == kept, f"{name}: keep.csv was changed")


with tempfile.TemporaryDirectory() as work:
    os.chdir(work)
    for name, rows, cols, seed in [("a.npy", 20, 30, 1), ("b.npy", 30, 25, 2)]:
        r = run(["gen", str(rows), str(cols), "--dtype", "f64", "--seed", str(seed), "-o", name])
        assert r.returncode == 0, r.stderr
    with open("keep.csv", "w") as f:
        f.write("keep\n")
    np.save("other.npy", np.ones((20, 31)))  # a.npy's name, another shape
    with open("bad.npy", "w") as f:
        f.write("not a matrix\n")

    # multiply --distributed reads .npy inputs in parallel: every rank opens its own. A missing,
    # malformed or different file on rank 2 (or 1) is an agreed input error, gathered or
    # written in parallel (--verify none), with any block size; an existing output stays.
    root = per_rank_folders(["a.npy", "b.npy", "keep.csv"])
    os.remove(os.path.join(root, "rank2", "a.npy"))
    for extra in [[], ["--block", "1"], ["--verify", "none"]]:
        check_agreed_failure(f"multiply, a.npy missing on rank 2 {extra}", root,
                             ["multiply", "a.npy", "b.npy", "-o", "keep.csv", "--distributed"] + extra, 2,
                             "cannot open 'a.npy'")
        check_agreed_failure(f"multiply, a.npy missing on rank 2, a new output {extra}", root,
                             ["multiply", "a.npy", "b.npy", "-o", "c.npy", "--distributed"] + extra, 2,
                             "cannot open 'a.npy'")
    shutil.copy("other.npy", os.path.join(root, "rank2", "a.npy"))
    check_agreed_failure("multiply, another a.npy on rank 2", root,
                         ["multiply", "a.npy", "b.npy", "-o", "c.npy", "--distributed", "--verify", "none"], 2,
                         ["'a.npy' is 20x31 f64", "here but 20x30 f64", "on rank 0"])
    shutil.copy("a.npy", os.path.join(root, "rank2", "a.npy"))
    shutil.copy("bad.npy", os.path.join(root, "rank1", "b.npy"))
    check_agreed_failure("multiply, a malformed b.npy on rank 1", root,
                         ["multiply", "a.npy", "b.npy", "-o", "c.npy", "--distributed"], 1,
                         "'b.npy' at byte 0: not a .npy file")
    # Every rank sees a copy of the inputs: C is rank 0's output, in rank 0's folder (written
    # in parallel with --verify none: the other ranks reach rank 0's temporary file).
    shutil.copy("b.npy", os.path.join(root, "rank1", "b.npy"))
    expected = np.load("a.npy") @ np.load("b.npy")
    for extra in [[], ["--verify", "none"]]:
        r = run_per_rank(root, ["multiply", "a.npy", "b.npy", "-o", "c.npy", "--distributed", "--json", "c.json"] + extra)
        check(r.returncode == 0 and rank_statuses(root) == [0] * 4, f"multiply, one folder per rank {extra}: failed", r)
        listing = folder_listing(root)
        check(listing[0] == ["a.npy", "b.npy", "c.json", "c.npy", "keep.csv"] and
              all(x == ["a.npy", "b.npy", "keep.csv"] for x in listing[1:]),
              f"multiply, one folder per rank {extra}: files {listing}")
        if r.returncode == 0:
            c = np.load(os.path.join(root, "rank0", "c.npy"))
            check(np.abs(c - expected).max() <= 1e-12 * np.abs(expected).max() * 30,
                  f"multiply, one folder per rank {extra}: C is wrong")
            report = json.load(open(os.path.join(root, "rank0", "c.json")))
            check(report["distributed"]["parallel_write"] == ("none" in extra),
                  f"multiply, one folder per rank {extra}: parallel_write {report['distributed']}")
        for name in ["c.npy", "c.json"]:
            if os.path.exists(os.path.join(root, "rank0", name)):
                os.remove(os.path.join(root, "rank0", name))

    # walks --distributed: rank 0 reads the graph. Missing or malformed there: an agreed error;
    # missing elsewhere: no matter, the table is rank 0's, in its folder.
    with open("g.txt", "w") as f:
        f.write("0 1\n1 2\n2 0\n2 3\n3 0\n")
    single = run(["walks", "g.txt", "--length", "6", "-o", "single.csv"])
    check(single.returncode == 0, "walks: single-process walks failed", single)
    root = per_rank_folders(["g.txt", "keep.csv"])
    walks = ["walks", "g.txt", "--length", "6", "-o", "keep.csv", "--distributed"]
    os.remove(os.path.join(root, "rank0", "g.txt"))
    check_agreed_failure("walks, g.txt missing on rank 0", root, walks, 0, "cannot open 'g.txt'")
    shutil.copy("bad.npy", os.path.join(root, "rank0", "g.txt"))
    check_agreed_failure("walks, a malformed g.txt on rank 0", root, walks, 0, "'g.txt'")
    shutil.copy("g.txt", os.path.join(root, "rank0", "g.txt"))
    os.remove(os.path.join(root, "rank2", "g.txt"))
    r = run_per_rank(root, walks)
    check(r.returncode == 0 and rank_statuses(root) == [0] * 4, "walks, g.txt missing on rank 2 only: failed", r)
    check(open(os.path.join(root, "rank0", "keep.csv")).read() == open("single.csv").read(),
          "walks, g.txt missing on rank 2 only: not the single-process table")

    # bench --distributed reads nothing; its JSON is rank 0's: a folder missing there is an
    # agreed usage error before any timing, and missing elsewhere no matter.
    root = per_rank_folders(["keep.csv"])
    for r_ in range(1, 4):
        os.mkdir(os.path.join(root, f"rank{r_}", "out"))
    bench = ["bench", "--distributed", "--sizes", "24", "--block", "8", "--reps", "1", "--json", "out/b.json"]
    check_agreed_failure("bench, out/ missing on rank 0", root, bench, 0, "'out'", status=2)
    os.mkdir(os.path.join(root, "rank0", "out"))
    os.rmdir(os.path.join(root, "rank2", "out"))
    r = run_per_rank(root, bench)
    check(r.returncode == 0 and rank_statuses(root) == [0] * 4, "bench, out/ missing on rank 2 only: failed", r)
    check(os.listdir(os.path.join(root, "rank0", "out")) == ["b.json"] and
          all(os.listdir(os.path.join(root, f"rank{r_}", "out")) == [] for r_ in (1, 3)),
          "bench, out/ missing on rank 2 only: the JSON is not rank 0's alone")
    os.chdir("/")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("distributed multiply, walks and bench: all checks passed")
