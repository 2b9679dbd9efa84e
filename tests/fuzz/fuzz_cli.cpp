// libFuzzer harness of the command line, in-process: the fuzz bytes, split on NUL, are
// argv after "gemmkit" (the corpus and cli.dict give it real subcommands and options), run
// through gemmkit::cli::run in a scratch folder holding small valid and malformed files.
// Every run must keep the contract: exit status 0, 1 or 2; stderr empty or whole lines that
// start "gemmkit: error: " or "gemmkit: warning: ", one error line exactly when the status
// is not 0, never an "internal" error; no temporary file left behind, and a failed run
// creates, changes or removes no file.
//
// Runs stay cheap and safe by refusing (returning -1) argv that could name a path outside
// the scratch folder (any '/': as root, an output of /dev/null would be replaced), spawn
// a process (--plot), or ask for big work (a number above kMaxNumber anywhere, or bench
// without explicit sizes).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "cli.hpp"
#include "fuzz_support.hpp"

namespace fs = std::filesystem;
using namespace gemmkit;

namespace {

constexpr double kMaxNumber = 64;
constexpr std::size_t kMaxTokens = 24, kMaxTokenBytes = 200;

// A version 1.0 .npy file of little-endian doubles with the given shape text, e.g. "(3,)".
std::string npy_f8(const std::string& shape, const std::vector<double>& values) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string s = "\x93NUMPY";
  s += '\x01';
  s += '\x00';
  s += static_cast<char>(dict.size() & 0xff);
  s += static_cast<char>(dict.size() >> 8);
  s += dict;
  s.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return s;
}

const std::map<std::string, std::string>& fixtures() {
  static const std::map<std::string, std::string> files = {
      {"A.npy", npy_f8("(3, 3)", {1, 2, 3, 4, 5, 6, 7, 8, 10})},
      {"B.npy", npy_f8("(3, 2)", {0.5, -1, 2, 0, 1e300, 3})},
      {"v.npy", npy_f8("(3,)", {1, -2, 3})},
      {"bad.npy", npy_f8("(4, 4)", {1, 2, 3})},
      {"A.csv", "1,2,3\n4,5,6\n7,8,10\n"},
      {"I.csv", "4611686018427387904,4611686018427387904\n"},
      {"x.csv", "1\n2\n3\n"},
      {"bad.csv", "1,2\n3\n"},
      {"A.txt", "# a comment\n1 2\r\n3 4\r\n"},
      {"A.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.5\n2 3 -2\n3 1 4\n3 3 1\n"},
      {"S.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 1\n2 1 1\n3 2 1\n"},
      {"P.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n"},
      {"bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n"},
      {"G.txt", "a b\nb c\nc a\nc b 2\n"},
      {"E.txt", "0 1\n1 2\n2 0\n2 2\n"},
      {"m.csv", "1\n2\n1\n"},
  };
  return files;
}

// Puts every fixture back and removes everything else, so that runs do not see each other.
void reset_scratch() {
  for (const auto& entry : fs::directory_iterator(fuzz::scratch_dir())) {
    const std::string name = entry.path().filename().string();
    if (!fixtures().count(name)) fs::remove_all(entry.path());
  }
  for (const auto& [name, bytes] : fixtures()) fuzz::write_scratch(name, bytes);
}

std::map<std::string, std::string> snapshot() {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(fuzz::scratch_dir())) {
    const std::string name = entry.path().filename().string();
    std::string bytes;
    if (entry.is_regular_file()) {
      std::FILE* f = std::fopen(entry.path().c_str(), "rb");
      char buf[4096];
      for (std::size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, n);
      if (f) std::fclose(f);
    } else {
      bytes = "(not a regular file)";
    }
    files[name] = bytes;
  }
  return files;
}

// True when some number in `token` exceeds kMaxNumber: whole-token numbers as CLI11 reads
// them (1e3, 0x41), and every run of digits inside (--sizes 8,100, 8x100x8, 0b1111111).
bool asks_for_big_numbers(std::string token) {
  token.erase(std::remove_if(token.begin(), token.end(), [](char c) { return c == '_' || c == '\''; }),
              token.end());
  for (std::size_t i = 0; i < token.size();) {
    if (!std::isdigit(static_cast<unsigned char>(token[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < token.size() && token[j] == '0') ++j;
    const std::size_t begin = j;
    while (j < token.size() && std::isdigit(static_cast<unsigned char>(token[j]))) ++j;
    if (j - begin > 2 || (j > begin && std::stoi(token.substr(begin, j - begin)) > kMaxNumber)) return true;
    i = j;
  }
  // Pieces between separators, read as floating point (exponents, hex such as 0x7fff).
  std::size_t start = 0;
  while (start <= token.size()) {
    std::size_t end = token.find_first_of(",:= ", start);
    if (end == std::string::npos) end = token.size();
    const std::string piece = token.substr(start, end - start);
    char* stop = nullptr;
    const double value = std::strtod(piece.c_str(), &stop);
    if (stop != piece.c_str() && std::isfinite(value) && std::fabs(value) > kMaxNumber) return true;
    start = end + 1;
  }
  return false;
}

bool safe_to_run(const std::vector<std::string>& args) {
  bool bench = false, sized = false;
  for (const std::string& a : args) {
    if (a.find('/') != std::string::npos || a.rfind("--plot", 0) == 0 || asks_for_big_numbers(a))
      return false;
    bench = bench || a == "bench";
    sized = sized || a.rfind("--sizes", 0) == 0 || a.rfind("--shapes", 0) == 0;
  }
  return !bench || sized;
}

void check_stderr(const std::string& err, int status, const std::string& argv_text) {
  auto fail = [&](const std::string& what) {
    fuzz::finding(what + "\n  argv: " + argv_text + "\n  exit status: " + std::to_string(status) +
                  "\n  stderr: " + err);
  };
  if (status < 0 || status > 2) fail("exit status outside 0, 1, 2");
  if (!err.empty() && err.back() != '\n') fail("stderr does not end with a newline");
  int errors = 0;
  for (std::size_t begin = 0; begin < err.size();) {
    const std::size_t end = err.find('\n', begin);
    const std::string line = err.substr(begin, end - begin);
    begin = end + 1;
    if (line.rfind("gemmkit: error: ", 0) == 0) {
      ++errors;
      if (line.rfind("gemmkit: error: internal", 0) == 0) fail("an internal error");
    } else if (line.rfind("gemmkit: warning: ", 0) != 0) {
      fail("a stderr line that is neither 'gemmkit: error: ' nor 'gemmkit: warning: '");
    }
    if (!fuzz::one_printable_line(line)) fail("a stderr line with control characters");
  }
  if (errors != (status == 0 ? 0 : 1)) fail("not exactly one error line for a failed run (none for success)");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Results go nowhere and stdin is empty.
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(null_fd, STDOUT_FILENO) < 0) {
    std::perror("gemmkit fuzz_cli: setup");
    std::abort();
  }
  ::close(null_fd);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  const std::string_view text = fuzz::as_text(data, size);
  for (std::size_t begin = 0; begin <= text.size() && args.size() <= kMaxTokens;) {
    std::size_t end = text.find('\0', begin);
    if (end == std::string_view::npos) end = text.size();
    args.emplace_back(text.substr(begin, std::min(end - begin, kMaxTokenBytes)));
    begin = end + 1;
  }
  if (args.size() > kMaxTokens || !safe_to_run(args)) return -1;

  reset_scratch();
  const auto before = snapshot();
  std::vector<char*> argv{const_cast<char*>("gemmkit")};
  std::string argv_text = "gemmkit";
  for (std::string& a : args) {
    argv.push_back(a.data());
    argv_text += " '" + a + "'";
  }
  argv.push_back(nullptr);

  // Capture what the command writes to stderr (sanitizers and libFuzzer keep the real one).
  char* err_buffer = nullptr;
  std::size_t err_size = 0;
  std::FILE* err_stream = open_memstream(&err_buffer, &err_size);
  std::FILE* real_stderr = stderr;
  stderr = err_stream;
  // Relative paths land in the scratch folder; libFuzzer's own paths (corpus, artifacts)
  // are relative to where it started, so the run goes back there (give run.sh's
  // -artifact_prefix as an absolute path: a crash happens while in the scratch folder).
  const int home = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (home < 0 || ::chdir(fuzz::scratch_dir().c_str()) != 0) fuzz::finding("cannot enter the scratch folder");
  const int status = gemmkit::cli::run(static_cast<int>(argv.size()) - 1, argv.data());
  if (::fchdir(home) != 0) fuzz::finding("cannot leave the scratch folder");
  ::close(home);
  std::fflush(stdout);
  stderr = real_stderr;
  std::fclose(err_stream);
  const std::string err(err_buffer, err_size);
  std::free(err_buffer);

  check_stderr(err, status, argv_text);
  const auto after = snapshot();
  for (const auto& [name, bytes] : after)
    if (name.find(".tmp.") != std::string::npos)
      fuzz::finding("temporary file " + name + " left behind\n  argv: " + argv_text);
  if (status != 0 && after != before)
    fuzz::finding("a failed run (status " + std::to_string(status) +
                  ") created, changed or removed files\n  argv: " + argv_text + "\n  stderr: " + err);
  return 0;
}
