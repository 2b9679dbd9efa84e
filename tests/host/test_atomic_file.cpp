// AtomicFile (write to a temporary, rename on commit) and choosing a format by extension.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "host/io_test_support.hpp"

namespace gemmkit::test {
namespace {

using AtomicFileTest = ScratchDirTest;
using FormatDispatchTest = ScratchDirTest;

TEST_F(AtomicFileTest, CommitWritesTheTargetAndLeavesNothingElse) {
  const std::string target = path("out.bin");
  {
    AtomicFile f(target);
    f.write("hello ");
    f.write(std::string("world"));
    EXPECT_FALSE(std::filesystem::exists(target));  // nothing visible before commit
    f.commit();
  }
  EXPECT_EQ(read_file(target), "hello world");
  EXPECT_EQ(listing(), std::set<std::string>{"out.bin"});
}

TEST_F(AtomicFileTest, PermissionsFollowTheUmask) {
  const mode_t mask = ::umask(022);
  ::umask(mask);
  const std::string target = path("perm.bin");
  AtomicFile f(target);
  f.commit();
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(AtomicFileTest, UncommittedWriteLeavesTargetUntouched) {
  const std::string target = write_file("keep.txt", "original");
  {
    AtomicFile f(target);
    f.write("partial replacement");
    EXPECT_EQ(listing().size(), 2u);  // the target and the temporary
  }                                   // destroyed without commit, as when an exception unwinds
  EXPECT_EQ(read_file(target), "original");
  EXPECT_EQ(listing(), std::set<std::string>{"keep.txt"});
}

TEST_F(AtomicFileTest, FailedWriterLeavesNoFile) {
  // A writer that throws halfway must leave neither the target nor a temporary.
  const std::string target = path("fail.npy");
  try {
    AtomicFile f(target);
    f.write("\x93NUMPY");
    fail(ErrorCategory::numeric, "simulated failure");
  } catch (const Error&) {
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(AtomicFileTest, CommitReplacesExistingTarget) {
  const std::string target = write_file("m.csv", "old\n");
  write_matrix(target, make_matrix<std::int64_t>(1, 2, -1, {3, 4}));
  EXPECT_EQ(read_file(target), "3,4\n");
  EXPECT_EQ(listing(), std::set<std::string>{"m.csv"});
}

TEST_F(AtomicFileTest, MissingDirectoryIsAnInputError) {
  const std::string target = path("no/such/dir/out.npy");
  expect_input_error([&] { AtomicFile f(target); }, target, "No such file or directory");
  expect_error([&] { write_matrix(target, Matrix<double>(1, 1)); }, ErrorCategory::input,
               "cannot create a file in");
}

TEST_F(AtomicFileTest, ShortWriteIsAnInputError) {
  // A file-size limit makes writes fail with EFBIG, as a full disk fails them with ENOSPC.
  const std::string target = write_file("big.bin", "original");
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string data(1 << 20, 'x');
  expect_input_error(
      [&] {
        AtomicFile f(target);
        f.write(data);
        f.commit();
      },
      target, "File too large");
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_file(target), "original");
  EXPECT_EQ(listing(), std::set<std::string>{"big.bin"});
}

TEST_F(FormatDispatchTest, ChoosesFormatByExtension) {
  EXPECT_EQ(format_from_path("a.npy"), FileFormat::npy);
  EXPECT_EQ(format_from_path("dir/A.NPY"), FileFormat::npy);
  EXPECT_EQ(format_from_path("x.y/b.Mtx"), FileFormat::mtx);
  EXPECT_EQ(format_from_path("c.csv"), FileFormat::csv);
  EXPECT_EQ(format_from_path("/tmp/d.TXT"), FileFormat::csv);
}

TEST_F(FormatDispatchTest, UnknownExtensionIsUsageError) {
  expect_error([] { format_from_path("m.dat"); }, ErrorCategory::usage,
               "unsupported file extension '.dat'");
  expect_error([] { format_from_path("m.dat"); }, ErrorCategory::usage, ".npy, .mtx, .csv, .txt");
  expect_error([] { format_from_path("dir.npy/matrix"); }, ErrorCategory::usage,
               "has no file extension");
  const std::string p = write_file("m.json", "[]");
  expect_error([&] { read_matrix(p); }, ErrorCategory::usage, "'.json'");
  expect_error([&] { write_matrix(p, Matrix<double>(1, 1)); }, ErrorCategory::usage, "'.json'");
  EXPECT_EQ(read_file(p), "[]");
}

TEST_F(FormatDispatchTest, ReadAndWriteEveryFormat) {
  const Matrix<std::int64_t> original = make_matrix<std::int64_t>(3, 2, -1, {1, -2, 3, 4, 5, 6});
  for (const char* name : {"m.npy", "m.MTX", "m.csv", "m.txt"}) {
    SCOPED_TRACE(name);
    write_matrix(path(name), original);
    const AnyMatrix back = read_matrix(path(name));
    ASSERT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(back));
    const auto& m = std::get<Matrix<std::int64_t>>(back);
    ASSERT_EQ(m.rows(), 3);
    ASSERT_EQ(m.cols(), 2);
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 2; ++j) EXPECT_EQ(m(i, j), original(i, j));
  }
}

TEST_F(FormatDispatchTest, MissingInputNamesThePath) {
  for (const char* name : {"absent.npy", "absent.mtx", "absent.csv"}) {
    const std::string p = path(name);
    expect_input_error([&] { read_matrix(p); }, p,
                       "cannot open '" + p + "': No such file or directory");
  }
}

}  // namespace
}  // namespace gemmkit::test
