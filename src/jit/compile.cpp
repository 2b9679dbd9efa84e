// Compiling a kernel on first use with NVRTC (loaded when first needed:
// runtime/lazy_library.hpp), and this process's memory of what it compiled.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gemmkit/error.hpp"
#include "jit/embedded_sources.hpp"
#include "jit/compile_log.hpp"
#include "jit/jit.hpp"
#include "jit/progress.hpp"

#if GEMMKIT_HAVE_CUDA
#include <cuda_runtime.h>
#include <nvrtc.h>

#include "runtime/lazy_library.hpp"
#endif

namespace gemmkit::jit {

namespace {
thread_local CompileLog* current_log = nullptr;
}

CompileLog::CompileLog() : outer_(current_log) { current_log = this; }
CompileLog::~CompileLog() { current_log = outer_; }
void CompileLog::note(const KernelSpec& spec, double compile_seconds, bool compiled_now) {
  if (current_log) current_log->entries_.push_back({&spec, compile_seconds, compiled_now});
}

std::string arch_name(int compute_capability) {
  return "sm_" + std::to_string(compute_capability) + (compute_capability == 90 ? "a" : "");
}

#if GEMMKIT_HAVE_CUDA
namespace {

void nvrtc_check(nvrtcResult status, const char* what) {
  if (status != NVRTC_SUCCESS)
    fail(ErrorCategory::internal, std::string(what) + " failed: " + GEMMKIT_NVRTC(nvrtcGetErrorString)(status));
}

bool has_cuda_headers(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / "cuda_bf16.h", ec) && std::filesystem::exists(dir / "cuda_fp16.h", ec);
}

// The CUDA headers the kernels include (cuda_bf16.h, cuda_fp16.h): $GEMMKIT_CUDA_INCLUDE_DIR,
// $CUDA_HOME or $CUDA_PATH's include/, the toolkit NVRTC was loaded from (lib64/../include),
// the PyPI wheels' layout beside it (nvidia/cuda_nvrtc/lib -> nvidia/cuda_runtime/include), the
// toolkit this library was built with, then the usual places.
std::string cuda_include_dir() {
  std::vector<std::filesystem::path> candidates;
  if (const char* dir = std::getenv("GEMMKIT_CUDA_INCLUDE_DIR")) candidates.emplace_back(dir);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* dir = std::getenv(var)) candidates.push_back(std::filesystem::path(dir) / "include");
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(GEMMKIT_NVRTC(nvrtcVersion)), &info) && info.dli_fname) {
    const std::filesystem::path lib = std::filesystem::path(info.dli_fname).parent_path();
    candidates.push_back(lib.parent_path() / "include");
    candidates.push_back(lib.parent_path().parent_path() / "cuda_runtime" / "include");
  }
  candidates.emplace_back(GEMMKIT_BUILD_CUDA_INCLUDE_DIR);
  candidates.emplace_back("/usr/local/cuda/include");
  candidates.emplace_back("/usr/include");
  for (const auto& dir : candidates)
    if (has_cuda_headers(dir)) return dir.string();
  fail(ErrorCategory::device,
       "cannot find the CUDA headers (cuda_bf16.h) that kernels compiled on first use include; "
       "set GEMMKIT_CUDA_INCLUDE_DIR to the CUDA toolkit's include folder");
}

// The options that change the code (the key's); the include folder is where the toolkit's
// headers are found, whose version the key names through NVRTC's.
std::vector<std::string> key_options(int compute_capability) {
  return {"-arch=" + arch_name(compute_capability), "-std=c++20", "-default-device", "-DNDEBUG"};
}

std::vector<std::string> compile_options(int compute_capability) {
  static const std::string include = "-I" + cuda_include_dir();
  std::vector<std::string> options = key_options(compute_capability);
  options.push_back("--ptxas-options=-v");  // the resources, read from the log
  options.push_back(include);
  return options;
}

std::string joined(const std::vector<std::string>& options) {
  std::string out;
  for (const std::string& o : options) out += (out.empty() ? "" : " ") + o;
  return out;
}

// The number before `what` in ptxas's report ("Used 168 registers", "0 bytes spill stores").
int reported(const std::string& log, const std::string& what) {
  const std::size_t at = log.find(what);
  if (at == std::string::npos) return 0;
  std::size_t begin = at;
  while (begin > 0 && log[begin - 1] == ' ') --begin;
  std::size_t digits = begin;
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(log[digits - 1]))) --digits;
  return digits < begin ? std::stoi(log.substr(digits, begin - digits)) : 0;
}

std::shared_ptr<CompiledKernel> compile_now(const KernelSpec& spec, int compute_capability,
                                            const std::vector<std::string>& options) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_texts, header_names;
  for (std::size_t i = 0; i < kEmbeddedSourceCount; ++i) {
    header_texts.push_back(kEmbeddedSources[i].text);
    header_names.push_back(kEmbeddedSources[i].name);
  }
  const std::string program_text = "#include \"" + spec.header + "\"\n";
  nvrtcProgram program = nullptr;
  nvrtc_check(GEMMKIT_NVRTC(nvrtcCreateProgram)(&program, program_text.c_str(), "gemmkit_jit.cu",
                                                int(header_texts.size()), header_texts.data(), header_names.data()),
              "nvrtcCreateProgram");
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { GEMMKIT_NVRTC(nvrtcDestroyProgram)(p); }
  } destroy{&program};
  nvrtc_check(GEMMKIT_NVRTC(nvrtcAddNameExpression)(program, spec.expression.c_str()), "nvrtcAddNameExpression");
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult status = GEMMKIT_NVRTC(nvrtcCompileProgram)(program, int(argv.size()), argv.data());
  std::size_t log_size = 0;
  GEMMKIT_NVRTC(nvrtcGetProgramLogSize)(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) GEMMKIT_NVRTC(nvrtcGetProgramLog)(program, log.data());
  if (status != NVRTC_SUCCESS)
    fail(ErrorCategory::internal, "NVRTC could not compile " + spec.expression + " for " +
                                      arch_name(compute_capability) + ": " + log);
  auto kernel = std::make_shared<CompiledKernel>();
  std::size_t cubin_size = 0;
  nvrtc_check(GEMMKIT_NVRTC(nvrtcGetCUBINSize)(program, &cubin_size), "nvrtcGetCUBINSize");
  kernel->cubin.resize(cubin_size);
  nvrtc_check(GEMMKIT_NVRTC(nvrtcGetCUBIN)(program, kernel->cubin.data()), "nvrtcGetCUBIN");
  const char* lowered = nullptr;
  nvrtc_check(GEMMKIT_NVRTC(nvrtcGetLoweredName)(program, spec.expression.c_str(), &lowered), "nvrtcGetLoweredName");
  kernel->lowered_name = lowered;
  kernel->resources.registers = reported(log, " registers");
  kernel->resources.stack_bytes = reported(log, " bytes stack frame");
  kernel->resources.spill_stores = reported(log, " bytes spill stores");
  kernel->resources.spill_loads = reported(log, " bytes spill loads");
  kernel->resources.static_smem = reported(log, " bytes smem");
  kernel->compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace

bool nvrtc_available() {
  try {
    int major = 0, minor = 0;
    return GEMMKIT_NVRTC(nvrtcVersion)(&major, &minor) == NVRTC_SUCCESS;
  } catch (const Error&) {
    return false;
  }
}

std::string nvrtc_version() {
  if (!nvrtc_available()) return "";
  int major = 0, minor = 0;
  GEMMKIT_NVRTC(nvrtcVersion)(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string key_versions() {
  // Without NVRTC, the version of this build's toolkit: what `cache warm` made with it.
  std::string nvrtc = nvrtc_version();
  if (nvrtc.empty()) nvrtc = std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  return "nvrtc " + nvrtc + ", driver " + std::to_string(driver);
}

namespace {
std::shared_ptr<const CompiledKernel> compile_or_load(const KernelSpec& spec, int compute_capability,
                                                      bool* compiled_now) {
  *compiled_now = false;
  if (compute_capability < spec.min_compute_capability)
    fail(ErrorCategory::internal, "the kernel " + spec.label + " needs compute capability " +
                                      std::to_string(spec.min_compute_capability) + " or later, not " +
                                      std::to_string(compute_capability));
  using Result = std::shared_ptr<const CompiledKernel>;
  // Compiled kernels are host data: kept for the process, keyed as on disk and by the cache
  // folder, so that a process that moves its cache (GEMMKIT_CACHE_DIR) fills the new one too.
  static std::mutex mutex;
  static std::map<std::string, std::shared_future<Result>> compiled;

  const std::string key = cache_key(spec, compute_capability, joined(key_options(compute_capability)));
  const std::string memory_key = cache_dir() + '\n' + key;
  std::promise<Result> promise;
  std::shared_future<Result> pending;
  {
    const std::lock_guard lock(mutex);
    if (auto it = compiled.find(memory_key); it != compiled.end()) pending = it->second;
    else compiled.emplace(memory_key, promise.get_future().share());
  }
  if (pending.valid()) return pending.get();  // compiled, or being compiled by another thread
  try {
    std::shared_ptr<CompiledKernel> kernel = cache_load(key);
    if (!kernel) {
      if (!nvrtc_available())
        fail(ErrorCategory::device, "the kernel " + spec.label + " for " + arch_name(compute_capability) +
                                        " is compiled on first use, but NVRTC (libnvrtc) cannot be loaded here and "
                                        "the kernel cache (" + cache_dir() + ") does not hold it; install the CUDA "
                                        "toolkit's NVRTC, or fill the cache with `gemmkit cache warm` where it is");
      const Progress progress("compiling " + spec.label + " for " + arch_name(compute_capability));
      kernel = compile_now(spec, compute_capability, compile_options(compute_capability));
      progress.done(kernel->compile_seconds);
      *compiled_now = true;
      cache_store(key, spec, compute_capability, *kernel);
    }
    promise.set_value(kernel);
    return kernel;
  } catch (...) {
    // Not kept: the next call tries again (a full disk freed, NVRTC installed).
    promise.set_exception(std::current_exception());
    const std::lock_guard lock(mutex);
    compiled.erase(memory_key);
    throw;
  }
}
}  // namespace

std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, int compute_capability, bool* compiled_now) {
  bool now = false;
  auto kernel = compile_or_load(spec, compute_capability, &now);
  if (compiled_now) *compiled_now = now;
  CompileLog::note(spec, kernel->compile_seconds, now);
  return kernel;
}

#else  // a build without CUDA compiles nothing

bool nvrtc_available() { return false; }
std::string nvrtc_version() { return ""; }
std::string key_versions() { return "no CUDA"; }
std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, int, bool*) {
  fail(ErrorCategory::device, "this build has no CUDA backend, so it compiles no kernel (" + spec.label + ")");
}

#endif

}  // namespace gemmkit::jit
