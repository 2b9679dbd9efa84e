"""reduce, spmv and conv1d on numpy arrays and on GPU tensors.

Host arrays (numpy, lists, CPU torch tensors) run on the CPU backend by default (the
library's CPU reference: sums in long double, rounded once), or on the GPU with copies when
``backend='cuda'``; results are host arrays of the input's framework. GPU tensors (PyTorch,
CuPy, any ``__cuda_array_interface__`` or DLPack producer) run on their device, queued on
the producer's current stream without a host round trip; results are new tensors of the
same framework on the same device. Only the operations' dtypes (float32 and float64) are
accepted; anything else is refused with the library's message. ``kernel=`` is any name of
``gemmkit.kernels(operation)`` for the backend that runs, or 'auto'.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays, _gemmkit
from ._arrays import ArrayView, c_strides
from ._context import resolve_context
from ._gemmkit import Context, UsageError

_BACKENDS = (None, "auto", "cpu", "cuda")


def _view(x: Any) -> ArrayView:
    """x as an ArrayView, C-contiguous (copied by its framework when it is not); scalars
    are one-value vectors."""
    if isinstance(x, (np.generic, int, float)) or (isinstance(x, np.ndarray) and x.ndim == 0):
        x = np.asarray(x).reshape(1)
    v = _arrays.view(x)
    if v.strides != c_strides(v.shape):
        v = _arrays.contiguous(v)
    return v


def _size(v: ArrayView) -> int:
    return int(np.prod(v.shape, dtype=np.int64))


def _placement(v: ArrayView, backend: Optional[str],
               context: Optional[Context]) -> Tuple[Context, bool, int]:
    """(context, whether the device API takes v's pointers directly, stream).

    Host memory runs in the CPU context (the device API on host pointers), or with
    backend='cuda' in a CUDA context through the host API (copies). Device memory runs in
    the context of its device, on the producer's current stream."""
    if backend not in _BACKENDS:
        raise UsageError(f"unknown backend {backend!r} (known: auto, cpu, cuda)")
    if v.device is not None:
        if backend == "cpu" or (context is not None and context.backend != "cuda"):
            raise UsageError(f"the arrays are on CUDA device {v.device}; the CPU backend takes "
                             "host arrays (copy them with their framework first)")
        return resolve_context(context, v.device), True, _arrays.current_stream(v)
    if context is not None:
        if backend in ("cpu", "cuda") and context.backend != backend:
            raise UsageError(f"backend={backend!r} but the context is a {context.backend} one")
        ctx = context
    else:
        ctx = resolve_context(None, 0 if backend == "cuda" else None)
    return ctx, ctx.backend == "cpu", 0


def _same_place(a: ArrayView, b: ArrayView, what: str) -> None:
    if a.device != b.device:
        def where(v: ArrayView) -> str:
            return "host memory" if v.device is None else f"CUDA device {v.device}"

        raise UsageError(f"{what}: the operands are in {where(a)} and {where(b)}; they must be "
                         "in the same place")


def reduce(x: Any, op: str = "sum", *, kernel: str = "auto", backend: Optional[str] = None,
           context: Optional[Context] = None):
    """One of 'sum', 'min', 'max' or 'norm2' over every value of ``x`` (float32 or float64).

    Semantics as the library's (gemmkit/reduce.hpp), on every backend and kernel: sum is the
    IEEE sum (empty: 0); min and max propagate NaN (empty: +inf and -inf); norm2 of float32
    accumulates in double.

    Returns a numpy scalar of x's dtype for numpy input; for a tensor, a 0-d tensor of its
    framework on its device (written in the producer's stream order, no synchronisation).

    backend: for host arrays, None/'auto'/'cpu' run the CPU reference, 'cuda' copies to the
    GPU and runs ``kernel`` there ('auto': the fastest rung). GPU tensors run on their device.
    context: a :class:`gemmkit.Context` to run in (default: the shared one of the device).
    """
    v = _view(x)
    ctx, direct, stream = _placement(v, backend, context)
    n = _size(v)
    out = _arrays.empty_like(v, (1,), v.dtype)
    if direct:
        _gemmkit.reduce(ctx, v.dtype, op, v.ptr, n, out.ptr, stream, kernel)
    else:
        out.obj[0] = _gemmkit.reduce_host(ctx, v.dtype, op, v.ptr, n, kernel)
    return out.obj[0] if out.framework == "numpy" else out.obj.reshape(())


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, str) and dtype in ("f32", "f64"):
        return dtype
    name = np.dtype(dtype).name
    return {"float32": "f32", "float64": "f64"}.get(name, name)


def _csr_views(a: Any) -> Tuple[int, int, ArrayView, ArrayView, ArrayView]:
    """(rows, cols, row offsets, column indices, values) of a CSR matrix with sorted column
    indices and no duplicates: a scipy sparse matrix (or CuPy's, or anything with .tocsr()),
    made canonical on a copy when it is not; or a torch sparse tensor (CSR as it is, with
    sorted column indices; other layouts through .to_sparse_csr())."""
    module = type(a).__module__ or ""
    if module.startswith("torch"):
        import torch  # type: ignore

        if a.layout != torch.sparse_csr:
            a = a.to_sparse_csr()
        rows, cols = (int(s) for s in a.shape)
        parts = (a.crow_indices(), a.col_indices(), a.values())
    elif hasattr(a, "tocsr"):
        csr = a.tocsr()
        if not csr.has_canonical_format:
            csr = csr.copy()
            csr.sum_duplicates()  # also sorts the indices
        rows, cols = (int(s) for s in csr.shape)
        parts = (csr.indptr, csr.indices, csr.data)
    else:
        raise UsageError(f"spmv: the matrix must be a scipy (or CuPy) sparse matrix or a torch "
                         f"sparse tensor, not {type(a).__name__}")
    if cols > 2**31 - 1:
        raise UsageError(f"spmv: {cols} columns; column indices are 32-bit (at most 2^31 - 1)")
    offsets, indices, values = (_view(p) for p in parts)
    nnz = _size(indices)
    if offsets.dtype not in ("i32", "i64"):
        offsets = _arrays.astype(offsets, "i64")
    if offsets.device is not None and offsets.dtype == "i64" and nnz <= 2**31 - 1:
        # As the library's host API does on the GPU: 32-bit offsets whenever nnz fits are 4
        # bytes less to stream per row, and every kernel (cuSPARSE too) takes them.
        offsets = _arrays.astype(offsets, "i32")
    return rows, cols, offsets, _arrays.astype(indices, "i32"), values


def spmv(a: Any, x: Any, *, kernel: str = "auto", dtype: Any = None,
         backend: Optional[str] = None, context: Optional[Context] = None):
    """y = A x for a sparse matrix ``a`` and a vector ``x`` of ``a.shape[1]`` values.

    a: a scipy sparse matrix (anything with ``.tocsr()``; made canonical on a copy when it is
    not: sorted indices, duplicates summed) for host x; on the GPU a CuPy sparse matrix or a
    torch sparse CSR tensor (other torch layouts through ``.to_sparse_csr()``) on x's device.
    dtype: 'f32'/'f64' or a numpy dtype; both operands are converted to it. None: their own,
    which must agree and be float32 or float64. The CPU backend sums each row in long double
    and rounds once. backend/context as for :func:`reduce`; kernel any spmv kernel of
    ``gemmkit.kernels('spmv')`` or 'auto'. Returns y (a.shape[0] values) as x's framework
    makes arrays, on x's device.
    """
    rows, cols, offsets, indices, values = _csr_views(a)
    vector = _view(x)
    if dtype is not None:
        name = _dtype_name(dtype)
        values, vector = _arrays.astype(values, name), _arrays.astype(vector, name)
    elif values.dtype != vector.dtype:
        raise UsageError(f"spmv: the matrix is {values.dtype} and x is {vector.dtype}; pass "
                         "dtype= to convert both")
    if vector.ndim != 1 or vector.shape[0] != cols:
        raise UsageError(f"spmv: x has shape {vector.shape}; the matrix has {cols} columns, "
                         f"so x must be a vector of {cols} values")
    for part in (offsets, indices, values):
        _same_place(part, vector, "spmv")
    ctx, direct, stream = _placement(vector, backend, context)
    y = _arrays.empty_like(vector, (rows,), vector.dtype)
    nnz = _size(indices)
    if direct:
        _gemmkit.spmv(ctx, vector.dtype, rows, cols, nnz, offsets.ptr, offsets.dtype == "i64",
                      indices.ptr, values.ptr, vector.ptr, y.ptr, stream, kernel)
    else:
        wide = _arrays.astype(offsets, "i64")
        _gemmkit.spmv_host(ctx, vector.dtype, rows, cols, nnz, wide.ptr, indices.ptr,
                           values.ptr, vector.ptr, y.ptr, kernel)
    return y.obj


def conv1d(x: Any, mask: Any, *, kernel: str = "auto", backend: Optional[str] = None,
           context: Optional[Context] = None):
    """The library's one-dimensional convolution, 'same' size with zeros outside x::

        y[i] = sum_{j=0}^{w-1} mask[j] * x[i + j - w//2],   0 <= i < len(x)

    (an odd width is centred; an even width reaches one tap further back than forward; in
    numpy terms ``np.correlate(x, mask, 'full')[w - 1 - w//2:][:len(x)]``). x and mask: 1-D,
    float32 or float64, the same dtype; an empty mask is refused. A GPU x runs on its device
    (the mask, small, is read from host memory: a GPU mask is copied). backend, context and
    kernel as for :func:`reduce` (kernels of ``gemmkit.kernels('conv1d')``). Returns y
    (len(x) values) as x's framework makes arrays, on x's device.
    """
    signal = _view(x)
    taps = _view(mask)
    if signal.ndim != 1 or taps.ndim != 1:
        raise UsageError(f"conv1d: x and mask must be 1-D, not of shapes {signal.shape} and "
                         f"{taps.shape}")
    if signal.dtype != taps.dtype:
        raise UsageError(f"conv1d: x is {signal.dtype} and the mask {taps.dtype}; they must "
                         "be the same dtype")
    if taps.device is not None:
        taps = _arrays.to_host(taps)
    ctx, direct, stream = _placement(signal, backend, context)
    y = _arrays.empty_like(signal, signal.shape, signal.dtype)
    n, width = signal.shape[0], taps.shape[0]
    if direct:
        _gemmkit.conv1d(ctx, signal.dtype, signal.ptr, n, taps.ptr, width, y.ptr, stream, kernel)
    else:
        _gemmkit.conv1d_host(ctx, signal.dtype, signal.ptr, n, taps.ptr, width, y.ptr, kernel)
    return y.obj
