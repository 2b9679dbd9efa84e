"""gemmkit.matmul on GPU tensors: torch (and CuPy, bare __cuda_array_interface__ objects and
DLPack producers) in and out on one device, the producer's current stream, every dtype
against a float64 reference and torch.matmul. Skipped, saying why, without torch or a GPU."""

import numpy as np
import pytest

import gemmkit
from gemmkit import _arrays

torch = pytest.importorskip("torch", reason="PyTorch is not installed: no GPU tensor tests")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)
if not gemmkit.cuda_available():
    pytest.skip("this gemmkit build has no CUDA backend or sees no device", allow_module_level=True)

DEVICE = torch.device("cuda", 0)
TORCH_DTYPE = {"f64": torch.float64, "f32": torch.float32, "tf32": torch.float32,
               "f16": torch.float16, "bf16": torch.bfloat16}
# Relative Frobenius error against the float64 product of the same (rounded) inputs.
TOLERANCE = {"f64": 1e-12, "f32": 1e-5, "tf32": 2e-3, "f16": 5e-3, "bf16": 2e-2}


def randn(*shape, dtype=torch.float32, generator=None):
    return torch.randn(*shape, device=DEVICE, generator=generator).to(dtype)


def rel_error(got, want):
    got = got.double()
    want = want.double()
    return float(torch.linalg.norm(got - want) / torch.linalg.norm(want))


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(17)


@pytest.mark.parametrize("name", ["f64", "f32", "tf32", "f16", "bf16"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (65, 33, 17), (256, 128, 512), (1000, 500, 300)])
def test_dtypes_agree_with_float64_and_torch(name, shape):
    m, n, k = shape
    a = randn(m, k, dtype=TORCH_DTYPE[name])
    b = randn(k, n, dtype=TORCH_DTYPE[name])
    # auto takes every shape: tf32 on our Hopper rungs where they accept it, else cuBLAS TF32.
    c = gemmkit.matmul(a, b, dtype=name if name == "tf32" else None)
    assert isinstance(c, torch.Tensor)
    assert c.device == DEVICE and c.dtype == a.dtype and c.shape == (m, n) and c.is_contiguous()
    want = a.double() @ b.double()
    assert rel_error(c, want) < TOLERANCE[name]
    if name not in ("f64", "tf32"):  # torch's f32 may use TF32 when the user allowed it
        assert rel_error(c, torch.matmul(a, b)) < 2 * TOLERANCE[name]


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_half_inputs_f32_result(name):
    a = randn(128, 64, dtype=TORCH_DTYPE[name])
    b = randn(64, 96, dtype=TORCH_DTYPE[name])
    c = gemmkit.matmul(a, b, out_dtype="f32")
    assert c.dtype == torch.float32
    assert rel_error(c, a.double() @ b.double()) < 1e-5
    c2 = torch.empty(128, 96, device=DEVICE)
    assert gemmkit.matmul(a, b, c=c2) is c2
    assert rel_error(c2, c) < 1e-6


def test_current_stream_is_used_without_user_synchronisation():
    side = torch.cuda.Stream()
    a = torch.zeros(512, 512, device=DEVICE)
    source = randn(512, 512)
    b = randn(512, 512)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        assert _arrays.current_stream(_arrays.view(a)) == side.cuda_stream
        # The copy into `a` waits ~20 ms behind a sleep on `side`: a product read on another
        # stream would see the zeros.
        torch.cuda._sleep(40_000_000)
        a.copy_(source)
        c = gemmkit.matmul(a, b)
        d = c * 2  # ordered after the product on the same stream
    side.synchronize()
    assert rel_error(c, source.double() @ b.double()) < 1e-5
    assert rel_error(d, 2 * (source.double() @ b.double())) < 1e-5


def test_explicit_stream_argument():
    side = torch.cuda.Stream()
    a = torch.zeros(256, 256, device=DEVICE)
    source = randn(256, 256)
    b = randn(256, 256)
    c = torch.zeros(256, 256, device=DEVICE)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(40_000_000)
        a.copy_(source)
    gemmkit.matmul(a, b, c=c, stream=side)  # a torch.cuda.Stream
    gemmkit.matmul(a, b, c=c, beta=1.0, stream=side.cuda_stream)  # an int
    side.synchronize()
    assert rel_error(c, 2 * (source.double() @ b.double())) < 1e-5


def test_batched_and_broadcast():
    a = randn(6, 100, 80)
    b = randn(6, 80, 70)
    c = gemmkit.matmul(a, b)
    assert c.shape == (6, 100, 70)
    assert rel_error(c, a.double() @ b.double()) < 1e-5
    b2 = randn(80, 70)
    assert rel_error(gemmkit.matmul(a, b2), a.double() @ b2.double()) < 1e-5
    a_bf = a.bfloat16()
    b_bf = b.bfloat16()
    assert rel_error(gemmkit.matmul(a_bf, b_bf), a_bf.double() @ b_bf.double()) < 2e-2
    # Expanded (batch stride 0) operands are read in place.
    expanded = b2.expand(6, 80, 70)
    assert rel_error(gemmkit.matmul(a, expanded), a.double() @ b2.double()) < 1e-5


def test_transposed_views_and_flags():
    a = randn(300, 200)
    b = randn(150, 300)
    c = gemmkit.matmul(a.t(), b.t())  # F-ordered views: no copies
    assert rel_error(c, a.t().double() @ b.t().double()) < 1e-5
    c = gemmkit.matmul(a, b, transpose_a=True, transpose_b=True)
    assert rel_error(c, a.t().double() @ b.t().double()) < 1e-5
    big = randn(400, 400)
    sub_a, sub_b = big[10:210, 5:105], big[100:200, 300:380]  # leading dimension 400
    assert rel_error(gemmkit.matmul(sub_a, sub_b), sub_a.double() @ sub_b.double()) < 1e-5
    stepped = big[::2, ::2][:100, :100]  # copied first
    assert rel_error(gemmkit.matmul(stepped, stepped), stepped.double() @ stepped.double()) < 1e-5


def test_c_in_place():
    a = randn(128, 64)
    b = randn(64, 32)
    for c in (randn(128, 32), randn(32, 128).t(), randn(128, 64)[:, 10:42]):
        c0 = c.double().clone()
        out = gemmkit.matmul(a, b, c=c, alpha=2.0, beta=-0.5, verify="full")
        assert out is c
        assert rel_error(c, 2 * (a.double() @ b.double()) - 0.5 * c0) < 1e-5


def test_verify_on_device_and_named_kernels():
    a = randn(256, 256)
    b = randn(256, 256)
    gemmkit.matmul(a, b, verify="auto")
    cc = torch.cuda.get_device_capability(DEVICE)
    cc = cc[0] * 10 + cc[1]
    ran, refused = [], []
    for entry in gemmkit.kernels("gemm"):
        if entry["backend"] != "cuda" or "f32" not in entry["dtypes"] or entry["min_compute_capability"] > cc:
            continue
        try:
            c = gemmkit.matmul(a, b, kernel=entry["name"], verify="auto")
        except gemmkit.UsageError as e:
            refused.append((entry["name"], str(e)))
            continue
        assert rel_error(c, a.double() @ b.double()) < TOLERANCE["tf32"], entry["name"]
        ran.append(entry["name"])
    assert ran, refused
    with pytest.raises(gemmkit.UsageError, match="no_such_kernel"):
        gemmkit.matmul(a, b, kernel="no_such_kernel")
    with pytest.raises(gemmkit.UsageError):
        gemmkit.matmul(a, b, kernel="cpu_blocked")  # a CPU kernel for device memory


def test_integers():
    a = torch.randint(-100, 100, (64, 48), device=DEVICE, dtype=torch.int32)
    b = torch.randint(-100, 100, (48, 40), device=DEVICE, dtype=torch.int32)
    try:
        c = gemmkit.matmul(a, b, verify="exact")
    except gemmkit.UsageError as e:
        pytest.skip(f"no CUDA kernel takes i32: {e}")
    assert c.dtype == torch.int32
    assert c.cpu().tolist() == (a.cpu().long() @ b.cpu().long()).tolist()


def test_errors():
    a = randn(10, 20)
    with pytest.raises(gemmkit.UsageError, match="host memory"):
        gemmkit.matmul(a, torch.randn(20, 5))
    with pytest.raises(gemmkit.UsageError, match="shape mismatch"):
        gemmkit.matmul(a, randn(10, 5))
    with pytest.raises(gemmkit.UsageError, match="mixed dtypes"):
        gemmkit.matmul(a, randn(20, 5).double())
    with pytest.raises(gemmkit.UsageError):
        gemmkit.matmul(a, randn(20, 5), context=gemmkit.Context("cpu"))
    with pytest.raises(gemmkit.UsageError, match="unsupported dtype"):
        gemmkit.matmul(a.to(torch.complex64), randn(20, 5).to(torch.complex64))


def test_torch_cpu_tensors_stay_torch():
    a = torch.randn(30, 20)
    b = torch.randn(20, 10)
    c = gemmkit.matmul(a, b)
    assert isinstance(c, torch.Tensor) and c.device.type == "cpu"
    assert rel_error(c, a.double() @ b.double()) < 1e-5


class CudaArrayInterfaceOnly:
    """Only __cuda_array_interface__ (version 3, with the producer's stream)."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


class DLPackOnly:
    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def test_cuda_array_interface_and_dlpack_producers():
    a = randn(70, 50)
    b = randn(50, 30)
    want = a.double() @ b.double()
    for wrap in (CudaArrayInterfaceOnly, DLPackOnly):
        c = gemmkit.matmul(wrap(a), wrap(b))
        torch.cuda.synchronize()
        got = torch.as_tensor(c, device=DEVICE)  # a CuPy array or a torch tensor
        assert rel_error(got, want) < 1e-5, wrap.__name__
        out = torch.zeros(70, 30, device=DEVICE)
        gemmkit.matmul(wrap(a), wrap(b), c=CudaArrayInterfaceOnly(out))
        torch.cuda.synchronize()
        assert rel_error(out, want) < 1e-5, wrap.__name__


def test_cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    a = cupy.random.standard_normal((120, 80), dtype=cupy.float32)
    b = cupy.random.standard_normal((80, 60), dtype=cupy.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        assert _arrays.current_stream(_arrays.view(a)) == stream.ptr
        c = gemmkit.matmul(a, b)
    stream.synchronize()
    assert isinstance(c, cupy.ndarray) and c.dtype == cupy.float32
    want = cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64)
    got = cupy.asnumpy(c).astype(np.float64)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5


def test_no_leaks_over_many_calls():
    a = randn(32, 32)
    b = randn(32, 32)
    c = torch.empty(32, 32, device=DEVICE)
    context = gemmkit.default_context(0)
    for _ in range(100):
        gemmkit.matmul(a, b, c=c)
    allocations = context.workspace_allocations
    memory = torch.cuda.memory_allocated(DEVICE)
    for _ in range(20_000):
        gemmkit.matmul(a, b)
        gemmkit.matmul(a, b, c=c)
    torch.cuda.synchronize()
    assert context.workspace_allocations == allocations
    assert torch.cuda.memory_allocated(DEVICE) == memory


def test_fast_path_is_taken_and_equals_the_general_path(monkeypatch):
    """matmul(a, b) of contiguous CUDA tensors skips the general planning (the per-call cost
    of small products) and gives the bits the general path gives."""
    a = randn(96, 80)
    b = randn(80, 72)
    gemmkit.matmul(a, b)  # the first call imports torch into gemmkit's array layer
    general = gemmkit.matmul(a, b, c=torch.empty(96, 72, device=DEVICE))

    def no_planning(*args, **kwargs):
        raise AssertionError("the general path ran")

    with monkeypatch.context() as patch:
        patch.setattr(gemmkit._matmul, "_plan", no_planning)
        fast = gemmkit.matmul(a, b)
        for odd in (a.t().contiguous().t(), a.double(), a[:, :40]):  # views, dtypes, shapes
            with pytest.raises((AssertionError, ValueError)):
                gemmkit.matmul(odd, b)
    torch.cuda.synchronize()
    assert torch.equal(fast, general)


def test_new_result_on_another_stream_is_recorded_there():
    """A result allocated by torch on its current stream but written on `stream=` stays
    reserved until that stream's work is done: freeing it and allocating again at once does
    not hand its memory to a new tensor that the product would still overwrite."""
    side = torch.cuda.Stream()
    a = randn(512, 512)
    b = randn(512, 512)
    want = a.double() @ b.double()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(40_000_000)  # the product below waits behind this on `side`
    c = gemmkit.matmul(a, b, stream=side)
    address = c.data_ptr()
    del c
    reused = torch.full((512, 512), 7.0, device=DEVICE)  # on the current stream
    side.synchronize()
    torch.cuda.synchronize()
    if reused.data_ptr() == address:
        assert torch.all(reused == 7.0), "the product overwrote memory torch had reused"
    result = gemmkit.matmul(a, b, stream=side)
    side.synchronize()
    assert rel_error(result, want) < 1e-5
