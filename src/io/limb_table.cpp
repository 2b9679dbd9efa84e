// Exact integer tables on disk (gemmkit/io.hpp): CSV of decimal integers, streamed in
// blocks of rows that every core formats into its own buffer while the block before is
// being written, and .npy of the 64-bit two's-complement words, shape (rows, cols, limbs),
// or (tables, rows, cols, limbs) for a sequence of tables (walk counts of every length).
#include <omp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "arith/int128.hpp"
#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

constexpr std::uint64_t kTen19 = 10'000'000'000'000'000'000ull;

// (hi * 2^64 + lo) / d and its remainder, for hi < d (so that the quotient fits 64 bits).
inline std::uint64_t divide_wide(std::uint64_t hi, std::uint64_t lo, std::uint64_t d, std::uint64_t& rem) {
#if defined(__x86_64__)
  std::uint64_t q;
  __asm__("divq %4" : "=a"(q), "=d"(rem) : "a"(lo), "d"(hi), "r"(d));  // one instruction
  return q;
#else
  const u128 n = (u128(hi) << 64) | lo;
  rem = std::uint64_t(n % d);
  return std::uint64_t(n / d);
#endif
}

// "00" "01" ... "99": two digits per division by 100.
constexpr std::array<char, 200> kDigitPairs = [] {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[2 * i] = char('0' + i / 10);
    t[2 * i + 1] = char('0' + i % 10);
  }
  return t;
}();

// x < 10^19 as exactly 19 digits (leading zeros) at out.
inline void put_19_digits(char* out, std::uint64_t x) {
  char* p = out + 19;
  for (int i = 0; i < 9; ++i) {
    p -= 2;
    std::memcpy(p, &kDigitPairs[2 * (x % 100)], 2);
    x /= 100;
  }
  *--p = char('0' + x);
}

// A growable byte buffer that, unlike std::string::resize, never fills what it makes room for.
class TextBuffer {
 public:
  char* reserve(std::size_t more) {  // room for `more` bytes at end(); pointers before stay valid until the next reserve
    if (size_ + more > capacity_) {
      const std::size_t capacity = std::max(size_ + more, capacity_ * 2);
      std::unique_ptr<char[]> grown(new char[capacity]);
      if (size_) std::memcpy(grown.get(), data_.get(), size_);
      data_ = std::move(grown);
      capacity_ = capacity;
    }
    return data_.get() + size_;
  }
  void advance_to(const char* end) { size_ = std::size_t(end - data_.get()); }
  void append(std::string_view text) {
    std::memcpy(reserve(text.size()), text.data(), text.size());
    size_ += text.size();
  }
  void clear() { size_ = 0; }
  const char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

// Decimal text of two's-complement integers of `limbs` words.
class DecimalWriter {
 public:
  explicit DecimalWriter(int limbs) : limbs_(limbs), magnitude_(std::size_t(limbs)), chunks_(std::size_t(limbs) + 1) {}

  // Bytes one number can take: a sign and at most 20 digits per word (2^64 < 10^20).
  std::size_t max_chars() const { return 1 + 20 * std::size_t(limbs_); }

  // Writes the number at `words` at out; returns the end.
  char* put(const std::uint64_t* words, char* out) {
    const bool negative = words[limbs_ - 1] >> 63;
    const std::uint64_t extension = negative ? ~std::uint64_t{0} : 0;
    int top = limbs_;
    while (top > 1 && words[top - 1] == extension) --top;
    // One word, its sign bit the number's: an int64.
    if (top == 1 && (words[0] >> 63) == (negative ? 1u : 0u))
      return std::to_chars(out, out + 21, static_cast<std::int64_t>(words[0])).ptr;
    // |x| in `top` words: two's complement negation (invert, add one) when negative; the
    // words from `top` on are sign extension, so |x| < 2^(64 top).
    std::uint64_t carry = 1;
    for (int i = 0; i < top; ++i) {
      if (negative) {
        const std::uint64_t v = ~words[i] + carry;
        carry = carry && v == 0;
        magnitude_[i] = v;
      } else {
        magnitude_[i] = words[i];
      }
    }
    while (top > 0 && magnitude_[top - 1] == 0) --top;
    // Base 10^19 digits, least significant first, by long division.
    int chunks = 0;
    while (top > 0) {
      std::uint64_t rem = 0;
      for (int i = top - 1; i >= 0; --i) magnitude_[i] = divide_wide(rem, magnitude_[i], kTen19, rem);
      chunks_[chunks++] = rem;
      while (top > 0 && magnitude_[top - 1] == 0) --top;
    }
    if (negative) *out++ = '-';
    out = std::to_chars(out, out + 20, chunks_[chunks - 1]).ptr;
    for (int c = chunks - 2; c >= 0; --c, out += 19) put_19_digits(out, chunks_[c]);
    return out;
  }

 private:
  int limbs_;
  std::vector<std::uint64_t> magnitude_, chunks_;
};

void check_table(const LimbTableView& t, const std::string& path) {
  if (t.rows < 0 || t.cols < 0 || t.limbs < 1 || (!t.words && t.rows * t.cols > 0))
    fail(ErrorCategory::usage, "writing " + quoted_path(path) + ": a table of " + std::to_string(t.rows) +
                                   " x " + std::to_string(t.cols) + " integers of " + std::to_string(t.limbs) +
                                   " words is not valid");
}

void write_csv_table(const std::string& path, const LimbTableView& t, const LimbTableLabels* labels) {
  if (labels && !labels->rows.empty() && std::int64_t(labels->rows.size()) != t.rows)
    fail(ErrorCategory::usage, "writing " + quoted_path(path) + ": " + std::to_string(labels->rows.size()) +
                                   " row labels for " + std::to_string(t.rows) + " rows");
  if (labels && !labels->columns.empty() && std::int64_t(labels->columns.size()) != t.cols)
    fail(ErrorCategory::usage, "writing " + quoted_path(path) + ": " + std::to_string(labels->columns.size()) +
                                   " column labels for " + std::to_string(t.cols) + " columns");
  AtomicFile file(path);
  if (labels && (!labels->corner.empty() || !labels->columns.empty())) {
    std::string head;
    bool first = true;
    for (const auto* list : {&labels->corner, &labels->columns})
      for (const std::string& field : *list) {
        if (!first) head += ',';
        head += io::csv_field(field);
        first = false;
      }
    file.write(head + "\n");
  }
  const bool row_labels = labels && !labels->rows.empty();
  const std::size_t entry_chars = DecimalWriter(t.limbs).max_chars() + 1;
  const std::size_t row_chars = std::max<std::size_t>(1, std::size_t(t.cols) * entry_chars);
  // Blocks of about 4 MB of text per thread, each thread a contiguous slice of rows.
  const int threads = std::max(1, omp_get_max_threads());
  const std::int64_t block_rows =
      std::max<std::int64_t>(threads, std::int64_t((std::size_t(threads) << 22) / row_chars));
  std::vector<TextBuffer> buffers[2] = {std::vector<TextBuffer>(threads), std::vector<TextBuffer>(threads)};
  std::future<void> writing;  // the block before, being written while this one is formatted
  int set = 0;
  for (std::int64_t b0 = 0; b0 < t.rows; b0 += block_rows, set ^= 1) {
    const std::int64_t b1 = std::min(t.rows, b0 + block_rows);
    std::vector<TextBuffer>& out = buffers[set];
    std::exception_ptr error;
#pragma omp parallel num_threads(threads)
    {
      const int me = omp_get_thread_num(), team = omp_get_num_threads();
      try {
        TextBuffer& text = out[me];
        text.clear();
        DecimalWriter decimal(t.limbs);
        const std::int64_t r0 = b0 + (b1 - b0) * me / team, r1 = b0 + (b1 - b0) * (me + 1) / team;
        for (std::int64_t r = r0; r < r1; ++r) {
          bool first = true;
          if (row_labels)
            for (const std::string& field : labels->rows[r]) {
              if (!first) text.append(",");
              text.append(io::csv_field(field));
              first = false;
            }
          char* p = text.reserve(row_chars + 1);
          const std::uint64_t* w = t.words + std::size_t(r * t.cols) * std::size_t(t.limbs);
          for (std::int64_t c = 0; c < t.cols; ++c, w += t.limbs) {
            if (!first) *p++ = ',';
            first = false;
            p = decimal.put(w, p);
          }
          *p++ = '\n';
          text.advance_to(p);
        }
      } catch (...) {
#pragma omp critical(gemmkit_limb_table_error)
        if (!error) error = std::current_exception();
      }
    }
    if (writing.valid()) writing.get();  // rethrows a failed write
    if (error) std::rethrow_exception(error);
    writing = std::async(std::launch::async, [&file, &out] {
      for (const TextBuffer& text : out) file.write(text.data(), text.size());
    });
  }
  if (writing.valid()) writing.get();
  file.commit();
}

// The words as they are in memory: `shape` is (rows, cols, limbs) for one table, with the
// number of tables in front for a sequence of them.
void write_npy_words(const std::string& path, const std::uint64_t* words, const std::vector<std::int64_t>& shape) {
  std::size_t count = 1;
  for (const std::int64_t extent : shape) count *= std::size_t(extent);
  AtomicFile file(path);
  file.write(io::npy_header("<u8", shape));
  file.write(words, count * 8);
  file.commit();
}

// The words of a .npy file of one table, shape (rows, cols, limbs), or with `stack_allowed`
// also of a sequence of them, (tables, rows, cols, limbs); every check is made before
// anything large is allocated.
LimbTables read_npy_words(const std::string& path, bool stack_allowed) {
  io::FilePtr file = io::open_for_reading(path);
  const std::optional<std::int64_t> file_size = io::regular_file_size(file.get());
  const io::NpyU64Header h = io::read_npy_u64_header(file.get(), path, file_size);
  const std::string at = "at byte " + std::to_string(h.data_offset);
  const std::string shape = io::shape_text(h.shape);
  const bool stacked = h.shape.size() == 4;
  if (h.shape.size() != 3 && !(stack_allowed && stacked))
    io::input_error(path, at, std::string("expected an exact integer table of shape (rows, cols, limbs)") +
                                  (stack_allowed ? " or a sequence of them, (tables, rows, cols, limbs)" : "") +
                                  ", not " + std::to_string(h.shape.size()) + " dimensions " + shape +
                                  (stacked ? " (read a sequence of tables with read_limb_tables)" : ""));
  LimbTables t;
  t.stacked = stacked;
  t.tables = stacked ? h.shape[0] : 1;
  t.rows = h.shape[stacked ? 1 : 0];
  t.cols = h.shape[stacked ? 2 : 1];
  const std::int64_t limbs = h.shape.back();
  if (limbs < 1 || limbs > (1 << 24))
    io::input_error(path, at, "the limb count " + std::to_string(limbs) + " is not between 1 and 2^24");
  t.limbs = int(limbs);
  std::int64_t words = 1, bytes = 0;
  for (const std::int64_t extent : h.shape)
    if (__builtin_mul_overflow(words, extent, &words)) io::input_error(path, at, "the shape " + shape + " is too large");
  if (__builtin_mul_overflow(words, std::int64_t(8), &bytes))
    io::input_error(path, at, "the shape " + shape + " is too large");
  if (file_size && *file_size - h.data_offset != bytes)
    io::input_error(path, at, "shape " + shape + " needs " + std::to_string(bytes) +
                                  " bytes of data, but the file holds " + std::to_string(*file_size - h.data_offset));
  io::reporting_memory(path, [&] {
    // From a pipe the words arrive in chunks, and memory grows only as they do: a short
    // stream that declares a huge shape fails at its end without the huge allocation.
    constexpr std::int64_t kChunkWords = std::int64_t(1) << 20;
    for (std::int64_t done = 0; done < words;) {
      const std::int64_t n = file_size ? words : std::min(words - done, std::max(done, kChunkWords));
      t.words.resize(std::size_t(done + n));
      const std::size_t got = std::fread(t.words.data() + done, 8, std::size_t(n), file.get());
      if (got != std::size_t(n)) {
        const std::int64_t offset = h.data_offset + (done + std::int64_t(got)) * 8;
        if (std::ferror(file.get())) io::input_error(path, "at byte " + std::to_string(offset), std::strerror(errno));
        io::input_error(path, "at byte " + std::to_string(offset),
                        "the file ends inside the data (" + std::to_string(bytes) + " bytes expected)");
      }
      done += n;
    }
    return 0;
  });
  if (std::fgetc(file.get()) != EOF)
    io::input_error(path, "at byte " + std::to_string(h.data_offset + bytes), "unexpected bytes after the data");
  return t;
}

// By output_format(path, format): t's CSV, or its words as they are in memory in the .npy
// shape `npy_shape` (one table's, or a sequence's).
void write_words(const std::string& path, const LimbTableView& t, const LimbTableLabels* labels,
                 const std::vector<std::int64_t>& npy_shape, std::optional<FileFormat> format) {
  check_table(t, path);
  switch (output_format(path, format)) {
    case FileFormat::csv:
      write_csv_table(path, t, labels);
      return;
    case FileFormat::npy:
      write_npy_words(path, t.words, npy_shape);
      return;
    case FileFormat::mtx:
      break;
  }
  fail(ErrorCategory::usage, "exact integer tables are written as .csv or .npy, not .mtx: " + quoted_path(path));
}

}  // namespace

std::string io::decimal_text(const std::uint64_t* words, int limbs) {
  DecimalWriter writer(limbs);
  std::string text(writer.max_chars(), '\0');
  text.resize(std::size_t(writer.put(words, text.data()) - text.data()));
  return text;
}

std::string io::csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

void write_limb_table(const std::string& path, const LimbTableView& t, const LimbTableLabels* labels,
                      std::optional<FileFormat> format) {
  write_words(path, t, labels, {t.rows, t.cols, t.limbs}, format);
}

void write_limb_tables(const std::string& path, const LimbTableView& first, std::int64_t tables,
                       const LimbTableLabels* labels, std::optional<FileFormat> format) {
  // As one table of tables * rows rows, which is what the words are in memory.
  LimbTableView all = first;
  if (tables < 0 || __builtin_mul_overflow(first.rows, tables, &all.rows))
    fail(ErrorCategory::usage, "writing " + quoted_path(path) + ": " + std::to_string(tables) +
                                   " tables of " + std::to_string(first.rows) + " rows is not valid");
  write_words(path, all, labels, {tables, first.rows, first.cols, first.limbs}, format);
}

LimbTable read_limb_table(const std::string& path) {
  LimbTables all = read_npy_words(path, false);
  LimbTable t;
  t.words = std::move(all.words);
  t.rows = all.rows;
  t.cols = all.cols;
  t.limbs = all.limbs;
  return t;
}

LimbTables read_limb_tables(const std::string& path) { return read_npy_words(path, true); }

}  // namespace gemmkit
