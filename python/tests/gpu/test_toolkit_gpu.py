"""reduce, spmv, conv1d, walks and bench on the GPU: torch tensors in and out on their device
and the producer's current stream (a non-default one too), numpy with backend='cuda', every
result against float64 / exact references. Skipped, saying why, without torch or a GPU."""

import math

import numpy as np
import pytest

import gemmkit

torch = pytest.importorskip("torch", reason="PyTorch is not installed: no GPU tensor tests")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)
if not gemmkit.cuda_available():
    pytest.skip("this gemmkit build has no CUDA backend or sees no device", allow_module_level=True)

scipy_sparse = pytest.importorskip("scipy.sparse")

DEVICE = torch.device("cuda", 0)
DTYPES = [torch.float32, torch.float64]


def eps(dtype):
    return torch.finfo(dtype).eps


def sum_bound(n, sum_abs, dtype):
    """The library's bound on any GPU kernel's sum (gemmkit/reduce.hpp:
    reduce_sum_error_bound): gamma_h * sum |x_i|, h = min(n - 1, ceil(n / 16384) + 1024)."""
    h = min(n - 1, -(-n // 16384) + 1024)
    u = eps(dtype) / 2
    return h * u / (1 - h * u) * sum_abs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", ["auto", "reduce0_fold", "vec16_two_pass", "cub"])
def test_reduce_on_torch_tensors(dtype, kernel):
    x = torch.randn(1_000_003, device=DEVICE, dtype=torch.float64).to(dtype)
    total = gemmkit.reduce(x, kernel=kernel)
    assert isinstance(total, torch.Tensor) and total.device == DEVICE and total.shape == ()
    exact = math.fsum(x.double().cpu().numpy().tolist())
    sum_abs = float(x.double().abs().sum())
    assert abs(float(total) - exact) <= sum_bound(x.numel(), sum_abs, dtype)
    assert float(gemmkit.reduce(x, "max", kernel=kernel)) == float(x.max())
    assert float(gemmkit.reduce(x, "min", kernel=kernel)) == float(x.min())


def test_reduce_on_a_non_default_stream():
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.full((1 << 24,), 0.5, device=DEVICE)  # queued on `stream`
        total = gemmkit.reduce(x)  # must be ordered after the fill on the same stream
        x.fill_(2.0)  # and before this
        again = gemmkit.reduce(x)
    stream.synchronize()
    assert float(total) == 0.5 * (1 << 24) and float(again) == 2.0 * (1 << 24)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_numpy_on_the_gpu_with_copies(dtype):
    x = np.random.default_rng(1).standard_normal(100_000).astype(
        np.float32 if dtype == torch.float32 else np.float64)
    on_gpu = gemmkit.reduce(x, backend="cuda")
    on_cpu = gemmkit.reduce(x)
    assert isinstance(on_gpu, type(on_cpu))
    assert abs(float(on_gpu) - float(on_cpu)) <= 2 * sum_bound(x.size, float(np.abs(x).sum()), dtype)
    assert gemmkit.reduce(x, "max", backend="cuda") == x.max()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", ["auto", "scalar", "vector", "merge_path", "cusparse"])
def test_spmv_on_torch_sparse_csr(dtype, kernel):
    # The generator positionally: scipy calls it random_state, later versions rng.
    a = scipy_sparse.random(2000, 1500, 0.01, "csr", np.float64, np.random.default_rng(3))
    x = np.random.default_rng(4).standard_normal(1500)
    ta = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                 torch.from_numpy(a.indices.astype(np.int64)),
                                 torch.from_numpy(a.data), size=a.shape,
                                 dtype=dtype, device=DEVICE)
    tx = torch.from_numpy(x).to(device=DEVICE, dtype=dtype)
    y = gemmkit.spmv(ta, tx, kernel=kernel)
    assert isinstance(y, torch.Tensor) and y.device == DEVICE and y.dtype == dtype
    a_rounded = a.copy()
    a_rounded.data = ta.values().double().cpu().numpy()
    x_rounded = tx.double().cpu().numpy()
    ref = a_rounded @ x_rounded
    bound = (abs(a_rounded) @ np.abs(x_rounded)) * (a.getnnz(axis=1) + 1) * eps(dtype)
    assert np.all(np.abs(y.double().cpu().numpy() - ref) <= bound)
    # The same from scipy with copies.
    y_host = gemmkit.spmv(a.astype(np.float64), x, backend="cuda", kernel=kernel)
    assert isinstance(y_host, np.ndarray)
    np.testing.assert_allclose(y_host, a @ x, rtol=0, atol=float(np.max(
        (abs(a) @ np.abs(x)) * (a.getnnz(axis=1) + 1) * 2.3e-16)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", ["auto", "basic", "constant_mask", "tiled", "streaming"])
@pytest.mark.parametrize("width", [1, 4, 7])
def test_conv1d_on_torch_tensors(dtype, kernel, width):
    x = torch.rand(100_001, device=DEVICE, dtype=torch.float64).to(dtype) * 2 - 1
    mask = torch.rand(width, dtype=torch.float64).to(dtype) * 2 - 1
    y = gemmkit.conv1d(x, mask, kernel=kernel)
    assert isinstance(y, torch.Tensor) and y.device == DEVICE and y.shape == x.shape
    xs, ms = x.double().cpu().numpy(), mask.double().numpy()
    h = width // 2
    ref = np.correlate(xs, ms, "full")[width - 1 - h:][: len(xs)]
    scale = np.correlate(np.abs(xs), np.abs(ms), "full")[width - 1 - h:][: len(xs)]
    assert np.all(np.abs(y.double().cpu().numpy() - ref) <= (width + 1) * eps(dtype) * scale + 1e-300)
    # A mask on the GPU is read through host memory.
    assert torch.equal(gemmkit.conv1d(x, mask.to(DEVICE), kernel=kernel), y)


def test_conv1d_numpy_on_the_gpu_with_copies():
    x = np.linspace(-1, 1, 5001)
    mask = np.array([0.25, 0.5, 0.25])
    np.testing.assert_allclose(gemmkit.conv1d(x, mask, backend="cuda"), gemmkit.conv1d(x, mask),
                               rtol=0, atol=1e-15)


def test_mixed_places_and_cpu_backend_are_refused():
    x = torch.ones(3, device=DEVICE)
    with pytest.raises(ValueError, match="CUDA device 0"):
        gemmkit.reduce(x, backend="cpu")
    a = scipy_sparse.eye(3, format="csr", dtype=np.float32)
    with pytest.raises(ValueError, match="same place"):
        gemmkit.spmv(a, x)


def test_walks_on_the_gpu_equal_the_cpu():
    n = 600  # above the GPU engine's 512-vertex threshold
    edges = [(v, (v * 5 + d) % n) for v in range(n) for d in (1, 2, 4, 8)]
    gpu = gemmkit.walks(edges, 40, undirected=True, backend="cuda")
    cpu = gemmkit.walks(edges, 40, undirected=True, backend="cpu")
    assert gpu.gpu is not None and gpu.gpu["products"] > 0
    assert gpu.counts.tolist() == cpu.counts.tolist()
    assert max(gpu.counts.ravel()) > 2**64


def test_bench_on_the_gpu():
    rows = gemmkit.bench(["cuda_tiled_unrolled"], sizes=[256], reps=2, warmup=1, backend="cuda",
                         as_frame=False)
    names = [r["kernel"] for r in rows]  # the references first (cuBLAS the primary one)
    assert names[0] == "cuda_cublas" and names[-1] == "cuda_tiled_unrolled"
    assert all(r["reference"] for r in rows[:-1])
    assert all(r["passed"] and r["gflops"] > 0 for r in rows)
    assert rows.report["paired"] and rows.meta["gpu"]["name"]
