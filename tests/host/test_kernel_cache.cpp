// The cache of kernels compiled on first use (src/jit): entries are written whole and read
// back as written, damaged or foreign ones read as absent and are replaced, processes storing
// at once leave one whole entry, and a folder that cannot be written costs one warning. And
// every kernel this build compiles on first use compiles with NVRTC: CI has NVRTC but no GPU,
// so a kernel that stops compiling fails here.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gemmkit/device.hpp"
#include "gemmkit/kernel_cache.hpp"
#include "host/cli_test_support.hpp"
#include "jit/jit.hpp"

namespace gemmkit::test {
namespace {

namespace fs = std::filesystem;

class KernelCacheTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    cache_ = path("cache");
    setenv("GEMMKIT_CACHE_DIR", cache_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("GEMMKIT_CACHE_DIR");
    CliTest::TearDown();
  }

  // The files in the cache folder.
  std::set<std::string> cache_files() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(cache_)) names.insert(entry.path().filename().string());
    return names;
  }
  // The one entry's path.
  std::string only_entry() const {
    const auto names = cache_files();
    EXPECT_EQ(names.size(), 1u);
    return names.empty() ? std::string() : cache_ + "/" + *names.begin();
  }

  std::string cache_;
};

jit::KernelSpec spec(const std::string& name) {
  return {"ops/gemm/cuda/hopper/19_wgmma_ws.cuh", "gemmkit::test::kernel<" + name + ">", "test kernel " + name, "bf16",
          90};
}

// Code of `bytes` bytes, every byte value among them (zeros too: the format is binary).
jit::CompiledKernel kernel(std::size_t bytes, int seed = 1) {
  jit::CompiledKernel k;
  for (std::size_t i = 0; i < bytes; ++i) k.cubin.push_back(char((i * 131 + seed * 7) & 0xff));
  k.lowered_name = "_Z6kernelILi" + std::to_string(seed) + "EEvv";
  k.resources = {168 + seed, 16, 4, 8, 1024};
  k.compile_seconds = 1.25 * seed;
  return k;
}

std::string key_of(const std::string& name) { return jit::cache_key(spec(name), 90, "-arch=sm_90a"); }

TEST_F(KernelCacheTest, AnEntryReadsBackAsWritten) {
  const jit::CompiledKernel stored = kernel(70000, 3);
  jit::cache_store(key_of("a"), spec("a"), 90, stored);
  const auto loaded = jit::cache_load(key_of("a"));
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->from_disk);
  EXPECT_EQ(loaded->cubin, stored.cubin);
  EXPECT_EQ(loaded->lowered_name, stored.lowered_name);
  EXPECT_EQ(loaded->resources.registers, 171);
  EXPECT_EQ(loaded->resources.stack_bytes, 16);
  EXPECT_EQ(loaded->resources.spill_stores, 4);
  EXPECT_EQ(loaded->resources.spill_loads, 8);
  EXPECT_EQ(loaded->resources.static_smem, 1024);
  EXPECT_DOUBLE_EQ(loaded->compile_seconds, 3.75);
  EXPECT_FALSE(jit::cache_load(key_of("b")));  // never stored

  const auto listed = kernel_cache_list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_TRUE(listed[0].valid);
  EXPECT_EQ(listed[0].kernel, "test kernel a");
  EXPECT_EQ(listed[0].arch, "sm_90a");
  EXPECT_GT(listed[0].bytes, stored.cubin.size());
}

TEST_F(KernelCacheTest, KeysNameWhatTheCodeDependsOn) {
  const std::string key = key_of("a");
  EXPECT_NE(key, key_of("b"));                                             // the instantiation
  EXPECT_NE(key, jit::cache_key(spec("a"), 100, "-arch=sm_90a"));          // the architecture
  EXPECT_NE(key, jit::cache_key(spec("a"), 90, "-arch=sm_90a -DNDEBUG"));  // the options
  EXPECT_NE(key.find(jit::sources_hash()), std::string::npos);             // the sources
  EXPECT_NE(key.find(jit::key_versions()), std::string::npos);             // NVRTC and the driver
}

TEST_F(KernelCacheTest, ATruncatedOrDamagedEntryReadsAsAbsentAndIsReplaced) {
  const jit::CompiledKernel stored = kernel(5000);
  jit::cache_store(key_of("a"), spec("a"), 90, stored);
  const std::string file = only_entry();
  const std::string whole = read_file(file);
  std::vector<std::string> damaged;
  for (const std::size_t keep : {std::size_t{0}, std::size_t{10}, whole.size() / 2, whole.size() - 1})
    damaged.push_back(whole.substr(0, keep));
  for (const std::size_t at : {std::size_t{3}, whole.size() / 2, whole.size() - 1}) {
    std::string flipped = whole;
    flipped[at] = char(flipped[at] ^ 0x20);
    damaged.push_back(flipped);
  }
  damaged.push_back(whole + "x");  // a tail after the checksum
  for (const std::string& bytes : damaged) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_FALSE(jit::cache_load(key_of("a"))) << bytes.size() << " bytes";
    const auto listed = kernel_cache_list();
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_FALSE(listed[0].valid);
  }
  jit::cache_store(key_of("a"), spec("a"), 90, stored);  // the next compile's store
  const auto loaded = jit::cache_load(key_of("a"));
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->cubin, stored.cubin);
}

TEST_F(KernelCacheTest, AnotherKeysEntryUnderTheSameNameReadsAsAbsent) {
  // Entries are named by a 64-bit hash of the key; a collision must not hand out other code.
  jit::cache_store(key_of("b"), spec("b"), 90, kernel(100, 2));
  const std::string b_file = only_entry();
  fs::remove(b_file);
  jit::cache_store(key_of("a"), spec("a"), 90, kernel(100, 1));
  fs::rename(only_entry(), b_file);  // a's entry where b's would be
  EXPECT_FALSE(jit::cache_load(key_of("b")));
  EXPECT_FALSE(jit::cache_load(key_of("a")));  // a's own name is empty now
}

TEST_F(KernelCacheTest, ProcessesStoringAtOnceLeaveOneWholeEntry) {
  constexpr int kProcesses = 6, kStores = 25;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      // Each writes its own code, of its own size, under the one key.
      for (int s = 0; s < kStores; ++s) jit::cache_store(key_of("a"), spec("a"), 90, kernel(20000 + 997 * p, p + 1));
      _exit(0);
    }
    ASSERT_GT(pid, 0);
    children.push_back(pid);
  }
  int whole_reads = 0;
  for (int r = 0; r < 200; ++r)  // meanwhile, every read is absent or one writer's whole entry
    if (const auto loaded = jit::cache_load(key_of("a"))) {
      ++whole_reads;
      const int writer = std::stoi(loaded->lowered_name.substr(12)) - 1;
      ASSERT_GE(writer, 0);
      ASSERT_LT(writer, kProcesses);
      EXPECT_EQ(loaded->cubin, kernel(20000 + 997 * writer, writer + 1).cubin);
    }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(cache_files().size(), 1u);  // no temporary file left
  const auto loaded = jit::cache_load(key_of("a"));
  ASSERT_TRUE(loaded);
  const int writer = std::stoi(loaded->lowered_name.substr(12)) - 1;
  EXPECT_EQ(loaded->cubin, kernel(20000 + 997 * writer, writer + 1).cubin);
  RecordProperty("whole_reads_while_writing", whole_reads);
}

TEST_F(KernelCacheTest, AFolderThatCannotBeWrittenWarnsOnceAndLosesNothing) {
  const std::string blocker = write_file("a-file", "not a folder");
  setenv("GEMMKIT_CACHE_DIR", (blocker + "/cache").c_str(), 1);
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(jit::cache_store(key_of("a"), spec("a"), 90, kernel(100)));
  EXPECT_NO_THROW(jit::cache_store(key_of("b"), spec("b"), 90, kernel(100)));
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string warning = "cannot write the kernel cache in " + blocker + "/cache";
  ASSERT_NE(err.find(warning), std::string::npos) << err;
  EXPECT_EQ(err.find(warning, err.find(warning) + 1), std::string::npos) << "warned twice: " << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(read_file(blocker), "not a folder");
  EXPECT_FALSE(jit::cache_load(key_of("a")));
}

TEST_F(KernelCacheTest, ClearRemovesEntriesAndTemporaryFilesOnly) {
  for (const char* name : {"a", "b", "c"}) jit::cache_store(key_of(name), spec(name), 90, kernel(64));
  write_file("cache/.0123456789abcdef.kernel.4242.0.tmp", "a writer that died");
  write_file("cache/notes.txt", "mine");
  EXPECT_EQ(kernel_cache_clear(), 4u);
  EXPECT_EQ(cache_files(), std::set<std::string>{"notes.txt"});
  EXPECT_TRUE(kernel_cache_list().empty());
}

// Compiled kernels go to the cache and come back from it: the int8 kernels (the fewest) are
// compiled into an empty cache, a fresh process finds them all there, and compiles again only
// a damaged one. (tests/jit_compile_all.sh compiles every kernel, for CI.)
TEST_F(KernelCacheTest, CompiledKernelsAreReadBackAndADamagedOneIsCompiledAgain) {
  if (kernel_cache_dtypes().empty()) GTEST_SKIP() << "this build compiles no kernel on first use (no CUDA backend)";
  if (!jit::nvrtc_available()) GTEST_SKIP() << "NVRTC (libnvrtc) cannot be loaded here";
  KernelCacheWarm request;
  request.dtypes = {DType::i8};
  request.compute_capability = 90;
  int reported = 0;
  request.on_kernel = [&](const std::string& name, double seconds, bool compiled, int done, int of) {
    ++reported;
    EXPECT_TRUE(compiled) << name;
    EXPECT_GT(seconds, 0) << name;
    EXPECT_NE(name.find("i8"), std::string::npos) << name;
    EXPECT_EQ(done, reported);
    EXPECT_GE(of, done);
  };
  const KernelCacheWarmed warmed = kernel_cache_warm(request);
  ASSERT_GT(warmed.kernels, 0);
  EXPECT_EQ(warmed.compiled, warmed.kernels) << "the cache was empty";
  EXPECT_EQ(reported, warmed.kernels);
  const auto listed = kernel_cache_list();
  ASSERT_EQ(int(listed.size()), warmed.kernels);
  for (const CachedKernel& k : listed) {
    EXPECT_TRUE(k.valid) << k.file;
    EXPECT_EQ(k.arch, "sm_90a");
    EXPECT_GT(k.bytes, 1000u) << k.kernel;
    EXPECT_GT(k.registers, 0) << k.kernel;
    // Rung 24 keeps a 64 x 256 tile of int32 sums per thread group in registers, at the
    // register cap: a spill there costs a few percent at every shape.
    EXPECT_EQ(k.spill_stores + k.spill_loads, 0) << k.kernel;
  }
  const std::string count = std::to_string(warmed.kernels);

  CliResult r = run("cache warm --arch 90 --dtype i8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(count + " kernels, 0 compiled now"), std::string::npos) << r.out;
  fs::resize_file(listed.back().file, listed.back().bytes / 3);
  r = run("cache list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(1 damaged)"), std::string::npos) << r.out;
  r = run("cache warm --arch 90 --dtype i8 --jobs 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(count + " kernels, 1 compiled now"), std::string::npos) << r.out;
  r = run("cache list");
  EXPECT_EQ(r.out.find("damaged"), std::string::npos) << r.out;
  r = run("cache clear");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("removed " + count + " files"), std::string::npos) << r.out;
}

TEST_F(KernelCacheTest, WarmRefusesWhatNoKernelTakes) {
  CliResult r = run("cache warm --arch 90 --dtype i64");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no kernel compiled on first use takes i64"), std::string::npos) << r.err;
  r = run("cache warm --arch 90 --dtype nope");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("unknown dtype 'nope'"), std::string::npos) << r.err;
  r = run("cache");
  EXPECT_EQ(r.status, 2) << r.err;
}

// warm --shapes compiles what the shapes' plans launch, and only that: rung 24's int8 kernel
// for one square (cuBLAS's TN form) into an empty cache, nothing for a shape whose kernel is
// compiled ahead of time, and the second time nothing at all.
TEST_F(KernelCacheTest, WarmForShapesCompilesWhatTheirPlansLaunch) {
  if (kernel_cache_dtypes().empty()) GTEST_SKIP() << "this build compiles no kernel on first use (no CUDA backend)";
  if (!jit::nvrtc_available()) GTEST_SKIP() << "NVRTC (libnvrtc) cannot be loaded here";
  const std::string warm = "cache warm --arch 90 --dtype i8 --transpose-b --kernels cuda_wgmma_i8 --jobs 1 --shapes ";
  CliResult r = run(warm + "8192x8192x8192");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[1/1] 8192x8192x8192 (B^T) i8: cuda_wgmma_i8: wgmma_i8"), std::string::npos) << r.out;
  const std::size_t files = cache_files().size();
  ASSERT_GT(files, 0u);
  EXPECT_NE(r.out.find("1 problems, " + std::to_string(files) + " kernels, " + std::to_string(files) + " compiled now"),
            std::string::npos)
      << r.out;
  r = run(warm + "8192x8192x8192,4096x4096x4096");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cached"), std::string::npos) << r.out;
  // 4096^3 takes the same kernel: nothing new.
  EXPECT_NE(r.out.find("2 problems, " + std::to_string(files) + " kernels, 0 compiled now"), std::string::npos)
      << r.out;
  EXPECT_EQ(cache_files().size(), files);
  r = run("cache warm --arch 90 --dtype bf16 --kernels cuda_cublas_bf16 --shapes 64x64x64");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cuda_cublas_bf16: (nothing compiled on first use)"), std::string::npos) << r.out;
}

TEST_F(KernelCacheTest, WarmForShapesRefusesWhatItCannotPlan) {
  const auto refused = [&](const std::string& args, const std::string& says) {
    const CliResult r = run("cache warm " + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  refused("--arch 90 --shapes 64x64x64", "add --dtype");
  refused("--arch 90 --dtype bf16 --shapes 64x64", "'64x64' is not MxNxK");
  refused("--arch 90 --dtype bf16 --shapes 64x64x64 --suite all", "one of --suite or --shapes");
  refused("--arch 90 --dtype bf16 --suite all --transpose-a", "takes transposes from its file's lines");
  refused("--arch 90 --dtype bf16 --transpose-b", "go with --suite or --shapes");
  refused("--arch 90 --dtype bf16 --suite no_such_suite", "no_such_suite");
  if (kernel_cache_dtypes().empty()) return;  // the rest need CUDA kernels
  if (!cuda_device_available() || current_compute_capability() != 80)
    refused("--arch 80 --dtype bf16 --shapes 64x64x64", "only for 90");
  refused("--arch 90 --dtype bf16 --kernels no_such_kernel --shapes 64x64x64", "no_such_kernel");
  refused("--arch 90 --dtype f64 --kernels cuda_wgmma_i8 --shapes 64x64x64", "cuda_wgmma_i8");
}

}  // namespace
}  // namespace gemmkit::test
