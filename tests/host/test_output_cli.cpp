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

}  // namespace
}  // namespace gemmkit::test
