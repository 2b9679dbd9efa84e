// libFuzzer harness of the .npy reader: read_npy, the graph reader on .npy adjacency
// matrices, and a round trip (what was read is written and must read back the same).
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
  fuzz::fuzz_graph_reader(path, GraphFormat::npy);
  return 0;
}
