// libFuzzer harness of the edge-list reader (read_graph with format edges), directed and
// undirected; every graph it returns must be well-formed CSR.
#include "fuzz_support.hpp"

using namespace gemmkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_scratch("input.txt", fuzz::as_text(data, size));
  fuzz::fuzz_graph_reader(path, GraphFormat::edges);
  return 0;
}
