"""gemmkit.bench: a tiny CPU benchmark, as rows (DataFrame or list) with the run's meta."""

import pytest

import gemmkit

COLUMNS = {"kernel", "backend", "rung", "reference", "dtype", "accuracy", "m", "n", "k", "batch",
           "skipped", "failed", "note", "reps", "median_ms", "min_ms", "max_ms", "noisy", "noisy_reason", "gflops",
           "percent_of_reference", "percent_of_copy", "paired_reference_median_ms", "error", "error_method",
           "tolerance", "tolerance_dtype", "passed"}


def tiny(**kwargs):
    return gemmkit.bench(sizes=[16, 32], reps=1, warmup=0, backend="cpu", **kwargs)


def test_rows_as_a_list_with_a_reference_beside_the_kernels():
    rows = tiny(kernels=["cpu_naive", "cpu_blocked"], as_frame=False)
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    assert COLUMNS <= set(rows[0])
    assert [(r["kernel"], r["m"]) for r in rows] == [
        ("cpu_openblas", 16), ("cpu_naive", 16), ("cpu_blocked", 16),
        ("cpu_openblas", 32), ("cpu_naive", 32), ("cpu_blocked", 32)]
    for r in rows:
        assert r["backend"] == "cpu" and r["dtype"] == "f32" and (r["n"], r["k"]) == (r["m"],) * 2
        assert r["reference"] == (r["kernel"] == "cpu_openblas")
        assert not r["skipped"] and not r["failed"] and r["passed"]
        assert r["reps"] == 1 and r["median_ms"] > 0 and r["gflops"] > 0
        assert r["error_method"] == "full" and 0 <= r["error"] <= r["tolerance"]
        assert r["percent_of_reference"] > 0
    assert rows.report["percent_of"] == "cpu_openblas" and rows.report["all_passed"]
    assert rows.meta["gemmkit_version"] == gemmkit.__version__
    assert rows.meta["schema_version"] >= 1 and rows.meta["cpu_threads"] >= 1


def test_rows_as_a_dataframe():
    pandas = pytest.importorskip("pandas")
    frame = tiny(kernels="cpu_naive", dtype="f64", transpose_b=True)
    assert isinstance(frame, pandas.DataFrame)
    assert COLUMNS <= set(frame.columns)
    assert list(frame["kernel"]) == ["cpu_openblas", "cpu_naive"] * 2
    assert set(frame["dtype"]) == {"f64"} and frame["passed"].all()
    assert frame.attrs["meta"]["device_name"] and frame.attrs["report"]["backend"] == "cpu"
    assert isinstance(tiny(kernels="cpu_naive", as_frame=True), pandas.DataFrame)


def test_every_kernel_of_the_backend_and_shapes():
    rows = gemmkit.bench(shapes=[(8, 12, 4), "5x3x7"], reps=1, warmup=0, backend="cpu",
                         as_frame=False, batch=2, layout="col")
    cpu = {k["name"] for k in gemmkit.kernels("gemm") if k["backend"] == "cpu"
           and "f32" in k["dtypes"]}
    assert {r["kernel"] for r in rows} == cpu
    assert {(r["m"], r["n"], r["k"]) for r in rows} == {(8, 12, 4), (5, 3, 7)}
    assert all(r["batch"] == 2 and r["passed"] for r in rows)


def test_progress_callable_sees_every_run():
    seen = []
    rows = tiny(kernels=["cpu_naive"], as_frame=False,
                progress=lambda done, total, kernel, shape: seen.append((done, total, kernel, shape)))
    assert seen == [(1, 4, "cpu_openblas", "16x16x16"), (2, 4, "cpu_naive", "16x16x16"),
                    (3, 4, "cpu_openblas", "32x32x32"), (4, 4, "cpu_naive", "32x32x32")]
    assert len(rows) == 4


def test_an_exception_in_progress_stops_the_run():
    def stop(*_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tiny(kernels=["cpu_naive"], progress=stop)


def test_bad_options_raise_value_errors():
    with pytest.raises(ValueError, match="unknown kernel"):
        tiny(kernels=["no_such_kernel"])
    with pytest.raises(ValueError, match="unknown dtype"):
        tiny(dtype="f128")
    with pytest.raises(ValueError, match="not row or col"):
        tiny(layout="diagonal")
    with pytest.raises(ValueError, match="one of sizes= or shapes="):
        gemmkit.bench(sizes=[4], shapes=[(4, 4, 4)])
    with pytest.raises(ValueError, match="is not"):
        gemmkit.bench(shapes=["4x4"], backend="cpu")
    with pytest.raises(ValueError, match="cuda_cublas"):
        tiny(kernels=["cuda_cublas"])
