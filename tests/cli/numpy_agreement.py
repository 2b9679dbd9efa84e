#!/usr/bin/env python3
"""gemmkit gen + multiply against numpy's A @ B, through every file format.

Usage: numpy_agreement.py PATH/TO/gemmkit. Exits 77 (skipped) without numpy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

gemmkit = sys.argv[1]


def run(*args):
    subprocess.run([gemmkit, *args], check=True, stdout=subprocess.DEVNULL)


def load(path):
    if path.endswith(".npy"):
        return np.load(path)
    if path.endswith(".mtx"):
        with open(path) as f:
            lines = [l for l in f if not l.startswith("%")]
        rows, cols = map(int, lines[0].split())
        values = np.array([float(l) for l in lines[1:]])
        return values.reshape(cols, rows).T  # array format is column-major
    return np.loadtxt(path, delimiter=",", ndmin=2)


failures = 0
with tempfile.TemporaryDirectory() as d:
    for ext in (".npy", ".mtx", ".csv"):
        a, b, c = (os.path.join(d, n + ext) for n in "ABC")
        run("gen", "300", "200", "-o", a, "--seed", "1")
        run("gen", "200", "100", "-o", b, "--seed", "2")
        run("multiply", a, b, "-o", c)
        A, B, C = load(a), load(b), load(c)
        if ext == ".npy":
            assert A.dtype == np.float32 and C.dtype == np.float32, (A.dtype, C.dtype)
        expected = A.astype(np.float64) @ B.astype(np.float64)
        err = np.linalg.norm(C - expected) / np.linalg.norm(expected)
        ok = C.shape == (300, 100) and err < 1e-5
        print(f"{ext}: shape {C.shape}, relative error vs numpy {err:.2e}: {'ok' if ok else 'FAIL'}")
        failures += not ok
    for dtype, dist in (("f64", "uniform"), ("i64", "ints:-50:50")):
        a, b, c = (os.path.join(d, n + "_" + dtype + ".npy") for n in "ABC")
        run("gen", "40", "30", "-o", a, "--seed", "3", "--dtype", dtype, "--dist", dist)
        run("gen", "30", "20", "-o", b, "--seed", "4", "--dtype", dtype, "--dist", dist)
        run("multiply", a, b, "-o", c)
        A, B, C = np.load(a), np.load(b), np.load(c)
        ok = C.dtype == A.dtype and (np.array_equal(C, A @ B) if dtype == "i64"
                                     else np.allclose(C, A @ B, rtol=1e-12, atol=1e-12))
        print(f"{dtype}: dtype {C.dtype}: {'ok' if ok else 'FAIL'}")
        failures += not ok
    # f16 and bf16 files: numpy reads <f2 as float16; bfloat16 arrives as a 2-byte void,
    # the upper halves of float32s. C holds the inputs' dtype, or f32 with --out-dtype f32.
    def widen(x):
        if x.dtype == np.float16 or x.dtype == np.float32:
            return x.astype(np.float64)
        assert x.dtype.itemsize == 2 and x.dtype.kind == "V", x.dtype
        return (x.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    for dtype, out, expected_dtype, rtol in (("f16", None, np.float16, 2e-3),
                                             ("bf16", None, np.dtype("V2"), 1e-2),
                                             ("bf16", "f32", np.float32, 1e-5)):
        a, b, c = (os.path.join(d, n + "_" + dtype + ".npy") for n in "ABC")
        run("gen", "70", "50", "-o", a, "--seed", "5", "--dtype", dtype)
        run("gen", "50", "30", "-o", b, "--seed", "6", "--dtype", dtype)
        run("multiply", a, b, "-o", c, *(["--out-dtype", out] if out else []))
        A, B, C = (widen(np.load(x)) for x in (a, b, c))
        expected = A @ B
        err = np.linalg.norm(C - expected) / np.linalg.norm(expected)
        ok = np.load(c).dtype == expected_dtype and err < rtol
        print(f"{dtype} -> {out or dtype}: dtype {np.load(c).dtype}, relative error {err:.2e}: "
              f"{'ok' if ok else 'FAIL'}")
        failures += not ok
sys.exit(1 if failures else 0)
