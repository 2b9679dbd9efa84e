// The distributed part (include/gemmkit/distributed.hpp) under mpirun: every rank runs every
// test; rank 0 prints the usual report, the other ranks only their failures, and the process
// fails when a test failed on any rank (main). Each test makes all its collective calls on
// every rank and checks results after the last one, so that a failed check cannot leave a rank
// waiting in a collective. The reference is the single-process CPU GEMM (gemmkit::gemm) and,
// for floats, the library's verify(); for walks, the single-process engine (count_walks).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "gemmkit/device.hpp"
#include "gemmkit/distributed.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/verify.hpp"
#include "distributed/dist_common.hpp"
#include "mpi/mpi_test_support.hpp"

namespace gemmkit::dist {
namespace {

// Every P x Q with P * Q == the number of ranks: 1x4, 2x2 and 4x1 for 4; 1x1 for 1.
std::vector<GridShape> all_grids() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<GridShape> grids;
  for (int p = 1; p <= size; ++p)
    if (size % p == 0) grids.push_back({p, size / p});
  return grids;
}

// Random data on every rank alike (seeded), so that rank 0's copy is the one scattered.
AnyMatrix random_data(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed, bool full_range = false) {
  Distribution d;
  if (is_integer(dtype)) {
    d.kind = Distribution::Kind::ints;
    // Full range makes the products leave the dtype (SUMMA's sums wrap; gemm() refuses them).
    const double limit = full_range ? (dtype == DType::i32 ? 2147483647.0 : 4.0e18) : 1000.0;
    d.lo = -limit, d.hi = limit;
  }
  return random_matrix(rows, cols, dtype, d, seed);
}

bool same_bytes(const AnyMatrix& x, const AnyMatrix& y) {
  if (dtype_of_any(x) != dtype_of_any(y) || rows_of(x) != rows_of(y) || cols_of(x) != cols_of(y)) return false;
  return std::memcmp(data_of(x), data_of(y), std::size_t(rows_of(x) * cols_of(x)) * dtype_size(dtype_of_any(x))) == 0;
}

AnyMatrix transposed(const AnyMatrix& m) {
  return std::visit(
      [](const auto& x) -> AnyMatrix {
        using T = typename std::decay_t<decltype(x)>::value_type;
        Matrix<T> t(x.cols(), x.rows());
        for (std::int64_t i = 0; i < x.rows(); ++i)
          for (std::int64_t j = 0; j < x.cols(); ++j) t(j, i) = x(i, j);
        return t;
      },
      m);
}

TEST(DistributedGrid, SquareGridAndParse) {
  EXPECT_EQ(square_grid(1).rows, 1);
  EXPECT_EQ(square_grid(4).rows, 2);
  EXPECT_EQ(square_grid(4).cols, 2);
  EXPECT_EQ(square_grid(6).rows, 2);
  EXPECT_EQ(square_grid(6).cols, 3);
  EXPECT_EQ(square_grid(7).rows, 1);
  EXPECT_EQ(square_grid(12).rows, 3);
  EXPECT_EQ(parse_grid("2x3").rows, 2);
  EXPECT_EQ(parse_grid("2x3").cols, 3);
  for (const char* bad : {"", "2", "x2", "2x", "0x4", "2x-1", "2*2", "1x2x3", "99999999x1"})
    EXPECT_THROW(parse_grid(bad), Error) << bad;
}

TEST(DistributedGrid, BlockCyclicCoversEveryIndexOnce) {
  for (const std::int64_t n : {0, 1, 37, 64}) {
    for (const std::int64_t b : {1, 5, 64, 100}) {
      for (const int procs : {1, 3, 4}) {
        std::vector<int> seen(std::size_t(n), 0);
        BlockCyclic d{n, 1, b, 1, {procs, 1}};
        for (int p = 0; p < procs; ++p)
          for (std::int64_t i = 0; i < d.local_rows(p); ++i) {
            const std::int64_t g = d.global_row(p, i);
            ASSERT_TRUE(g >= 0 && g < n) << n << " " << b << " " << procs;
            ++seen[std::size_t(g)];
            EXPECT_EQ((g / b) % procs, p);  // block I lives on process I mod P
          }
        for (const int s : seen) EXPECT_EQ(s, 1) << n << " " << b << " " << procs;
      }
    }
  }
}

TEST(DistributedGrid, WrongGridIsAgreedUsageError) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    ProcessGrid grid(MPI_COMM_WORLD, GridShape{size + 1, 1});
    ADD_FAILURE() << "no error for a grid of the wrong size";
  } catch (const RankError& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("rank 0: grid " + std::to_string(size + 1) + "x1 needs"), std::string::npos)
        << e.what();
  }
}

// SUMMA's panel bookkeeping (both backends walk it) against the distribution itself: panel t
// starts at global column t * kb of A, which its root process column holds at a_offset, and
// at global row t * kb of B, which its root process row holds at b_offset.
TEST(DistributedSumma, PanelsFollowTheDistribution) {
  for (const GridShape g : {GridShape{1, 1}, GridShape{2, 3}, GridShape{4, 1}, GridShape{3, 2}})
    for (const std::int64_t k : {0, 1, 41, 64})
      for (const std::int64_t kb : {1, 5, 16, 100}) {
        const BlockCyclic a{7, k, 3, kb, g}, b{k, 9, kb, 4, g};
        const std::vector<SummaPanel> panels = summa_panels(k, kb, g);
        ASSERT_EQ(std::int64_t(panels.size()), (k + kb - 1) / kb);
        std::int64_t covered = 0;
        for (std::size_t t = 0; t < panels.size(); ++t) {
          const SummaPanel& p = panels[t];
          const std::string what = grid_name(g) + " k " + std::to_string(k) + " kb " + std::to_string(kb) +
                                   " panel " + std::to_string(t);
          EXPECT_EQ(a.global_col(p.a_root, p.a_offset), std::int64_t(t) * kb) << what;
          EXPECT_EQ(b.global_row(p.b_root, p.b_offset), std::int64_t(t) * kb) << what;
          // The whole panel lies in the root's local columns (rows), contiguously.
          EXPECT_LE(p.a_offset + p.width, a.local_cols(p.a_root)) << what;
          EXPECT_LE(p.b_offset + p.width, b.local_rows(p.b_root)) << what;
          EXPECT_EQ(a.global_col(p.a_root, p.a_offset + p.width - 1), std::int64_t(t) * kb + p.width - 1) << what;
          covered += p.width;
        }
        EXPECT_EQ(covered, k);
      }
}

// The CUDA backend's steps: every panel once, in order; each step the fewest consecutive
// panels that reach local_k, the last one possibly fewer.
TEST(DistributedSumma, StepsGroupPanelsToLocalK) {
  for (const std::int64_t k : {0, 1, 41, 5000})
    for (const std::int64_t kb : {1, 7, 256, 6000})
      for (const std::int64_t local_k : {1, 100, 2048}) {
        const std::vector<SummaPanel> panels = summa_panels(k, kb, GridShape{2, 3});
        const std::vector<SummaStep> steps = summa_steps(panels, local_k);
        const std::string what = "k " + std::to_string(k) + " kb " + std::to_string(kb) + " local_k " +
                                 std::to_string(local_k);
        std::size_t next = 0;
        std::int64_t total = 0;
        for (std::size_t s = 0; s < steps.size(); ++s) {
          EXPECT_EQ(steps[s].first, next) << what;
          ASSERT_GT(steps[s].last, steps[s].first) << what;
          std::int64_t width = 0;
          for (std::size_t t = steps[s].first; t < steps[s].last; ++t) width += panels[t].width;
          EXPECT_EQ(steps[s].k, width) << what;
          if (s + 1 < steps.size()) {
            EXPECT_GE(steps[s].k, local_k) << what;
          }
          EXPECT_LT(steps[s].k - panels[steps[s].last - 1].width, local_k) << what;  // the fewest
          next = steps[s].last;
          total += width;
        }
        EXPECT_EQ(next, panels.size()) << what;
        EXPECT_EQ(total, k) << what;
      }
}

TEST(DistributedGpu, DefaultDeviceAndNoDevice) {
  EXPECT_EQ(default_device(0, 1), 0);
  EXPECT_EQ(default_device(5, 4), 1);
  EXPECT_EQ(default_device(3, 8), 3);
  EXPECT_EQ(default_device(2, 0), 0);
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present: the GPU tests (distributed_gpu) run it";
  // Without a device (or without NCCL) a GpuGrid is an agreed error on every rank.
  ProcessGrid grid(MPI_COMM_WORLD);
  try {
    GpuGrid gpus(grid);
    ADD_FAILURE() << "a GpuGrid without a device";
  } catch (const RankError& e) {
    EXPECT_EQ(e.failed_rank(), 0);
    const std::string what = e.what();
    EXPECT_TRUE(what.find(nccl_available() ? "no CUDA device" : "needs a build with CUDA and NCCL") !=
                std::string::npos)
        << what;
  }
}

TEST(DistributedErrors, FailureOnLastRankReachesEveryRank) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int last = size - 1;
  try {
    collective(MPI_COMM_WORLD, [&] {
      if (world_rank() == last) fail(ErrorCategory::input, "bad file 'x.npy'");
    });
    ADD_FAILURE() << "no error";
  } catch (const RankError& e) {
    EXPECT_EQ(e.failed_rank(), last);
    EXPECT_EQ(e.category(), ErrorCategory::input);
    EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(last) + ": bad file 'x.npy'");
  }
  // Several failures: the lowest rank's is the one reported, out of memory included.
  try {
    collective(MPI_COMM_WORLD, [&] { throw std::bad_alloc(); });
    ADD_FAILURE() << "no error";
  } catch (const RankError& e) {
    EXPECT_EQ(e.failed_rank(), 0);
    EXPECT_EQ(e.category(), ErrorCategory::out_of_memory);
    EXPECT_EQ(std::string(e.what()), "rank 0: out of host memory");
  }
  EXPECT_NO_THROW(collective(MPI_COMM_WORLD, [] {}));
}

TEST(DistributedMatrix, ScatterGatherRoundTrip) {
  for (const GridShape shape : all_grids()) {
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    for (const DType dtype : {DType::f64, DType::f32, DType::i32, DType::i64}) {
      const AnyMatrix whole = random_data(37, 53, dtype, 11);
      for (const auto& [mb, nb] : std::vector<std::pair<int, int>>{{5, 7}, {1, 1}, {64, 64}, {37, 2}}) {
        const DistMatrix m = scatter(grid, &whole, mb, nb);
        const AnyMatrix back = gather(m);
        const DistMatrix mt = scatter(grid, &whole, mb, nb, /*transpose=*/true);
        const AnyMatrix back_t = gather(mt);
        EXPECT_EQ(rows_of(m.local()), m.distribution().local_rows(grid.row()));
        EXPECT_EQ(cols_of(m.local()), m.distribution().local_cols(grid.col()));
        if (grid.rank() == 0) {
          EXPECT_TRUE(same_bytes(back, whole)) << grid_name(shape) << " " << dtype_name(dtype) << " " << mb << "x" << nb;
          EXPECT_TRUE(same_bytes(back_t, transposed(whole))) << grid_name(shape) << " " << mb << "x" << nb;
        } else {
          EXPECT_EQ(rows_of(back), 0);
        }
      }
    }
  }
}

// A file name in /tmp that every rank shares (rank 0's process id in it).
std::string shared_temp_path(const std::string& name) {
  long long pid = getpid();
  MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return "/tmp/gemmkit-mpi-test-" + std::to_string(pid) + "-" + name;
}

// `whole` as a Fortran-ordered .npy: its transpose's bytes, under a header that says so
// (fortran_order True and the shape swapped back, both the same length as what they replace).
void write_fortran_npy(const std::string& path, const AnyMatrix& whole) {
  write_npy(path, transposed(whole));
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string head(128, '\0');
  file.read(head.data(), 128);
  const std::string c_shape = "(" + std::to_string(cols_of(whole)) + ", " + std::to_string(rows_of(whole)) + ")";
  const std::string f_shape = "(" + std::to_string(rows_of(whole)) + ", " + std::to_string(cols_of(whole)) + ")";
  head.replace(head.find("False"), 5, "True ");
  head.replace(head.find(c_shape), c_shape.size(), f_shape);
  file.seekp(0);
  file.write(head.data(), 128);
}

// The parallel read against scatter from rank 0, on every grid, dtype, order and blocks that
// divide nothing, straight and transposed: each rank's part byte for byte.
TEST(DistributedRead, NpyEqualsScatter) {
  const std::string c_path = shared_temp_path("c.npy"), f_path = shared_temp_path("f.npy");
  for (const DType dtype : {DType::f64, DType::f32, DType::i32, DType::i64}) {
    for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{37, 53}, {1, 41}, {29, 1}, {0, 5}}) {
      const AnyMatrix whole = random_data(rows, cols, dtype, 21);
      if (world_rank() == 0) {
        write_npy(c_path, whole);
        write_fortran_npy(f_path, whole);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      for (const GridShape shape : all_grids()) {
        ProcessGrid grid(MPI_COMM_WORLD, shape);
        for (const auto& [mb, nb] : std::vector<std::pair<int, int>>{{5, 7}, {1, 1}, {64, 64}, {6, 100}}) {
          for (const bool transpose : {false, true}) {
            const DistMatrix expected = scatter(grid, &whole, mb, nb, transpose);
            const DistMatrix from_c = read_npy(grid, c_path, mb, nb, transpose);
            const DistMatrix from_f = read_npy(grid, f_path, mb, nb, transpose);
            const std::string what = grid_name(shape) + " " + std::string(dtype_name(dtype)) + " " +
                                     std::to_string(rows) + "x" + std::to_string(cols) + " blocks " +
                                     std::to_string(mb) + "x" + std::to_string(nb) +
                                     (transpose ? " transposed" : "") + " on rank " + std::to_string(grid.rank());
            EXPECT_EQ(from_c.dtype(), dtype) << what;
            EXPECT_TRUE(same_bytes(from_c.local(), expected.local())) << what << " (C order)";
            EXPECT_TRUE(same_bytes(from_f.local(), expected.local())) << what << " (Fortran order)";
          }
        }
      }
    }
  }
  if (world_rank() == 0) std::remove(c_path.c_str()), std::remove(f_path.c_str());
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The parallel write gives the file that write_npy of the whole matrix gives, byte for byte,
// on every grid and dtype and with blocks that divide nothing; it replaces an existing file.
TEST(DistributedWrite, NpyEqualsTheSingleProcessFile) {
  const std::string path = shared_temp_path("w.npy"), reference = shared_temp_path("r.npy");
  for (const DType dtype : {DType::f64, DType::f32, DType::i32, DType::i64}) {
    for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{37, 53}, {1, 41}, {0, 5}}) {
      const AnyMatrix whole = random_data(rows, cols, dtype, 31);
      if (world_rank() == 0) write_npy(reference, whole);
      for (const GridShape shape : all_grids()) {
        ProcessGrid grid(MPI_COMM_WORLD, shape);
        for (const auto& [mb, nb] : std::vector<std::pair<int, int>>{{5, 7}, {64, 3}}) {
          const DistMatrix m = scatter(grid, &whole, mb, nb);
          write_npy(m, path);
          if (world_rank() == 0) {
            EXPECT_TRUE(file_bytes(path) == file_bytes(reference))
                << grid_name(shape) << " " << dtype_name(dtype) << " " << rows << "x" << cols << " blocks " << mb
                << "x" << nb;
          }
        }
      }
    }
  }
  if (world_rank() == 0) std::remove(path.c_str()), std::remove(reference.c_str());
}

// A folder that does not exist and a stream: one agreed error, nothing written.
TEST(DistributedWrite, BadTargetsAreAgreedErrors) {
  ProcessGrid grid(MPI_COMM_WORLD);
  const AnyMatrix whole = random_data(9, 9, DType::f64, 41);
  const DistMatrix m = scatter(grid, &whole, 4, 4);
  const std::string missing = shared_temp_path("no-such-folder") + "/x.npy";
  for (const std::string& target : {missing, std::string("-")}) {
    try {
      write_npy(m, target);
      ADD_FAILURE() << "no error for " << target;
    } catch (const RankError& e) {
      EXPECT_EQ(e.failed_rank(), 0) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("rank 0: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(target == "-" ? "a stream, not a file" : "no-such-folder"),
                std::string::npos)
          << e.what();
    }
  }
}

// A missing file, one that is not a .npy, and a dtype a distributed matrix does not hold: the
// same RankError on every rank, naming rank 0 and the file.
TEST(DistributedRead, BadFilesAreAgreedErrors) {
  const std::string bad = shared_temp_path("bad.npy"), half = shared_temp_path("half.npy");
  if (world_rank() == 0) {
    std::ofstream(bad) << "not a matrix\n";
    write_npy(half, AnyMatrix(Matrix<Half>(3, 3)));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ProcessGrid grid(MPI_COMM_WORLD);
  const struct {
    std::string path, says;
    ErrorCategory category;
  } cases[] = {{bad, "rank 0: '" + bad + "' at byte 0: not a .npy file", ErrorCategory::input},
               {half, "rank 0: '" + half + "': its dtype (f16) cannot be read in parallel", ErrorCategory::input},
               {bad + ".missing", "rank 0: cannot open '" + bad + ".missing'", ErrorCategory::input}};
  for (const auto& c : cases) {
    try {
      read_npy(grid, c.path, 4, 4);
      ADD_FAILURE() << "no error for " << c.path;
    } catch (const RankError& e) {
      EXPECT_EQ(e.failed_rank(), 0);
      EXPECT_EQ(e.category(), c.category) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(c.says, 0), 0u) << e.what() << "\n does not start with " << c.says;
    }
  }
  if (world_rank() == 0) std::remove(bad.c_str()), std::remove(half.c_str());
}

// Every rank reads the file it is given. One missing, not a .npy or of another shape on the
// last rank alone is an agreed error naming that rank (before the fix, MPI_File_open waited
// for ever on the others, or the rank read another file's bytes).
TEST(DistributedRead, AFileOnlyOneRankLacksIsAgreed) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) GTEST_SKIP() << "needs two ranks or more";
  const int last = size - 1;
  const std::string good = shared_temp_path("good.npy"), other = shared_temp_path("other.npy"),
                    bad = shared_temp_path("notnpy.npy");
  if (world_rank() == 0) {
    write_npy(good, random_data(9, 7, DType::f64, 51));
    write_npy(other, random_data(9, 8, DType::f64, 52));
    std::ofstream(bad) << "not a matrix\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ProcessGrid grid(MPI_COMM_WORLD);
  const std::string on_last = "rank " + std::to_string(last) + ": ";
  const struct {
    std::string path, starts, says;
  } cases[] = {{good + ".missing", on_last + "cannot open '" + good + ".missing'", ""},
               {bad, on_last + "'" + bad + "' at byte 0: not a .npy file", ""},
               {other, on_last + "'" + other + "' is 9x8 f64", "here but 9x7 f64, data from byte"}};
  for (const auto& c : cases) {
    try {
      read_npy(grid, world_rank() == last ? c.path : good, 4, 4);
      ADD_FAILURE() << "no error for " << c.path << " on rank " << last;
    } catch (const RankError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.failed_rank(), last) << what;
      EXPECT_EQ(e.category(), ErrorCategory::input) << what;
      EXPECT_EQ(what.rfind(c.starts, 0), 0u) << what << "\n does not start with " << c.starts;
      EXPECT_NE(what.find(c.says), std::string::npos) << what;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(good.c_str()), std::remove(other.c_str()), std::remove(bad.c_str());
}

// Ranks working in another folder than rank 0 write into rank 0's file: a relative target is
// rank 0's, and its temporary file is named from the root for the others (before the fix
// they looked for it in their own folder, and MPI_File_open waited for ever).
TEST(DistributedWrite, RanksInOtherFoldersWriteRankZerosFile) {
  const std::string mine = shared_temp_path("folder0"), theirs = shared_temp_path("folder1");
  char start[4096];
  ASSERT_NE(getcwd(start, sizeof start), nullptr);
  if (world_rank() == 0) ::mkdir(mine.c_str(), 0755), ::mkdir(theirs.c_str(), 0755);
  MPI_Barrier(MPI_COMM_WORLD);
  ProcessGrid grid(MPI_COMM_WORLD);
  const AnyMatrix whole = random_data(11, 13, DType::i64, 61);
  const DistMatrix m = scatter(grid, &whole, 3, 5);
  const bool moved = ::chdir((world_rank() == 0 ? mine : theirs).c_str()) == 0;
  try {
    write_npy(m, "w.npy");
  } catch (const RankError& e) {
    ADD_FAILURE() << e.what();
  }
  EXPECT_TRUE(moved && ::chdir(start) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    const std::string reference = mine + "/r.npy";
    write_npy(reference, whole);
    EXPECT_TRUE(file_bytes(mine + "/w.npy") == file_bytes(reference));
    EXPECT_EQ(::access((theirs + "/w.npy").c_str(), F_OK), -1) << "a file in the other ranks' folder";
    std::remove(reference.c_str()), std::remove((mine + "/w.npy").c_str());
    ::rmdir(mine.c_str()), ::rmdir(theirs.c_str());
  }
}

struct Case {
  std::int64_t m, n, k;
  int mb, nb, kb;
};

// alpha A B + beta C0 modulo 2^bits, in the unsigned type of C's width: what SUMMA's sums are.
template <class T>
Matrix<T> wrapped_product(const Matrix<T>& a, const Matrix<T>& b, const Matrix<T>& c0, double alpha, double beta) {
  using U = std::make_unsigned_t<T>;
  Matrix<T> c(a.rows(), b.cols());
  const U al = U(std::int64_t(alpha)), be = U(std::int64_t(beta));
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (std::int64_t j = 0; j < b.cols(); ++j) {
      U sum = 0;
      for (std::int64_t l = 0; l < a.cols(); ++l) sum += U(a(i, l)) * U(b(l, j));
      c(i, j) = T(al * sum + (beta != 0 ? be * U(c0(i, j)) : U(0)));
    }
  return c;
}

// SUMMA against the single-process CPU GEMM: integers byte for byte where the exact result
// fits (the single-process GEMM refuses the others, and so does check_integer_result on
// SUMMA's gathered C, naming the same entry), and SUMMA's sums are the exact ones modulo
// 2^bits everywhere; floats within verify()'s tolerance of the single-process result and
// passing verify() against the exact product.
void check_summa(GridShape shape, DType dtype, const Case& s, double alpha, double beta, bool full_range) {
  ProcessGrid grid(MPI_COMM_WORLD, shape);
  const AnyMatrix a = random_data(s.m, s.k, dtype, 1, full_range);
  const AnyMatrix b = random_data(s.k, s.n, dtype, 2, full_range);
  const AnyMatrix c0 = random_data(s.m, s.n, dtype, 3, full_range);
  const DistMatrix da = scatter(grid, &a, s.mb, s.kb);
  const DistMatrix db = scatter(grid, &b, s.kb, s.nb);
  DistMatrix dc = scatter(grid, &c0, s.mb, s.nb);
  const std::string kernel = summa(alpha, da, db, beta, dc);
  AnyMatrix got = gather(dc);
  if (grid.rank() != 0) return;
  const std::string what = grid_name(shape) + " " + std::string(dtype_name(dtype)) + " " + std::to_string(s.m) +
                           "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " blocks " +
                           std::to_string(s.mb) + "," + std::to_string(s.nb) + "," + std::to_string(s.kb) +
                           " beta " + std::to_string(beta) + " on " + kernel;
  AnyMatrix single = c0;
  GemmOptions options;
  options.backend = Backend::cpu;
  options.kernel = kernel;
  const GemmProblem p = make_problem(a, false, b, false, got, alpha, beta);
  if (is_integer(dtype)) {
    std::visit(
        [&](const auto& x) {
          using M = std::decay_t<decltype(x)>;
          if constexpr (std::is_integral_v<typename M::value_type>) {
            const AnyMatrix want = wrapped_product(x, std::get<M>(b), std::get<M>(c0), alpha, beta);
            EXPECT_TRUE(same_bytes(got, want)) << what;
          }
        },
        a);
    std::optional<OverflowError> summa_overflow, single_overflow;
    try {
      check_integer_result(p, data_of(c0));
    } catch (const OverflowError& e) {
      summa_overflow = e;
    }
    try {
      gemm(make_problem(a, false, b, false, single, alpha, beta), options);
    } catch (const OverflowError& e) {
      single_overflow = e;
    }
    ASSERT_EQ(summa_overflow.has_value(), single_overflow.has_value()) << what;
    if (summa_overflow) {
      EXPECT_STREQ(summa_overflow->what(), single_overflow->what()) << what;
      return;
    }
    EXPECT_TRUE(same_bytes(got, single)) << what;
    return;
  }
  gemm(make_problem(a, false, b, false, single, alpha, beta), options);
  const VerifyResult check = verify(p, data_of(c0), VerifyMode::full);
  EXPECT_TRUE(check.passed) << what << ": " << check.detail;
  std::vector<double> reference(std::size_t(s.m * s.n));
  std::visit(
      [&](const auto& x) {
        for (std::int64_t i = 0; i < s.m; ++i)
          for (std::int64_t j = 0; j < s.n; ++j) reference[std::size_t(i * s.n + j)] = double(x(i, j));
      },
      single);
  const double error = relative_frobenius_error(dtype, p.c, s.m, s.n, p.ldc, reference);
  EXPECT_LE(error, tolerance(dtype, s.k)) << what;
}

TEST(DistributedSumma, OddShapesEveryGridAndDtype) {
  // Blocks that divide none of the orders; one with a panel wider than K, one where some
  // process rows hold nothing (4 rows in blocks of 2 over up to 4 process rows).
  const std::vector<Case> cases = {{37, 53, 41, 5, 7, 4}, {37, 53, 3, 6, 8, 4}, {4, 9, 11, 2, 3, 16}};
  for (const GridShape shape : all_grids())
    for (const DType dtype : {DType::f64, DType::f32, DType::i32, DType::i64})
      for (const Case& s : cases) {
        check_summa(shape, dtype, s, is_integer(dtype) ? 3.0 : 1.5, 0.0, false);
        check_summa(shape, dtype, s, is_integer(dtype) ? -2.0 : 0.75, is_integer(dtype) ? 5.0 : -0.5, false);
      }
}

// Full-range data: SUMMA's sums are the exact ones modulo 2^bits, and the entries that do not
// fit are refused by the single-process GEMM and by the screen of the gathered C alike.
TEST(DistributedSumma, IntegersPastTheRangeAreScreenedAsTheSingleProcessGemm) {
  for (const GridShape shape : all_grids())
    for (const DType dtype : {DType::i32, DType::i64})
      check_summa(shape, dtype, {37, 53, 41, 5, 7, 4}, 7.0, 3.0, /*full_range=*/true);
}

TEST(DistributedSumma, EmptyReductionScalesC) {
  for (const GridShape shape : all_grids()) check_summa(shape, DType::i64, {9, 7, 0, 2, 3, 4}, 2.0, 3.0, false);
}

TEST(DistributedSumma, MismatchesAreAgreedUsageErrors) {
  ProcessGrid grid(MPI_COMM_WORLD);
  const AnyMatrix a = random_data(8, 6, DType::f64, 1), b = random_data(6, 5, DType::f64, 2);
  const AnyMatrix c = random_data(8, 5, DType::f64, 3), b32 = random_data(6, 5, DType::f32, 2);
  const DistMatrix da = scatter(grid, &a, 2, 3), db = scatter(grid, &b, 3, 2), db32 = scatter(grid, &b32, 3, 2);
  const DistMatrix db_blocks = scatter(grid, &b, 2, 2), dbt = scatter(grid, &b, 3, 2, true);
  DistMatrix dc = scatter(grid, &c, 2, 2);
  const auto expect_usage = [&](const DistMatrix& bb, const std::string& words) {
    try {
      summa(1.0, da, bb, 0.0, dc);
      ADD_FAILURE() << "no error for " << words;
    } catch (const RankError& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);
      EXPECT_EQ(e.failed_rank(), 0);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_usage(db32, "one dtype");
  expect_usage(db_blocks, "block mismatch");
  expect_usage(dbt, "shape mismatch");
  // f16 is no distributed dtype.
  const AnyMatrix h = convert(a, DType::f16);
  try {
    scatter(grid, &h, 2, 2);
    ADD_FAILURE() << "f16 scattered";
  } catch (const RankError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0: distributed matrices hold"), std::string::npos) << e.what();
  }
}

// Distributed exact walks against the single-process engine (CPU, dense, exact), entry by
// entry: a weighted graph with negative weights whose counts need several primes (more than
// there are ranks, and fewer), and a length whose bound needs one prime (the other ranks get
// none).
TEST(DistributedWalks, EqualSingleProcessWalks) {
  std::vector<Edge> edges;
  std::uint64_t state = 12345;
  const auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  const std::int64_t n = 29;
  for (int e = 0; e < 140; ++e)
    edges.push_back({std::int64_t(next() % n), std::int64_t(next() % n), std::int64_t(next() % 7) - 3});
  const Graph graph = graph_from_edges(n, edges);
  for (const int length : {1, 5, 31, 64}) {
    const WalkCounts got = count_walks(MPI_COMM_WORLD, world_rank() == 0 ? &graph : nullptr, length);
    if (world_rank() != 0) {
      EXPECT_EQ(got.rows(), 0);
      continue;
    }
    WalkQuery query;
    query.length = length;
    query.method = WalkMethod::dense;
    query.backend = WalkBackend::cpu;
    const WalkCounts single = gemmkit::count_walks(graph, query);
    ASSERT_EQ(got.rows(), n);
    ASSERT_EQ(got.cols(), n);
    EXPECT_TRUE(got.bound == single.bound) << length;
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) wrong += !(got.at(0, i, j) == single.at(0, i, j));
    EXPECT_EQ(wrong, 0) << "length " << length << ", " << got.method;
    if (length == 64) {
      EXPECT_GT(got.primes, 4) << got.method;  // more primes than ranks
    }
  }
  // Every length 1..K at once: the same lengths, limbs and words as the single-process tables.
  for (const int length : {1, 9}) {
    const WalkCounts got = count_walks(MPI_COMM_WORLD, world_rank() == 0 ? &graph : nullptr, length, {.all_lengths = true});
    if (world_rank() != 0) continue;
    WalkQuery query;
    query.length = length;
    query.all_lengths = true;
    query.method = WalkMethod::dense;
    query.backend = WalkBackend::cpu;
    const WalkCounts single = gemmkit::count_walks(graph, query);
    EXPECT_EQ(got.lengths, single.lengths);
    EXPECT_EQ(got.limbs, single.limbs);
    EXPECT_TRUE(got.words == single.words) << "all lengths to " << length << ", " << got.method;
  }
  // A bad length, or a negative number of rows to gather at a time, is an agreed usage error.
  EXPECT_THROW(count_walks(MPI_COMM_WORLD, world_rank() == 0 ? &graph : nullptr, 0), RankError);
  DistWalkOptions negative;
  negative.gather_rows = -1;
  EXPECT_THROW(count_walks(MPI_COMM_WORLD, world_rank() == 0 ? &graph : nullptr, 3, negative), RankError);
}

}  // namespace
}  // namespace gemmkit::dist

int main(int argc, char** argv) { return gemmkit::dist::run_mpi_tests(argc, argv); }
