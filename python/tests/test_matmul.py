"""gemmkit.matmul on numpy arrays (the CPU backend): agreement with higher-precision and exact
references, layouts without copies, batches, in-place c, kernels, verification, errors."""

import numpy as np
import pytest

import gemmkit
from gemmkit import _arrays

try:
    import ml_dtypes  # noqa: F401

    HAVE_ML_DTYPES = True
except ImportError:
    HAVE_ML_DTYPES = False

rng = np.random.default_rng(17)


def reference(a, b, c=None, alpha=1, beta=0, trans_a=False, trans_b=False):
    """alpha op(A) op(B) + beta C in long double (batched with numpy's broadcasting)."""
    a = np.asarray(a, dtype=np.longdouble)
    b = np.asarray(b, dtype=np.longdouble)
    if trans_a:
        a = np.swapaxes(a, -1, -2)
    if trans_b:
        b = np.swapaxes(b, -1, -2)
    out = np.longdouble(alpha) * np.matmul(a, b)
    if beta:
        out = out + np.longdouble(beta) * np.asarray(c, dtype=np.longdouble)
    return out


def exact(a, b):
    """The exact integer product, in Python integers."""
    a = np.asarray(a).tolist()
    b = np.asarray(b).tolist()
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


def rel_error(got, want):
    got = np.asarray(got, dtype=np.longdouble)
    return float(np.linalg.norm((got - want).ravel()) / np.linalg.norm(np.asarray(want).ravel()))


TOLERANCE = {"f64": 1e-13, "f32": 1e-5, "f16": 5e-3, "bf16": 3e-2}


@pytest.mark.parametrize("dtype", ["f64", "f32", "f16"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 5, 3), (33, 65, 17), (128, 96, 200)])
def test_float_agreement(dtype, shape):
    m, n, k = shape
    np_dtype = _arrays.numpy_dtype(dtype)
    a = rng.standard_normal((m, k)).astype(np_dtype)
    b = rng.standard_normal((k, n)).astype(np_dtype)
    c = gemmkit.matmul(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np_dtype and c.shape == (m, n)
    assert c.flags.c_contiguous
    assert rel_error(c, reference(a, b)) < TOLERANCE[dtype]


def test_bf16_through_ml_dtypes():
    if not HAVE_ML_DTYPES:
        pytest.skip("ml_dtypes is not installed: no bfloat16 numpy arrays")
    bf16 = _arrays.numpy_dtype("bf16")
    a = rng.standard_normal((40, 30)).astype(bf16)
    b = rng.standard_normal((30, 20)).astype(bf16)
    c = gemmkit.matmul(a, b)
    assert c.dtype == bf16
    assert rel_error(c.astype(np.float64), reference(a.astype(np.float64), b.astype(np.float64))) < 3e-2
    c32 = gemmkit.matmul(a, b, out_dtype="f32")
    assert c32.dtype == np.float32
    c16 = gemmkit.matmul(rng.standard_normal((8, 9)), rng.standard_normal((9, 4)), dtype="bf16")
    assert c16.dtype == bf16


def test_f16_inputs_with_f32_result_and_dtype_conversion():
    a = rng.standard_normal((20, 30)).astype(np.float16)
    b = rng.standard_normal((30, 10)).astype(np.float16)
    c = gemmkit.matmul(a, b, out_dtype="f32")
    assert c.dtype == np.float32
    assert rel_error(c, reference(a, b)) < 1e-5  # f16 products are exact in f32 sums
    a64 = rng.standard_normal((20, 30))
    b64 = rng.standard_normal((30, 10))
    c = gemmkit.matmul(a64, b64, dtype="f16")
    assert c.dtype == np.float16
    assert rel_error(c, reference(a64.astype(np.float16), b64.astype(np.float16))) < 5e-3


@pytest.mark.parametrize("np_dtype", [np.int32, np.int64])
def test_integers_are_exact(np_dtype):
    a = rng.integers(-1000, 1000, (23, 31)).astype(np_dtype)
    b = rng.integers(-1000, 1000, (31, 19)).astype(np_dtype)
    c = gemmkit.matmul(a, b, verify="exact")
    assert c.dtype == np_dtype
    assert c.tolist() == exact(a, b)
    big = np.full((2, 3), 1_500_000_001, dtype=np.int64)  # sums past 2^53, below 2^63
    assert gemmkit.matmul(big, big.T.copy()).tolist() == exact(big, big.T)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_transposes(trans_a, trans_b):
    a = rng.standard_normal((30, 20) if trans_a else (20, 30))
    b = rng.standard_normal((10, 30) if trans_b else (30, 10))
    c = gemmkit.matmul(a, b, transpose_a=trans_a, transpose_b=trans_b)
    assert c.shape == (20, 10)
    assert rel_error(c, reference(a, b, trans_a=trans_a, trans_b=trans_b)) < 1e-13


def test_fortran_order_and_strided_views():
    base = rng.standard_normal((40, 50))
    a_f = np.asfortranarray(base[:20, :30])
    b = rng.standard_normal((30, 10))
    assert rel_error(gemmkit.matmul(a_f, b), reference(a_f, b)) < 1e-13
    # Unit stride along rows, leading dimension 50: a view, read in place.
    a_view = base[5:25, 3:33]
    b_view = base.T[7:37, 1:11]  # unit stride along columns
    assert rel_error(gemmkit.matmul(a_view, b_view), reference(a_view, b_view)) < 1e-13
    # Steps in both directions and negative strides are copied first.
    a_step = base[::2, ::3][:20, :15]
    b_neg = base[::-1, :][:15, :12]
    assert rel_error(gemmkit.matmul(a_step, b_neg), reference(a_step, b_neg)) < 1e-13
    # A broadcast (stride 0) operand.
    row = np.broadcast_to(rng.standard_normal(15), (20, 15))
    assert rel_error(gemmkit.matmul(row, b_neg), reference(row, b_neg)) < 1e-13


def test_c_in_place_with_alpha_and_beta():
    a = rng.standard_normal((12, 9))
    b = rng.standard_normal((9, 7))
    for c in (rng.standard_normal((12, 7)), np.asfortranarray(rng.standard_normal((12, 7))),
              rng.standard_normal((12, 20))[:, 3:10]):
        c0 = c.copy()
        out = gemmkit.matmul(a, b, c=c, alpha=-1.5, beta=0.25, verify="full")
        assert out is c
        assert rel_error(c, reference(a, b, c0, -1.5, 0.25)) < 1e-13


def test_beta_zero_ignores_nans_in_c():
    a = rng.standard_normal((6, 5))
    b = rng.standard_normal((5, 4))
    c = np.full((6, 4), np.nan)
    gemmkit.matmul(a, b, c=c)
    assert rel_error(c, reference(a, b)) < 1e-13


def test_integer_alpha_beta_in_place():
    a = rng.integers(-50, 50, (8, 6)).astype(np.int64)
    b = rng.integers(-50, 50, (6, 5)).astype(np.int64)
    c = rng.integers(-50, 50, (8, 5)).astype(np.int64)
    want = [[3 * x + -2 * y for x, y in zip(r1, r2)] for r1, r2 in zip(exact(a, b), c.tolist())]
    gemmkit.matmul(a, b, c=c, alpha=3, beta=-2, verify="auto")
    assert c.tolist() == want


def test_batched_and_broadcast():
    a = rng.standard_normal((4, 10, 8))
    b = rng.standard_normal((4, 8, 6))
    c = gemmkit.matmul(a, b, verify="full")
    assert c.shape == (4, 10, 6)
    assert rel_error(c, reference(a, b)) < 1e-13
    b2 = rng.standard_normal((8, 6))
    assert rel_error(gemmkit.matmul(a, b2), reference(a, b2)) < 1e-13
    a2 = rng.standard_normal((10, 8))
    assert rel_error(gemmkit.matmul(a2, b), reference(a2, b)) < 1e-13
    one = rng.standard_normal((1, 8, 6))
    assert gemmkit.matmul(a, one).shape == (4, 10, 6)
    assert rel_error(gemmkit.matmul(a, one), reference(a, one)) < 1e-13
    # Batched with transposed (F-ordered per matrix) views and c in place.
    at = np.swapaxes(rng.standard_normal((4, 8, 10)), 1, 2)
    c = np.zeros((4, 10, 6))
    assert gemmkit.matmul(at, b, c=c) is c
    assert rel_error(c, reference(at, b)) < 1e-13


@pytest.mark.parametrize("shape", [(0, 5, 3), (4, 0, 3), (4, 5, 0), (0, 0, 0)])
def test_empty_sizes(shape):
    m, n, k = shape
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    c = gemmkit.matmul(a, b)
    assert c.shape == (m, n)
    assert (c == 0).all()
    c0 = rng.standard_normal((m, n))
    c1 = c0.copy()
    gemmkit.matmul(a, b, c=c1, beta=2.0)
    assert np.array_equal(c1, 2.0 * c0)


def test_named_kernels():
    a = rng.standard_normal((33, 17)).astype(np.float32)
    b = rng.standard_normal((17, 29)).astype(np.float32)
    cpu = [k["name"] for k in gemmkit.kernels("gemm") if k["backend"] == "cpu" and "f32" in k["dtypes"]]
    assert cpu
    for name in cpu:
        c = gemmkit.matmul(a, b, kernel=name, verify="full")
        assert rel_error(c, reference(a, b)) < 1e-5, name
    with pytest.raises(gemmkit.UsageError, match="no_such_kernel"):
        gemmkit.matmul(a, b, kernel="no_such_kernel")


def test_verify_modes_pass():
    a = rng.standard_normal((50, 40))
    b = rng.standard_normal((40, 30))
    for mode in ("auto", "full", "freivalds"):
        assert rel_error(gemmkit.matmul(a, b, verify=mode), reference(a, b)) < 1e-13
    ai = rng.integers(-9, 9, (50, 40)).astype(np.float64)
    assert gemmkit.matmul(ai, ai.T.copy(), verify="exact").tolist() == exact(ai, ai.T)
    with pytest.raises(gemmkit.UsageError, match="exact"):
        gemmkit.matmul(a, b, verify="exact")  # not integer-valued inputs
    with pytest.raises(gemmkit.UsageError, match="unknown verify mode 'sometimes'"):
        gemmkit.matmul(a, b, verify="sometimes")


@pytest.mark.parametrize("verify", ["none", "auto", "exact"])
def test_integer_results_never_wrap(verify):
    # The case: 4 * 2^80 is 0 modulo 2^64, and was returned as 0 with verify='none'.
    big = np.full((4, 4), 2**40, np.int64)
    with pytest.raises(gemmkit.NumericError, match=r"the exact result at \(0, 0\) is 4835703278458516698824704, "
                                                   r"which does not fit i64"):
        gemmkit.matmul(big, big, verify=verify)
    # Only the entry past the range: row 1 of A is 2^62 + 2^62 in row 1 of C.
    a = np.array([[1, 1], [2**62, 2**62]], np.int64)
    with pytest.raises(gemmkit.NumericError, match=r"at \(1, 0\) is 9223372036854775808"):
        gemmkit.matmul(a, np.ones((2, 3), np.int64), verify=verify)
    # An F-ordered c: the entry is named as c holds it; alpha, beta and C0 count:
    # 3 * 2^30 + (2^31 - 1) at (0, 1) only.
    a = np.array([[0, 2**15], [0, 0]], np.int32)
    b = np.array([[0, 0], [0, 2**15]], np.int32)
    c = np.asfortranarray(np.array([[5, 2**31 - 1], [7, 9]], np.int32))
    with pytest.raises(gemmkit.NumericError, match=r"at \(0, 1\) is 5368709119, which does not fit i32"):
        gemmkit.matmul(a, b, c=c, alpha=3, beta=1, verify=verify)
    # Terms past the range that cancel are exact and fine, also where the bound cannot tell.
    cancel = np.array([[2**62, -(2**62), 2**62, -(2**62)]], np.int64)
    assert gemmkit.matmul(cancel, np.ones((4, 2), np.int64), verify=verify).tolist() == [[0, 0]]


def test_int8_inputs_give_exact_int32_on_the_cpu():
    a = rng.integers(-128, 128, (37, 300)).astype(np.int8)
    b = rng.integers(-128, 128, (300, 29)).astype(np.int8)
    c = gemmkit.matmul(a, b)
    assert c.dtype == np.int32 and c.tolist() == exact(a, b)
    assert gemmkit.matmul(a, b, out_dtype="i32", verify="full").tolist() == exact(a, b)
    # In place, with alpha and beta; and the batched form.
    c0 = rng.integers(-1000, 1000, (37, 29)).astype(np.int32)
    c1 = c0.copy()
    gemmkit.matmul(a, b, c=c1, alpha=-2, beta=3)
    assert c1.tolist() == [[-2 * x + 3 * y for x, y in zip(r, r0)] for r, r0 in zip(exact(a, b), c0.tolist())]
    ab = rng.integers(-128, 128, (3, 5, 7)).astype(np.int8)
    bb = rng.integers(-128, 128, (3, 7, 4)).astype(np.int8)
    assert gemmkit.matmul(ab, bb).tolist() == [exact(x, y) for x, y in zip(ab, bb)]
    # An int8 product past int32 is refused like any other.
    full = np.full((1, 140000), -128, np.int8)
    with pytest.raises(gemmkit.NumericError, match=r"\(0, 0\) is 2293760000, which does not fit i32"):
        gemmkit.matmul(full, full.T.copy())


def test_output_dtypes_are_the_librarys():
    # Two terms below 2^62 each: the sums leave i32 and fit i64.
    i32 = rng.integers(-2**31 + 1, 2**31, (6, 2), dtype=np.int64).astype(np.int32)
    wide = gemmkit.matmul(i32, i32.T.copy(), out_dtype="i64")
    assert wide.dtype == np.int64 and wide.tolist() == exact(i32, i32.T)
    with pytest.raises(gemmkit.UsageError, match="C in f32 for i8 inputs: C is i32"):
        gemmkit.matmul(np.ones((2, 2), np.int8), np.ones((2, 2), np.int8), out_dtype="f32")
    with pytest.raises(gemmkit.UsageError, match="C in i64 for f64 inputs: C is f64"):
        gemmkit.matmul(np.ones((2, 2)), np.ones((2, 2)), out_dtype="i64")
    with pytest.raises(gemmkit.UsageError, match="C in i8 for i8 inputs: C is i32"):
        gemmkit.matmul(np.ones((2, 2), np.int8), np.ones((2, 2), np.int8), c=np.zeros((2, 2), np.int8))
    c = np.zeros((6, 6), np.int64)
    assert gemmkit.matmul(i32, i32.T.copy(), c=c) is c and c.tolist() == exact(i32, i32.T)


def test_an_empty_kernel_name_is_unknown():
    a = rng.standard_normal((3, 3))
    with pytest.raises(gemmkit.UsageError, match="unknown kernel ''"):
        gemmkit.matmul(a, a, kernel="")


def test_verify_fails_on_a_result_f16_cannot_hold():
    # 300 * 300 * 4 = 360000 is past f16's largest finite value (65504): the product is inf,
    # and the check against the exact product fails as an overflow, naming the entry, the
    # exact value and the kernel.
    a = np.full((4, 4), 300, np.float16)
    assert np.isinf(gemmkit.matmul(a, a)).all()
    with pytest.raises(gemmkit.NumericError, match=r"verification \(full.*failed for kernel .*numeric overflow: "
                       r"the exact result at \(0, 0\) is 360000, beyond f16 \(largest finite 65504\)"):
        gemmkit.matmul(a, a, verify="full")
    assert issubclass(gemmkit.NumericError, ArithmeticError)


def test_result_shares_no_memory_and_inputs_are_not_copied():
    a = rng.standard_normal((16, 12))
    b = rng.standard_normal((12, 8))
    c = gemmkit.matmul(a, b)
    assert not np.shares_memory(c, a) and not np.shares_memory(c, b)
    # The kernel reads the inputs' own memory: the product of a view sees later writes to
    # its base (no hidden copy), and an input passed as c is both read and written.
    va = _arrays.view(a)
    assert va.ptr == a.__array_interface__["data"][0] and va.strides == (12, 1)
    square = rng.standard_normal((12, 12))
    want = reference(square, square, square, 1.0, 1.0)
    out = square.copy()
    gemmkit.matmul(square, square, c=out, beta=1.0)
    assert rel_error(out, want) < 1e-13
    # F-ordered input: the view is its own memory read as a transpose.
    f = np.asfortranarray(a)
    assert _arrays.view(f).ptr == f.__array_interface__["data"][0]
    assert _arrays.view(f).strides == (1, 16)


def test_lists_and_scalars_of_alpha():
    c = gemmkit.matmul([[1, 2], [3, 4]], [[5, 6], [7, 8]])
    assert c.tolist() == [[19, 22], [43, 50]]
    assert gemmkit.matmul(np.eye(2), np.eye(2), alpha=np.float64(2)).tolist() == [[2, 0], [0, 2]]


def test_errors():
    a = rng.standard_normal((4, 5))
    b = rng.standard_normal((6, 3))
    with pytest.raises(ValueError, match=r"shape mismatch: op\(A\) is 4x5, op\(B\) is 6x3"):
        gemmkit.matmul(a, b)
    with pytest.raises(gemmkit.UsageError, match="shape mismatch"):
        gemmkit.matmul(rng.standard_normal((3, 4, 5)), rng.standard_normal((2, 5, 3)))
    with pytest.raises(gemmkit.UsageError, match="mixed dtypes: A is f64 and B is f32"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)).astype(np.float32))
    with pytest.raises(gemmkit.UsageError, match="1 dimension"):
        gemmkit.matmul(rng.standard_normal(5), rng.standard_normal((5, 3)))
    with pytest.raises(gemmkit.UsageError, match="4 dimensions"):
        gemmkit.matmul(rng.standard_normal((2, 2, 4, 5)), rng.standard_normal((5, 3)))
    with pytest.raises(gemmkit.UsageError, match="0-d"):
        gemmkit.matmul(np.float64(2.0), a)
    with pytest.raises(gemmkit.UsageError, match="unsupported dtype 'complex128'"):
        gemmkit.matmul(a.astype(complex), a.T.astype(complex))
    with pytest.raises(gemmkit.UsageError, match="unsupported dtype"):
        gemmkit.matmul(np.array([["a"]]), np.array([["b"]]))
    with pytest.raises(gemmkit.UsageError, match="unsupported dtype 'bool'"):
        gemmkit.matmul(np.ones((2, 2), bool), np.ones((2, 2), bool))
    with pytest.raises(gemmkit.UsageError, match=r"c has shape \(4, 4\), the result's is \(4, 3\)"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), c=np.zeros((4, 4)))
    with pytest.raises(gemmkit.UsageError, match="C in f32 for f64 inputs: C is f64"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), c=np.zeros((4, 3), np.float32))
    with pytest.raises(gemmkit.UsageError, match="read-only"):
        ro = np.zeros((4, 3))
        ro.flags.writeable = False
        gemmkit.matmul(a, rng.standard_normal((5, 3)), c=ro)
    with pytest.raises(gemmkit.UsageError, match="beta != 0"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), beta=1.0)
    with pytest.raises(gemmkit.UsageError, match="tf32"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), dtype="tf32")
    with pytest.raises(gemmkit.UsageError, match="unknown dtype 'f128'"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), dtype="f128")
    with pytest.raises(gemmkit.UsageError, match="unknown backend 'tpu'"):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), backend="tpu")
    with pytest.raises(gemmkit.UsageError, match="non-integer|integer"):
        ai = np.ones((2, 2), np.int64)
        gemmkit.matmul(ai, ai, alpha=0.5)
    # Nothing half-written: a refused call leaves c as it was.
    c = rng.standard_normal((4, 3))
    c0 = c.copy()
    with pytest.raises(gemmkit.UsageError):
        gemmkit.matmul(a, rng.standard_normal((5, 3)), c=c, kernel="no_such_kernel")
    assert np.array_equal(c, c0)


def test_cuda_backend_for_host_arrays():
    a = rng.standard_normal((20, 10)).astype(np.float32)
    b = rng.standard_normal((10, 5)).astype(np.float32)
    if not gemmkit.cuda_available():
        with pytest.raises(gemmkit.DeviceError):
            gemmkit.matmul(a, b, backend="cuda")
        return
    c = gemmkit.matmul(a, b, backend="cuda", verify="auto")
    assert isinstance(c, np.ndarray) and rel_error(c, reference(a, b)) < 1e-5


def test_ozaki_moduli_refused_off_the_emulation():
    a = rng.standard_normal((40, 30))
    b = rng.standard_normal((30, 20))
    # The library's words: the kernels that take moduli, from the registry's traits.
    takers = "moduli 12 is (for cuda_ozaki_f64 \\(cuda\\), cuda_ozaki_f32 \\(cuda\\)|taken by no kernel of this build \\(it was built without the CUDA backend\\))"
    with pytest.raises(gemmkit.UsageError, match=takers):
        gemmkit.matmul(a, b, moduli=12)
    with pytest.raises(gemmkit.UsageError, match=takers + "; not for cpu_blocked"):
        gemmkit.matmul(a, b, kernel="cpu_blocked", moduli=12)
    with pytest.raises(gemmkit.UsageError, match="cuda_ozaki_f64"):  # unknown, or on another backend
        gemmkit.matmul(a, b, kernel="cuda_ozaki_f64", backend="cpu", moduli=12)


def test_ozaki_moduli_on_the_gpu():
    if not gemmkit.cuda_available():
        pytest.skip("this gemmkit build has no CUDA backend or sees no device")
    a = rng.standard_normal((40, 30))
    b = rng.standard_normal((30, 20))
    want = reference(a, b)
    for moduli in (0, 12, 16):  # the default plan, and fixed ones (12: about 40 bits)
        c = gemmkit.matmul(a, b, backend="cuda", kernel="cuda_ozaki_f64", moduli=moduli)
        assert rel_error(c, want) < (1e-15 if moduli != 12 else 1e-10), moduli
    with pytest.raises(gemmkit.UsageError, match="2 to 53 moduli, not 1"):
        gemmkit.matmul(a, b, backend="cuda", kernel="cuda_ozaki_f64", moduli=1)


def test_many_calls_do_not_leak():
    import resource

    a = rng.standard_normal((8, 8))
    b = rng.standard_normal((8, 8))
    for _ in range(2000):
        gemmkit.matmul(a, b)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(100_000):
        gemmkit.matmul(a, b)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 8 * 1024, f"max RSS grew by {grown_kib} KiB over 10^5 calls"


def test_gemm_time_runs_the_same_call_in_a_cpp_loop():
    from gemmkit import _gemmkit

    a = rng.standard_normal((16, 16))
    c = np.zeros((16, 16))
    ptr = a.__array_interface__["data"][0]
    args = ("f64", "", False, False, 16, 16, 16, 1.0, ptr, 16, ptr, 16, 0.0,
            c.__array_interface__["data"][0], 16, 1, 0, 0, 0)
    seconds, host_seconds, ran = _gemmkit.gemm_time(gemmkit.default_context(), *args, "cpu_naive",
                                                    0, 1, 7, True)
    assert len(seconds) == 7 and all(s > 0 for s in seconds) and host_seconds >= sum(seconds)
    assert ran == "cpu_naive"
    assert rel_error(c, reference(a, a)) < 1e-13
    seconds, _, _ = _gemmkit.gemm_time(gemmkit.default_context(), *args, "auto", 0, 0, 5, False)
    assert len(seconds) == 1
    with pytest.raises(gemmkit.UsageError, match="reps"):
        _gemmkit.gemm_time(gemmkit.default_context(), *args, "auto", 0, 0, 0, True)


class HostDLPack:
    """Only the DLPack protocol, over a numpy array (as a host-memory producer would be)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_host_dlpack_producers_are_read_without_copies():
    a = rng.standard_normal((9, 7))
    b = rng.standard_normal((7, 5))
    va = _arrays.view(HostDLPack(a))
    assert va.ptr == a.__array_interface__["data"][0] and va.device is None
    c = gemmkit.matmul(HostDLPack(a), HostDLPack(b))
    assert isinstance(c, np.ndarray)
    assert rel_error(c, reference(a, b)) < 1e-13


def test_array_views_report_layouts_and_refuse_clearly():
    f = np.asfortranarray(rng.standard_normal((4, 6)).astype(np.float32))
    v = _arrays.view(f)
    assert (v.shape, v.strides, v.dtype, v.device, v.framework) == ((4, 6), (1, 4), "f32", None, "numpy")
    assert _arrays.view(np.zeros((2, 3, 4), np.int32)).strides == (12, 4, 1)
    with pytest.raises(gemmkit.UsageError, match="big-endian dtype >f8"):
        _arrays.view(np.zeros((2, 2), ">f8"))
    with pytest.raises(gemmkit.UsageError, match="0-d"):
        _arrays.view(np.zeros(()))
    with pytest.raises(gemmkit.UsageError, match="unsupported dtype 'uint8'"):
        _arrays.view(np.zeros((2, 2), np.uint8))
    assert _arrays.current_stream(v) == 0
