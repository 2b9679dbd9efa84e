"""gemmkit.matmul: C = alpha op(A) op(B) + beta C on numpy arrays and GPU tensors."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

from . import _arrays
from ._arrays import ArrayView, view
from ._context import _contexts, default_context, resolve_context
from ._gemmkit import Context, GemmPlan as _GemmPlan, UsageError
from ._gemmkit import gemm as _gemm
from ._gemmkit import gemm_output_dtypes as _gemm_output_dtypes
from ._gemmkit import gemm_verify as _gemm_verify

_FLOATS = ("f64", "f32", "f16", "bf16")
_VERIFY_MODES = ("none", "auto", "full", "freivalds", "exact")


def _stream_int(stream: Any) -> int:
    """A stream given as an int (a cudaStream_t), a torch.cuda.Stream or a CuPy stream."""
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)  # torch
    if handle is None:
        handle = getattr(stream, "ptr", None)  # CuPy
    if handle is None:
        raise UsageError(f"stream: an int (cudaStream_t), a torch.cuda.Stream or a CuPy stream, not {type(stream).__name__}")
    return int(handle)


def _operand(v: ArrayView, transpose: bool) -> Optional[Tuple[int, int, bool, int, int, int, int]]:
    """How the 2-D or 3-D operand ``v`` (op = its transpose when ``transpose``) is stored as
    a row-major matrix: (ptr, ld, trans, op_rows, op_cols, batch, batch_stride); ``trans``
    says whether the storage holds op's transpose. None for strides that no leading
    dimension describes (steps in both directions, negative or overlapping)."""
    shape = v.shape
    strides = v.strides
    if len(shape) == 2:
        rows, cols = shape
        s0, s1 = strides
        batch = 1
        batch_stride = 0
    else:
        batch, rows, cols = shape
        _, s0, s1 = strides
        batch_stride = strides[0] if batch > 1 else 0
        if batch_stride < 0:
            return None
    if s1 == 1 and rows > 1 and s0 >= cols > 0:  # row-major: C-contiguous or a row view
        ld, stored_transposed = s0, False
    elif rows == 0 or cols == 0:  # nothing is read: any leading dimension will do
        ld, stored_transposed = max(cols, 1), False
    elif (s1 == 1 or cols == 1) and (rows == 1 or s0 >= cols):
        ld, stored_transposed = (s0 if rows > 1 else cols), False
    elif (s0 == 1 or rows == 1) and (cols == 1 or s1 >= rows):
        ld, stored_transposed = (s1 if cols > 1 else rows), True
    else:
        return None
    if transpose:
        return v.ptr, ld, not stored_transposed, cols, rows, batch, batch_stride
    return v.ptr, ld, stored_transposed, rows, cols, batch, batch_stride


def _plan_operand(v: ArrayView, transpose: bool, name: str) -> Tuple[ArrayView, tuple]:
    """The operand's storage plan, after a C-contiguous copy when its strides need one."""
    ndim = len(v.shape)
    if ndim != 2 and ndim != 3:
        raise UsageError(
            f"{name} has {ndim} dimension{'s' if ndim != 1 else ''} "
            f"(shape {tuple(v.shape)}): matmul takes 2-D matrices or 3-D batches of them"
            + (" (a vector x as a matrix: x[:, None] or x[None, :])" if ndim == 1 else ""))
    plan = _operand(v, transpose)
    if plan is None:
        v = _arrays.contiguous(v)
        plan = _operand(v, transpose)
    return v, plan


def _shape_text(rows: int, cols: int) -> str:
    return f"{rows}x{cols}"


def _plan(va: ArrayView, vb: ArrayView, transpose_a: bool, transpose_b: bool):
    """Shapes and storage of op(A) and op(B): (va, vb, a_plan, b_plan, m, n, k, batch)."""
    va, pa = _plan_operand(va, transpose_a, "A")
    vb, pb = _plan_operand(vb, transpose_b, "B")
    m, k = pa[3], pa[4]
    kb, n = pb[3], pb[4]
    batch = max(pa[5], pb[5])
    if kb != k or (pa[5] != batch and pa[5] != 1) or (pb[5] != batch and pb[5] != 1):
        a_text = (f"{pa[5]} x " if len(va.shape) == 3 else "") + _shape_text(m, k)
        b_text = (f"{pb[5]} x " if len(vb.shape) == 3 else "") + _shape_text(kb, n)
        raise UsageError(f"shape mismatch: op(A) is {a_text}, op(B) is {b_text}")
    return va, vb, pa, pb, m, n, k, batch


def _problem(pa: tuple, pb: tuple, vc: ArrayView, m: int, n: int, batch: int,
             col_major: bool = True) -> tuple:
    """The library's problem (trans_a, trans_b, m, n, a, lda, b, ldb, c, ldc, batch,
    stride_a, stride_b, stride_c, col_major) for C stored in ``vc``. A C stored by columns
    is given as the column-major problem (so that an entry the library names is c's), or,
    with ``col_major=False``, as the row-major C^T = op(B)^T op(A)^T on the same memory (A
    and B swap, transposes flip), which verification takes."""
    if len(vc.shape) == 3:
        sc, s0, s1 = vc.strides
        if batch <= 1:
            sc = 0
    else:
        sc, (s0, s1) = 0, vc.strides
    stride_a = pa[6] if pa[5] > 1 else 0
    stride_b = pb[6] if pb[5] > 1 else 0
    if (s1 == 1 and m > 1 and s0 >= n > 0) or m == 0 or n == 0 or \
            ((s1 == 1 or n == 1) and (m == 1 or s0 >= n)):
        ldc = s0 if m > 1 and n > 0 else max(n, 1)
        return (pa[2], pb[2], m, n, pa[0], pa[1], pb[0], pb[1], vc.ptr, ldc, batch,
                stride_a, stride_b, sc, False)
    if (s0 == 1 or m == 1) and (n == 1 or s1 >= m):
        ldc = s1 if n > 1 else m
        # A stored row-major is, read by columns, its own transpose: the flags flip.
        if col_major:
            return (not pa[2], not pb[2], m, n, pa[0], pa[1], pb[0], pb[1], vc.ptr, ldc, batch,
                    stride_a, stride_b, sc, True)
        return (not pb[2], not pa[2], n, m, pb[0], pb[1], pa[0], pa[1], vc.ptr, ldc, batch,
                stride_b, stride_a, sc, False)
    raise UsageError(f"c has strides {tuple(vc.strides)} (elements): matmul writes c in place, "
                     "which needs unit stride along its rows or its columns")


def _torch_fast_path(a: Any, b: Any, alpha: float, kernel: str) -> Any:
    """The call a model makes most, ``matmul(a, b)`` of two C-contiguous 2-D CUDA torch
    tensors of one dtype with every option at its default, without the general planning
    below: the same library call with the same arguments, for about half of the Python
    cost of a small product. None when the call is anything else (the general path then
    handles it, errors included)."""
    torch = _arrays._torch
    if torch is None or type(a) is not torch.Tensor or type(b) is not torch.Tensor:
        return None
    dtype = a.dtype
    name = _arrays._TORCH_DTYPES.get(dtype)
    # int8 is left to the general path: its result is int32 (gemm_output_dtypes).
    if name is None or name == "i8" or b.dtype is not dtype or not (a.is_cuda and b.is_cuda) or a.dim() != 2 \
            or b.dim() != 2 or not a.is_contiguous() or not b.is_contiguous():
        return None
    m, k = a.shape
    kb, n = b.shape
    device = a.get_device()
    if kb != k or m == 0 or n == 0 or k == 0 or b.get_device() != device:
        return None
    context = _contexts.get(device) or default_context(device)
    out = a.new_empty((m, n))
    _gemm(context, name, "", False, False, m, n, k, alpha, a.data_ptr(), k, b.data_ptr(), n,
          0.0, out.data_ptr(), n, 1, 0, 0, 0, kernel, _arrays._torch_raw_stream(device), False)
    return out


def matmul(
    a: Any,
    b: Any,
    *,
    c: Any = None,
    alpha: float = 1,
    beta: float = 0,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: Optional[str] = None,
    out_dtype: Optional[str] = None,
    kernel: str = "auto",
    moduli: int = 0,
    verify: str = "none",
    context: Optional[Context] = None,
    stream: Any = None,
    backend: Optional[str] = None,
) -> Any:
    """C = alpha * op(A) @ op(B) + beta * C, op(X) = X or X^T, with gemmkit's kernels.

    a, b: 2-D matrices, or 3-D batches (batch, rows, cols) for the batched GEMM; a 2-D
    operand beside a 3-D one (or a batch of 1) is used for every product. Both are host
    arrays (numpy arrays; lists are converted, a copy; torch CPU tensors) or both on one CUDA
    device: torch and CuPy tensors, __cuda_array_interface__ objects, DLPack producers.

    Memory: nothing is copied for C-contiguous inputs, F-contiguous ones (they are read as
    transposes) or views with unit stride along rows or columns (their leading dimension is
    the other stride); other strides (steps in both directions, negative, overlapping) are
    copied to a C-contiguous array by the input's own framework first.

    Returns a new array of the inputs' framework on their device (numpy for host arrays and
    lists, a torch tensor for torch tensors, CuPy for CuPy; for bare
    __cuda_array_interface__ and DLPack producers see gemmkit._arrays.empty_like), or ``c``.

    c: the output, written in place and returned (C-contiguous or F-contiguous, or with unit
    stride along rows or columns), of the result's shape; beta != 0 needs it (beta * c is
    added). Its dtype is one the library offers for the inputs (out_dtype below).

    On the GPU the work is queued on ``stream`` (an int cudaStream_t, a torch.cuda.Stream or
    a CuPy stream), by default the producer's current stream (torch's current stream of the
    tensor's device, CuPy's current stream, a __cuda_array_interface__ object's 'stream',
    else the legacy default stream), and the call returns without waiting: the result is
    ordered on that stream like the framework's own operations. A new torch result is
    allocated from torch's current stream; with another ``stream=`` it is recorded on that
    stream too (``record_stream``), so torch does not reuse its memory before the product
    is written.

    dtype: None (the inputs' dtype, which must agree), 'tf32' (f32 inputs computed on the
    TF32 tensor cores, f32 result), or 'f64', 'f32', 'f16', 'bf16' (float inputs converted
    to it first: a copy, rounded to nearest; numpy bf16 needs ml_dtypes). Integer dtypes
    (i8, i32, i64) are exact: with host arrays, an entry whose exact value does not fit the
    result raises NumericError naming it, whatever ``verify`` says (unlike numpy, nothing
    wraps; the library's rule, as the CLI's and the C API's). On CUDA tensors i32 and i64
    are exact the same way; i8 is computed modulo 2^32 there (exact whenever the result
    fits int32), unscreened: pass verify='exact' to check it.
    out_dtype: None, the default for the inputs (their dtype; i32 for i8), or another that
    the library offers: 'f32' for f16/bf16 (their FP32 sums), 'i64' for i32 (the exact
    product, wider). Others are a UsageError with the library's reason.

    kernel: 'auto' (the fastest kernel of the backend that accepts the problem) or any name
    of ``gemmkit.kernels('gemm')``; an unknown name, one of another backend or one that
    refuses the problem is a UsageError saying why.

    moduli: for kernel='cuda_ozaki_f64' or 'cuda_ozaki_f32' (FP64 or FP32 emulated on the int8
    tensor cores), the count of int8 moduli, 2 to 53 (fewer: faster, less accurate); 0, the
    default, takes the fewest that keep the input type's accuracy.

    verify: 'none' (default), 'auto', 'full', 'freivalds', 'exact': the library's checks
    (as ``gemmkit multiply --verify``) against an independent oracle after the product;
    a failure raises NumericError with the library's detail (nothing else is undone: c or
    the result holds the product). For device tensors verification copies A, B and C (and C
    before, when beta != 0) to the host and waits for the device: a transfer and a
    synchronisation, for testing rather than production loops.

    context: a gemmkit.Context of the arrays' device (default: the shared one of that
    device). backend: for host arrays, 'cpu' (default) or 'cuda' (the operands are copied
    to the default CUDA device, or to ``context``'s, and C back; the call waits).
    """
    if c is None and context is None and stream is None and dtype is None and out_dtype is None \
            and verify == "none" and backend is None and not transpose_a and not transpose_b \
            and moduli == 0:
        result = _torch_fast_path(a, b, alpha, kernel)
        if result is not None:
            return result
    if verify not in _VERIFY_MODES:
        raise UsageError(f"unknown verify mode '{verify}' (known: {', '.join(_VERIFY_MODES)})")
    call = _prepare(a, b, c, beta, transpose_a, transpose_b, dtype, out_dtype, context, stream, backend)
    va, vb, vc, host, stream_int = call.va, call.vb, call.vc, call.host, call.stream_int
    compute, out = call.compute, call.out

    check = verify != "none"
    before = _arrays.to_host(vc, copy=True) if check and beta != 0 else None

    ta, tb, pm, pn, a_ptr, lda, b_ptr, ldb, c_ptr, ldc, batch, sa, sb, sc, col_major = call.problem
    ran = _gemm(call.context, compute, out, ta, tb, pm, pn, call.k, alpha, a_ptr, lda, b_ptr, ldb, beta,
                c_ptr, ldc, batch, sa, sb, sc, kernel, stream_int, host, moduli, col_major)
    _keep_result_alive(call, c)

    if check:
        _verify(va, vb, vc, before, transpose_a, transpose_b, compute, out, alpha, beta, verify,
                ran, host, stream_int)
    return vc.obj if c is None else c


class _Call(NamedTuple):
    """A product ready for the library: the operands' views, C's (c, or a new array), the
    library's problem (_problem), its dtypes, the context, and where it runs."""
    va: ArrayView
    vb: ArrayView
    vc: ArrayView
    problem: tuple
    compute: str
    out: str
    k: int
    context: Context
    host: bool
    stream_int: int
    stream_given: Optional[int]


def _prepare(a: Any, b: Any, c: Any, beta: float, transpose_a: bool, transpose_b: bool,
             dtype: Optional[str], out_dtype: Optional[str], context: Optional[Context],
             stream: Any, backend: Optional[str]) -> _Call:
    """matmul's arguments as the library's call (every check of matmul's docstring)."""
    stream_given = None if stream is None else _stream_int(stream)
    va = view(a, stream_given)
    vb = view(b, stream_given)
    device = va.device
    if vb.device != device:
        where = lambda d: "host memory" if d is None else f"CUDA device {d}"  # noqa: E731
        raise UsageError(f"A is in {where(device)} and B in {where(vb.device)}: move both to one device")

    # dtypes: the inputs', converted when asked.
    storage = va.dtype
    compute = storage
    if dtype is None or dtype == storage or dtype == "tf32":
        if vb.dtype != storage:
            raise UsageError(f"mixed dtypes: A is {storage} and B is {vb.dtype} (convert one, or pass "
                             "dtype= to convert float inputs)")
        if dtype == "tf32":
            if storage != "f32":
                raise UsageError(f"dtype='tf32' takes f32 inputs, not {storage}")
            compute = "tf32"
    elif dtype in _FLOATS:
        if storage not in _FLOATS or vb.dtype not in _FLOATS:
            raise UsageError(f"dtype='{dtype}' for {storage} and {vb.dtype} inputs: gemmkit converts "
                             "float inputs only; convert the arrays yourself")
        va, vb, storage, compute = _arrays.astype(va, dtype), _arrays.astype(vb, dtype), dtype, dtype
    elif dtype in _arrays.ITEMSIZE:
        raise UsageError(f"dtype='{dtype}' for {storage} inputs: gemmkit converts float inputs "
                         "only; convert the arrays yourself")
    else:
        raise UsageError(f"unknown dtype '{dtype}' (known: f64, f32, tf32, f16, bf16, i8, i32, i64)")

    va, vb, pa, pb, m, n, k, batch = _plan(va, vb, transpose_a, transpose_b)
    shape = (batch, m, n) if len(va.shape) == 3 or len(vb.shape) == 3 else (m, n)

    # The output: c in place, or a new array of the inputs' framework. Its dtypes are the
    # library's (gemm_output_dtypes, which refuses others with the library's reason).
    if c is None:
        if beta != 0:
            raise UsageError("beta != 0 adds beta * c: pass c=")
        offered = _gemm_output_dtypes(storage, out_dtype or "")
        vc = _arrays.empty_like(va, shape, out_dtype or offered[0])
    else:
        vc = view(c, stream_given)
        if vc.device != device:
            raise UsageError("c is not on the inputs' device")
        if not vc.writable:
            raise UsageError("c is read-only: matmul writes it in place")
        if tuple(vc.shape) != shape:
            raise UsageError(f"c has shape {tuple(vc.shape)}, the result's is {shape}")
        _gemm_output_dtypes(storage, vc.dtype)
        if out_dtype is not None and out_dtype != vc.dtype:
            raise UsageError(f"out_dtype='{out_dtype}' but c is {vc.dtype}")
    out = vc.dtype if vc.dtype != storage else ""

    problem = _problem(pa, pb, vc, m, n, batch)
    if device is None:
        host = True
        if context is None:
            if backend is None or backend == "cpu":
                context = default_context(None)
            elif backend == "cuda":
                context = default_context(0)
            else:
                raise UsageError(f"unknown backend '{backend}' (known: cpu, cuda)")
        elif backend is not None and backend != context.backend:
            raise UsageError(f"backend='{backend}' but the context is {context.backend}'s")
        stream_int = 0
    else:
        host = False
        if backend not in (None, "cuda"):
            raise UsageError(f"backend='{backend}' for arrays on CUDA device {device}")
        context = resolve_context(context, device)
        stream_int = _arrays.current_stream(va) if stream_given is None else stream_given

    return _Call(va, vb, vc, problem, compute, out, k, context, host, stream_int, stream_given)


def _keep_result_alive(call: _Call, c: Any) -> None:
    """A new torch result allocated from the current stream's pool but written on another:
    torch must not hand the memory out again before that stream's work is done."""
    vc = call.vc
    if c is None and call.stream_given is not None and vc.framework == "torch" and not call.host:
        torch = _arrays._torch
        vc.obj.record_stream(torch.cuda.ExternalStream(call.stream_int, device=vc.obj.device))


class Plan:
    """A product planned once and run many times: ``plan = gemmkit.Plan(a, b)``, then
    ``plan(a2, b2)`` for arrays of the same shapes, dtypes, strides and device.

    The library chooses the kernel and its workspace once (a GemmPlan of the device API,
    gemmkit/plan.hpp), for everything the arrays say except their data: each call checks
    that its arrays fit the plan (a UsageError names the first field that differs, e.g.
    "lda 520, the plan's 512") and runs the plan's kernel, skipping the choice. The
    arguments mean what they mean for :func:`matmul`; ``c`` given here fixes C's strides
    and dtype (default: a new C-contiguous result). Host arrays run on the CPU context; a
    plan for a CUDA device takes that device's tensors (no copies, so no backend='cuda' for
    host arrays). ``moduli`` is the kernel option of the kernels that take it (the Ozaki
    emulation, as for :func:`matmul`), carried by the plan to every run. A problem no kernel
    takes, or that ``kernel`` refuses, is a UsageError saying why, at planning.

    Attributes: ``kernel`` (the kernel it runs), ``workspace_bytes`` (device memory each run
    takes from the context's pool).
    """

    def __init__(self, a: Any, b: Any, *, c: Any = None, transpose_a: bool = False,
                 transpose_b: bool = False, dtype: Optional[str] = None,
                 out_dtype: Optional[str] = None, kernel: str = "auto",
                 context: Optional[Context] = None, moduli: int = 0) -> None:
        call = _prepare(a, b, c, 0, transpose_a, transpose_b, dtype, out_dtype, context, None, None)
        if call.host and call.context.backend != "cpu":
            raise UsageError("a plan runs on the memory of its context: host arrays take the CPU "
                             "context (move them to the device for a CUDA plan)")
        ta, tb, pm, pn, a_ptr, lda, b_ptr, ldb, c_ptr, ldc, batch, sa, sb, sc, col_major = call.problem
        self._native = _GemmPlan(call.context, call.compute, call.out, ta, tb, pm, pn, call.k, a_ptr,
                                 lda, b_ptr, ldb, c_ptr, ldc, batch, sa, sb, sc, kernel, col_major,
                                 moduli)
        if not self._native.can_run:
            raise UsageError(self._native.why_not)
        self._context = call.context
        self._options = (transpose_a, transpose_b, dtype, out_dtype)

    @property
    def kernel(self) -> str:
        return self._native.kernel

    @property
    def workspace_bytes(self) -> int:
        return self._native.workspace_bytes

    @property
    def context(self) -> Context:
        return self._context

    def __call__(self, a: Any, b: Any, *, c: Any = None, alpha: float = 1, beta: float = 0,
                 stream: Any = None) -> Any:
        """C = alpha * op(A) @ op(B) + beta * C with the plan's kernel; returns the result
        (a new array, or ``c``) as :func:`matmul` does."""
        transpose_a, transpose_b, dtype, out_dtype = self._options
        call = _prepare(a, b, c, beta, transpose_a, transpose_b, dtype, out_dtype, self._context,
                        stream, None)
        ta, tb, pm, pn, a_ptr, lda, b_ptr, ldb, c_ptr, ldc, batch, sa, sb, sc, col_major = call.problem
        self._native.run(call.compute, call.out, ta, tb, pm, pn, call.k, alpha, a_ptr, lda, b_ptr, ldb,
                         beta, c_ptr, ldc, batch, sa, sb, sc, call.stream_int, col_major)
        _keep_result_alive(call, c)
        return call.vc.obj if c is None else c

    def __repr__(self) -> str:
        return f"gemmkit.Plan(kernel='{self.kernel}', context={self._context!r})"


def _verify(va: ArrayView, vb: ArrayView, vc: ArrayView, before: Optional[ArrayView],
            transpose_a: bool, transpose_b: bool, compute: str, out: str, alpha: float,
            beta: float, mode: str, ran: str, host: bool, stream: int) -> None:
    """The library's verification of the finished product, on host copies for device arrays."""
    if not host:
        _synchronize(va, stream)
        va, vb, vc = _arrays.to_host(va), _arrays.to_host(vb), _arrays.to_host(vc)
    va, vb, pa, pb, m, n, k, batch = _plan(va, vb, transpose_a, transpose_b)
    if before is not None and before.strides != vc.strides:
        # C before was copied C-contiguous: compare it with a C-contiguous C.
        vc = _arrays.contiguous(vc)
    ta, tb, pm, pn, a_ptr, lda, b_ptr, ldb, c_ptr, ldc, batch, sa, sb, sc, _ = \
        _problem(pa, pb, vc, m, n, batch, col_major=False)
    before_ptr = 0 if before is None else before.ptr
    _gemm_verify(compute, out, ta, tb, pm, pn, k, alpha, a_ptr, lda, b_ptr, ldb, beta, c_ptr,
                 ldc, batch, sa, sb, sc, before_ptr, mode, ran)


def _synchronize(v: ArrayView, stream: int) -> None:
    """Waits for ``stream`` of ``v``'s device (0: the whole device), through ``v``'s framework."""
    if v.framework == "cupy" or (v.framework != "torch" and _arrays._device_framework() == "cupy"):
        cupy = _arrays._import_cupy()
        with cupy.cuda.Device(v.device):
            if stream:
                cupy.cuda.ExternalStream(stream).synchronize()
            else:
                cupy.cuda.Device().synchronize()
        return
    torch = _arrays._import_torch()
    if stream:
        torch.cuda.ExternalStream(stream, device=v.device).synchronize()
    else:
        torch.cuda.synchronize(v.device)
