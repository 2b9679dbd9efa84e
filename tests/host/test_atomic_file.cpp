// AtomicFile (write to a temporary, rename on commit; write through to devices and FIFOs),
// OutputBatch, and choosing a format by extension.
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fcntl.h>

#include <regex>
#include <thread>

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

TEST_F(AtomicFileTest, ShortWriteIsAnOutputError) {
  // A file-size limit makes writes fail with EFBIG, as a full disk fails them with ENOSPC.
  const std::string target = write_file("big.bin", "original");
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string data(1 << 20, 'x');
  const auto write_big = [&] {
    AtomicFile f(target);
    f.write(data);
    f.commit();
  };
  expect_error(write_big, ErrorCategory::output, "cannot write '" + target + "': File too large");
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_file(target), "original");
  EXPECT_EQ(listing(), std::set<std::string>{"big.bin"});
}

// lstat's view of a path: the link itself, not what it leads to.
mode_t link_mode(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & S_IFMT;
}

const Matrix<std::int64_t> kRow = make_matrix<std::int64_t>(1, 2, -1, {3, 4});

TEST_F(AtomicFileTest, SymlinkStaysALinkAndItsTargetIsReplaced) {
  std::filesystem::create_directory(path("data"));
  const std::string real = write_file("data/real.csv", "old\n");
  ASSERT_EQ(::symlink("data/real.csv", path("link.csv").c_str()), 0);
  write_matrix(path("link.csv"), kRow);
  EXPECT_EQ(link_mode(path("link.csv")), S_IFLNK);
  EXPECT_EQ(read_file(real), "3,4\n");
  EXPECT_EQ(listing(), (std::set<std::string>{"data", "link.csv"}));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(path("data")),
                          std::filesystem::directory_iterator()), 1);
}

TEST_F(AtomicFileTest, DanglingSymlinkIsRefused) {
  ASSERT_EQ(::symlink("missing.csv", path("link.csv").c_str()), 0);
  expect_error([&] { write_matrix(path("link.csv"), kRow); }, ErrorCategory::usage,
               "symbolic link to a file that does not exist");
  EXPECT_EQ(link_mode(path("link.csv")), S_IFLNK);
  EXPECT_EQ(listing(), std::set<std::string>{"link.csv"});
}

TEST_F(AtomicFileTest, FifoIsWrittenThrough) {
  const std::string fifo = path("pipe.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[256];
    for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, std::size_t(n));
    if (fd >= 0) ::close(fd);
  });
  write_matrix(fifo, kRow);
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // frees the reader if never opened
  if (fd >= 0) ::close(fd);
  reader.join();
  EXPECT_EQ(received, "3,4\n");
  EXPECT_EQ(link_mode(fifo), S_IFIFO);
  EXPECT_EQ(listing(), std::set<std::string>{"pipe.csv"});
}

TEST_F(AtomicFileTest, DevNullIsWrittenThroughALink) {
  ASSERT_EQ(::symlink("/dev/null", path("null.npy").c_str()), 0);
  write_matrix(path("null.npy"), kRow);
  EXPECT_EQ(link_mode(path("null.npy")), S_IFLNK);
  EXPECT_EQ(link_mode("/dev/null"), S_IFCHR);
  EXPECT_EQ(listing(), std::set<std::string>{"null.npy"});
}

TEST_F(AtomicFileTest, FoldersSocketsAndLinksToFoldersAreRefused) {
  std::filesystem::create_directory(path("dir.csv"));
  ASSERT_EQ(::symlink("dir.csv", path("to_dir.csv").c_str()), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string sock_path = path("sock.csv");
  ASSERT_LT(sock_path.size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  expect_error([&] { write_matrix(path("dir.csv"), kRow); }, ErrorCategory::usage, "it is a folder");
  expect_error([&] { write_matrix(path("to_dir.csv"), kRow); }, ErrorCategory::usage,
               "it is a symbolic link to a folder");
  expect_error([&] { write_matrix(sock_path, kRow); }, ErrorCategory::usage, "it is a socket");
  expect_error([&] { check_output(path("dir.csv")); }, ErrorCategory::usage, "it is a folder");
  ::close(sock);
  EXPECT_EQ(link_mode(path("dir.csv")), S_IFDIR);
  EXPECT_EQ(link_mode(path("to_dir.csv")), S_IFLNK);
  EXPECT_EQ(link_mode(sock_path), S_IFSOCK);
  EXPECT_TRUE(std::filesystem::is_empty(path("dir.csv")));
}

TEST_F(AtomicFileTest, ReplacedFileKeepsItsMode) {
  for (const mode_t mode : {0600, 0640, 0755}) {
    const std::string target = write_file("m.csv", "old\n");
    ASSERT_EQ(::chmod(target.c_str(), mode), 0);
    write_matrix(target, kRow);
    struct stat st {};
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);
    EXPECT_EQ(read_file(target), "3,4\n");
  }
}

TEST_F(AtomicFileTest, NamesOfUpTo255BytesWork) {
  for (const std::size_t length : {244, 250, 255}) {
    const std::string name = std::string(length - 4, 'n') + ".csv";
    write_matrix(path(name), kRow);
    EXPECT_EQ(read_file(path(name)), "3,4\n");
    std::filesystem::remove(path(name));
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(AtomicFileTest, TemporaryNameIsShortAndFixed) {
  AtomicFile f(path(std::string(200, 'x') + ".bin"));
  const std::set<std::string> names = listing();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(std::regex_match(*names.begin(), std::regex(R"(\.gemmkit-[A-Za-z0-9]{6}\.tmp)")))
      << *names.begin();
}

TEST_F(AtomicFileTest, CheckOutputNamesAMissingFolderBeforeAnyWrite) {
  expect_input_error([&] { check_output(path("no/r.json")); }, path("no"), "No such file or directory");
  check_output(path("new.json"));
  check_output("-");
  EXPECT_TRUE(listing().empty());
}

TEST_F(AtomicFileTest, BatchRenamesEveryOutputOnlyAtCommit) {
  const std::string kept = write_file("c.csv", "old\n");
  {
    OutputBatch batch;
    write_matrix(kept, kRow);
    write_matrix(path("r.csv"), kRow);
    EXPECT_EQ(read_file(kept), "old\n");
    EXPECT_EQ(listing().size(), 3u);  // c.csv and the two temporary files
    batch.commit();
  }
  EXPECT_EQ(read_file(kept), "3,4\n");
  EXPECT_EQ(read_file(path("r.csv")), "3,4\n");
  EXPECT_EQ(listing(), (std::set<std::string>{"c.csv", "r.csv"}));
}

TEST_F(AtomicFileTest, BatchNotCommittedChangesNothing) {
  const std::string kept = write_file("c.csv", "old\n");
  {
    OutputBatch batch;
    write_matrix(kept, kRow);
    write_matrix(path("r.csv"), kRow);
  }  // as when the run fails after writing
  EXPECT_EQ(read_file(kept), "old\n");
  EXPECT_EQ(listing(), std::set<std::string>{"c.csv"});
}

TEST_F(FormatDispatchTest, ChoosesFormatByExtension) {
  EXPECT_EQ(format_from_path("a.npy"), FileFormat::npy);
  EXPECT_EQ(format_from_path("dir/A.NPY"), FileFormat::npy);
  EXPECT_EQ(format_from_path("x.y/b.Mtx"), FileFormat::mtx);
  EXPECT_EQ(format_from_path("c.csv"), FileFormat::csv);
  EXPECT_EQ(format_from_path("/tmp/d.TXT"), FileFormat::csv);
  EXPECT_EQ(output_format("-"), FileFormat::csv);  // standard output takes text
  EXPECT_EQ(output_format("r.npy"), FileFormat::npy);
}

// Issue 39: -o /dev/null was refused for having no extension. A stream takes the format asked
// for, else CSV as "-" does; a regular file takes the one asked for over its extension.
TEST_F(FormatDispatchTest, StreamsAndRequestedFormats) {
  EXPECT_EQ(output_format("/dev/null"), FileFormat::csv);
  EXPECT_EQ(output_format("/dev/null", FileFormat::npy), FileFormat::npy);
  EXPECT_EQ(output_format("-", FileFormat::mtx), FileFormat::mtx);
  EXPECT_EQ(output_format(path("m.dat"), FileFormat::mtx), FileFormat::mtx);
  EXPECT_EQ(output_format(path("m.csv"), FileFormat::npy), FileFormat::npy);
  expect_error([&] { output_format(path("m.dat")); }, ErrorCategory::usage, "unsupported file extension '.dat'");
  EXPECT_EQ(parse_file_format("NPY"), FileFormat::npy);
  EXPECT_EQ(parse_file_format("txt"), FileFormat::csv);
  EXPECT_EQ(parse_file_format("xls"), std::nullopt);
  EXPECT_NO_THROW(write_matrix("/dev/null", Matrix<double>(2, 2), FileFormat::npy));
  write_matrix(path("m.dat"), Matrix<std::int64_t>(1, 2), FileFormat::csv);
  EXPECT_EQ(read_file(path("m.dat")), "0,0\n");
}

// Issue 39: outputs that are one file, or an output that is an input, are refused by name.
TEST_F(AtomicFileTest, OneFileForTwoOutputsOrAnOutputAndAnInputIsRefused) {
  write_file("a.csv", "1\n");
  ASSERT_EQ(::symlink("a.csv", path("link").c_str()), 0);
  expect_error([&] { check_distinct_files({{"-o", path("a.csv")}, {"--json", path("link")}}, {}); },
               ErrorCategory::usage, "--json '" + path("link") + "' is the same file as -o '" + path("a.csv") + "'");
  expect_error([&] { check_distinct_files({{"-o", path("./new")}, {"--csv", path("new")}}, {}); },
               ErrorCategory::usage, "--csv '" + path("new") + "' is the same file as -o");
  expect_error([&] { check_distinct_files({{"-o", path("link")}}, {{"input A", path("a.csv")}}); },
               ErrorCategory::usage, "is the same file as input A '" + path("a.csv") + "'");
  // Distinct files, devices named twice, inputs named twice, options not given: fine.
  EXPECT_NO_THROW(check_distinct_files({{"-o", path("b.csv")}, {"--json", "/dev/null"}, {"--csv", "/dev/null"},
                                        {"--plot", ""}},
                                       {{"input A", path("a.csv")}, {"input B", path("a.csv")}}));
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
