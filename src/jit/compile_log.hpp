// Internal: what this thread's compile() calls (jit.hpp) asked for, while a CompileLog lives.
#pragma once

#include <vector>

#include "jit/jit.hpp"

namespace gemmkit::jit {

// While one lives, this thread's compile() calls are written into it, in order: what a plan
// needed (`gemmkit cache warm --shapes` reports them per shape).
class CompileLog {
 public:
  struct Entry {
    const KernelSpec* spec;
    double compile_seconds;
    bool compiled_now;
  };
  CompileLog();
  ~CompileLog();
  CompileLog(const CompileLog&) = delete;
  CompileLog& operator=(const CompileLog&) = delete;
  const std::vector<Entry>& entries() const { return entries_; }
  static void note(const KernelSpec& spec, double compile_seconds, bool compiled_now);  // compile()'s

 private:
  std::vector<Entry> entries_;
  CompileLog* outer_;
};

}  // namespace gemmkit::jit
