// Internal: the one line a kernel compiled on first use prints, on a terminal only:
//   gemmkit: compiling wgmma_ws 128x256 bf16, A and B K-major for sm_90a ... 2.1 s
// Nothing when stderr is not a terminal, or in a thread that reports its own progress
// (`gemmkit cache warm` compiles in parallel and prints one line per kernel itself).
#pragma once

#include <string>

namespace gemmkit::jit {

class Progress {
 public:
  explicit Progress(const std::string& what);
  void done(double seconds) const;
  ~Progress();  // ends the line ("failed") when done() was not called
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // While one lives, this thread prints no progress lines.
  struct Quiet {
    Quiet();
    ~Quiet();
    Quiet(const Quiet&) = delete;
    Quiet& operator=(const Quiet&) = delete;
  };

 private:
  bool shown_ = false;
  mutable bool finished_ = false;
};

}  // namespace gemmkit::jit
