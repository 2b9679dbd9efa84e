// Exact all-pairs walk counts with the primes spread over the ranks: rank 0 broadcasts the
// graph, every rank computes A^length modulo its own primes (prime q on rank q mod P), by
// dense squaring with the CPU's modular GEMM (primes below 2^21), and rank 0 gathers the
// residues, one message per prime, and rebuilds each count by the Chinese remainder theorem,
// as the single-process engine does with all the primes itself; or with the single-process
// GPU engine's power steps on the rank's own primes below 256 (int8 tensor cores), whose
// residue planes stay on the device, go to rank 0's and are rebuilt there (gpu_walk_counts).
#include <optional>
#include <utility>
#include <vector>

#include "distributed/dist_common.hpp"
#include "gemmkit/device.hpp"
#include "ops/walks/modular.hpp"
#include "ops/walks/modular_int8.hpp"

namespace gemmkit::dist {
namespace {

namespace wd = walks_detail;

// Residues in [0, p), row-major n x n.
std::vector<std::uint32_t> residues_of(const Matrix<double>& m, std::uint32_t p) {
  const std::int64_t n = m.rows();
  const double pd = p;
  std::vector<std::uint32_t> residues(std::size_t(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double r = m(i, j);
      residues[std::size_t(i * n + j)] = std::uint32_t(r < 0 ? r + pd : r);
    }
  return residues;
}

// A^length mod p (one table), or A^1 .. A^length mod p (all_lengths: one table per length,
// each the previous times A, as the single-process engine's dense products).
std::vector<std::vector<std::uint32_t>> power_residues(const Graph& g, int length, bool all_lengths,
                                                       std::uint32_t p) {
  const std::int64_t n = g.n;
  Matrix<double> base = wd::dense_adjacency(g, p);
  Matrix<double> scratch(n, n);
  std::vector<std::vector<std::uint32_t>> tables;
  if (all_lengths) {
    Matrix<double> power = base;
    tables.push_back(residues_of(power, p));
    for (int t = 2; t <= length; ++t) {
      wd::modular_gemm(power.view(), base.view(), scratch.view(), p);
      std::swap(power, scratch);
      tables.push_back(residues_of(power, p));
    }
    return tables;
  }
  // Binary powering: result = base^(bits of length seen so far).
  std::optional<Matrix<double>> result;
  for (int e = length; e > 0; e >>= 1) {
    if (e & 1) {
      if (!result) {
        result = base;
      } else {
        wd::modular_gemm(result->view(), base.view(), scratch.view(), p);
        std::swap(*result, scratch);
      }
    }
    if (e > 1) {
      wd::modular_gemm(base.view(), base.view(), scratch.view(), p);
      std::swap(base, scratch);
    }
  }
  tables.push_back(residues_of(*result, p));
  return tables;
}

constexpr int kTagResidues = 7301;

// Rank 0's table, made before any residue moves: every source and target of n vertices, and
// room for the words of each of its lengths.
void all_pairs(WalkCounts& out, std::int64_t n) {
  out.words.resize(std::size_t(std::int64_t(out.lengths.size()) * n * n * out.limbs));
  for (std::int64_t v = 0; v < n; ++v) out.sources.push_back(v);
  out.targets = out.sources;
}

}  // namespace

WalkCounts count_walks(MPI_Comm comm, const Graph* graph, int length, const DistWalkOptions& options) {
  const bool all_lengths = options.all_lengths;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Rank 0's graph, as CSR, to every rank.
  long long header[3] = {0, 0, 0};  // vertices, stored entries, weighted
  collective(comm, [&] {
    if (length < 1) fail(ErrorCategory::usage, "walk length " + std::to_string(length) + ": must be at least 1");
    if (options.gather_rows < 0)
      fail(ErrorCategory::usage, "count_walks: gather_rows " + std::to_string(options.gather_rows) + " is negative");
    if (rank != 0) return;
    if (!graph) fail(ErrorCategory::usage, "count_walks: rank 0 has no graph");
    header[0] = graph->n, header[1] = graph->edges(), header[2] = graph->weighted();
  });
  MPI_Bcast(header, 3, MPI_LONG_LONG, 0, comm);
  const std::int64_t n = header[0];
  Graph copy;
  collective(comm, [&] {
    mpi_count(n * n, "a table of residues");
    mpi_count(header[1] + 1, "the graph's edges");
    if (rank == 0) return;
    copy.n = n;
    copy.row_start.resize(std::size_t(n + 1));
    copy.target.resize(std::size_t(header[1]));
    if (header[2]) copy.weight.resize(std::size_t(header[1]));
  });
  Graph& g = rank == 0 ? const_cast<Graph&>(*graph) : copy;  // only read on rank 0 (a broadcast's root)
  MPI_Bcast(g.row_start.data(), int(n + 1), MPI_INT64_T, 0, comm);
  MPI_Bcast(g.target.data(), int(header[1]), MPI_INT32_T, 0, comm);
  if (header[2]) MPI_Bcast(g.weight.data(), int(header[1]), MPI_INT64_T, 0, comm);

  WalkCounts out;
  if (all_lengths)
    for (int t = 1; t <= length; ++t) out.lengths.push_back(t);
  else
    out.lengths = {length};
  const std::int64_t lengths = std::int64_t(out.lengths.size());
  out.mode = WalkMode::exact;
  out.bound = walk_bound(g, length);
  // The engine, as rank 0 decides (an automatic choice depends on its device): the GPU's
  // primes below 256, or the CPU's below 2^21.
  int gpu_primes = 0;
  const int local = node_rank(comm);
  collective(comm, [&] {
    if (all_lengths && options.backend == WalkBackend::cuda)
      fail(ErrorCategory::usage, "count_walks: every length (all_lengths) is computed on the CPU backend");
    if (rank != 0 || all_lengths) return;
    WalkQuery query;
    query.length = length;
    query.backend = options.backend;
    gpu_primes = wd::gpu_primes_for(g, query, out.bound).value_or(0);
  });
  MPI_Bcast(&gpu_primes, 1, MPI_INT, 0, comm);
  out.primes = gpu_primes > 0 ? gpu_primes : wd::primes_for_bound(out.bound);
  out.limbs = wd::limbs_for_bound(out.bound);
  const int nq = out.primes;
  const std::vector<std::uint32_t> primes =
      gpu_primes > 0 ? std::vector<std::uint32_t>(wd::int8_primes().begin(), wd::int8_primes().begin() + nq)
                     : wd::crt_primes(nq);
  out.method = std::string(all_lengths ? "dense products " : "dense squaring ") +
               (gpu_primes > 0 ? "on GPU tensor cores (int8) " : "") + "mod " + std::to_string(out.primes) +
               " primes over " + std::to_string(size) + " processes";
  out.kernel = gpu_primes > 0 ? "cuda_dense_int8" : "cpu_dense";  // the engine every rank runs on its primes

  // This rank's primes: q = rank, rank + P, ...
  std::vector<std::uint32_t> own;
  for (int q = rank; q < nq; q += size) own.push_back(primes[std::size_t(q)]);
  const int count = int(n * n);
  if (gpu_primes > 0) {
    // The engine's residue planes of A^length, each rank's on its device, rebuilt on rank 0's:
    // its primes rank by rank (the rebuild takes them in any order).
    std::vector<std::uint32_t> by_rank;
    std::vector<int> first;
    for (int r = 0; r < size; ++r) {
      first.push_back(int(by_rank.size()));
      for (int q = r; q < nq; q += size) by_rank.push_back(primes[std::size_t(q)]);
    }
    first.push_back(nq);
    std::optional<Context> own_context;
    collective(comm, [&] {
      if (!options.context) {
        require_cuda_device();
        own_context.emplace(Backend::cuda, default_device(local, int(query_devices().devices.size())));
      }
      if (rank == 0) all_pairs(out, n);
    });
    gpu_walk_counts(comm, options.context ? *options.context : *own_context, g, length, by_rank, first, out.limbs,
                    out.words.data(), options.gather_rows);
    return out;
  }
  // Each of this rank's primes with a table per length.
  std::vector<std::vector<std::vector<std::uint32_t>>> mine;
  collective(comm, [&] {
    for (const std::uint32_t p : own) mine.push_back(power_residues(g, length, all_lengths, p));
  });
  // Rank 0 rebuilds one length at a time: entry e's residues at e * nq, prime by prime.
  // Everything rank 0 allocates is agreed first: the others then send without waiting on a
  // rank that has given up.
  std::vector<std::uint32_t> residues, received;
  std::optional<wd::CrtRebuilder> rebuilder;
  collective(comm, [&] {
    if (rank != 0) return;
    residues.resize(std::size_t(n * n * nq));
    received.resize(std::size_t(n * n));
    all_pairs(out, n);
    rebuilder.emplace(primes, out.limbs);
  });
  if (rank == 0) {
    const wd::CrtRebuilder& crt = *rebuilder;
    for (std::int64_t li = 0; li < lengths; ++li) {
      for (int q = 0; q < nq; ++q) {
        const std::uint32_t* from = nullptr;
        if (q % size == 0) {
          from = mine[std::size_t(q / size)][std::size_t(li)].data();
        } else {
          MPI_Recv(received.data(), count, MPI_UINT32_T, q % size, kTagResidues, comm, MPI_STATUS_IGNORE);
          from = received.data();
        }
        for (std::int64_t e = 0; e < n * n; ++e) residues[std::size_t(e * nq + q)] = from[e];
      }
      std::uint64_t* words = &out.words[std::size_t(li * n * n * out.limbs)];
#pragma omp parallel for schedule(static)
      for (std::int64_t e = 0; e < n * n; ++e)
        crt.rebuild(&residues[std::size_t(e * nq)], &words[std::size_t(e * out.limbs)]);
    }
  } else {
    // In the order rank 0 receives them: length by length, prime by prime.
    for (std::int64_t li = 0; li < lengths; ++li)
      for (const auto& tables : mine)
        MPI_Send(tables[std::size_t(li)].data(), count, MPI_UINT32_T, 0, kTagResidues, comm);
  }
  return out;
}

}  // namespace gemmkit::dist
