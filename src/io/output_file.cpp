// Output files: what an output path is (see "Output" in gemmkit/io.hpp), which outputs are one
// file, AtomicFile, the batch that commits every output of a run together, and removing
// temporary files on signals.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

// ---- temporary files that signals remove -------------------------------------------------

// A fixed table, so that the signal handler can walk it without allocating or locking: a
// slot is claimed (busy), filled, then published (live); the handler unlinks live ones.
constexpr int kTempSlots = 64;
constexpr int kCleaningSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
enum SlotState : int { kFree, kBusy, kLive };
struct TempSlot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
TempSlot g_temp_slots[kTempSlots];

// The slot now naming `path`, or -1 when the table is full or the path too long (the file
// is then only removed by the normal paths, not by a signal).
int publish_temp(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = kFree;
    if (g_temp_slots[i].state.compare_exchange_strong(expected, kBusy)) {
      std::memcpy(g_temp_slots[i].path, path.c_str(), path.size() + 1);
      g_temp_slots[i].state.store(kLive);
      return i;
    }
  }
  return -1;
}

// Called once the temporary file is renamed or removed.
void retire_temp(int& slot) {
  if (slot >= 0) g_temp_slots[slot].state.store(kFree);
  slot = -1;
}

extern "C" void remove_temps_and_die(int signal_number) {
  for (TempSlot& slot : g_temp_slots)
    if (slot.state.load() == kLive) ::unlink(slot.path);
  // The handler was installed with SA_RESETHAND, so the default action is back: the
  // re-raised signal ends the process once the handler returns, as if never caught.
  ::raise(signal_number);
}

// ---- what an output path is --------------------------------------------------------------

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The open descriptor a path names ("-" and /dev/stdout: 1, /dev/stderr: 2, /dev/fd/N and
// /proc/self/fd/N: N), or -1. These are written to the descriptor itself: opening the name
// anew would start at offset 0 of a redirected file, or replace it.
int descriptor_of(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
        path.find_first_not_of("0123456789", prefix.size()) == std::string::npos &&
        path.size() - prefix.size() < 9)
      return std::stoi(path.substr(prefix.size()));
  return -1;
}

bool is_stdout(const std::string& path) { return descriptor_of(path) == STDOUT_FILENO; }

// "to standard output" or "'path'", to follow "cannot write".
std::string shown(const std::string& target) {
  return is_stdout(target) ? "to standard output" : io::quoted_path(target);
}

[[noreturn]] void write_failed(const std::string& target, int err) {
  fail(ErrorCategory::output, "cannot write " + shown(target) + ": " + std::strerror(err));
}

// A stream output: a descriptor, or a name for a character device or a FIFO (links followed).
bool is_stream(const std::string& path) {
  if (descriptor_of(path) >= 0) return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

struct Resolved {
  bool stream = false;  // "-", a character device or a FIFO: written through
  std::string file;     // otherwise the regular file to replace (a link's target) or create
  bool exists = false;
  struct stat st {};    // of `file` when it exists
};

Resolved resolve(const std::string& path) {
  Resolved r;
  if (const int fd = descriptor_of(path); fd >= 0) {
    if (::fcntl(fd, F_GETFL) < 0) write_failed(path, errno);  // not open
    r.stream = true;
    return r;
  }
  if (path.empty()) fail(ErrorCategory::usage, "an output path is empty");
  if (path.back() == '/')
    fail(ErrorCategory::usage, io::quoted_path(path) + " names a folder, not a file");
  r.file = path;
  if (::lstat(path.c_str(), &r.st) != 0) {
    // A new file; a missing folder is reported with the folder's name when it is checked.
    if (errno == ENOENT) return r;
    fail(ErrorCategory::input, "cannot write " + io::quoted_path(path) + ": " + std::strerror(errno));
  }
  const bool link = S_ISLNK(r.st.st_mode);
  if (link && ::stat(path.c_str(), &r.st) != 0) {
    if (errno == ENOENT)
      fail(ErrorCategory::usage, "cannot write " + io::quoted_path(path) +
                                     ": it is a symbolic link to a file that does not exist "
                                     "(name the file itself to create it)");
    fail(ErrorCategory::input, "cannot write " + io::quoted_path(path) + ": " + std::strerror(errno));
  }
  if (S_ISCHR(r.st.st_mode) || S_ISFIFO(r.st.st_mode)) {
    // Opened by the name given: a link may lead to /proc/self/fd/N, which has no other name.
    r.stream = true;
    r.file.clear();
    return r;
  }
  if (link && S_ISREG(r.st.st_mode)) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real)
      fail(ErrorCategory::input, "cannot write " + io::quoted_path(path) + ": " + std::strerror(errno));
    r.file = real;
    std::free(real);
  }
  if (S_ISREG(r.st.st_mode)) {
    r.exists = true;
    return r;
  }
  const mode_t type = r.st.st_mode & S_IFMT;
  const char* what = type == S_IFDIR ? "a folder" : type == S_IFSOCK ? "a socket"
                     : type == S_IFBLK ? "a block device" : "a special file";
  fail(ErrorCategory::usage, "cannot write " + io::quoted_path(path) + ": it is " +
                                 (link ? "a symbolic link to " : "") + what +
                                 " (outputs replace regular files, or go to character devices, "
                                 "FIFOs and '-')");
}

[[noreturn]] void cannot_create(const std::string& folder, const std::string& target, int err) {
  fail(ErrorCategory::input, "cannot create a file in " + io::quoted_path(folder) + " to write " +
                                 io::quoted_path(target) + ": " + std::strerror(err));
}

// ---- the open batch ----------------------------------------------------------------------

// An output finished but not yet in place.
struct Staged {
  std::string target;  // as given
  std::string file;    // rename onto this; empty for a stream
  std::string temp;
  int temp_slot = -1;
  char* data = nullptr;  // a stream's bytes (malloc'd by open_memstream)
  std::size_t size = 0;
};

struct BatchState {
  std::vector<Staged> staged;
  int stdout_fd = -1;  // the real standard output, once "-" has claimed it (fd 1 is stderr then)
};
BatchState* g_batch = nullptr;

void write_all(int fd, const char* data, std::size_t size, const std::string& target) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, std::min<std::size_t>(size, std::size_t(1) << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      write_failed(target, errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Writes a stream's data to its descriptor, or to the device or FIFO.
void write_stream(const Staged& s) {
  if (int fd = descriptor_of(s.target); fd >= 0) {
    if (fd == STDOUT_FILENO && g_batch && g_batch->stdout_fd >= 0) fd = g_batch->stdout_fd;
    if (fd == STDOUT_FILENO && std::fflush(stdout) != 0) write_failed(s.target, errno);
    write_all(fd, s.data, s.size, s.target);
    return;
  }
  // A FIFO's open waits for a reader, as any writer's would.
  int fd;
  do fd = ::open(s.target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) write_failed(s.target, errno);
  struct stat st {};
  // Checked again now that it is open: a regular file here would be overwritten in place.
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    fail(ErrorCategory::usage, "cannot write " + io::quoted_path(s.target) +
                                   ": it changed from a device or FIFO while gemmkit ran");
  }
  try {
    write_all(fd, s.data, s.size, s.target);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) write_failed(s.target, errno);
}

void rename_into_place(Staged& s) {
  if (std::rename(s.temp.c_str(), s.file.c_str()) != 0)
    fail(ErrorCategory::output, "cannot rename the finished file to " + io::quoted_path(s.target) +
                                    ": " + std::strerror(errno));
  retire_temp(s.temp_slot);
  s.temp.clear();
  // Make the rename itself durable. Some file systems cannot sync a folder; the data is
  // already safe then, so a failure here is not worth failing the write for.
  const int dir_fd = ::open(folder_of(s.file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void finish(Staged& s) {
  if (s.file.empty()) write_stream(s);
  else rename_into_place(s);
}

void discard(Staged& s) {
  if (!s.temp.empty()) ::unlink(s.temp.c_str());
  retire_temp(s.temp_slot);
  std::free(s.data);
  s.data = nullptr;
}

void restore_stdout(BatchState& b) {
  if (b.stdout_fd < 0) return;
  std::fflush(stdout);  // text meant for stdout that went to stderr
  ::dup2(b.stdout_fd, STDOUT_FILENO);
  ::close(b.stdout_fd);
  b.stdout_fd = -1;
}

void claim_stdout(BatchState& b) {
  if (b.stdout_fd >= 0)
    fail(ErrorCategory::usage, "'-' (standard output) is given for two outputs; name a file for one");
  if (std::fflush(stdout) != 0) write_failed("-", errno);
  b.stdout_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (b.stdout_fd < 0) write_failed("-", errno);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

// Which file a path names, to tell when two names are one file: a regular file's device and
// inode, or for a name not yet created (`output`) its folder's real path and its own name.
// Devices, FIFOs and descriptors open on anything but a regular file have none.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  std::string new_name;     // a file to be created: "/real/folder/name"
  bool descriptor = false;  // "-" or /dev/fd/N: written through at its offset
  bool same_as(const FileIdentity& o) const {
    return new_name.empty() ? o.new_name.empty() && device == o.device && inode == o.inode : new_name == o.new_name;
  }
};

std::optional<FileIdentity> identity_of(const std::string& path, bool output) {
  FileIdentity id;
  struct stat st {};
  int fd = output ? descriptor_of(path) : -1;  // an input named "-" is a file of that name
  id.descriptor = fd >= 0;
  if (fd == STDOUT_FILENO && g_batch && g_batch->stdout_fd >= 0) fd = g_batch->stdout_fd;  // claimed by "-"
  if (fd >= 0 ? ::fstat(fd, &st) == 0 : ::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    id.device = st.st_dev;
    id.inode = st.st_ino;
    return id;
  }
  if (fd >= 0 || errno != ENOENT || !output) return std::nullopt;
  const std::size_t slash = path.find_last_of('/');
  char* folder = ::realpath(folder_of(path).c_str(), nullptr);
  if (!folder) return std::nullopt;  // check_output reports a missing folder
  id.new_name = folder;
  if (id.new_name.back() != '/') id.new_name += '/';
  id.new_name += slash == std::string::npos ? path : path.substr(slash + 1);
  std::free(folder);
  return id;
}

}  // namespace

// ---- public ------------------------------------------------------------------------------

FileFormat output_format(const std::string& path, std::optional<FileFormat> requested) {
  if (requested) return *requested;
  if (is_stream(path)) return io::format_of_extension(path).value_or(FileFormat::csv);
  return format_from_path(path);
}

void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  struct Named {
    const NamedPath* named;
    FileIdentity id;
  };
  std::vector<Named> seen;  // the outputs so far
  const auto describe = [](const NamedPath& p) { return p.name + " " + io::quoted_path(p.path); };
  for (const NamedPath& output : outputs) {
    if (output.path.empty()) continue;
    const std::optional<FileIdentity> id = identity_of(output.path, true);
    if (!id) continue;
    for (const Named& other : seen)
      if (id->same_as(other.id) && !(id->descriptor && other.id.descriptor))
        fail(ErrorCategory::usage, describe(output) + " is the same file as " + describe(*other.named) +
                                       " (each output needs a file of its own)");
    seen.push_back({&output, *id});
  }
  for (const NamedPath& input : inputs) {
    if (input.path.empty()) continue;
    const std::optional<FileIdentity> id = identity_of(input.path, false);
    if (!id) continue;
    for (const Named& output : seen)
      if (id->same_as(output.id))
        fail(ErrorCategory::usage, describe(*output.named) + " is the same file as " + describe(input) +
                                       " (an output may not replace an input of the run)");
  }
}

void check_output(const std::string& path) {
  const Resolved r = resolve(path);
  if (is_stdout(path)) {
    if (g_batch) claim_stdout(*g_batch);
    return;
  }
  if (r.stream) return;
  const std::string folder = folder_of(r.file);
  if (::access(folder.c_str(), W_OK | X_OK) != 0) cannot_create(folder, path, errno);
}

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  const Resolved r = resolve(target_);
  if (r.stream) {
    stream_ = ::open_memstream(&buffer_, &buffer_size_);
    if (!stream_) fail(ErrorCategory::out_of_memory, "cannot buffer the output " + shown(target_));
    return;
  }
  file_ = r.file;
  const std::string folder = folder_of(file_);
  // A short name of fixed length, so that any name the folder takes can be written.
  const std::string prefix = file_.substr(0, file_.find_last_of('/') + 1);  // npos + 1 == 0

  // Like mkstemp (O_EXCL on a random name), but created with mode 0666 so that the kernel
  // applies the umask: a new file gets the usual 0644, and reading the umask (which would
  // mean changing it, racing other threads) is never needed.
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device entropy;
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kAlphabet - 2);
  // The cleaning signals wait while the file is made and published, so that none can come
  // between the two and leave it behind.
  sigset_t cleaning, old_mask;
  sigemptyset(&cleaning);
  for (int signal_number : kCleaningSignals) sigaddset(&cleaning, signal_number);
  ::pthread_sigmask(SIG_BLOCK, &cleaning, &old_mask);
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    std::string name = ".gemmkit-";
    for (int i = 0; i < 6; ++i) name += kAlphabet[pick(entropy)];
    temp_ = prefix + name + ".tmp";
    fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  const int open_error = errno;
  if (fd >= 0) temp_slot_ = publish_temp(temp_);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (fd < 0) {
    temp_.clear();
    cannot_create(folder, target_, open_error);
  }
  const auto give_up = [&](int err) {
    ::close(fd);
    ::unlink(temp_.c_str());
    retire_temp(temp_slot_);
    temp_.clear();
    write_failed(target_, err);
  };
  // A replaced file keeps its permission bits, set before any data lands so that a private
  // file is never readable by others; as root it also keeps its owner (chown first: it clears
  // the set-user-ID bits that chmod then restores).
  if (r.exists) {
    if (::geteuid() == 0 && (r.st.st_uid != ::geteuid() || r.st.st_gid != ::getegid()) &&
        ::fchown(fd, r.st.st_uid, r.st.st_gid) != 0)
      give_up(errno);
    if (::fchmod(fd, r.st.st_mode & 07777) != 0) give_up(errno);
  }
  stream_ = ::fdopen(fd, "wb");
  if (!stream_) give_up(errno);
}

AtomicFile::~AtomicFile() {
  if (stream_) std::fclose(stream_);
  if (!committed_) {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    retire_temp(temp_slot_);
  }
  std::free(buffer_);
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (!stream_)
    fail(ErrorCategory::internal, "write to " + io::quoted_path(target_) + " after commit");
  if (bytes == 0) return;
  if (std::fwrite(data, 1, bytes, stream_) != bytes) write_failed(target_, errno);
}

void AtomicFile::commit() {
  if (!stream_) fail(ErrorCategory::internal, "commit of " + io::quoted_path(target_) + " twice");
  // Buffered data may only fail to land (ENOSPC, EFBIG, EIO) here, so every step is checked.
  if (std::fflush(stream_) != 0) write_failed(target_, errno);
  if (!file_.empty() && ::fsync(fileno(stream_)) != 0) write_failed(target_, errno);
  std::FILE* stream = stream_;
  stream_ = nullptr;
  if (std::fclose(stream) != 0) write_failed(target_, errno);

  Staged s{target_, file_, temp_, temp_slot_, buffer_, buffer_size_};
  if (g_batch) {
    g_batch->staged.push_back(s);
    committed_ = true;  // the batch owns the temporary file and the buffer now
    buffer_ = nullptr;
    return;
  }
  try {
    finish(s);
  } catch (...) {
    temp_slot_ = s.temp_slot;
    throw;  // the destructor removes the temporary file
  }
  temp_slot_ = -1;
  committed_ = true;
}

OutputBatch::OutputBatch() {
  if (g_batch) fail(ErrorCategory::internal, "an output batch is already open");
  g_batch = new BatchState;
}

OutputBatch::~OutputBatch() {
  for (Staged& s : g_batch->staged) discard(s);
  restore_stdout(*g_batch);
  delete g_batch;
  g_batch = nullptr;
}

void OutputBatch::commit() {
  std::vector<Staged>& staged = g_batch->staged;
  // Streams first: they can fail (a full device, a closed pipe) where a rename hardly can,
  // and a failure then still leaves every file as it was.
  for (bool streams : {true, false})
    for (Staged& s : staged)
      if (s.file.empty() == streams) {
        finish(s);
        discard(s);  // the buffer; a renamed file has no temporary left to remove
      }
  staged.clear();
  restore_stdout(*g_batch);
}

void remove_temporary_files_on_signals() {
  struct sigaction action {};
  action.sa_handler = remove_temps_and_die;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal_number : kCleaningSignals) sigaddset(&action.sa_mask, signal_number);  // one at a time
  for (int signal_number : kCleaningSignals) {
    struct sigaction old {};
    if (::sigaction(signal_number, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
      ::sigaction(signal_number, &action, nullptr);
  }
  ::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace gemmkit
