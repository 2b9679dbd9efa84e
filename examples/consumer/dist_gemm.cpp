// The distributed part of an installed gemmkit (gemmkit::distributed, a build with MPI), as a
// program of its own would use it under `mpirun -np P`: rank 0 makes A (61 x 47) and B
// (47 x 53) of integers, scatters them over the most square grid in blocks of 8, SUMMA
// multiplies them, and rank 0 checks the gathered C against a plain triple loop. Exit 0 on
// every rank when it agrees, 1 otherwise.
#include <cstdint>
#include <cstdio>

#include <gemmkit/distributed.hpp>

int main() {
  gemmkit::dist::Environment mpi;
  const gemmkit::dist::ProcessGrid grid(MPI_COMM_WORLD);
  const std::int64_t m = 61, k = 47, n = 53, block = 8;
  gemmkit::AnyMatrix a = gemmkit::Matrix<std::int64_t>(m, k), b = gemmkit::Matrix<std::int64_t>(k, n);
  auto& at = std::get<gemmkit::Matrix<std::int64_t>>(a);
  auto& bt = std::get<gemmkit::Matrix<std::int64_t>>(b);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) at(i, j) = (i * 7 + j * 3) % 11 - 5;
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < n; ++j) bt(i, j) = (i * 5 + j * 2) % 13 - 6;
  const bool root = grid.rank() == 0;
  const auto da = gemmkit::dist::scatter(grid, root ? &a : nullptr, block, block);
  const auto db = gemmkit::dist::scatter(grid, root ? &b : nullptr, block, block);
  gemmkit::dist::DistMatrix dc(grid, da.dtype(), m, n, block, block);
  gemmkit::dist::summa(1.0, da, db, 0.0, dc);
  const gemmkit::AnyMatrix c = gemmkit::dist::gather(dc);
  int bad = 0;
  if (root) {
    const auto& ct = std::get<gemmkit::Matrix<std::int64_t>>(c);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t sum = 0;
        for (std::int64_t p = 0; p < k; ++p) sum += at(i, p) * bt(p, j);
        bad += ct(i, j) != sum;
      }
    std::printf("dist_gemm: %lldx%lldx%lld on a %s grid: %s\n", (long long)m, (long long)n, (long long)k,
                gemmkit::dist::grid_name(grid.shape()).c_str(), bad ? "WRONG" : "equals the triple loop");
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad ? 1 : 0;
}
