"""``gemmkit.bench(...)``: the library's GEMM benchmark engine, as ``gemmkit bench`` runs it."""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _gemmkit
from ._context import default_context
from ._gemmkit import Context, UsageError

Progress = Callable[[int, int, str, str], None]


class BenchRows(list):
    """The rows of a benchmark (a list of dicts) with the run's facts: ``meta`` (run_meta:
    version, commit, date, host, CPU, GPU, CUDA versions) and ``report`` (backend, dtype,
    percent_of, paired, l2_flushed, all_passed, failed_rows, first_failure)."""

    meta: Dict[str, Any]
    report: Dict[str, Any]


def _shapes(sizes: Optional[Iterable[int]], shapes: Optional[Iterable[Any]],
            backend: str) -> List[Tuple[int, int, int]]:
    if sizes is not None and shapes is not None:
        raise UsageError("give one of sizes= or shapes=")
    if shapes is not None:
        out = []
        for shape in shapes:
            if isinstance(shape, str):  # "MxNxK", as the CLI's --shapes
                parts = shape.lower().split("x")
            else:
                parts = list(shape)
            try:
                m, n, k = (int(p) for p in parts)
            except (TypeError, ValueError):
                raise UsageError(f"shapes: {shape!r} is not (m, n, k) or 'MxNxK'") from None
            if min(m, n, k) < 1:
                raise UsageError(f"shapes: {shape!r} has a size below 1")
            out.append((m, n, k))
        if not out:
            raise UsageError("shapes= is empty")
        return out
    if sizes is None:  # the CLI's defaults
        sizes = [256, 512, 1024] if backend == "cpu" else [256, 512, 1024, 2048, 4096, 8192]
    if isinstance(sizes, int):
        sizes = [sizes]
    out = []
    for s in sizes:
        s = int(s)
        if s < 1:
            raise UsageError(f"sizes: {s} is not a positive integer")
        out.append((s, s, s))
    if not out:
        raise UsageError("sizes= is empty")
    return out


def _stderr_progress(done: int, total: int, kernel: str, shape: str) -> None:
    sys.stderr.write(f"\r[{done}/{total}] {kernel:<24} {shape:<18}   ")
    sys.stderr.flush()


def bench(kernels: Union[str, Sequence[str], None] = None, *,
          sizes: Optional[Iterable[int]] = None, shapes: Optional[Iterable[Any]] = None,
          dtype: str = "f32", transpose_a: bool = False, transpose_b: bool = False,
          layout: str = "row", batch: int = 1, warmup: int = 1, reps: int = 5,
          max_seconds: float = 3.0, max_run_seconds: float = 2.0, seed: int = 1,
          backend: str = "auto", context: Optional[Context] = None,
          progress: Union[bool, Progress, None] = None, as_frame: Optional[bool] = None):
    """Benchmarks GEMM kernels beside the backend's reference, every result verified: the
    engine of ``gemmkit bench`` with the same options.

    kernels: names (a list, or a comma-separated string as the CLI's --kernels); None or
        'all': every kernel of the backend that runs the dtype. The reference always runs
        too, listed first, so every ratio is measured in the same run.
    sizes: square sizes (default 256, 512, 1024 on the CPU; up to 8192 on the GPU), or
        shapes: (m, n, k) tuples or 'MxNxK' strings.
    dtype, transpose_a, transpose_b, layout ('row' or 'col'), batch (a strided batch per
        shape), warmup, reps, max_seconds (per kernel and shape), max_run_seconds (skip a
        kernel predicted slower than this per run), seed: as the CLI's options.
    backend: 'auto' (CUDA when there is a device), 'cpu' or 'cuda'; or context=.
    progress: a callable ``progress(done, total, kernel, shape)`` called before each run,
        True for a line on stderr, False for none; None (default): the line when stderr is
        a terminal, as the CLI does.
    as_frame: None (default): a pandas DataFrame when pandas is importable, else a list;
        True: a DataFrame; False: a list of dicts.

    Returns the rows (columns as ``gemmkit bench --json``'s: kernel, backend, rung,
    reference, dtype, accuracy, m, n, k, batch, skipped, failed, note, reps, median_ms,
    min_ms, max_ms, noisy, noisy_reason, gflops, percent_of_reference, percent_of_copy,
    paired_reference_median_ms, error, error_method, tolerance, tolerance_dtype, passed, check,
    detail). The run's meta and report are its
    attributes: ``rows.attrs['meta']`` / ``rows.attrs['report']`` on a DataFrame,
    ``rows.meta`` / ``rows.report`` on the list. The engine runs without the GIL; a row that
    failed says so (``failed``, ``note``) rather than raising.
    """
    if context is None:
        if backend == "auto":
            backend = "cuda" if _gemmkit.cuda_compiled and _gemmkit.devices()[0] else "cpu"
        if backend not in ("cpu", "cuda"):
            raise UsageError(f"unknown backend {backend!r} (known: auto, cpu, cuda)")
        context = default_context(0 if backend == "cuda" else None)
    elif backend not in ("auto", context.backend):
        raise UsageError(f"backend={backend!r} but the context is a {context.backend} one")
    if kernels is None or kernels == "all":
        names: List[str] = []
    elif isinstance(kernels, str):
        names = [k for k in kernels.split(",") if k]
    else:
        names = list(kernels)
    if int(seed) < 0:
        raise UsageError(f"seed: {seed} is not a non-negative integer")
    if progress is None:  # as the CLI: a progress line when stderr is a terminal
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    callback = _stderr_progress if progress is True else (progress or None)
    out = _gemmkit.run_gemm_bench(
        context, names, _shapes(sizes, shapes, context.backend), dtype, transpose_a,
        transpose_b, layout, int(batch), int(warmup), int(reps), float(max_seconds),
        float(max_run_seconds), int(seed), callback)
    if progress is True:
        sys.stderr.write("\r" + " " * 80 + "\r")
    rows = out.pop("rows")
    meta = out.pop("meta")
    if as_frame is None:
        try:
            import pandas  # noqa: F401
            as_frame = True
        except ImportError:
            as_frame = False
    if as_frame:
        import pandas

        frame = pandas.DataFrame(rows)
        frame.attrs["meta"] = meta
        frame.attrs["report"] = out
        return frame
    result = BenchRows(rows)
    result.meta = meta
    result.report = out
    return result
