"""The default contexts: one per CUDA device and one for the CPU, made on first use.

A :class:`gemmkit.Context` holds cuBLAS/cuSPARSE handles and a workspace pool, which are
costly to make, so every call without ``context=`` reuses the default one of its device.
They live in this module (not in the C++ library) and are freed at interpreter exit.
"""

from __future__ import annotations

import threading
from typing import Optional

from ._gemmkit import Context

_lock = threading.Lock()
_contexts: dict = {}


def default_context(device: Optional[int] = None) -> Context:
    """The shared context of CUDA device ``device``, or of the CPU when ``device`` is None."""
    key = -1 if device is None else int(device)
    context = _contexts.get(key)
    if context is None:
        with _lock:
            context = _contexts.get(key)
            if context is None:
                context = Context("cpu") if key < 0 else Context("cuda", key)
                _contexts[key] = context
    return context


def resolve_context(context: Optional[Context], device: Optional[int]) -> Context:
    """``context`` when given (checked against ``device``), else the default one."""
    if context is None:
        return default_context(device)
    if device is not None and context.device != device:
        from ._gemmkit import UsageError

        raise UsageError(
            f"the context is of device {context.device} but the arrays are on device {device}"
        )
    return context
