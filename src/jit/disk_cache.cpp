// The on-disk cache of kernels compiled on first use: one file per kernel, named by the hash
// of its key, holding the key itself (so a hash collision reads as a miss), the code, and a
// checksum over all of it (so a truncated or damaged file reads as a miss too). Files are
// written whole under a temporary name and renamed into place, which is atomic: processes
// filling the cache at once each write their own temporary file, and a reader sees an old
// entry or a new one. The layout:
//   "gemmkit kernel cache 1\n", then key, label, arch, lowered name, cubin (each a u64 length
//   and its bytes), the resources (five i32), the compile time (f64), an FNV-1a checksum (u64).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <tuple>

#include "jit/embedded_sources.hpp"
#include "jit/jit.hpp"

namespace gemmkit::jit {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "gemmkit kernel cache 1\n";
constexpr const char* kSuffix = ".kernel";

std::uint64_t fnv1a(const char* data, std::size_t size, std::uint64_t hash = 1469598103934665603ull) {
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
  return hash;
}
std::uint64_t fnv1a(const std::string& s, std::uint64_t hash = 1469598103934665603ull) {
  return fnv1a(s.data(), s.size(), hash);
}

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

fs::path entry_path(const std::string& key) { return fs::path(cache_dir()) / (hex(fnv1a(key)) + kSuffix); }

// ---- the file's fields ----

void put_bytes(std::string& out, const std::string& s) {
  const std::uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += s;
}
template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads the fields back, refusing anything that runs past the end.
struct Reader {
  const std::string& data;
  std::size_t at = 0;
  bool ok = true;
  std::string bytes() {
    std::uint64_t n = 0;
    if (!ok || data.size() - at < sizeof n) return ok = false, std::string();
    std::memcpy(&n, data.data() + at, sizeof n);
    at += sizeof n;
    if (data.size() - at < n) return ok = false, std::string();
    std::string s = data.substr(at, n);
    at += n;
    return s;
  }
  template <class T>
  T value() {
    T v{};
    if (!ok || data.size() - at < sizeof v) return ok = false, v;
    std::memcpy(&v, data.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
};

struct Entry {
  std::string key, label, arch;
  CompiledKernel kernel;
};

std::string serialise(const Entry& e) {
  std::string out = kMagic;
  put_bytes(out, e.key);
  put_bytes(out, e.label);
  put_bytes(out, e.arch);
  put_bytes(out, e.kernel.lowered_name);
  put_bytes(out, e.kernel.cubin);
  const CompiledResources& r = e.kernel.resources;
  for (const int v : {r.registers, r.stack_bytes, r.spill_stores, r.spill_loads, r.static_smem}) put<std::int32_t>(out, v);
  put<double>(out, e.kernel.compile_seconds);
  put<std::uint64_t>(out, fnv1a(out));
  return out;
}

std::optional<Entry> parse(const std::string& data) {
  const std::size_t magic = std::strlen(kMagic);
  if (data.size() < magic + sizeof(std::uint64_t) || data.compare(0, magic, kMagic) != 0) return std::nullopt;
  const std::size_t body = data.size() - sizeof(std::uint64_t);
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, data.data() + body, sizeof checksum);
  if (fnv1a(data.data(), body) != checksum) return std::nullopt;
  Reader r{data, magic};
  Entry e;
  e.key = r.bytes(), e.label = r.bytes(), e.arch = r.bytes();
  e.kernel.lowered_name = r.bytes(), e.kernel.cubin = r.bytes();
  CompiledResources& res = e.kernel.resources;
  for (int* v : {&res.registers, &res.stack_bytes, &res.spill_stores, &res.spill_loads, &res.static_smem})
    *v = r.value<std::int32_t>();
  e.kernel.compile_seconds = r.value<double>();
  if (!r.ok || r.at != body) return std::nullopt;
  return e;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return data;
}

// Once per process: the folder cannot be written (read-only, full, not a folder).
void warn_unwritable(const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr, "gemmkit: warning: cannot write the kernel cache in %s (%s); kernels compiled now are "
                         "kept in memory only (GEMMKIT_CACHE_DIR moves the cache)\n",
                 cache_dir().c_str(), why.c_str());
  });
}

}  // namespace

std::string cache_dir() {
  if (const char* dir = std::getenv("GEMMKIT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return (fs::path(dir) / "gemmkit" / "kernels").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "gemmkit" / "kernels").string();
  return (fs::temp_directory_path() / "gemmkit-kernels").string();
}

const std::string& sources_hash() {
  static const std::string hash = [] {
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < kEmbeddedSourceCount; ++i) {
      h = fnv1a(kEmbeddedSources[i].name, std::strlen(kEmbeddedSources[i].name) + 1, h);
      h = fnv1a(kEmbeddedSources[i].text, std::strlen(kEmbeddedSources[i].text) + 1, h);
    }
    return hex(h);
  }();
  return hash;
}

std::string cache_key(const KernelSpec& spec, int compute_capability, const std::string& options) {
  return "sources " + sources_hash() + "\nheader " + spec.header + "\nkernel " + spec.expression + "\narch " +
         arch_name(compute_capability) + "\noptions " + options + "\nversions " + key_versions() + "\n";
}

std::shared_ptr<CompiledKernel> cache_load(const std::string& key) {
  const auto data = read_file(entry_path(key));
  if (!data) return nullptr;
  auto entry = parse(*data);
  if (!entry || entry->key != key) return nullptr;  // damaged, or another key of the same hash
  auto kernel = std::make_shared<CompiledKernel>(std::move(entry->kernel));
  kernel->from_disk = true;
  return kernel;
}

void cache_store(const std::string& key, const KernelSpec& spec, int compute_capability, const CompiledKernel& kernel) {
  const fs::path path = entry_path(key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return warn_unwritable(ec.message());
  static std::atomic<unsigned> counter{0};
  std::string name = ".";  // hidden, and unique to this process and call
  name += path.filename().string();
  for (const std::string& part : {std::to_string(getpid()), std::to_string(counter++), std::string("tmp")})
    name.append(1, '.').append(part);
  const fs::path temporary = path.parent_path() / name;
  const std::string data = serialise({key, spec.label, arch_name(compute_capability), kernel});
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(data.data(), std::streamsize(data.size()));
    out.close();
    if (!out) {
      fs::remove(temporary, ec);
      return warn_unwritable("writing " + temporary.filename().string() + " failed");
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    warn_unwritable(ec.message());
  }
}

std::vector<CacheEntry> cache_entries() {
  std::vector<CacheEntry> out;
  std::error_code ec;
  for (const auto& file : fs::directory_iterator(cache_dir(), ec)) {
    if (file.path().extension() != kSuffix || file.path().filename().string()[0] == '.') continue;
    CacheEntry e;
    e.file = file.path().string();
    e.bytes = std::size_t(file.file_size(ec));
    if (const auto data = read_file(file.path()))
      if (const auto parsed = parse(*data)) {
        e.label = parsed->label, e.arch = parsed->arch, e.compile_seconds = parsed->kernel.compile_seconds;
        e.resources = parsed->kernel.resources;
        e.valid = true;
      }
    out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return std::tie(a.arch, a.label, a.file) < std::tie(b.arch, b.label, b.file);
  });
  return out;
}

std::size_t cache_clear() {
  std::size_t removed = 0;
  std::error_code ec;
  std::vector<fs::path> ours;
  for (const auto& file : fs::directory_iterator(cache_dir(), ec)) {
    const std::string name = file.path().filename().string();
    const bool entry = file.path().extension() == kSuffix;
    const bool temporary = name[0] == '.' && name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 &&
                           name.find(kSuffix) != std::string::npos;
    if (entry || temporary) ours.push_back(file.path());
  }
  for (const fs::path& p : ours)
    if (fs::remove(p, ec)) ++removed;
  return removed;
}

}  // namespace gemmkit::jit
