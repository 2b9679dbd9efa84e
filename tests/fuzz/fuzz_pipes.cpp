// libFuzzer harness of reading through a pipe: each reader must give the same answer for
// a file and for the same bytes arriving through a pipe (read once, never reopened; a
// .npy's declared size checked before it is allocated), or fail with the same category.
// The first byte picks the reader; the rest is the file.
#include <fcntl.h>
#include <unistd.h>

#include <functional>
#include <optional>

#include "fuzz_support.hpp"
#include "gemmkit/io.hpp"

using namespace gemmkit;

namespace {

// What a read gave: a result, or the category of its error.
template <class T>
struct Outcome {
  std::optional<T> value;
  std::optional<ErrorCategory> error;
};

template <class T>
Outcome<T> attempt(const std::function<T()>& read) {
  Outcome<T> out;
  fuzz::expect_reader_contract([&] {
    try {
      out.value = read();
    } catch (const Error& e) {
      out.error = e.category();
      throw;
    } catch (const std::bad_alloc&) {
      out.error = ErrorCategory::out_of_memory;
      throw;
    }
  });
  return out;
}

bool same_graph(const Graph& a, const Graph& b) {
  return a.n == b.n && a.row_start == b.row_start && a.target == b.target && a.weight == b.weight &&
         a.labels == b.labels;
}

// `bytes` in a pipe whose write end is closed; the path opens its read end. The harness's
// inputs are smaller than a pipe's buffer, so the write never blocks.
class Pipe {
 public:
  explicit Pipe(std::string_view bytes) {
    if (bytes.size() > 4096 || pipe2(fds_, O_CLOEXEC) != 0) fuzz::finding("cannot make a pipe");
    if (!bytes.empty() && write(fds_[1], bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
      fuzz::finding("cannot fill a pipe");
    close(fds_[1]);
  }
  ~Pipe() { close(fds_[0]); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fds_[0]); }

 private:
  int fds_[2] = {-1, -1};
};

template <class T, class Same>
void compare(const char* what, std::string_view bytes, const std::function<T(const std::string&)>& read,
             Same same) {
  const std::string file = fuzz::write_scratch("input", bytes);
  const Outcome<T> from_file = attempt<T>([&] { return read(file); });
  const Pipe pipe(bytes);
  const Outcome<T> from_pipe = attempt<T>([&] { return read(pipe.path()); });
  // A file's size shows a short file before anything is allocated; a pipe's does not, so a
  // dense .mtx array promising more than arrives may run out of memory first (input there,
  // out of memory here). .npy grows with the data instead and must agree exactly.
  const bool unknowable_length = from_file.error == ErrorCategory::input &&
                                 from_pipe.error == ErrorCategory::out_of_memory &&
                                 std::string_view(what) == "read_mtx";
  if (from_file.value.has_value() != from_pipe.value.has_value() ||
      (from_file.value && !same(*from_file.value, *from_pipe.value)) ||
      (from_file.error != from_pipe.error && !unknowable_length))
    fuzz::finding(std::string(what) + ": a pipe gives another answer than a file (" +
                  (from_file.value ? "value" : std::string(category_name(*from_file.error))) + " vs " +
                  (from_pipe.value ? "value" : std::string(category_name(*from_pipe.error))) + ")");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 4097) return -1;
  const std::string_view bytes = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      return compare<AnyMatrix>("read_npy", bytes, read_npy, fuzz::same_matrix), 0;
    case 1:
      return compare<AnyMatrix>("read_mtx", bytes, read_mtx, fuzz::same_matrix), 0;
    case 2:
      return compare<AnyMatrix>("read_csv", bytes, [](const std::string& path) { return read_csv(path); }, fuzz::same_matrix), 0;
    default: {
      GraphReadOptions options;
      options.format = GraphFormat::edges;
      options.undirected = data[0] % 5 == 4;
      return compare<Graph>("read_graph (edges)", bytes,
                            [&](const std::string& path) { return read_graph(path, options); }, same_graph),
             0;
    }
  }
}
