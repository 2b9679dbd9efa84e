"""gemmkit.Plan on host arrays (the CPU context): planned once, run on new arrays with
matmul's results; arrays of another problem, plans no kernel can run and integer overflow
are refused. Integer-valued data keeps every product exact, so results compare equal."""

import numpy as np
import pytest

import gemmkit


def integers(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(dtype)


def test_planned_once_runs_new_arrays_as_matmul_does():
    a, b = integers((37, 53), 1), integers((53, 29), 2)
    plan = gemmkit.Plan(a, b)
    assert plan.kernel.startswith("cpu_") and plan.workspace_bytes == 0
    assert plan.context.backend == "cpu"
    for seed in (3, 4, 5):
        a2, b2 = integers((37, 53), seed), integers((53, 29), seed + 10)
        np.testing.assert_array_equal(plan(a2, b2), a2 @ b2)
        c = integers((37, 29), seed + 20)
        want = 2 * (a2 @ b2) - c
        out = plan(a2, b2, c=c, alpha=2, beta=-1)
        assert out is c
        np.testing.assert_array_equal(c, want)


def test_transposes_batches_and_a_named_kernel():
    a, b = integers((4, 7, 9), 1, np.float32), integers((11, 7), 2, np.float32)  # op(A) = A^T per item
    plan = gemmkit.Plan(a, b.T, transpose_a=True, kernel="cpu_naive")
    assert plan.kernel == "cpu_naive"
    a2, b2 = integers((4, 7, 9), 3, np.float32), integers((11, 7), 4, np.float32)
    got = plan(a2, b2.T)
    np.testing.assert_array_equal(got, np.transpose(a2, (0, 2, 1)) @ b2.T)
    np.testing.assert_array_equal(got, gemmkit.matmul(a2, b2.T, transpose_a=True, kernel="cpu_blocked"))


def test_arrays_of_another_problem_are_refused_naming_the_field():
    a, b = integers((6, 4), 1), integers((4, 5), 2)
    plan = gemmkit.Plan(a, b)
    with pytest.raises(gemmkit.UsageError, match=r"M 7, the plan's 6"):
        plan(integers((7, 4), 3), b)
    with pytest.raises(gemmkit.UsageError, match=r"dtype f32, the plan's f64"):
        plan(a.astype(np.float32), b.astype(np.float32))
    wide = np.zeros((6, 8))
    wide[:, :4] = a
    with pytest.raises(gemmkit.UsageError, match=r"lda 8, the plan's 4"):
        plan(wide[:, :4], b)
    with pytest.raises(gemmkit.UsageError, match="shape mismatch"):
        plan(a, integers((5, 5), 4))


def test_a_problem_no_kernel_takes_is_refused_at_planning():
    a = integers((8, 8), 1, np.int32)
    with pytest.raises(gemmkit.UsageError, match="cpu_openblas"):
        gemmkit.Plan(a, a, kernel="cpu_openblas")
    with pytest.raises(gemmkit.UsageError, match="no_such_kernel"):
        gemmkit.Plan(a, a, kernel="no_such_kernel")


def test_integer_results_are_exact_or_refused():
    a = np.full((3, 2), 1 << 16, np.int32)
    plan = gemmkit.Plan(a, a.T.copy())
    with pytest.raises(gemmkit.NumericError):
        plan(a, a.T.copy())  # 2 * 2^32 does not fit int32
    small = np.full((3, 2), 3, np.int32)
    np.testing.assert_array_equal(plan(small, small.T.copy()), np.full((3, 3), 18, np.int32))
