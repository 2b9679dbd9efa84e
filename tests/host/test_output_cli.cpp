// Output safety on the command line: what each kind of output path gets (standard output,
// links, FIFOs, devices, folders), one commit per run (a failed run changes no file),
// signals and file-size limits leave no temporary file, and failed writes to stdout fail.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli_test_support.hpp"

namespace gemmkit::test {
namespace {

class OutputCli : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_file("A.csv", "1,2\n3,4\n");
    write_file("B.csv", "5,6\n7,8\n");
    write_file("graph.txt", "a b\nb c\nc a\n");
    write_file("sparse.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n2 2 3\n");
    write_file("x.csv", "1\n2\n");
    write_file("mask.csv", "1\n1\n1\n");
  }

  // Each computing subcommand writing `output` (a matrix) with `extra` options.
  std::vector<std::string> commands(const std::string& output, const std::string& extra) const {
    const std::string o = " -o " + path(output) + " " + extra;
    return {"multiply " + path("A.csv") + " " + path("B.csv") + o,
            "walks " + path("graph.txt") + " --length 2" + o,
            "spmv " + path("sparse.mtx") + " " + path("x.csv") + " --backend cpu" + o,
            "conv1d " + path("x.csv") + " " + path("mask.csv") + " --backend cpu" + o,
            "reduce " + path("A.csv") + " --backend cpu" + o,
            "gen 3 3" + o};
  }

  // Runs gemmkit with `args` and its standard output on /dev/full.
  CliResult run_to_full(const std::string& args) const {
    const std::string err = path(".stderr");
    const int raw = std::system((std::string(GEMMKIT_CLI_PATH) + " " + args + " >/dev/full 2>" + err).c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.err = read_file(err);
    std::filesystem::remove(err);
    return r;
  }

  // lstat's view: the link itself, not what it leads to.
  static mode_t kind(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode & S_IFMT;
  }

  // Every name in the folder that a writer's temporary file would have.
  std::vector<std::string> temporaries() const {
    std::vector<std::string> found;
    for (const std::string& name : listing())
      if (name.find(".tmp") != std::string::npos) found.push_back(name);
    return found;
  }

  // Starts gemmkit with `args` in the scratch folder, streams to /dev/null (stderr to
  // `err_file` when given, stdout to `out_fd` when not -1), with default signal actions and
  // `limit_fsize` when nonzero.
  pid_t spawn(const std::vector<std::string>& args, const std::string& err_file = "",
              rlim_t limit_fsize = 0, int out_fd = -1) const {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ}) ::signal(s, SIG_DFL);
    if (::chdir(dir_.c_str()) != 0) ::_exit(126);
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, 0);
    ::dup2(out_fd >= 0 ? out_fd : null_fd, 1);
    const int err_fd = err_file.empty() ? null_fd : ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err_fd, 2);
    if (limit_fsize) {
      rlimit limit{limit_fsize, limit_fsize};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char*> argv{const_cast<char*>(GEMMKIT_CLI_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(GEMMKIT_CLI_PATH, argv.data());
    ::_exit(127);
  }
};

TEST_F(OutputCli, JsonDashGoesToStdoutAndMakesNoFile) {
  const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o " +
                          path("C.csv") + " --json -");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);  // stdout holds the JSON alone
  EXPECT_EQ(json.at("m"), 2);
  EXPECT_NE(r.err.find("verified"), std::string::npos) << r.err;  // the text moved to stderr
  EXPECT_FALSE(std::filesystem::exists(path("-")));
  EXPECT_EQ(read_file(path("C.csv")), "19,22\n43,50\n");
}

TEST_F(OutputCli, MatrixDashIsCsvOnStdout) {
  const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o -");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "19,22\n43,50\n");
  EXPECT_FALSE(std::filesystem::exists(path("-")));
}

TEST_F(OutputCli, OpenDescriptorIsWrittenThrough) {
  // stderr is a file here (the test's capture): the JSON lands in it, which stays in place.
  const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o " +
                          path("C.csv") + " --json /dev/fd/2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.err).at("k"), 2);
  EXPECT_NE(r.out.find("verified"), std::string::npos) << r.out;
  const CliResult closed = run("gen 2 2 -o /dev/fd/9");
  expect_error(closed, 1, "cannot write '/dev/fd/9': Bad file descriptor");
}

TEST_F(OutputCli, TwoOutputsOnStdoutAreRefused) {
  const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o - --json -");
  expect_error(r, 2, "given for two outputs");
}

TEST_F(OutputCli, BenchJsonThroughLinksKeepsTheLinks) {
  // /dev/stdout as a user names it, and a link in the scratch folder to /dev/null.
  ASSERT_EQ(::symlink("/dev/null", path("null.json").c_str()), 0);
  const std::string bench = "bench --sizes 8 --kernels cpu_naive --reps 1 --warmup 0 --json ";
  CliResult r = run(bench + path("null.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(kind(path("null.json")), S_IFLNK);
  EXPECT_EQ(kind("/dev/null"), S_IFCHR);

  struct stat st {};
  if (::lstat("/dev/stdout", &st) != 0 || !S_ISLNK(st.st_mode)) GTEST_SKIP() << "no /dev/stdout link";
  r = run(bench + "/dev/stdout");
  const bool still_link = kind("/dev/stdout") == S_IFLNK;
  if (!still_link) {  // put the system's link back before failing
    std::filesystem::remove("/dev/stdout");
    std::filesystem::create_symlink("/proc/self/fd/1", "/dev/stdout");
  }
  EXPECT_TRUE(still_link);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("backend"), "cpu");
}

TEST_F(OutputCli, LinkToFifoIsWrittenThrough) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("fifo", path("r.json").c_str()), 0);
  std::string received;
  std::thread reader([&] {
    const int fd = ::open(path("fifo").c_str(), O_RDONLY);
    char buf[4096];
    for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, std::size_t(n));
    if (fd >= 0) ::close(fd);
  });
  const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o " +
                          path("C.csv") + " --json " + path("r.json"));
  // Frees the reader if the run did not open the FIFO (fails with ENXIO when it did).
  const int fd = ::open(path("fifo").c_str(), O_WRONLY | O_NONBLOCK);
  if (fd >= 0) ::close(fd);
  reader.join();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(received).at("n"), 2);
  EXPECT_EQ(kind(path("r.json")), S_IFLNK);
  EXPECT_EQ(kind(path("fifo")), S_IFIFO);
}

TEST_F(OutputCli, FolderIsRefusedBeforeAnyWork) {
  std::filesystem::create_directory(path("out.npy"));
  const CliResult r = run("gen 3 3 -o " + path("out.npy"));
  expect_error(r, 2, "it is a folder");
  EXPECT_EQ(kind(path("out.npy")), S_IFDIR);
  const CliResult plot = run("bench --sizes 8 --kernels cpu_naive --plot -");
  expect_error(plot, 2, "--plot");
}

TEST_F(OutputCli, ReplacedOutputKeepsItsMode) {
  const std::string c = write_file("C.csv", "old\n");
  ASSERT_EQ(::chmod(c.c_str(), 0600), 0);
  ASSERT_EQ(run("multiply " + path("A.csv") + " " + path("B.csv") + " -o " + c).status, 0);
  struct stat st {};
  ASSERT_EQ(::stat(c.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(read_file(c), "19,22\n43,50\n");
}

TEST_F(OutputCli, LongOutputNameWorks) {
  const std::string name = std::string(246, 'c') + ".csv";  // 250 bytes
  const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o " + path(name));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(path(name)), "19,22\n43,50\n");
}

TEST_F(OutputCli, FailedRunLeavesTheExistingOutputUnchanged) {
  const std::string before = "existing bytes\n";
  // Found before the work: the JSON's folder does not exist.
  for (const std::string& command : commands("C.csv", "--json " + path("none/r.json"))) {
    if (command.rfind("gen", 0) == 0) continue;  // gen has no --json
    SCOPED_TRACE(command);
    write_file("C.csv", before);
    const CliResult r = run(command);
    expect_error(r, 2, "cannot create a file in '" + path("none") + "'");
    EXPECT_EQ(read_file(path("C.csv")), before);
    EXPECT_TRUE(temporaries().empty());
  }
  // Found after the work, when the output is written: stdout fails.
  for (const std::string& command : commands("C.csv", "--json " + path("r.json"))) {
    SCOPED_TRACE(command);
    write_file("C.csv", before);
    std::filesystem::remove(path("r.json"));
    const CliResult r = run_to_full(command.rfind("gen", 0) == 0 ? "gen 3 3 -o " + path("C.csv") : command);
    expect_error(r, 1, "cannot write to standard output: No space left on device");
    EXPECT_EQ(read_file(path("C.csv")), before);
    EXPECT_FALSE(std::filesystem::exists(path("r.json")));
    EXPECT_TRUE(temporaries().empty());
  }
}

TEST_F(OutputCli, FullStdoutIsAnError) {
  for (const std::string& command : {std::string("list"), "walks " + path("graph.txt") + " --length 2"}) {
    SCOPED_TRACE(command);
    const CliResult r = run_to_full(command);
    expect_error(r, 1, "cannot write to standard output: No space left on device");
  }
  // A matrix on stdout: the line that says what was written goes to stderr, before the error.
  const CliResult r = run_to_full("gen 2 2 -o -");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("wrote '-': 2 x 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\ngemmkit: error: cannot write to standard output: No space left on device\n"),
            std::string::npos) << r.err;
}

TEST_F(OutputCli, SignalsRemoveTemporaryFiles) {
  // The run blocks when its result's temporary file is complete, so the signal comes at a
  // known point: multiply at its commit, opening a FIFO that nobody reads as the JSON
  // output; gen (4 MB) flushing its report to a pipe that is already full.
  ASSERT_EQ(::mkfifo(path("fifo.json").c_str(), 0600), 0);
  int full_pipe[2];
  ASSERT_EQ(::pipe2(full_pipe, O_NONBLOCK | O_CLOEXEC), 0);
  while (::write(full_pipe[1], "x", 1) == 1) {
  }
  ::fcntl(full_pipe[1], F_SETFL, 0);  // the child's writes block
  const std::vector<std::string> multiply{"multiply", "A.csv", "B.csv", "-o", "C.npy", "--json", "fifo.json"};
  const std::vector<std::string> gen{"gen", "1000", "1000", "-o", "C.npy"};
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP, -SIGINT}) {
    SCOPED_TRACE(signal_number);
    write_file("C.npy", "old");
    const pid_t pid = signal_number > 0 ? spawn(multiply) : spawn(gen, "", 0, full_pipe[1]);
    bool seen = false;
    int status = 0;
    for (int i = 0; i < 2000 && !seen; ++i) {  // up to 20 s on a busy machine
      seen = !temporaries().empty();
      if (!seen && ::waitpid(pid, &status, WNOHANG) == pid) break;
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!seen) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "no temporary file appeared (status " << status << ")";
    }
    // The temporary file may be seen the moment it is made; let the run reach the FIFO.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::kill(pid, std::abs(signal_number));
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == std::abs(signal_number)) << status;
    EXPECT_TRUE(temporaries().empty());
    EXPECT_EQ(read_file(path("C.npy")), "old");
    EXPECT_EQ(kind(path("fifo.json")), S_IFIFO);
  }
  ::close(full_pipe[0]);
  ::close(full_pipe[1]);
}

TEST_F(OutputCli, FileSizeLimitIsAnErrorAndLeavesNoTemporary) {
  write_file("big.npy", "old");
  const pid_t pid = spawn({"gen", "200", "200", "-o", "big.npy"}, path("err.txt"), 16384);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  CliResult r;
  r.status = WEXITSTATUS(status);
  r.err = read_file(path("err.txt"));
  expect_error(r, 1, "cannot write 'big.npy': File too large");
  EXPECT_EQ(read_file(path("big.npy")), "old");
  EXPECT_TRUE(temporaries().empty());
}

// Issue 39: two outputs of a run, or an output and an input, that are one file are refused
// before any work, naming both, however the second name reaches it.
TEST_F(OutputCli, OutputsThatAreOneFileAreRefused) {
  const std::string before = "existing bytes\n";
  const std::string mul = "multiply " + path("A.csv") + " " + path("B.csv");
  const auto refused = [&](const std::string& args, const std::string& needle) {
    SCOPED_TRACE(args);
    const CliResult r = run(args);
    expect_error(r, 2, needle);
    EXPECT_TRUE(temporaries().empty());
  };
  // The same name twice: -o and --json (issue 39's data loss), and bench's --json and --csv.
  refused(mul + " -o " + path("same.npy") + " --json " + path("same.npy"),
          "--json '" + path("same.npy") + "' is the same file as -o '" + path("same.npy") + "'");
  EXPECT_FALSE(std::filesystem::exists(path("same.npy")));
  refused("bench --sizes 8 --kernels cpu_naive --reps 1 --warmup 0 --json " + path("x.json") + " --csv " +
              path("x.json"),
          "--csv '" + path("x.json") + "' is the same file as --json '" + path("x.json") + "'");
  // An existing file through a symbolic link, a hard link and another spelling: unchanged.
  write_file("C.csv", before);
  ASSERT_EQ(::symlink("C.csv", path("soft.json").c_str()), 0);
  ASSERT_EQ(::link(path("C.csv").c_str(), path("hard.json").c_str()), 0);
  std::filesystem::create_directory(path("sub"));
  for (const std::string& other : {path("soft.json"), path("hard.json"), path("sub/../C.csv")})
    refused(mul + " -o " + path("C.csv") + " --json " + other, "--json '" + other + "' is the same file as -o");
  EXPECT_EQ(read_file(path("C.csv")), before);
  // A name that does not exist yet, through '..' and through a link to its folder.
  ASSERT_EQ(::symlink(dir_.c_str(), path("alias").c_str()), 0);
  for (const std::string& other : {path("sub/../new.csv"), path("alias/new.csv")})
    refused(mul + " -o " + path("new.csv") + " --json " + other, "is the same file as -o '" + path("new.csv") + "'");
  EXPECT_FALSE(std::filesystem::exists(path("new.csv")));
  // Standard output redirected to the file -o names (here the test's capture of stdout).
  refused(mul + " -o " + path(".stdout") + " --format csv --json -",
          "--json '-' is the same file as -o '" + path(".stdout") + "'");
  // An output that is an input, in every subcommand that reads one.
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {mul + " -o " + path("A.csv"), "input A"},
      {mul + " --beta 1 --c " + path("C.csv") + " -o " + path("C.csv"), "--c"},
      {"walks " + path("graph.txt") + " --length 2 -o " + path("graph.txt"), "input GRAPH"},
      {"spmv " + path("sparse.mtx") + " " + path("x.csv") + " --backend cpu -o " + path("x.csv"), "input X"},
      {"conv1d " + path("x.csv") + " " + path("mask.csv") + " --backend cpu --json " + path("mask.csv"), "input MASK"},
      {"reduce " + path("A.csv") + " --backend cpu -o " + path("sub/../A.csv"), "input X"}};
  for (const auto& [args, input] : inputs) refused(args, "is the same file as " + input);
  EXPECT_EQ(read_file(path("A.csv")), "1,2\n3,4\n");
  EXPECT_EQ(read_file(path("mask.csv")), "1\n1\n1\n");
  // Devices replace no file: /dev/null may take every output.
  const CliResult r = run(mul + " -o /dev/null --json /dev/null");
  EXPECT_EQ(r.status, 0) << r.err;
}

// Issue 39: a device or FIFO takes its format from --format (--output-format in walks),
// else CSV as '-' does; /dev/null works, /dev/full is the full-disk error.
TEST_F(OutputCli, DevicesAndFifosTakeTheFormatOption) {
  for (const std::string& format : std::vector<std::string>{"", " --format npy", " --output-format mtx"})
    for (const std::string& command : commands("C.csv", "")) {
      std::string args = command.substr(0, command.find(" -o ")) + " -o /dev/null" + format;
      if (command.rfind("walks", 0) == 0 && !format.empty()) args = command.substr(0, command.find(" -o ")) +
                                                                    " -o /dev/null --output-format npy";
      SCOPED_TRACE(args);
      const CliResult r = run(args);
      EXPECT_EQ(r.status, 0) << r.err;
      const CliResult full = run(args.substr(0, args.find("/dev/null")) + "/dev/full" +
                                 args.substr(args.find("/dev/null") + 9));
      expect_error(full, 1, "cannot write '/dev/full': No space left on device");
    }
  // What a FIFO receives: CSV by default, the format named otherwise.
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  for (const std::string& format : std::vector<std::string>{"", " --format npy"}) {
    std::string received;
    std::thread reader([&] {
      const int fd = ::open(path("pipe").c_str(), O_RDONLY);
      char buf[4096];
      for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, std::size_t(n));
      if (fd >= 0) ::close(fd);
    });
    const CliResult r = run("multiply " + path("A.csv") + " " + path("B.csv") + " -o " + path("pipe") + format);
    const int fd = ::open(path("pipe").c_str(), O_WRONLY | O_NONBLOCK);  // frees the reader on failure
    if (fd >= 0) ::close(fd);
    reader.join();
    EXPECT_EQ(r.status, 0) << r.err;
    if (format.empty()) EXPECT_EQ(received, "19,22\n43,50\n");
    else EXPECT_EQ(received.rfind("\x93NUMPY", 0), 0u) << received;
  }
  // A regular file: --format instead of the extension; an unknown format is a usage error.
  ASSERT_EQ(run("gen 2 3 --kind index --dtype i64 -o " + path("m.dat") + " --format csv").status, 0);
  EXPECT_EQ(read_file(path("m.dat")), "0,1,2\n3,4,5\n");
  expect_error(run("gen 2 2 -o /dev/null --format xls"), 2, "unknown output format 'xls'");
  expect_error(run("gen 2 2 -o " + path("m.dat")), 2, "unsupported file extension '.dat'");
}

}  // namespace
}  // namespace gemmkit::test
