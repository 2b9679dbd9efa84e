#!/usr/bin/env python3
"""gemmkit.matmul on torch tensors against the same kernel called from C++ and torch.matmul.

1. bf16 N^3 (default 8192), for each kernel of --kernels (default: auto's choice and rung
   19, cuda_wgmma_ws): GPU time per call under CUDA events on torch's current stream,
   for gemmkit.matmul(a, b) (a new result each call), gemmkit.matmul(a, b, c=c), the same
   gemm() call in a C++ loop on the same tensors and stream (gemmkit._gemmkit.gemm_time,
   the library's time_on_stream), and torch.matmul(a, b). Rounds alternate the methods so
   that clock drift favours none; medians over all rounds.
2. Per-call overhead at 64^3 (bf16 and f32): host time per call in bursts of back-to-back
   calls (the GPU drained between bursts, outside the timing, so a full launch queue never
   stalls the host): gemmkit.matmul (new result, and c=), the same call in the C++ loop,
   torch.matmul; overhead = gemmkit.matmul's time per call - the C++ loop's. Also the Python
   layer alone (gemmkit.matmul with its C++ call replaced by a no-op).

Writes a JSON file (gemmkit.versions(), the device, torch's version, every figure) and prints
a table. Run from the repository root with the package importable:
    python3 bench/python/matmul_torch.py --json OUT/matmul_torch.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import time

import torch

import gemmkit
from gemmkit import _gemmkit
from gemmkit._arrays import view


def problem_args(a, b, c, dtype: str):
    """The row-major problem of C = A B for C-contiguous 2-D tensors, as _gemmkit takes it."""
    m, k = a.shape
    n = b.shape[1]
    return (dtype, "", False, False, m, n, k, 1.0, a.data_ptr(), k, b.data_ptr(), n, 0.0,
            c.data_ptr(), n, 1, 0, 0, 0)


def event_times(fn, reps: int) -> list:
    """GPU milliseconds of each of `reps` calls of fn, under events on torch's current stream."""
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
             for _ in range(reps)]
    for start, stop in pairs:
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(stop) for start, stop in pairs]


def host_per_call_us(fn, calls: int, burst: int) -> float:
    """Host microseconds per call of fn, timed in bursts of `burst` back-to-back calls with the
    GPU drained between bursts (outside the timing), so that a full launch queue never makes
    the host wait for the GPU: the host's own cost of a call."""
    total = 0.0
    for _ in range(max(1, calls // burst)):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(burst):
            fn()
        total += time.perf_counter() - start
    torch.cuda.synchronize()
    return total / (max(1, calls // burst) * burst) * 1e6


def large(n: int, rounds: int, reps: int, warmup: int, kernel: str) -> dict:
    torch.manual_seed(0)
    a = torch.randn(n, n, device="cuda").bfloat16()
    b = torch.randn(n, n, device="cuda").bfloat16()
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    context = gemmkit.default_context(0)
    stream = torch.cuda.current_stream().cuda_stream
    args = problem_args(a, b, c, "bf16")

    def cpp(count: int, each: bool = True):
        return _gemmkit.gemm_time(context, *args, kernel, stream, 0, count, each)

    methods = {
        "gemmkit.matmul(a, b)": lambda: event_times(lambda: gemmkit.matmul(a, b, kernel=kernel), reps),
        "gemmkit.matmul(a, b, c=c)": lambda: event_times(lambda: gemmkit.matmul(a, b, c=c, kernel=kernel), reps),
        "C++ gemm() loop": lambda: [s * 1e3 for s in cpp(reps)[0]],
        "torch.matmul(a, b)": lambda: event_times(lambda: torch.matmul(a, b), reps),
    }
    for fn in methods.values():  # warm-up: clocks, cuBLAS handles, workspaces, allocator
        for _ in range(max(1, warmup // reps + 1)):
            fn()
    times = {name: [] for name in methods}
    for r in range(rounds):
        order = list(methods) if r % 2 == 0 else list(reversed(methods))
        for name in order:
            times[name].extend(methods[name]())
    kernel_ran = cpp(1)[2]
    # Agreement: gemmkit against torch (bf16 results; both sum in f32).
    got = gemmkit.matmul(a[:1024], b).float()
    want = torch.matmul(a[:1024].float(), b.float())
    error = float(torch.linalg.norm(got - want) / torch.linalg.norm(want))
    flops = 2.0 * n ** 3
    rows = {}
    for name, ms in times.items():
        median = statistics.median(ms)
        rows[name] = {"median_ms": median, "mean_ms": statistics.fmean(ms), "min_ms": min(ms),
                      "runs": len(ms), "tflops": flops / (median * 1e-3) / 1e12}
    reference = rows["C++ gemm() loop"]["median_ms"]
    for row in rows.values():
        row["vs_cpp"] = row["median_ms"] / reference
    return {"n": n, "dtype": "bf16", "kernel": kernel_ran, "rel_error_vs_torch_f32": error,
            "methods": rows}


def overhead(n: int, dtype: str, calls: int, burst: int, kernel: str, profile: bool) -> dict:
    torch_dtype = {"bf16": torch.bfloat16, "f32": torch.float32, "f16": torch.float16}[dtype]
    a = torch.randn(n, n, device="cuda").to(torch_dtype)
    b = torch.randn(n, n, device="cuda").to(torch_dtype)
    c = torch.empty(n, n, device="cuda", dtype=torch_dtype)
    context = gemmkit.default_context(0)
    stream = torch.cuda.current_stream().cuda_stream
    args = problem_args(a, b, c, dtype)
    matmul = gemmkit.matmul
    gemm_time = _gemmkit.gemm_time

    def cpp_bursts() -> float:
        host = 0.0
        for _ in range(max(1, calls // burst)):
            torch.cuda.synchronize()
            host += gemm_time(context, *args, kernel, stream, 0, burst, False)[1]
        return host / (max(1, calls // burst) * burst) * 1e6

    def python_layer() -> float:
        # gemmkit.matmul with the C++ call replaced by a no-op: the Python layer's own cost.
        real = gemmkit._matmul._gemm
        gemmkit._matmul._gemm = lambda *args: "none"
        try:
            return _time_us(lambda: matmul(a, b), calls)
        finally:
            gemmkit._matmul._gemm = real

    def python_layer_c() -> float:
        real = gemmkit._matmul._gemm
        gemmkit._matmul._gemm = lambda *args: "none"
        try:
            return _time_us(lambda: matmul(a, b, c=c), calls)
        finally:
            gemmkit._matmul._gemm = real

    methods = {
        "gemmkit.matmul(a, b)": lambda: host_per_call_us(lambda: matmul(a, b, kernel=kernel), calls, burst),
        "gemmkit.matmul(a, b, c=c)": lambda: host_per_call_us(lambda: matmul(a, b, c=c, kernel=kernel), calls, burst),
        "C++ gemm() loop": cpp_bursts,
        "torch.matmul(a, b)": lambda: host_per_call_us(lambda: torch.matmul(a, b), calls, burst),
        "torch.matmul(a, b, out=c)": lambda: host_per_call_us(lambda: torch.matmul(a, b, out=c), calls, burst),
        "Python layer alone (no C++ call)": python_layer,
        "Python layer alone, c=c": python_layer_c,
    }
    for fn in methods.values():
        fn()
    results = {name: [] for name in methods}
    for r in range(5):
        for name in (methods if r % 2 == 0 else reversed(list(methods))):
            results[name].append(methods[name]())
    rows = {name: {"host_us_per_call": statistics.median(v), "runs_us": v} for name, v in results.items()}
    cpp = rows["C++ gemm() loop"]["host_us_per_call"]
    for name, row in rows.items():
        row["overhead_us"] = row["host_us_per_call"] - cpp if not name.startswith("Python layer") else row["host_us_per_call"]
    # The GPU's time per call in a long back-to-back loop (whether the loops above were
    # host-bound), and what a call's pieces cost on the host.
    gpu_seconds, _, ran = gemm_time(context, *args, kernel, stream, 10, 2000, False)
    va = view(a)
    pieces = {
        "view(a)": _time_us(lambda: view(a)),
        "current_stream": _time_us(lambda: gemmkit._arrays.current_stream(va)),
        "a.new_empty": _time_us(lambda: a.new_empty((n, n))),
        "torch.empty": _time_us(lambda: torch.empty((n, n), dtype=torch_dtype, device=a.device)),
    }
    result = {"n": n, "dtype": dtype, "calls": calls, "burst": burst, "kernel": ran,
              "gpu_us_per_call_cpp_loop": gpu_seconds[0] / 2000 * 1e6, "methods": rows,
              "pieces_us": pieces}
    if profile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(5000):
            matmul(a, b)
        profiler.disable()
        torch.cuda.synchronize()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(14)
        result["profile"] = text.getvalue()
    return result


def _time_us(fn, count: int = 20000) -> float:
    start = time.perf_counter()
    for _ in range(count):
        fn()
    return (time.perf_counter() - start) / count * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=8192, help="the large bf16 problem's size")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--reps", type=int, default=10, help="calls per method per round")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--small", type=int, default=64, help="the overhead problem's size")
    parser.add_argument("--calls", type=int, default=10000, help="calls per overhead measurement")
    parser.add_argument("--burst", type=int, default=100, help="back-to-back calls between waits for the GPU")
    parser.add_argument("--profile", action="store_true", help="also profile gemmkit.matmul's Python layer")
    parser.add_argument("--kernels", default="auto,cuda_wgmma_ws",
                        help="comma-separated kernels for the large problem (each beside C++ and torch)")
    parser.add_argument("--small-kernel", default="auto", help="the kernel of the overhead problems")
    parser.add_argument("--json", default="matmul_torch.json")
    args = parser.parse_args()
    if not torch.cuda.is_available() or not gemmkit.cuda_available():
        print("matmul_torch: needs torch with CUDA and a gemmkit build with CUDA", file=sys.stderr)
        return 2

    report = {
        "benchmark": "bench/python/matmul_torch.py",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": gemmkit.versions(),
        "device": {k: v for k, v in gemmkit.device(0).items()},
        "torch": torch.__version__,
        "python": platform.python_version(),
        "large": [large(args.n, args.rounds, args.reps, args.warmup, kernel)
                  for kernel in args.kernels.split(",")],
        "overhead": [overhead(args.small, d, args.calls, args.burst, args.small_kernel, args.profile)
                     for d in ("bf16", "f32")],
    }
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)

    print(f"\n{report['device']['name']}, gemmkit {report['versions'].get('gemmkit')}, torch {torch.__version__}")
    for big in report["large"]:
        print(f"bf16 {big['n']}^3, kernel {big['kernel']} (rel. error vs torch in f32: {big['rel_error_vs_torch_f32']:.2e})")
        print(f"  {'method':30} {'median ms':>10} {'TFLOP/s':>8} {'vs C++':>8}")
        for name, row in big["methods"].items():
            print(f"  {name:30} {row['median_ms']:10.3f} {row['tflops']:8.1f} {row['vs_cpp']:8.4f}")
    for result in report["overhead"]:
        print(f"{result['dtype']} {result['n']}^3 host time per call (bursts of {result['burst']} calls), "
              f"kernel {result['kernel']}, GPU {result['gpu_us_per_call_cpp_loop']:.2f} us per call")
        print(f"  {'method':34} {'us/call':>8} {'- C++':>8}")
        for name, row in result["methods"].items():
            print(f"  {name:34} {row['host_us_per_call']:8.2f} {row['overhead_us']:8.2f}")
        print("  pieces (us): " + ", ".join(f"{k} {v:.2f}" for k, v in result["pieces_us"].items()))
        if "profile" in result:
            print(result["profile"])
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
