"""The package itself: errors, contexts, devices, the catalogue, versions."""

import pytest

import gemmkit


def test_version_matches_the_library():
    assert gemmkit.__version__ == gemmkit.versions()["gemmkit"]
    assert gemmkit.__version__.count(".") == 2


def test_error_classes_derive_from_the_builtins_users_expect():
    assert issubclass(gemmkit.UsageError, ValueError)
    assert issubclass(gemmkit.InputError, ValueError)
    assert issubclass(gemmkit.OutOfMemoryError, MemoryError)
    assert issubclass(gemmkit.DeviceError, RuntimeError)
    for cls in (gemmkit.UsageError, gemmkit.DeviceError, gemmkit.NumericError):
        assert issubclass(cls, gemmkit.Error)
    assert gemmkit.UsageError.category == "usage"


def test_a_library_error_carries_its_message_and_class():
    with pytest.raises(gemmkit.UsageError, match="unknown backend 'tpu'"):
        gemmkit.Context("tpu")


def test_cpu_context():
    context = gemmkit.Context("cpu")
    assert context.backend == "cpu"
    assert context.device == -1
    assert context.compute_capability == 0
    assert gemmkit.default_context() is gemmkit.default_context()


def test_device_without_a_gpu_says_why():
    if gemmkit.cuda_available():
        info = gemmkit.device()
        assert info["sm_count"] > 0 and info["total_global_memory"] > 0
        with pytest.raises(gemmkit.UsageError, match="no CUDA device 1000"):
            gemmkit.device(1000)
    else:
        with pytest.raises(gemmkit.DeviceError, match="^no CUDA device: "):
            gemmkit.device()
        with pytest.raises(gemmkit.DeviceError):
            gemmkit.Context("cuda")


def test_catalogue_lists_every_operation():
    rows = gemmkit.kernels()
    operations = {row["operation"] for row in rows}
    assert operations == {"gemm", "reduce", "spmv", "conv1d", "transpose", "modular", "walks"}
    assert ("transpose", "cpu_reference") in {(row["operation"], row["name"]) for row in rows}
    names = {(row["operation"], row["name"]) for row in rows}
    assert ("gemm", "cpu_openblas") in names or any(r["role"] == "reference" for r in rows)
    gemm = gemmkit.kernels("gemm")
    assert gemm and all(row["operation"] == "gemm" for row in gemm)
    with pytest.raises(gemmkit.UsageError):
        gemmkit.kernels("fft")


def test_type_stubs_and_docstrings_are_installed():
    import ast
    import inspect
    from pathlib import Path

    package = Path(gemmkit.__file__).parent
    assert (package / "py.typed").exists()
    stub = (package / "_gemmkit.pyi").read_text()
    tree = ast.parse(stub)
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert {"Context", "catalogue", "devices", "versions"} <= names
    for name in gemmkit.__all__:
        obj = getattr(gemmkit, name)
        if callable(obj):
            assert inspect.getdoc(obj), f"gemmkit.{name} has no docstring"
