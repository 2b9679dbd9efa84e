"""Devices, the kernel catalogue and versions."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import _gemmkit


def devices() -> List[Dict[str, Any]]:
    """One dict of properties per CUDA device (empty without a device or a CUDA build)."""
    found, _reason, _message = _gemmkit.devices()
    return found


def cuda_available() -> bool:
    """Whether this build has the CUDA backend and a CUDA device can be used."""
    return bool(devices())


def device(index: int = 0) -> Dict[str, Any]:
    """The properties of CUDA device ``index`` (name, compute capability, SMs, memory,
    limits, peaks). Raises :class:`gemmkit.DeviceError` saying why when there is no device,
    and :class:`gemmkit.UsageError` for an index out of range."""
    found, _reason, message = _gemmkit.devices()
    if not found:
        raise _gemmkit.DeviceError(f"no CUDA device: {message}")
    if not 0 <= index < len(found):
        raise _gemmkit.UsageError(
            f"no CUDA device {index}: there are {len(found)} (0 to {len(found) - 1})"
        )
    return found[index]


def kernels(operation: Optional[str] = None, *, as_frame: Optional[bool] = None):
    """The catalogue: every kernel of every operation, or of ``operation`` ('gemm',
    'reduce', 'spmv', 'conv1d'), one dict per kernel (operation, name, backend, rung, role,
    summary, dtypes, accuracy, min_compute_capability, auto, batched).

    ``as_frame``: a pandas DataFrame instead of the list; None (the default) gives the list.
    """
    rows = _gemmkit.catalogue(operation or "")
    if as_frame:
        import pandas

        return pandas.DataFrame(rows)
    return rows


def versions() -> Dict[str, Any]:
    """gemmkit's version and commit, and the CUDA runtime, driver and cuBLAS versions."""
    return _gemmkit.versions()
