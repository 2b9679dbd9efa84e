// What the tests under mpirun share, and their main(): every rank runs every test; rank 0
// prints gtest's report, the other ranks only their failed assertions, named; the process
// fails when a test failed on any rank.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "gemmkit/distributed.hpp"

namespace gemmkit::dist {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline const void* data_of(const AnyMatrix& m) {
  return std::visit([](const auto& x) -> const void* { return x.data(); }, m);
}

class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

 private:
  int rank_;
};

inline int run_mpi_tests(int argc, char** argv) {
  Environment mpi;
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  // Any rank's failure fails every rank, so mpirun's status reflects all of them.
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && failed) std::fprintf(stderr, "distributed tests: a test failed on some rank\n");
  return failed;
}

}  // namespace gemmkit::dist
