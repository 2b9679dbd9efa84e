// The reference beside SUMMA on GPUs: cuBLASMp's cublasMpMatmul on the same device blocks and
// grid. gemmkit's blocks are row-major, rows device_ld() apart; read as column-major they are
// the blocks of the transpose, distributed over the transposed grid (Q x P, ranks in column-
// major order: rank r * Q + c is at (c, r)). So C = A B runs as C^T = B^T A^T on that grid,
// with no copy. cuBLASMp is loaded from the library CMake found when first used (dlopen), so
// that a gemmkit built with it runs where it is missing until this is called.

#include "runtime/cuda/device_buffer.hpp"
#include "distributed/nccl_common.hpp"
#include "gemmkit/timing.hpp"

#if GEMMKIT_HAVE_CUBLASMP
#include <cublasmp.h>
#include <dlfcn.h>
#endif

namespace gemmkit::dist {

#if !GEMMKIT_HAVE_CUBLASMP

bool cublasmp_available() { return false; }

double cublasmp_matmul(double, const DistMatrix&, const DistMatrix&, double, DistMatrix& c) {
  collective(c.grid().comm(), [] {
    fail(ErrorCategory::usage, "this gemmkit was built without cuBLASMp (GEMMKIT_CUBLASMP; docs/distributed.md)");
  });
  return 0;
}

#else

namespace {

// cuBLASMp's entries, its handle and grid, and the communicator over the whole grid it needs.
struct CublasMp {
  void* library = nullptr;
  decltype(&cublasMpCreate) create = nullptr;
  decltype(&cublasMpDestroy) destroy = nullptr;
  decltype(&cublasMpGridCreate) grid_create = nullptr;
  decltype(&cublasMpGridDestroy) grid_destroy = nullptr;
  decltype(&cublasMpMatrixDescriptorCreate) matrix_create = nullptr;
  decltype(&cublasMpMatrixDescriptorDestroy) matrix_destroy = nullptr;
  decltype(&cublasMpMatmulDescriptorCreate) matmul_create = nullptr;
  decltype(&cublasMpMatmulDescriptorDestroy) matmul_destroy = nullptr;
  decltype(&cublasMpMatmulDescriptorAttributeSet) matmul_set = nullptr;
  decltype(&cublasMpMatmul_bufferSize) buffer_size = nullptr;
  decltype(&cublasMpMatmul) matmul = nullptr;
  cublasMpHandle_t handle = nullptr;
  cublasMpGrid_t grid = nullptr;
  ncclComm_t world = nullptr;

  ~CublasMp() {
    if (grid) grid_destroy(grid);
    if (handle) destroy(handle);
    if (world) GEMMKIT_NCCL(ncclCommDestroy)(world);
    if (library) dlclose(library);
  }
};

template <class F>
void load(void* library, F& entry, const char* name) {
  entry = reinterpret_cast<F>(dlsym(library, name));
  if (!entry)
    fail(ErrorCategory::device, std::string("cuBLASMp (") + GEMMKIT_CUBLASMP_LIBRARY + ") has no " + name);
}

#define GEMMKIT_CUBLASMP_CHECK(call)                                                                  \
  do {                                                                                                \
    const cublasMpStatus_t gemmkit_status_ = (call);                                                  \
    if (gemmkit_status_ != CUBLASMP_STATUS_SUCCESS)                                                   \
      fail(ErrorCategory::device, std::string(#call) + " failed: cuBLASMp status " +                  \
                                      std::to_string(int(gemmkit_status_)));                          \
  } while (0)

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::f64: return CUDA_R_64F;
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: break;
  }
  fail(ErrorCategory::usage, "cublasmp_matmul takes f64, f32, f16 or bf16, not " + std::string(dtype_name(dtype)));
}

// The grid's cuBLASMp, made on first use (collective).
CublasMp& cublasmp_of(const GpuGrid& gpus) {
  GpuGrid::Impl& g = gpus.impl();
  if (g.cublasmp) return *static_cast<CublasMp*>(g.cublasmp.get());
  const ProcessGrid& grid = gpus.grid();
  auto mp = std::make_shared<CublasMp>();
  ncclUniqueId id;
  collective(grid.comm(), [&] {
    mp->library = dlopen(GEMMKIT_CUBLASMP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!mp->library)
      fail(ErrorCategory::device, std::string("cannot load cuBLASMp: ") + dlerror() +
                                      " (it needs NCCL, cuBLAS and, for 0.7, NVSHMEM's libnvshmem_host.so.3 on "
                                      "the library path)");
    load(mp->library, mp->create, "cublasMpCreate");
    load(mp->library, mp->destroy, "cublasMpDestroy");
    load(mp->library, mp->grid_create, "cublasMpGridCreate");
    load(mp->library, mp->grid_destroy, "cublasMpGridDestroy");
    load(mp->library, mp->matrix_create, "cublasMpMatrixDescriptorCreate");
    load(mp->library, mp->matrix_destroy, "cublasMpMatrixDescriptorDestroy");
    load(mp->library, mp->matmul_create, "cublasMpMatmulDescriptorCreate");
    load(mp->library, mp->matmul_destroy, "cublasMpMatmulDescriptorDestroy");
    load(mp->library, mp->matmul_set, "cublasMpMatmulDescriptorAttributeSet");
    load(mp->library, mp->buffer_size, "cublasMpMatmul_bufferSize");
    load(mp->library, mp->matmul, "cublasMpMatmul");
    if (grid.rank() == 0) GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGetUniqueId)(&id));
  });
  MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, grid.comm());
  collective(grid.comm(), [&] {
    GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device()));
    GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclCommInitRank)(&mp->world, grid.size(), id, grid.rank()));
  });
  collective(grid.comm(), [&] {
    GEMMKIT_CUBLASMP_CHECK(mp->create(&mp->handle, g.compute));
    // The transposes' grid: Q process rows, P columns, rank r * Q + c at (c, r): column-major.
    GEMMKIT_CUBLASMP_CHECK(mp->grid_create(grid.shape().cols, grid.shape().rows, CUBLASMP_GRID_LAYOUT_COL_MAJOR,
                                           mp->world, &mp->grid));
  });
  g.cublasmp = mp;
  return *mp;
}

}  // namespace

bool cublasmp_available() { return true; }

double cublasmp_matmul(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c) {
  const ProcessGrid& grid = c.grid();
  collective(grid.comm(), [&] {
    if (c.backend() != Backend::cuda)
      fail(ErrorCategory::usage, "cublasmp_matmul: the matrices must be in device memory (on a GpuGrid)");
    check_summa_operands(a, b, c);
    cuda_type(a.dtype());
  });
  const GpuGrid& gpus = *c.gpus();
  CublasMp& mp = cublasmp_of(gpus);
  GpuGrid::Impl& g = gpus.impl();
  const bool f64 = a.dtype() == DType::f64;
  const double alpha64 = alpha, beta64 = beta;
  const float alpha32 = float(alpha), beta32 = float(beta);
  // X (rows x cols in mb x nb blocks, row-major) is X^T (cols x rows in nb x mb blocks,
  // column-major, leading dimension device_ld()) on the transposed grid.
  struct Descriptors {
    CublasMp& mp;
    cublasMpMatrixDescriptor_t bt = nullptr, at = nullptr, ct = nullptr;
    cublasMpMatmulDescriptor_t matmul = nullptr;
    ~Descriptors() {
      for (auto d : {bt, at, ct})
        if (d) mp.matrix_destroy(d);
      if (matmul) mp.matmul_destroy(matmul);
    }
  } desc{mp};
  const auto describe = [&](const DistMatrix& x, cublasMpMatrixDescriptor_t& d) {
    const BlockCyclic& dist = x.distribution();
    GEMMKIT_CUBLASMP_CHECK(mp.matrix_create(x.cols(), x.rows(), dist.nb, dist.mb, 0, 0,
                                            std::max<std::int64_t>(1, x.device_ld()), cuda_type(x.dtype()),
                                            mp.grid, &d));
  };
  const void* alpha_p = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta_p = f64 ? static_cast<const void*>(&beta64) : &beta32;
  // C^T (n x m) = B^T (n x k) A^T (k x m); indices are 1-based, as in PBLAS.
  const std::int64_t m = c.cols(), n = c.rows(), k = a.cols();
  cuda::DeviceBuffer<unsigned char> device_work;
  std::vector<unsigned char> host_work;
  collective(grid.comm(), [&] {
    GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device()));
    describe(b, desc.bt);
    describe(a, desc.at);
    describe(c, desc.ct);
    GEMMKIT_CUBLASMP_CHECK(mp.matmul_create(&desc.matmul, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F));
    const cublasOperation_t no = CUBLAS_OP_N;
    GEMMKIT_CUBLASMP_CHECK(mp.matmul_set(desc.matmul, CUBLASMP_MATMUL_DESCRIPTOR_ATTRIBUTE_TRANSA, &no, sizeof no));
    GEMMKIT_CUBLASMP_CHECK(mp.matmul_set(desc.matmul, CUBLASMP_MATMUL_DESCRIPTOR_ATTRIBUTE_TRANSB, &no, sizeof no));
    std::size_t device_bytes = 0, host_bytes = 0;
    GEMMKIT_CUBLASMP_CHECK(mp.buffer_size(mp.handle, desc.matmul, m, n, k, alpha_p, b.device_data(), 1, 1, desc.bt,
                                          a.device_data(), 1, 1, desc.at, beta_p, c.device_data(), 1, 1, desc.ct,
                                          c.device_data(), 1, 1, desc.ct, &device_bytes, &host_bytes));
    device_work = cuda::DeviceBuffer<unsigned char>(device_bytes);
    host_work.resize(host_bytes);
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(g.compute));
  });
  // The timed call, between barriers; its failure is agreed after the second one.
  MPI_Barrier(grid.comm());
  cublasMpStatus_t status = CUBLASMP_STATUS_SUCCESS;
  cudaError_t synced = cudaSuccess;
  const double seconds = cpu_seconds([&] {
    status = mp.matmul(mp.handle, desc.matmul, m, n, k, alpha_p, b.device_data(), 1, 1, desc.bt, a.device_data(), 1,
                       1, desc.at, beta_p, c.device_data(), 1, 1, desc.ct, c.device_data(), 1, 1, desc.ct,
                       device_work.data(), device_work.bytes(), host_work.data(), host_work.size());
    synced = cudaStreamSynchronize(g.compute);
    MPI_Barrier(grid.comm());
  });
  collective(grid.comm(), [&] {
    GEMMKIT_CUBLASMP_CHECK(status);
    GEMMKIT_CUDA_CHECK(synced);
  });
  return seconds;
}

#endif

}  // namespace gemmkit::dist
