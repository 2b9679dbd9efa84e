// libFuzzer harness of the CSV/text reader: read_csv and the graph reader on CSV
// adjacency matrices.
#include "fuzz_support.hpp"
#include "gemmkit/io.hpp"

using namespace gemmkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_scratch("input.csv", fuzz::as_text(data, size));
  fuzz::expect_reader_contract([&] { fuzz::check_matrix(read_csv(path)); });
  fuzz::fuzz_graph_reader(path, GraphFormat::csv);
  return 0;
}
