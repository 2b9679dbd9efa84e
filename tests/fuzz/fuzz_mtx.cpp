// libFuzzer harness of the Matrix Market reader: read_mtx_entries (sparse), read_mtx
// (dense, with a round trip through write_mtx), and the graph reader on .mtx files.
#include "fuzz_support.hpp"
#include "gemmkit/io.hpp"

using namespace gemmkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_scratch("input.mtx", fuzz::as_text(data, size));
  fuzz::expect_reader_contract([&] {
    const SparseEntries e = read_mtx_entries(path);
    const std::size_t n = e.size();
    bool ok = e.rows >= 0 && e.cols >= 0 && e.col.size() == n &&
              (e.dtype == DType::f64 ? e.real_values.size() : e.int_values.size()) == n;
    for (std::size_t i = 0; ok && i < n; ++i)
      ok = e.row[i] >= 0 && e.row[i] < e.rows && e.col[i] >= 0 && e.col[i] < e.cols;
    if (!ok) fuzz::finding("malformed sparse entries");
  });
  fuzz::expect_reader_contract([&] {
    const AnyMatrix m = read_mtx(path);
    fuzz::check_matrix(m);
    if (rows_of(m) * cols_of(m) > fuzz::kMaxRoundTripElements) return;
    const std::string copy = fuzz::scratch_dir() + "/copy.mtx";
    write_mtx(copy, m);
    if (!fuzz::same_matrix(m, read_mtx(copy))) fuzz::finding("a .mtx does not read back as written");
  });
  fuzz::fuzz_graph_reader(path, GraphFormat::mtx);
  return 0;
}
