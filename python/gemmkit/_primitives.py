"""reduce, spmv and conv1d: numpy in, numpy out.

Host arrays run on the CPU backend by default (the library's CPU reference: sums in long
double, rounded once), or on the GPU with copies when ``backend='cuda'``. Only the
operations' dtypes are accepted (float32 and float64); anything else is refused with the
library's message. ``kernel=`` is any name of ``gemmkit.kernels(operation)`` or 'auto'.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _gemmkit
from ._context import resolve_context
from ._gemmkit import Context, UsageError

_BACKENDS = (None, "auto", "cpu", "cuda")


def _dtype_name(dtype: np.dtype) -> str:
    """The library's name of a numpy dtype (the library refuses those it does not run)."""
    return {"float32": "f32", "float64": "f64"}.get(dtype.name, dtype.name)


def _host_context(backend: Optional[str], context: Optional[Context]) -> Context:
    """The context host arrays run in: the CPU's unless the GPU is asked for."""
    if backend not in _BACKENDS:
        raise UsageError(f"unknown backend {backend!r} (known: auto, cpu, cuda)")
    if context is not None:
        if backend in ("cpu", "cuda") and context.backend != backend:
            raise UsageError(f"backend={backend!r} but the context is a {context.backend} one")
        return context
    if backend == "cuda":
        return resolve_context(None, 0)
    return resolve_context(None, None)


def _host_vector(x: Any, dtype: Optional[np.dtype] = None) -> np.ndarray:
    array = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    return np.ascontiguousarray(array)


def reduce(x: Any, op: str = "sum", *, kernel: str = "auto", backend: Optional[str] = None,
           context: Optional[Context] = None):
    """One of sum, min, max or norm2 over every value of ``x`` (float32 or float64).

    Semantics as the library's (gemmkit/reduce.hpp), on every backend and kernel: sum is the
    IEEE sum (empty: 0); min and max propagate NaN (empty: +inf and -inf); norm2 of float32
    accumulates in double. Returns a numpy scalar of x's dtype.

    backend: None or 'cpu' for the CPU reference on host arrays, 'cuda' to copy to the GPU
    and run ``kernel`` there ('auto': the fastest rung). context: a :class:`gemmkit.Context`
    to run in (default: the shared one of the backend).
    """
    array = _host_vector(x).reshape(-1)
    ctx = _host_context(backend, context)
    dtype = _dtype_name(array.dtype)
    if ctx.backend == "cuda":
        value = _gemmkit.reduce_host(ctx, dtype, op, array.ctypes.data, array.size, kernel)
        return array.dtype.type(value)
    out = np.empty(1, dtype=array.dtype)
    _gemmkit.reduce(ctx, dtype, op, array.ctypes.data, array.size, out.ctypes.data, 0, kernel)
    return out[0]


def _csr_parts(a: Any) -> Tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, indptr, indices int32, data) of a CSR matrix in canonical form (sorted
    column indices, no duplicates), copying only when the matrix is not already."""
    if not hasattr(a, "tocsr"):
        raise UsageError(f"spmv: the matrix must be a scipy sparse matrix (anything with "
                         f".tocsr()), not {type(a).__name__}")
    csr = a.tocsr()
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()  # also sorts the indices
    rows, cols = (int(s) for s in csr.shape)
    if cols > 2**31 - 1:
        raise UsageError(f"spmv: {cols} columns; column indices are 32-bit (at most 2^31 - 1)")
    indices = np.ascontiguousarray(csr.indices, dtype=np.int32)
    return rows, cols, np.ascontiguousarray(csr.indptr), indices, np.ascontiguousarray(csr.data)


def spmv(a: Any, x: Any, *, kernel: str = "auto", dtype: Any = None,
         backend: Optional[str] = None, context: Optional[Context] = None) -> np.ndarray:
    """y = A x: ``a`` a scipy sparse matrix (anything with ``.tocsr()``; made canonical:
    sorted indices, duplicates summed), ``x`` a vector of ``a.shape[1]`` values.

    dtype: float32 or float64 (numpy dtype or 'f32'/'f64'); both operands are converted to
    it. None: their own, which must agree and be float32 or float64. The CPU backend sums
    each row in long double and rounds once. backend/context as for :func:`reduce`; kernel
    any spmv kernel of ``gemmkit.kernels('spmv')`` or 'auto'. Returns y (numpy, a.shape[0]
    values).
    """
    rows, cols, indptr, indices, data = _csr_parts(a)
    if dtype is not None:
        target = np.dtype({"f32": "float32", "f64": "float64"}.get(dtype, dtype)) \
            if isinstance(dtype, str) else np.dtype(dtype)
        data = np.ascontiguousarray(data, dtype=target)
        vector = _host_vector(x, target)
    else:
        vector = _host_vector(x)
        if data.dtype != vector.dtype:
            raise UsageError(f"spmv: the matrix is {data.dtype} and x is {vector.dtype}; pass "
                             "dtype= to convert both")
    if vector.ndim != 1 or vector.shape[0] != cols:
        raise UsageError(f"spmv: x has shape {vector.shape}; the matrix has {cols} columns, "
                         f"so x must be a vector of {cols} values")
    ctx = _host_context(backend, context)
    name = _dtype_name(data.dtype)
    y = np.empty(rows, dtype=data.dtype)
    if ctx.backend == "cuda":
        offsets = np.ascontiguousarray(indptr, dtype=np.int64)
        _gemmkit.spmv_host(ctx, name, rows, cols, indices.size, offsets.ctypes.data,
                           indices.ctypes.data, data.ctypes.data, vector.ctypes.data,
                           y.ctypes.data, kernel)
        return y
    wide = indptr.dtype != np.int32
    offsets = np.ascontiguousarray(indptr, dtype=np.int64 if wide else np.int32)
    _gemmkit.spmv(ctx, name, rows, cols, indices.size, offsets.ctypes.data, wide,
                  indices.ctypes.data, data.ctypes.data, vector.ctypes.data, y.ctypes.data, 0,
                  kernel)
    return y


def conv1d(x: Any, mask: Any, *, kernel: str = "auto", backend: Optional[str] = None,
           context: Optional[Context] = None) -> np.ndarray:
    """The library's one-dimensional convolution, 'same' size with zeros outside x::

        y[i] = sum_{j=0}^{w-1} mask[j] * x[i + j - w//2],   0 <= i < len(x)

    (an odd width is centred; an even width reaches one tap further back than forward;
    this is ``np.convolve(x, mask[::-1], 'full')[w - 1 - w//2 : ...]``, a correlation). x and
    mask: 1-D float32 or float64 of the same dtype; an empty mask is refused. backend,
    context and kernel as for :func:`reduce` (kernels of ``gemmkit.kernels('conv1d')``).
    Returns y (numpy, len(x) values).
    """
    signal = _host_vector(x)
    taps = _host_vector(mask)
    if signal.ndim != 1 or taps.ndim != 1:
        raise UsageError(f"conv1d: x and mask must be 1-D, not of shapes {signal.shape} and "
                         f"{taps.shape}")
    if signal.dtype != taps.dtype:
        raise UsageError(f"conv1d: x is {signal.dtype} and the mask {taps.dtype}; they must "
                         "be the same dtype")
    ctx = _host_context(backend, context)
    name = _dtype_name(signal.dtype)
    y = np.empty_like(signal)
    if ctx.backend == "cuda":
        _gemmkit.conv1d_host(ctx, name, signal.ctypes.data, signal.size, taps.ctypes.data,
                             taps.size, y.ctypes.data, kernel)
    else:
        _gemmkit.conv1d(ctx, name, signal.ctypes.data, signal.size, taps.ctypes.data,
                        taps.size, y.ctypes.data, 0, kernel)
    return y
