#include "version_text.hpp"

#include "gemmkit/device.hpp"
#include "gemmkit/run_meta.hpp"
#include "gemmkit/version.hpp"

namespace gemmkit::cli {
namespace {

// CUDA's encoding (12080) as "12.8".
std::string cuda_version(int v) {
  return v == 0 ? "none" : std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

std::string version_text() {
  const RunMeta meta = build_meta();  // loads no library, so --version starts under a small ulimit -v
  std::string text = std::string("gemmkit ") + GEMMKIT_VERSION + "\ncommit " + meta.commit +
                     (meta.dirty ? "-dirty" : "") + "\n";
  if (!cuda_compiled()) return text + "CUDA: none (this gemmkit was built without the CUDA backend)";
  const CudaVersions v = cuda_versions();
  const std::string cublas = v.cublas == 0 ? "none (cannot be loaded)"
                                            : std::to_string(v.cublas / 10000) + "." +
                                                  std::to_string(v.cublas / 100 % 100) + "." +
                                                  std::to_string(v.cublas % 100);
  return text + "CUDA runtime " + cuda_version(v.runtime) + ", driver " + cuda_version(v.driver) + ", cuBLAS " +
         cublas;
}

}  // namespace gemmkit::cli
