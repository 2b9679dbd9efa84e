"""No leaks: 10^5 calls of matmul (and many of every other function, failing calls too)
leave the process's resident memory where it was, and nanobind reports no leaked object
at exit."""

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gemmkit

PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def growth_over(call, calls: int) -> int:
    """Resident bytes gained over `calls` calls, after a warm-up that fills caches and pools."""
    for _ in range(min(calls, 2000)):
        call()
    gc.collect()
    before = resident_bytes()
    for _ in range(calls):
        call()
    gc.collect()
    return resident_bytes() - before


# A leak of one small object per call (a 64-byte result, a Python int, a dict) over 10^5 calls
# is 6 MB or more; the allocator's own variation is far below that.
LIMIT = 4 << 20


def test_matmul_100k_calls():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 8))
    b = rng.standard_normal((8, 8))
    assert growth_over(lambda: gemmkit.matmul(a, b), 100_000) < LIMIT


def test_matmul_in_place_and_failing_calls():
    a = np.ones((4, 5), dtype=np.float32)
    b = np.arange(15, dtype=np.float32).reshape(5, 3)
    c = np.zeros((4, 3), dtype=np.float32)
    wrong = np.ones((4, 4), dtype=np.float32)

    def calls():
        gemmkit.matmul(a, b, c=c, beta=0.5)
        with pytest.raises(ValueError):
            gemmkit.matmul(a, wrong)

    assert growth_over(calls, 50_000) < LIMIT


def test_toolkit_calls():
    x = np.arange(1, 65, dtype=np.float64)
    edges = [(0, 1), (1, 2), (2, 0), (2, 3)]

    def calls():
        gemmkit.reduce(x)
        gemmkit.conv1d(x, np.array([1.0, -2.0, 1.0]))
        gemmkit.walks(edges, 5, source=0, target=0)
        gemmkit.kernels("spmv")

    assert growth_over(calls, 20_000) < LIMIT


def test_no_leaked_objects_at_exit():
    """nanobind counts the instances, functions and types still alive when the module is
    torn down and prints 'leaked' for any: none may be."""
    script = textwrap.dedent(
        """
        import numpy as np, gemmkit
        a = np.ones((3, 3))
        for _ in range(1000):
            gemmkit.matmul(a, a)
            gemmkit.Context("cpu")
            try:
                gemmkit.matmul(a, np.ones((4, 4)))
            except ValueError:
                pass
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "leak" not in result.stderr, result.stderr
