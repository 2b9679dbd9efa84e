// my_kernel: registers this folder's GEMM kernel with gemmkit and benchmarks it beside the
// reference library (cuBLAS on a GPU, OpenBLAS on the CPU) with gemmkit's benchmark engine,
// printing the same table as `gemmkit bench`.
//
//   my_kernel [--backend cpu|cuda] [--sizes 128,256,512] [--reps 5]
//
// Exit status: 0 when every result passed verification, 1 when one failed, 2 for a bad
// command line.
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include <gemmkit/bench.hpp>
#include <gemmkit/registry.hpp>

#include "my_kernel.hpp"

namespace {

struct Args {
  std::string backend;  // "" : the GPU when there is one
  std::string sizes = "128,256,512";
  int reps = 5;
};

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) throw gemmkit::Error(gemmkit::ErrorCategory::usage, option + " needs a value");
    const std::string value = argv[++i];
    if (option == "--backend") args.backend = value;
    else if (option == "--sizes") args.sizes = value;
    else if (option == "--reps") args.reps = std::stoi(value);
    else throw gemmkit::Error(gemmkit::ErrorCategory::usage, "unknown option " + option);
  }
  return args;
}

// The GPU's context when there is one (its cuBLAS handle, its workspaces), else the CPU's.
gemmkit::Context make_context(const std::string& backend) {
  if (backend.empty()) return gemmkit::Context();
  if (backend != "cpu" && backend != "cuda")
    throw gemmkit::Error(gemmkit::ErrorCategory::usage, "--backend: '" + backend + "' is not cpu or cuda");
  return gemmkit::Context(backend == "cuda" ? gemmkit::Backend::cuda : gemmkit::Backend::cpu);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    // 1. Tell gemmkit about the kernels. From here on they are kernels like gemmkit's own:
    //    gemm(ctx, problem, stream, {.kernel = "my_cpu_loops"}) runs one, and the benchmark
    //    engine times and verifies it.
    gemmkit::register_kernel(my_cpu_kernel());
#ifdef MY_KERNEL_CUDA
    gemmkit::register_kernel(my_cuda_kernel());
#endif
    // 2. A context: where the kernels run.
    gemmkit::Context ctx = make_context(args.backend);
    // 3. What to run: our kernel (the reference library always runs beside it) at square sizes.
    gemmkit::BenchOptions options;
    options.kernels = {ctx.backend() == gemmkit::Backend::cuda ? "my_cuda_tiled" : "my_cpu_loops"};
    std::stringstream sizes(args.sizes);
    for (std::string n; std::getline(sizes, n, ',');)
      options.shapes.push_back({std::stoll(n), std::stoll(n), std::stoll(n)});
    options.reps = args.reps;
    // 4. Run it: every result is checked against the exact product.
    const gemmkit::BenchReport report = gemmkit::run_gemm_bench(ctx, options);
    std::fputs(gemmkit::bench_table(report, gemmkit::run_meta(&ctx)).c_str(), stdout);
    if (report.first_failure) {
      std::fprintf(stderr, "my_kernel: error: %s\n", report.first_failure->what());
      return 1;
    }
    return report.all_passed() ? 0 : 1;
  } catch (const gemmkit::Error& e) {
    std::fprintf(stderr, "my_kernel: error: %s\n", e.what());
    return e.category() == gemmkit::ErrorCategory::usage ? 2 : 1;
  } catch (const std::exception& e) {  // std::stoi on a bad number
    std::fprintf(stderr, "my_kernel: error: %s\n", e.what());
    return 2;
  }
}
