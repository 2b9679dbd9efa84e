"""Arrays in and out: the one place where outside arrays become what the C++ module takes.

:func:`view` turns an array into an :class:`ArrayView` (a pointer as an int, the shape,
strides in elements, gemmkit's dtype name, the CUDA device or None for host memory, the
framework it came from, and the object that owns the memory, kept alive by the view).

Accepted, tried in this order (the choice is cached per type, so a loop of calls with one
kind of array pays for it once):

- ``torch.Tensor`` (CPU or CUDA; read directly: ``data_ptr()``, ``stride()``, ``dtype``).
  torch is never imported unless the object's type comes from it.
- ``cupy.ndarray`` (read directly).
- ``numpy.ndarray`` (host; bfloat16 through ``ml_dtypes.bfloat16`` when ml_dtypes is
  installed). Python lists and other sequences are converted with ``numpy.asarray``, which
  copies them.
- objects with ``__cuda_array_interface__`` (versions 2 and 3): taken as memory of the
  current CUDA device (CuPy's or torch's current device when one of them is imported, else
  device 0); the library refuses memory of another device with a UsageError.
- DLPack producers (``__dlpack__`` and ``__dlpack_device__``, e.g. JAX): host memory through
  ``numpy.from_dlpack`` (no copy), CUDA memory by reading the DLPack capsule (no copy; the
  capsule is kept by the view and released with it).

Unsupported dtypes, devices other than the CPU and CUDA, and 0-d arrays raise
:class:`gemmkit.UsageError` (a ValueError).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from ._gemmkit import UsageError

# Bytes per element of gemmkit's storage dtypes (tf32 is stored as f32 and is no storage dtype).
ITEMSIZE: Dict[str, int] = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i8": 1, "i32": 4, "i64": 8}


class ArrayView:
    """An array as the C++ module takes it.

    ptr: the address of element [0, ..., 0] (an int); shape: a tuple; strides: in elements
    (may be 0 or negative as the producer has them); dtype: gemmkit's name ('f64', 'f32',
    'f16', 'bf16', 'i8', 'i32', 'i64'); device: the CUDA device index, or None for host
    memory; framework: 'numpy', 'torch', 'cupy', 'cai' (a bare __cuda_array_interface__
    object) or 'dlpack'; obj: the object that owns the memory (kept alive by the view);
    stream: the stream a __cuda_array_interface__ object asks work on it to be ordered on
    (its 'stream' entry), else None; writable: False for read-only memory.
    """

    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "framework", "obj", "stream",
                 "writable")

    def __init__(self, ptr: int, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: str,
                 device: Optional[int], framework: str, obj: Any, stream: Optional[int] = None,
                 writable: bool = True) -> None:
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.device = device
        self.framework = framework
        self.obj = obj
        self.stream = stream
        self.writable = writable

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        where = "host" if self.device is None else f"cuda:{self.device}"
        return (f"ArrayView({self.framework}, {self.dtype}, shape={self.shape}, "
                f"strides={self.strides}, {where}, ptr=0x{self.ptr:x})")


def c_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """Strides in elements of a C-contiguous array of this shape."""
    if len(shape) == 2:  # the common case, without the loop
        return (max(int(shape[1]), 1), 1)
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(int(extent), 1)
    return tuple(reversed(strides))


def _unsupported_dtype(what: Any) -> UsageError:
    return UsageError(
        f"unsupported dtype {what}: gemmkit takes float64, float32, float16, bfloat16, "
        "int8, int32 and int64")


def _no_scalars(shape: Tuple[int, ...]) -> None:
    if not shape:
        raise UsageError("a 0-d array (a scalar) is no matrix: give 2-D (or batched 3-D) arrays")


# ---- numpy ---------------------------------------------------------------------------------

# Array-interface typestrs (little-endian) of gemmkit's dtypes; bfloat16 has none ('<V2').
_TYPESTRS = {"<f8": "f64", "<f4": "f32", "<f2": "f16", "|i1": "i8", "<i1": "i8", "<i4": "i32",
             "<i8": "i64"}

_NUMPY_DTYPES: Dict[Any, str] = {
    np.dtype("<f8"): "f64", np.dtype("<f4"): "f32", np.dtype("<f2"): "f16",
    np.dtype("i1"): "i8", np.dtype("<i4"): "i32", np.dtype("<i8"): "i64",
}
_ml_dtypes: Any = None  # the ml_dtypes module once looked for; False when it is missing


def _bfloat16_numpy() -> Any:
    """ml_dtypes.bfloat16 as a numpy dtype, or None without ml_dtypes."""
    global _ml_dtypes
    if _ml_dtypes is None:
        try:
            import ml_dtypes  # type: ignore

            _ml_dtypes = ml_dtypes
            _NUMPY_DTYPES[np.dtype(ml_dtypes.bfloat16)] = "bf16"
        except ImportError:
            _ml_dtypes = False
    return np.dtype(_ml_dtypes.bfloat16) if _ml_dtypes else None


def numpy_dtype(name: str) -> Any:
    """The numpy dtype of gemmkit's dtype name (bf16 needs ml_dtypes)."""
    if name == "bf16":
        dtype = _bfloat16_numpy()
        if dtype is None:
            raise UsageError("bf16 numpy arrays need the ml_dtypes package (pip install ml_dtypes)")
        return dtype
    return _NUMPY_DTYPE_OF[name]


_NUMPY_DTYPE_OF = {name: dtype for dtype, name in _NUMPY_DTYPES.items()}


def _numpy_dtype_name(dtype: Any) -> str:
    name = _NUMPY_DTYPES.get(dtype)
    if name is not None:
        return name
    if dtype.name == "bfloat16" and _bfloat16_numpy() is not None:
        return _NUMPY_DTYPES[dtype]
    if dtype.byteorder == ">" and dtype.newbyteorder("<") in _NUMPY_DTYPES:
        raise UsageError(f"big-endian dtype {dtype.str}: convert with .astype('{dtype.newbyteorder('<').str}')")
    raise _unsupported_dtype(f"'{dtype}'")


def _view_numpy(arr: Any, stream: Optional[int] = None) -> ArrayView:
    shape = arr.shape
    if not shape:
        _no_scalars(shape)
    interface = arr.__array_interface__
    # The typestr names the common dtypes faster than hashing the dtype object.
    dtype = _TYPESTRS.get(interface["typestr"]) or _numpy_dtype_name(arr.dtype)
    strides = interface["strides"]
    if strides is None:
        strides = c_strides(shape)
    else:
        size = arr.itemsize
        if any(s % size for s in strides):
            raise UsageError(f"strides {strides} (bytes) are not multiples of the element size {size}")
        strides = tuple(s // size for s in strides)
    ptr, readonly = interface["data"]
    return ArrayView(ptr, shape, strides, dtype, None, "numpy", arr, None, not readonly)


def _view_sequence(obj: Any, stream: Optional[int] = None) -> ArrayView:
    try:
        arr = np.asarray(obj)
    except Exception as e:  # ragged lists and the like
        raise UsageError(f"cannot read {type(obj).__name__} as an array: {e}") from None
    if arr.dtype == object or arr.dtype.kind not in "fiub":
        raise _unsupported_dtype(f"'{arr.dtype}' (of a {type(obj).__name__})")
    if arr.dtype.kind in "ub":  # bools and unsigned: no gemmkit dtype; lists of ints are int64
        raise _unsupported_dtype(f"'{arr.dtype}'")
    return _view_numpy(arr)


# ---- torch ---------------------------------------------------------------------------------

_torch: Any = None
_TORCH_DTYPES: Dict[Any, str] = {}
_TORCH_DTYPE_OF: Dict[str, Any] = {}
_torch_raw_stream: Optional[Callable[[int], int]] = None


def _import_torch() -> Any:
    global _torch, _torch_raw_stream
    if _torch is None:
        import torch  # type: ignore

        for name, attr in (("f64", "float64"), ("f32", "float32"), ("f16", "float16"),
                           ("bf16", "bfloat16"), ("i8", "int8"), ("i32", "int32"),
                           ("i64", "int64")):
            _TORCH_DTYPES[getattr(torch, attr)] = name
            _TORCH_DTYPE_OF[name] = getattr(torch, attr)
        # The current stream of a device as an int. torch's private raw accessor (what its
        # own compiled code calls) skips making a torch.cuda.Stream object: about 10 times
        # cheaper than torch.cuda.current_stream(device).cuda_stream, the fallback.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is None:
            def raw(device: int) -> int:
                return torch.cuda.current_stream(device).cuda_stream
        _torch_raw_stream = raw
        _torch = torch
    return _torch


def _view_torch(t: Any, stream: Optional[int] = None) -> ArrayView:
    # torch is imported: _viewer chose this function after importing it.
    shape = t.shape  # a torch.Size, which is a tuple
    if not shape:
        _no_scalars(shape)
    dtype = _TORCH_DTYPES.get(t.dtype)
    if dtype is None:
        raise _unsupported_dtype(f"{t.dtype}")
    if t.is_cuda:
        device: Optional[int] = t.get_device()
    elif t.device.type == "cpu":
        device = None
    else:
        raise UsageError(f"a torch tensor on device '{t.device}': gemmkit takes CPU and CUDA tensors")
    return ArrayView(t.data_ptr(), shape, t.stride(), dtype, device, "torch", t)


# ---- CuPy ----------------------------------------------------------------------------------

_cupy: Any = None


def _import_cupy() -> Any:
    global _cupy
    if _cupy is None:
        import cupy  # type: ignore

        _cupy = cupy
    return _cupy


def _view_cupy(arr: Any, stream: Optional[int] = None) -> ArrayView:
    shape = arr.shape
    _no_scalars(shape)
    dtype = _NUMPY_DTYPES.get(arr.dtype)
    if dtype is None:
        raise _unsupported_dtype(f"'{arr.dtype}'")
    size = arr.itemsize
    strides = tuple(s // size for s in arr.strides)
    return ArrayView(arr.data.ptr, shape, strides, dtype, arr.device.id, "cupy", arr)


# ---- __cuda_array_interface__ --------------------------------------------------------------



def _current_cuda_device() -> int:
    """The current CUDA device as a framework already imported sees it (0 otherwise)."""
    if "cupy" in sys.modules:
        return sys.modules["cupy"].cuda.runtime.getDevice()
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        return sys.modules["torch"].cuda.current_device()
    return 0


def _view_cai(obj: Any, stream: Optional[int] = None) -> ArrayView:
    interface = obj.__cuda_array_interface__
    shape = tuple(int(e) for e in interface["shape"])
    _no_scalars(shape)
    typestr = interface["typestr"]
    dtype = _TYPESTRS.get(typestr)
    if dtype is None:
        raise _unsupported_dtype(f"'{typestr}' (__cuda_array_interface__ typestr)")
    size = ITEMSIZE[dtype]
    strides = interface.get("strides")
    if strides is None:
        strides = c_strides(shape)
    else:
        if any(s % size for s in strides):
            raise UsageError(f"strides {tuple(strides)} (bytes) are not multiples of the element size {size}")
        strides = tuple(int(s) // size for s in strides)
    ptr, readonly = interface["data"]
    # Version 3's 'stream': 1 and 2 are CUDA's cudaStreamLegacy and cudaStreamPerThread
    # handles, others a cudaStream_t; absent or None: no ordering asked for.
    return ArrayView(int(ptr or 0), shape, strides, dtype, _current_cuda_device(), "cai", obj,
                     interface.get("stream"), not readonly)


# ---- DLPack --------------------------------------------------------------------------------

_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_INT, _DL_FLOAT, _DL_BFLOAT = 0, 2, 4
_DL_DTYPES = {(_DL_FLOAT, 64): "f64", (_DL_FLOAT, 32): "f32", (_DL_FLOAT, 16): "f16",
              (_DL_BFLOAT, 16): "bf16", (_DL_INT, 8): "i8", (_DL_INT, 32): "i32",
              (_DL_INT, 64): "i64"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _view_dlpack(obj: Any, stream: Optional[int] = None) -> ArrayView:
    device_type, device_id = obj.__dlpack_device__()
    if device_type == _DL_CPU:
        return _view_numpy(np.from_dlpack(obj))
    if device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise UsageError(f"a DLPack tensor on device type {device_type}: gemmkit takes CPU and CUDA memory")
    # The producer orders its pending work before `stream` (DLPack: 1 is the legacy default
    # stream, which is our 0).
    capsule = obj.__dlpack__(stream=1 if not stream else stream)
    # A DLManagedTensor starts with its DLTensor. The capsule stays unconsumed (not renamed),
    # so its destructor releases the tensor when the view lets go of it.
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    _no_scalars(shape)
    dtype = _DL_DTYPES.get((tensor.dtype.code, tensor.dtype.bits)) if tensor.dtype.lanes == 1 else None
    if dtype is None:
        raise _unsupported_dtype(f"DLPack code {tensor.dtype.code}, {tensor.dtype.bits} bits, "
                                 f"{tensor.dtype.lanes} lanes")
    strides = (tuple(tensor.strides[i] for i in range(ndim)) if tensor.strides
               else c_strides(shape))
    ptr = (tensor.data or 0) + tensor.byte_offset
    return ArrayView(ptr, shape, strides, dtype, int(tensor.device.device_id), "dlpack",
                     (obj, capsule))


# ---- dispatch ------------------------------------------------------------------------------

_VIEW_OF_TYPE: Dict[type, Callable[..., ArrayView]] = {np.ndarray: _view_numpy}


def _viewer(cls: type) -> Callable[..., ArrayView]:
    module = cls.__module__ or ""
    if module == "torch" or module.startswith("torch."):
        _import_torch()
        if issubclass(cls, _torch.Tensor):
            return _view_torch
    if module == "cupy" or module.startswith("cupy."):
        if issubclass(cls, _import_cupy().ndarray):
            return _view_cupy
    if issubclass(cls, np.ndarray):
        return _view_numpy
    return _view_other


def _view_other(obj: Any, stream: Optional[int] = None) -> ArrayView:
    # Asked of the object, not its type: the interfaces may be instance attributes.
    if hasattr(obj, "__cuda_array_interface__"):
        return _view_cai(obj, stream)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _view_dlpack(obj, stream)
    return _view_sequence(obj, stream)


def view(obj: Any, stream: Optional[int] = None) -> ArrayView:
    """``obj`` as an :class:`ArrayView`, without copying (lists and other sequences are
    copied by ``numpy.asarray``). ``stream``: the stream the caller will use the memory on,
    passed to a DLPack producer's ``__dlpack__`` so that it orders its own work before it
    (None or 0: the legacy default stream)."""
    cls = type(obj)
    viewer = _VIEW_OF_TYPE.get(cls)
    if viewer is None:
        viewer = _viewer(cls)
        _VIEW_OF_TYPE[cls] = viewer
    return viewer(obj, stream)


def current_stream(v: ArrayView) -> int:
    """The stream (a cudaStream_t as an int) on which the producer of ``v`` expects work on
    it: torch's current stream of the tensor's device, CuPy's current stream, a
    __cuda_array_interface__ object's 'stream' entry when it has one, else 0 (the legacy
    default stream). 0 for host memory."""
    if v.device is None:
        return 0
    framework = v.framework
    if framework == "torch":
        return _torch_raw_stream(v.device)  # type: ignore[misc]
    if framework == "cupy":
        return _cupy.cuda.get_current_stream().ptr
    if framework == "cai" and v.stream is not None:
        return int(v.stream)
    return 0


# ---- outputs and copies --------------------------------------------------------------------

def _device_framework() -> str:
    """The framework that allocates results for bare CAI and DLPack producers."""
    try:
        _import_cupy()
        return "cupy"
    except ImportError:
        pass
    try:
        _import_torch()
        return "torch"
    except ImportError:
        raise UsageError("a result on the GPU for a __cuda_array_interface__ or DLPack input is "
                         "allocated with CuPy or PyTorch, and neither is installed: pass c=") from None


def empty_like(v: ArrayView, shape: Tuple[int, ...], dtype: str) -> ArrayView:
    """A new C-contiguous array of ``shape`` and gemmkit dtype ``dtype`` on ``v``'s device,
    made by ``v``'s framework: numpy for host arrays (and lists), torch.empty for torch
    tensors (CPU or CUDA), cupy.empty for CuPy arrays. For a bare __cuda_array_interface__
    object or a DLPack producer on the GPU (e.g. JAX, whose arrays cannot be written), a
    CuPy array when CuPy is installed, else a torch tensor, else a UsageError; both are
    DLPack producers, so ``jax.dlpack.from_dlpack(result)`` takes it back without a copy."""
    framework = v.framework
    if v.device is not None and framework in ("cai", "dlpack"):
        framework = _device_framework()
    if framework == "torch":
        if _torch is None:
            _import_torch()
        if v.framework == "torch":
            # The tensor's own new_empty: its device and dtype without parsing them again.
            t = v.obj.new_empty(shape) if v.dtype == dtype else v.obj.new_empty(shape, dtype=_TORCH_DTYPE_OF[dtype])
        else:
            t = _torch.empty(shape, dtype=_TORCH_DTYPE_OF[dtype], device=f"cuda:{v.device}")
        return ArrayView(t.data_ptr(), t.shape, c_strides(shape), dtype, v.device, "torch", t)
    if framework == "cupy":
        cupy = _import_cupy()
        if dtype == "bf16":
            raise UsageError("CuPy has no bfloat16: pass c= (a torch tensor, say) for a bf16 result")
        with cupy.cuda.Device(v.device):
            arr = cupy.empty(shape, dtype=numpy_dtype(dtype))
        return ArrayView(arr.data.ptr, shape, c_strides(shape), dtype, v.device, "cupy", arr)
    arr = np.empty(shape, dtype=numpy_dtype(dtype))
    return ArrayView(arr.__array_interface__["data"][0], shape, c_strides(shape), dtype, None,
                     "numpy", arr)


def astype(v: ArrayView, dtype: str) -> ArrayView:
    """A copy of ``v`` converted to gemmkit dtype ``dtype`` by its framework (rounded to
    nearest; bf16 numpy arrays need ml_dtypes), on the same device; ``v`` itself when it
    already has that dtype."""
    if v.dtype == dtype:
        return v
    framework = v.framework
    if framework == "torch":
        return view(v.obj.to(_TORCH_DTYPE_OF[dtype]))
    if framework == "cupy":
        if dtype == "bf16":
            raise UsageError("CuPy has no bfloat16: convert with torch or pass bf16 arrays")
        return view(v.obj.astype(numpy_dtype(dtype)))
    if framework == "numpy":
        return view(v.obj.astype(numpy_dtype(dtype)))
    raise UsageError(f"converting a {framework} array to {dtype}: convert it with its own framework first")


def contiguous(v: ArrayView) -> ArrayView:
    """A C-contiguous copy of ``v`` made by its framework, on the same device."""
    framework = v.framework
    if framework == "torch":
        return view(v.obj.contiguous())
    if framework == "cupy":
        return view(_cupy.ascontiguousarray(v.obj))
    if framework == "numpy":
        return view(np.ascontiguousarray(v.obj))
    if v.device is not None and _device_framework() == "cupy":
        return view(_cupy.ascontiguousarray(_cupy.asarray(v.obj)))
    raise UsageError(f"a {framework} array with strides {v.strides} needs a contiguous copy: "
                     "make one with its framework first")


def to_host(v: ArrayView, copy: bool = False) -> ArrayView:
    """``v``'s data in host memory, C-contiguous, with its dtype (a torch bf16 tensor becomes
    a CPU torch tensor): ``v`` itself when it is a C-contiguous host array and ``copy`` is
    False, else a copy (torch: ``.cpu()``, which waits for the tensor's current stream;
    CuPy: ``cupy.asnumpy``)."""
    if v.device is None:
        if copy:
            if v.framework == "torch":
                return view(v.obj.clone(memory_format=_torch.contiguous_format))
            return view(np.array(v.obj, order="C", copy=True))
        return v if v.strides == c_strides(v.shape) else contiguous(v)
    framework = v.framework
    if framework == "torch":
        return view(v.obj.contiguous().cpu())
    if framework == "cupy" or _device_framework() == "cupy":
        cupy = _import_cupy()
        return view(cupy.asnumpy(cupy.ascontiguousarray(cupy.asarray(v.obj))))
    return view(_torch.as_tensor(v.obj, device=f"cuda:{v.device}").contiguous().cpu())
