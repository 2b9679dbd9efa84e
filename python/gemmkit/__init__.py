"""gemmkit: matrix multiplication on CPUs and CUDA GPUs, verified, with exact walk counts.

Arrays come in as numpy arrays (host: the CPU backend, or the GPU with copies) or as any
DLPack / ``__cuda_array_interface__`` producer on a CUDA device (PyTorch, CuPy), which is
computed on the producer's current stream and returned as the same kind of tensor::

    import gemmkit, numpy as np
    a, b = np.random.rand(300, 200), np.random.rand(200, 100)
    c = gemmkit.matmul(a, b)          # verified against the exact product when asked
    plan = gemmkit.Plan(a, b)         # the kernel chosen once, for arrays of these shapes
    c = plan(a, b)

Errors are exceptions derived from :class:`gemmkit.Error` and from the built-in class a
Python user expects: ``UsageError`` and ``InputError`` are ``ValueError``s,
``OutOfMemoryError`` a ``MemoryError``, ``DeviceError`` a ``RuntimeError``.
"""

from . import _gemmkit
from ._gemmkit import (
    Context,
    DeviceError,
    Error,
    InputError,
    InternalError,
    NumericError,
    OutOfMemoryError,
    OutputError,
    UsageError,
    __version__,
)
from ._context import default_context
from ._info import cuda_available, device, devices, kernels, versions
from ._matmul import Plan, matmul
from ._walks import WalkCounts, read_exact_table, walks
from ._primitives import conv1d, reduce, spmv
from ._bench import bench

__all__ = [
    "Context",
    "DeviceError",
    "Error",
    "InputError",
    "InternalError",
    "NumericError",
    "OutOfMemoryError",
    "OutputError",
    "Plan",
    "UsageError",
    "__version__",
    "bench",
    "conv1d",
    "cuda_available",
    "default_context",
    "device",
    "devices",
    "kernels",
    "matmul",
    "read_exact_table",
    "reduce",
    "spmv",
    "versions",
    "walks",
]
