// The public face of io::quoted_path, for the command line's messages.
#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {

std::string quoted_path(std::string_view path) { return io::quoted_path(path); }

}  // namespace gemmkit
