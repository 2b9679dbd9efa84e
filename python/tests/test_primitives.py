"""reduce, spmv and conv1d on host arrays (the CPU backend) against numpy and scipy in
float64 / long double, dtypes, empty inputs and errors."""

import math
from fractions import Fraction

import numpy as np
import pytest

import gemmkit

scipy_sparse = pytest.importorskip("scipy.sparse")

DTYPES = [np.float32, np.float64]

# A GPU kernel asked for where it cannot run: on the CPU backend of a CUDA build, or in a
# build without CUDA, whose CUDA parts register no kernels at all.
GPU_KERNEL_ON_CPU = ("runs on the cuda backend" if gemmkit._gemmkit.cuda_compiled
                     else "built without the CUDA backend")


def exact_sum(x):
    """The correctly rounded sum of x's values, in float64 (math.fsum is exact)."""
    return math.fsum(float(v) for v in x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_agrees_with_an_exact_reference(dtype):
    rng = np.random.default_rng(3)
    # Values of mixed signs and magnitudes: a naive float32 sum would lose digits.
    x = (rng.standard_normal(100_003) * 10.0 ** rng.integers(-3, 4, 100_003)).astype(dtype)
    total = gemmkit.reduce(x)
    assert isinstance(total, dtype)
    # The CPU backend sums in long double and rounds once: the exact sum rounded to dtype.
    assert total == dtype(exact_sum(x))
    assert gemmkit.reduce(x, "min") == x.min() and gemmkit.reduce(x, "max") == x.max()
    norm = gemmkit.reduce(x, "norm2")
    ref = math.sqrt(math.fsum(float(v) ** 2 for v in x))
    assert abs(float(norm) - ref) <= 2 * np.finfo(dtype).eps * ref
    # Any shape and any strides: every value.
    view = x[: 100_000].reshape(400, 250)[:, ::3]
    assert gemmkit.reduce(view) == dtype(exact_sum(view.ravel()))


def test_reduce_semantics_of_empty_and_special_values():
    empty = np.array([], dtype=np.float64)
    assert gemmkit.reduce(empty) == 0.0
    assert gemmkit.reduce(empty, "min") == np.inf
    assert gemmkit.reduce(empty, "max") == -np.inf
    assert math.isnan(gemmkit.reduce(np.array([1.0, np.nan, 3.0]), "min"))
    assert math.isnan(gemmkit.reduce(np.array([np.inf, -np.inf])))
    # float32 norm2 accumulates in double: squares past float32's range do not overflow.
    big = np.array([2e38, 1e38], dtype=np.float32)
    expected = np.float32(math.sqrt(float(big[0]) ** 2 + float(big[1]) ** 2))
    assert np.isfinite(expected) and gemmkit.reduce(big, "norm2") == expected


@pytest.mark.parametrize("dtype", DTYPES)
def test_spmv_agrees_with_scipy(dtype):
    rng = np.random.default_rng(5)
    # The generator positionally: scipy calls it random_state, later versions rng.
    a = scipy_sparse.random(300, 200, 0.05, "csr", np.float64, np.random.default_rng(6))
    a = a.astype(dtype)
    x = rng.standard_normal(200).astype(dtype)
    y = gemmkit.spmv(a, x)
    assert y.dtype == dtype and y.shape == (300,)
    # Each row summed in long double and rounded once: against exact rational sums.
    eps = Fraction(float(np.finfo(dtype).eps))
    for r in range(a.shape[0]):
        start, end = a.indptr[r], a.indptr[r + 1]
        terms = [Fraction(float(a.data[i])) * Fraction(float(x[a.indices[i]]))
                 for i in range(start, end)]
        assert abs(Fraction(float(y[r])) - sum(terms)) <= eps * sum(abs(t) for t in terms)
    assert np.count_nonzero(y) > 250


def test_spmv_takes_any_sparse_format_and_non_canonical_csr():
    dense = np.array([[1.0, 0, 2], [0, 0, 0], [0, 3.0, 0], [4.0, 5.0, 6.0]])
    x = np.array([1.0, 10.0, 100.0])
    for a in (scipy_sparse.coo_matrix(dense), scipy_sparse.csc_matrix(dense),
              scipy_sparse.lil_matrix(dense)):
        np.testing.assert_array_equal(gemmkit.spmv(a, x), dense @ x)
    # Unsorted columns and a duplicate entry (scipy keeps both until summed).
    a = scipy_sparse.csr_matrix((np.array([2.0, 1.0, 0.5, 0.5]), np.array([2, 0, 1, 1]),
                                 np.array([0, 2, 4])), shape=(2, 3))
    assert not a.has_canonical_format
    np.testing.assert_array_equal(gemmkit.spmv(a, x), a.toarray() @ x)
    # int64 row offsets (the wide-offset path).
    wide = scipy_sparse.csr_matrix(dense)
    wide.indptr = wide.indptr.astype(np.int64)
    np.testing.assert_array_equal(gemmkit.spmv(wide, x), dense @ x)


def test_spmv_dtypes_and_empty_matrices():
    a = scipy_sparse.csr_matrix(np.array([[1, 2], [3, 4]], dtype=np.int64))
    x = np.array([1.0, -1.0], dtype=np.float32)
    y = gemmkit.spmv(a, x, dtype="f32")
    assert y.dtype == np.float32 and y.tolist() == [-1.0, -1.0]
    assert gemmkit.spmv(a, x, dtype=np.float64).dtype == np.float64
    empty = scipy_sparse.csr_matrix((0, 3), dtype=np.float64)
    assert gemmkit.spmv(empty, np.ones(3)).shape == (0,)
    zero = scipy_sparse.csr_matrix((4, 3), dtype=np.float64)
    np.testing.assert_array_equal(gemmkit.spmv(zero, np.ones(3)), np.zeros(4))


def test_spmv_errors():
    a = scipy_sparse.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="x must be a vector of 3 values"):
        gemmkit.spmv(a, np.ones(4))
    with pytest.raises(ValueError, match="f64 and x is f32"):
        gemmkit.spmv(a, np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match=r"must be a scipy \(or CuPy\) sparse matrix"):
        gemmkit.spmv(np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match="unknown kernel 'fastest'"):
        gemmkit.spmv(a, np.ones(3), kernel="fastest")
    with pytest.raises(ValueError, match=GPU_KERNEL_ON_CPU):
        gemmkit.spmv(a, np.ones(3), kernel="merge_path")
    with pytest.raises(ValueError, match="i32"):
        gemmkit.spmv(a.astype(np.int32), np.ones(3, dtype=np.int32))


def conv1d_reference(x, mask):
    """y[i] = sum_j mask[j] x[i + j - w//2] with zeros outside x, in exact float64 sums."""
    n, w = len(x), len(mask)
    y = np.empty(n)
    for i in range(n):
        y[i] = math.fsum(float(mask[j]) * float(x[i + j - w // 2]) for j in range(w)
                         if 0 <= i + j - w // 2 < n)
    return y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", [1, 4, 5, 8])
def test_conv1d_agrees_with_numpy(dtype, width):
    rng = np.random.default_rng(width)
    x = rng.uniform(-1, 1, 500).astype(dtype)
    mask = rng.uniform(-1, 1, width).astype(dtype)
    y = gemmkit.conv1d(x, mask)
    assert y.dtype == dtype and y.shape == x.shape
    ref = conv1d_reference(x, mask)
    # numpy's own correlation says the same (the library's boundary rule as numpy spells it).
    h = width // 2
    np_ref = np.correlate(x.astype(np.float64), mask.astype(np.float64), "full")
    np.testing.assert_allclose(np_ref[width - 1 - h: width - 1 - h + len(x)], ref, atol=1e-12)
    # The CPU reference sums in long double and rounds once.
    scale = conv1d_reference(np.abs(x), np.abs(mask))
    assert np.all(np.abs(y - ref) <= np.finfo(dtype).eps * scale)


def test_conv1d_edges_and_errors():
    x = np.arange(1.0, 6.0)
    np.testing.assert_array_equal(gemmkit.conv1d(x, np.array([2.0])), 2 * x)
    np.testing.assert_array_equal(gemmkit.conv1d(x, np.array([1.0, 0, 0])), [0, 1, 2, 3, 4])
    assert gemmkit.conv1d(np.array([], dtype=np.float64), np.array([1.0])).shape == (0,)
    with pytest.raises(ValueError, match="mask is empty"):
        gemmkit.conv1d(x, np.array([], dtype=np.float64))
    with pytest.raises(ValueError, match="same dtype"):
        gemmkit.conv1d(x, np.array([1.0], dtype=np.float32))
    with pytest.raises(ValueError, match="1-D"):
        gemmkit.conv1d(x.reshape(5, 1), np.array([1.0]))
    with pytest.raises(ValueError, match=GPU_KERNEL_ON_CPU):
        gemmkit.conv1d(x, np.array([1.0]), kernel="tiled")


def test_reduce_errors():
    x = np.ones(3)
    with pytest.raises(ValueError, match="unknown op 'prod'"):
        gemmkit.reduce(x, "prod")
    with pytest.raises(ValueError, match="f32 or f64, not i64"):
        gemmkit.reduce(np.arange(3, dtype=np.int64))
    with pytest.raises(ValueError, match="unknown backend"):
        gemmkit.reduce(x, backend="tpu")
    with pytest.raises(ValueError, match=GPU_KERNEL_ON_CPU):
        gemmkit.reduce(x, kernel="vec16_two_pass")


def test_kernel_names_and_contexts():
    ctx = gemmkit.Context("cpu")
    x = np.linspace(-1, 2, 101)
    assert gemmkit.reduce(x, kernel="cpu_reference", context=ctx) == np.float64(exact_sum(x))
    assert gemmkit.reduce(x, backend="cpu") == gemmkit.reduce(x)


@pytest.mark.skipif(gemmkit.cuda_available(), reason="checks the message without a device")
def test_cuda_without_a_device_says_why():
    with pytest.raises(gemmkit.DeviceError):
        gemmkit.reduce(np.ones(3), backend="cuda")
