// Reading input once and only as text where text is due: pipes and FIFOs for every format,
// line ends (LF, CRLF, CR), a UTF-8 byte order mark, NUL bytes, over-long lines and running
// out of memory, a truncated .npy from a pipe, and integers kept exact (reads, the CSV dtype
// header, conversions).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include "gemmkit/walks.hpp"
#include "host/cli_test_support.hpp"
#include "io/io_common.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define GEMMKIT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define GEMMKIT_TEST_SANITIZED 1
#endif
#endif

namespace gemmkit::test {
namespace {

// A named FIFO that a thread fills with `bytes` once a reader opens it, a few bytes at a
// time so that the reader sees the data arrive in pieces.
class Fifo {
 public:
  Fifo(const std::string& path, std::string bytes) : path_(path) {
    ::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not kill the test
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
    writer_ = std::thread([path, bytes = std::move(bytes)] {
      const int fd = ::open(path.c_str(), O_WRONLY);
      if (fd < 0) return;
      for (std::size_t at = 0; at < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + at, std::min<std::size_t>(7, bytes.size() - at));
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      ::close(fd);
    });
  }
  ~Fifo() {
    // Unblocks a writer still waiting for a reader (one that never came).
    const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    writer_.join();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::thread writer_;
};

// An anonymous pipe holding `bytes` (less than a pipe's buffer), its write end closed;
// reading "/dev/fd/N" gives them once.
class Pipe {
 public:
  explicit Pipe(const std::string& bytes) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_fd_ = fds[0];
    EXPECT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fds[1]);
  }
  ~Pipe() { ::close(read_fd_); }
  std::string path() const { return "/dev/fd/" + std::to_string(read_fd_); }

 private:
  int read_fd_ = -1;
};

std::vector<std::string> lines_of(const std::string& path,
                                  std::size_t max_line = io::LineReader::kDefaultMaxLineBytes) {
  io::LineReader in(path, max_line);
  std::vector<std::string> lines;
  while (const auto line = in.next()) lines.emplace_back(*line);
  return lines;
}

// A .npy file: version 1.0, `dict` padded to 64 bytes, then `data`.
std::string npy_bytes(std::string dict, const std::string& data) {
  dict.append(63 - (10 + dict.size()) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + data;
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

class InputTest : public ScratchDirTest {};

// ---- lines --------------------------------------------------------------------------------

TEST_F(InputTest, LfCrlfAndCrOnlyLineEndsAllEndLines) {
  EXPECT_EQ(lines_of(write_file("lf", "a\nb\n\nc")),
            (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(lines_of(write_file("crlf", "a\r\nb\r\n\r\nc\r\n")),
            (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(lines_of(write_file("cr", "a\rb\r\rc\r")),
            (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(lines_of(write_file("mixed", "a\r\nb\rc\nd")),
            (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(InputTest, CrlfSplitAcrossReadsIsOneLineEnd) {
  // The first read takes 64 KiB: the '\r' ends it and its '\n' comes with the next read.
  const std::string first(65535, 'x');
  EXPECT_EQ(lines_of(write_file("split", first + "\r\ny\n")),
            (std::vector<std::string>{first, "y"}));
  EXPECT_EQ(lines_of(write_file("split_cr", first + "\ry")),
            (std::vector<std::string>{first, "y"}));
}

TEST_F(InputTest, ByteOrderMarkIsSkippedOnlyAtTheStart) {
  EXPECT_EQ(lines_of(write_file("bom", "\xef\xbb\xbf" "a b\n\xef\xbb\xbf" "c\n")),
            (std::vector<std::string>{"a b", "\xef\xbb\xbf" "c"}));
  EXPECT_EQ(lines_of(write_file("bom_only", "\xef\xbb\xbf")), std::vector<std::string>{});
  EXPECT_EQ(lines_of(write_file("short", "ab")), std::vector<std::string>{"ab"});
}

TEST_F(InputTest, NulBytesAreNotText) {
  const std::string p = write_file("nul.csv", std::string("1,2\n3,\0" "4\n", 9));
  expect_input_error([&] { lines_of(p); }, p, "line 2 (byte 6): a NUL byte");
  expect_input_error([&] { lines_of("/dev/zero"); }, "/dev/zero", "line 1 (byte 0): a NUL byte");
  expect_input_error([&] { read_csv("/dev/zero"); }, "/dev/zero", "NUL byte");
  expect_input_error([&] { read_mtx("/dev/zero"); }, "/dev/zero", "NUL byte");
  GraphReadOptions edges;
  edges.format = GraphFormat::edges;
  expect_input_error([&] { read_graph("/dev/zero", edges); }, "/dev/zero", "NUL byte");
}

TEST_F(InputTest, ReadErrorsAreErrorsNotTheEnd) {
  // Reading /proc/self/mem from offset 0 (never mapped) fails with EIO.
  expect_input_error([&] { lines_of("/proc/self/mem"); }, "/proc/self/mem",
                     "cannot read '/proc/self/mem' line 1 (byte 0): ");
  expect_input_error([&] { read_csv("/proc/self/mem"); }, "/proc/self/mem", "cannot read");
}

TEST_F(InputTest, LinesPastTheLimitAreAnError) {
  const std::string p = write_file("long.txt", "1 2\n" + std::string(100, '3') + "\n4\n");
  EXPECT_EQ(lines_of(p, 100).size(), 3u);
  expect_input_error([&] { lines_of(p, 99); }, p, "line 2 (byte 4): the line is longer than 99 bytes");
}

#ifndef GEMMKIT_TEST_SANITIZED
// Runs `read` in a child limited to `headroom` bytes of address space more than it uses
// now; the child exits with 3 and prints "<category>: <message>" if `read` throws. The child
// (death tests in the threadsafe style) runs the test again from its start, in a scratch
// folder of its own, `scratch`, which its TearDown would never remove (it leaves by _Exit):
// it removes it itself, or every run left a folder in the temporary directory (48 MiB, for
// the long line).
template <class F>
void in_limited_child(std::size_t headroom, const std::string& scratch, F read) {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  const rlim_t limit = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + headroom;
  const rlimit rl{limit, limit};
  ::setrlimit(RLIMIT_AS, &rl);
  int code = 0;
  try {
    read();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", std::string(category_name(e.category())).c_str(), e.what());
    code = 3;
  }
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  std::_Exit(code);
}

TEST_F(InputTest, RunningOutOfMemoryInALongLineIsAnErrorNotTheEnd) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // OpenMP may have started threads
  // A 48 MiB line, then more data; 32 MiB of headroom cannot hold it.
  const std::string p = path("long.csv");
  {
    std::ofstream out(p, std::ios::binary);
    out << "1\n" << std::string(48 << 20, '7') << "\n2\n";
  }
  EXPECT_EXIT(in_limited_child(32 << 20, dir_, [&] { read_csv(p); }), ::testing::ExitedWithCode(3),
              "out of memory: not enough host memory to read '.*long.csv' line 2");
}

TEST_F(InputTest, TruncatedNpyFromAPipeFailsWithoutAllocatingItsShape) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 160 bytes that declare 30000 x 14000 doubles (3.36 GB).
  const std::string bytes =
      npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (30000, 14000), }",
                raw_bytes(std::vector<double>(4, 1.5)));
  ASSERT_EQ(bytes.size(), 160u);
  EXPECT_EXIT(in_limited_child(256 << 20, dir_,
                               [&] {
                                 Pipe pipe(bytes);
                                 read_npy(pipe.path());
                               }),
              ::testing::ExitedWithCode(3),
              "^input: '/dev/fd/[0-9]+' at byte 160: truncated: shape \\(30000, 14000\\) of "
              "8-byte elements needs 3360000000 bytes of data, but the stream ends after 32");
}
#endif

// ---- pipes and FIFOs ----------------------------------------------------------------------

TEST_F(InputTest, EveryMatrixFormatReadsFromAFifo) {
  {
    Fifo fifo(path("a.csv"), "\xef\xbb\xbf# dtype: f32\r1, 2.5\r3, 4\r");
    const AnyMatrix m = read_matrix(fifo.path());
    ASSERT_TRUE(std::holds_alternative<Matrix<float>>(m));
    EXPECT_EQ(std::get<Matrix<float>>(m)(0, 1), 2.5f);
    EXPECT_EQ(std::get<Matrix<float>>(m)(1, 0), 3.0f);
  }
  {
    Fifo fifo(path("a.mtx"),
              "%%MatrixMarket matrix coordinate integer general\r\n2 3 2\r\n1 3 -7\r\n2 1 9\r\n");
    const AnyMatrix m = read_matrix(fifo.path());
    ASSERT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(m));
    EXPECT_EQ(std::get<Matrix<std::int64_t>>(m)(0, 2), -7);
    EXPECT_EQ(std::get<Matrix<std::int64_t>>(m)(1, 0), 9);
  }
  {
    std::vector<std::int64_t> values(3000);
    for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<std::int64_t>(k * k) - 5;
    Fifo fifo(path("a.npy"),
              npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1000, 3), }",
                        raw_bytes(values)));
    const AnyMatrix m = read_matrix(fifo.path());
    ASSERT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(m));
    EXPECT_EQ(std::get<Matrix<std::int64_t>>(m)(999, 2), 2999 * 2999 - 5);
  }
}

TEST_F(InputTest, NpyFromAPipeChecksItsLength) {
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
  {
    Pipe pipe(npy_bytes(dict, raw_bytes(std::vector<double>{1, 2, 3, 4})));
    const AnyMatrix m = read_npy(pipe.path());
    EXPECT_EQ(std::get<Matrix<double>>(m)(1, 1), 4.0);
  }
  {
    Pipe pipe(npy_bytes(dict, raw_bytes(std::vector<double>{1, 2, 3})));
    expect_input_error([&] { read_npy(pipe.path()); }, pipe.path(),
                       "needs 32 bytes of data, but the stream ends after 24");
  }
  {
    Pipe pipe(npy_bytes(dict, raw_bytes(std::vector<double>{1, 2, 3, 4, 5})));
    expect_input_error([&] { read_npy(pipe.path()); }, pipe.path(), "unexpected bytes after the data");
  }
}

// The first edges use indices, then names (or a huge index) appear: the edges read so far
// become names, and the file is read once.
TEST_F(InputTest, EdgeListsSwitchingToNamesReadOnceFromAPipe) {
  GraphReadOptions options;
  options.format = GraphFormat::edges;
  const std::string text = "\xef\xbb\xbf" "0 1\r1 2\r2 0 3\ralice 0\r0 alice\r";
  const Graph from_file = read_graph(write_file("g.txt", text), options);
  Pipe pipe(text);
  const Graph g = read_graph(pipe.path(), options);
  ASSERT_EQ(g.n, 4);
  EXPECT_EQ(g.labels, (std::vector<std::string>{"0", "1", "2", "alice"}));
  EXPECT_EQ(g.labels, from_file.labels);
  EXPECT_EQ(g.row_start, from_file.row_start);
  EXPECT_EQ(g.target, from_file.target);
  EXPECT_EQ(g.weight, from_file.weight);
  EXPECT_EQ(g.weight_at(g.row_start[2]), 3);  // 2 -> 0 keeps its weight

  Fifo fifo(path("huge.txt"), "5 6\n6 123456789012\n");
  const Graph h = read_graph(fifo.path(), options);
  EXPECT_EQ(h.labels, (std::vector<std::string>{"5", "6", "123456789012"}));
  EXPECT_EQ(h.find("123456789012"), 2);
}

TEST_F(InputTest, UndirectedEdgeListsNameVerticesInOrderOfFirstAppearance) {
  GraphReadOptions options;
  options.undirected = true;
  const Graph g = read_graph(write_file("u.txt", "3 1\n1 1\nb 3\n"), options);
  EXPECT_EQ(g.labels, (std::vector<std::string>{"3", "1", "b"}));
  // Indices with leading zeros are names, not the index they spell.
  const Graph z = read_graph(write_file("z.txt", "0 1\n01 1\n"));
  EXPECT_EQ(z.labels, (std::vector<std::string>{"0", "1", "01"}));
}

TEST_F(InputTest, ByteOrderMarkIsNotPartOfAName) {
  const Graph g = read_graph(write_file("bom.txt", "\xef\xbb\xbf" "0 1\n1 0\n"));
  EXPECT_TRUE(g.labels.empty());  // indices, as without the mark
  EXPECT_EQ(g.n, 2);
  const Graph named = read_graph(write_file("bom_names.txt", "\xef\xbb\xbf" "a b\n"));
  EXPECT_EQ(named.labels, (std::vector<std::string>{"a", "b"}));
}

TEST_F(InputTest, CrOnlyAndBomMatrixMarketAndCsv) {
  const AnyMatrix m = read_mtx(write_file(
      "cr.mtx", "\xef\xbb\xbf%%MatrixMarket matrix array real general\r% c\r2 1\r0.5\r-1\r"));
  EXPECT_EQ(std::get<Matrix<double>>(m)(1, 0), -1.0);
  const AnyMatrix c = read_csv(write_file("cr.csv", "\xef\xbb\xbf" "1,2\r3,4\r"));
  ASSERT_EQ(rows_of(c), 2);
  EXPECT_EQ(std::get<Matrix<std::int64_t>>(c)(1, 1), 4);
}

// ---- integers -----------------------------------------------------------------------------

TEST_F(InputTest, CsvIntegersBeyondInt64AreRefusedUnlessFloatIsAskedFor) {
  const std::string p = write_file("big.csv", "1, 2\n3, 99999999999999999999\n");
  expect_input_error([&] { read_csv(p); }, p,
                     "line 2, column 4: integer '99999999999999999999' does not fit i64");
  ReadOptions f64;
  f64.dtype = DType::f64;
  const AnyMatrix m = read_matrix(p, f64);
  ASSERT_TRUE(std::holds_alternative<Matrix<double>>(m));
  EXPECT_EQ(std::get<Matrix<double>>(m)(1, 1), 1e20);
  // In a file of reals the literal is a real like any other.
  const AnyMatrix mixed = read_csv(write_file("mixed.csv", "0.5 99999999999999999999\n"));
  EXPECT_EQ(std::get<Matrix<double>>(mixed)(0, 1), 1e20);
  // Matrix Market integer files refuse them too.
  const std::string mtx = write_file(
      "big.mtx", "%%MatrixMarket matrix array integer general\n2 1\n5\n-9223372036854775809\n");
  expect_input_error([&] { read_mtx(mtx); }, mtx,
                     "line 4: integer value '-9223372036854775809' does not fit");
}

TEST_F(InputTest, CsvDtypeHeaderKeepsTheWrittenDtype) {
  const std::string f32 = path("f32.csv");
  write_csv(f32, make_matrix<float>(3, 2));
  EXPECT_EQ(read_file(f32).rfind("# dtype: f32\n", 0), 0u);
  const AnyMatrix back = read_csv(f32);
  ASSERT_TRUE(std::holds_alternative<Matrix<float>>(back));
  const Matrix<float> original = make_matrix<float>(3, 2);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      EXPECT_TRUE(same_value(std::get<Matrix<float>>(back)(i, j), original(i, j)));

  const std::string i32 = path("i32.csv");
  write_csv(i32, make_matrix<std::int32_t>(2, 2));
  ASSERT_TRUE(std::holds_alternative<Matrix<std::int32_t>>(read_csv(i32)));
  Matrix<Half> h(1, 2);
  h(0, 0) = Half(0.333);
  h(0, 1) = Half(-65504.0);
  const std::string f16 = path("f16.csv");
  write_csv(f16, h);
  const auto h_back = std::get<Matrix<Half>>(read_csv(f16));
  EXPECT_EQ(h_back(0, 0).bits, h(0, 0).bits);
  EXPECT_EQ(h_back(0, 1).bits, h(0, 1).bits);
  // f64 and i64 need no header.
  const std::string f64 = path("f64.csv");
  write_csv(f64, make_matrix<double>(1, 1, -1, {0.5}));
  EXPECT_EQ(read_file(f64), "0.5\n");

  expect_input_error([&] { read_csv(write_file("b1.csv", "# dtype: f8\n1\n")); }, "b1.csv",
                     "line 1: unknown dtype 'f8' in the '# dtype:' header");
  expect_input_error([&] { read_csv(write_file("b2.csv", "# dtype: i32\n1 2147483648\n")); },
                     "b2.csv", "line 2, column 3: integer '2147483648' does not fit i32");
  expect_input_error([&] { read_csv(write_file("b3.csv", "# dtype: i64\n1 0.5\n")); }, "b3.csv",
                     "'0.5' is not an integer, and the file declares dtype i64");
  // After the first row it is a comment like any other.
  const AnyMatrix late = read_csv(write_file("late.csv", "1\n# dtype: f32\n2\n"));
  EXPECT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(late));
}

TEST(Conversion, NamesThePositionAndTheValueAsWritten) {
  Matrix<double> d(2, 2);
  d(0, 0) = 1;
  d(1, 1) = 1e-7;
  expect_error([&] { convert(AnyMatrix(d), DType::i64); }, ErrorCategory::numeric,
               "row 2, column 2: 1e-07 is not an integer, so not an i64 value");
  d(1, 1) = 1e19;
  expect_error([&] { convert(AnyMatrix(d), DType::i64); }, ErrorCategory::numeric,
               "row 2, column 2: 1e+19 does not fit i64");
  Matrix<float> f(1, 1);
  f(0, 0) = 0.1f;
  expect_error([&] { convert(AnyMatrix(f), DType::i32); }, ErrorCategory::numeric,
               "row 1, column 1: 0.1 is not an integer");
  Matrix<std::int64_t> big(1, 1);
  big(0, 0) = std::int64_t(1) << 40;
  expect_error([&] { convert(AnyMatrix(big), DType::i32); }, ErrorCategory::numeric,
               "row 1, column 1: 1099511627776 does not fit i32");
}

TEST(Conversion, ReportsIntegersThatFloatsRound) {
  Matrix<std::int64_t> m(2, 2);
  m(0, 0) = 16777216;                         // 2^24: exact in f32
  m(0, 1) = 16777217;                         // 2^24 + 1: not
  m(1, 0) = (std::int64_t(1) << 53) + 1;      // exact in neither
  m(1, 1) = std::numeric_limits<std::int64_t>::max();
  ConversionReport f32;
  const auto as_f32 = std::get<Matrix<float>>(convert(AnyMatrix(m), DType::f32, &f32));
  EXPECT_EQ(as_f32(0, 1), 16777216.0f);
  EXPECT_EQ(f32.rounded, 3);
  EXPECT_EQ(f32.row, 0);
  EXPECT_EQ(f32.col, 1);
  EXPECT_EQ(f32.from, "16777217");
  EXPECT_EQ(f32.to, "16777216");
  ConversionReport f64;
  convert(AnyMatrix(m), DType::f64, &f64);
  EXPECT_EQ(f64.rounded, 2);
  EXPECT_EQ(f64.row, 1);
  EXPECT_EQ(f64.col, 0);
  EXPECT_EQ(f64.from, "9007199254740993");
  ConversionReport none;
  convert(AnyMatrix(m), DType::i64, &none);
  EXPECT_EQ(none.rounded, 0);
}

// ---- the command line ---------------------------------------------------------------------

class InputCli : public CliTest {
 protected:
  // `shell` with GEMMKIT standing for the binary, run by sh in the scratch folder.
  CliResult shell(const std::string& command) const {
    std::string cmd = command;
    for (std::size_t at; (at = cmd.find("GEMMKIT")) != std::string::npos;)
      cmd.replace(at, 7, GEMMKIT_CLI_PATH);
    const std::string out = path(".out"), err = path(".err");
    const int raw = std::system(("cd " + dir_ + " && (" + cmd + ") >" + out + " 2>" + err).c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
};

TEST_F(InputCli, WalksReadsEdgeListsWithNamesFromAPipeAndAFifo) {
  write_file("g.txt", "0 1\n1 2\nc 0\nc 2\n");  // indices first, then a name
  CliResult r = shell("cat g.txt | GEMMKIT walks /dev/stdin --format edges --from c --to 1 -k 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  write_file("h.txt", "5 123456789012\n123456789012 7\n");
  r = shell("cat h.txt | GEMMKIT walks /dev/stdin --format edges --from 5 --to 7 -k 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = shell("mkfifo f.txt && (cat g.txt > f.txt &) && timeout 60 GEMMKIT walks f.txt --from c --to 1 -k 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  // With a byte order mark, walks from 0 to 0 of length 2.
  write_file("bom.txt", "\xef\xbb\xbf" "0 1\n1 0\n");
  r = shell("GEMMKIT walks bom.txt --from 0 --to 0 -k 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = shell("GEMMKIT walks /dev/zero --format edges --from 0 --to 0 -k 2");
  expect_error(r, 2, "'/dev/zero' line 1 (byte 0): a NUL byte");
}

TEST_F(InputCli, MultiplyIntegersStayExactOrAreRefusedByName) {
  write_file("big.csv", "1 0\n0 99999999999999999999\n");
  write_file("id.csv", "1 0\n0 1\n");
  CliResult r = shell("GEMMKIT multiply big.csv id.csv -o c.csv --backend cpu");
  expect_error(r, 2, "'big.csv' line 2, column 3: integer '99999999999999999999' does not fit i64");
  r = shell("GEMMKIT multiply big.csv id.csv -o c.csv --backend cpu --dtype f64");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(path("c.csv")), "1.0,0.0\n0.0,1e+20\n");

  write_file("tiny.csv", "1 1e-7\n0 1\n");
  r = shell("GEMMKIT multiply tiny.csv id.csv -o d.csv --backend cpu --dtype i64");
  expect_error(r, 2, "'tiny.csv' row 1, column 2: 1e-07 is not an integer, so not an i64 value");

  write_file("f32.csv", "16777217 0\n0 16777219\n");
  r = shell("GEMMKIT multiply f32.csv id.csv -o e.npy --backend cpu --dtype f32");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("gemmkit: warning: 2 integers of 'f32.csv' are not exact in f32 and were "
                       "rounded, the first at row 1, column 1: 16777217 became 16777216"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  r = shell("GEMMKIT gen 3 2 --dtype f32 -o g.csv && GEMMKIT gen 3 2 --dtype f32 -o g.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  const AnyMatrix csv = read_matrix(path("g.csv")), npy = read_matrix(path("g.npy"));
  ASSERT_TRUE(std::holds_alternative<Matrix<float>>(csv));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      EXPECT_EQ(std::get<Matrix<float>>(csv)(i, j), std::get<Matrix<float>>(npy)(i, j));
}

// What JSON output can carry: well-formed UTF-8 only (labels and vertex names are checked
// with it; a bad one is a usage or input error, not an internal one when --json writes it).
TEST(Utf8, WellFormedTextOnly) {
  EXPECT_TRUE(io::valid_utf8(""));
  EXPECT_TRUE(io::valid_utf8("plain ascii"));
  EXPECT_TRUE(io::valid_utf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // été € 😀
  EXPECT_FALSE(io::valid_utf8("\xba"));              // a continuation byte alone
  EXPECT_FALSE(io::valid_utf8("x\xc3"));             // truncated
  EXPECT_FALSE(io::valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(io::valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(io::valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(io::valid_utf8("\xff"));
}

}  // namespace
}  // namespace gemmkit::test
