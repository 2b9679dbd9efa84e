#include "jit/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace gemmkit::jit {
namespace {
thread_local int quiet_depth = 0;
}

Progress::Quiet::Quiet() { ++quiet_depth; }
Progress::Quiet::~Quiet() { --quiet_depth; }

Progress::Progress(const std::string& what) : shown_(quiet_depth == 0 && isatty(STDERR_FILENO)) {
  if (shown_) std::fprintf(stderr, "gemmkit: %s ... ", what.c_str()), std::fflush(stderr);
}

void Progress::done(double seconds) const {
  if (shown_ && !finished_) std::fprintf(stderr, "%.1f s\n", seconds);
  finished_ = true;
}

Progress::~Progress() {
  if (shown_ && !finished_) std::fprintf(stderr, "failed\n");
}

}  // namespace gemmkit::jit
