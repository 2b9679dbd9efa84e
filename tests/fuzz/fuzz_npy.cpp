// libFuzzer harness of the .npy readers: read_npy, the exact integer tables' reader
// (read_limb_tables), the graph reader on .npy adjacency matrices, and round trips (what was
// read is written and must read back the same).
#include "fuzz_support.hpp"
#include "gemmkit/io.hpp"

using namespace gemmkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_scratch("input.npy", fuzz::as_text(data, size));
  fuzz::expect_reader_contract([&] {
    const AnyMatrix m = read_npy(path);
    fuzz::check_matrix(m);
    if (rows_of(m) * cols_of(m) > fuzz::kMaxRoundTripElements) return;
    const std::string copy = fuzz::scratch_dir() + "/copy.npy";
    write_npy(copy, m);
    if (!fuzz::same_matrix(m, read_npy(copy))) fuzz::finding("a .npy does not read back as written");
  });
  // The exact integer tables' reader (one table or a sequence of them) and its round trip.
  fuzz::expect_reader_contract([&] {
    const LimbTables t = read_limb_tables(path);
    if (t.tables < 0 || t.rows < 0 || t.cols < 0 || t.limbs < 1 ||
        t.words.size() != std::size_t(t.tables * t.rows * t.cols) * std::size_t(t.limbs))
      fuzz::finding("read_limb_tables returned a malformed table");
    if (std::int64_t(t.words.size()) > fuzz::kMaxRoundTripElements) return;
    const std::string copy = fuzz::scratch_dir() + "/copy.npy";
    const LimbTableView first{t.words.data(), t.rows, t.cols, t.limbs};
    if (t.stacked) write_limb_tables(copy, first, t.tables);
    else write_limb_table(copy, first);
    const LimbTables back = read_limb_tables(copy);
    if (back.words != t.words || back.stacked != t.stacked || back.tables != t.tables || back.rows != t.rows ||
        back.cols != t.cols || back.limbs != t.limbs)
      fuzz::finding("an exact integer table does not read back as written");
  });
  fuzz::fuzz_graph_reader(path, GraphFormat::npy);
  return 0;
}
