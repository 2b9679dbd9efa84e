// gemmkit walks GRAPH --length K: how many walks of length K lead from one vertex to
// another, for one pair, one row or column, or the whole table; exact by default.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <sstream>

#include "arith/int128.hpp"
#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/walks.hpp"
#ifdef GEMMKIT_HAVE_MPI
#include "gemmkit/distributed.hpp"
#endif

namespace gemmkit::cli {
namespace {

struct WalksOptions {
  std::string graph_path, output, from, to, mode = "exact", method = "auto", format = "auto";
  std::string backend = "auto", json_path, output_format;
  int length = 0;
  bool all_lengths = false, undirected = false, bench = false, distributed = false;
  std::vector<std::string> labels;
};

// Largest table printed whole on stdout; bigger ones are summarised (write them with -o).
constexpr std::int64_t kPrintLimit = 100;

// One count as text: exact integers in full; doubles as integers below 2^53, else in
// shortest round-trip notation.
std::string count_text(const WalkCounts& w, std::size_t li, std::int64_t r, std::int64_t c) {
  if (w.mode == WalkMode::float64) {
    const double x = w.approx(li, r, c);
    if (std::fabs(x) < 9007199254740992.0) return std::to_string(static_cast<std::int64_t>(x));
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  }
  const std::size_t i = (li * w.sources.size() + static_cast<std::size_t>(r)) * w.targets.size() +
                        static_cast<std::size_t>(c);
  const std::uint64_t* words = &w.words[i * w.limbs];
  if (w.limbs == 1) return std::to_string(static_cast<std::int64_t>(words[0]));
  if (w.limbs == 2 && (words[1] >> 63) == 0)
    return u128_text((static_cast<u128>(words[1]) << 64) | words[0]);
  return w.at(li, r, c).to_string();
}

// A text table with right-aligned columns, like the teaching texts' "from/to" tables.
void print_table(const std::string& corner, const std::vector<std::string>& col_heads,
                 const std::vector<std::string>& row_heads,
                 const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> width(col_heads.size() + 1, corner.size());
  for (const auto& h : row_heads) width[0] = std::max(width[0], h.size());
  for (std::size_t c = 0; c < col_heads.size(); ++c) {
    width[c + 1] = col_heads[c].size();
    for (const auto& row : cells) width[c + 1] = std::max(width[c + 1], row[c].size());
  }
  auto line = [&](const std::string& head, const std::vector<std::string>& items) {
    std::string out = head + std::string(width[0] - head.size(), ' ');
    for (std::size_t c = 0; c < items.size(); ++c)
      out += " " + std::string(width[c + 1] - items[c].size(), ' ') + items[c];
    std::printf("%s\n", out.c_str());
  };
  line(corner, col_heads);
  for (std::size_t r = 0; r < row_heads.size(); ++r) line(row_heads[r], cells[r]);
}

void print_counts(const Graph& g, const WalkCounts& w, bool pair, bool all_lengths) {
  const std::int64_t rows = w.rows(), cols = w.cols();
  std::vector<std::string> source_labels, target_labels, length_labels;
  for (auto v : w.sources) source_labels.push_back(g.label(v));
  for (auto v : w.targets) target_labels.push_back(g.label(v));
  for (int t : w.lengths) length_labels.push_back(std::to_string(t));
  if (pair && !all_lengths) {
    std::printf("%s\n", count_text(w, 0, 0, 0).c_str());
    return;
  }
  std::vector<std::vector<std::string>> cells;
  if (all_lengths && rows == 1) {  // one source (or one pair): a row per length
    for (std::size_t li = 0; li < w.lengths.size(); ++li) {
      cells.emplace_back();
      for (std::int64_t c = 0; c < cols; ++c) cells.back().push_back(count_text(w, li, 0, c));
    }
    print_table("length/to", target_labels, length_labels, cells);
    return;
  }
  if (all_lengths && cols == 1) {  // one target: a column per length
    for (std::int64_t r = 0; r < rows; ++r) {
      cells.emplace_back();
      for (std::size_t li = 0; li < w.lengths.size(); ++li) cells.back().push_back(count_text(w, li, r, 0));
    }
    print_table("from/length", length_labels, source_labels, cells);
    return;
  }
  for (std::size_t li = 0; li < w.lengths.size(); ++li) {
    if (all_lengths) std::printf("%slength %d:\n", li ? "\n" : "", w.lengths[li]);
    cells.clear();
    for (std::int64_t r = 0; r < rows; ++r) {
      cells.emplace_back();
      for (std::int64_t c = 0; c < cols; ++c) cells.back().push_back(count_text(w, li, r, c));
    }
    print_table("from/to", target_labels, source_labels, cells);
  }
}

// Signed comparison of two counts stored as `limbs` words of two's complement.
bool words_less(const std::uint64_t* a, const std::uint64_t* b, int limbs) {
  const bool neg_a = a[limbs - 1] >> 63, neg_b = b[limbs - 1] >> 63;
  if (neg_a != neg_b) return neg_a;
  for (int i = limbs; i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i];
  return false;
}

// For tables too big to print: the largest count of the last length and where it is.
void print_summary(const Graph& g, const WalkCounts& w) {
  const std::size_t li = w.lengths.size() - 1;
  std::int64_t at_r = -1, at_c = -1, nonzero = 0;
  const std::size_t first = li * static_cast<std::size_t>(w.rows() * w.cols());
  for (std::int64_t r = 0; r < w.rows(); ++r)
    for (std::int64_t c = 0; c < w.cols(); ++c) {
      const std::size_t i = first + static_cast<std::size_t>(r * w.cols() + c);
      bool zero = true, larger = at_r < 0;
      if (w.mode == WalkMode::float64) {
        zero = w.reals[i] == 0;
        larger = larger || w.reals[i] > w.approx(li, at_r, at_c);
      } else {
        const std::uint64_t* x = &w.words[i * w.limbs];
        zero = std::all_of(x, x + w.limbs, [](std::uint64_t limb) { return limb == 0; });
        if (!larger) {
          const std::size_t j = first + static_cast<std::size_t>(at_r * w.cols() + at_c);
          larger = words_less(&w.words[j * w.limbs], x, w.limbs);
        }
      }
      if (zero) continue;
      ++nonzero;
      if (larger) at_r = r, at_c = c;
    }
  std::printf("walks of length %d: %lld x %lld table, %lld nonzero counts (%s)\n", w.lengths.back(),
              static_cast<long long>(w.rows()), static_cast<long long>(w.cols()),
              static_cast<long long>(nonzero), w.method.c_str());
  if (at_r >= 0) {
    const BigInt largest = w.at(li, at_r, at_c);
    std::printf("largest: %s walks from %s to %s (%zu bits)\n", count_text(w, li, at_r, at_c).c_str(),
                g.label(w.sources[at_r]).c_str(), g.label(w.targets[at_c]).c_str(),
                largest.bit_length());
  }
  std::printf("(too large to print; write it with -o FILE.csv)\n");
}

// Float mode: doubles, as count_text writes them.
void write_csv_reals(const std::string& path, const Graph& g, const WalkCounts& w, bool all_lengths) {
  AtomicFile file(path);
  std::string buf;
  buf.reserve(1 << 20);
  auto flush = [&](bool force) {
    if (force || buf.size() > (1 << 20) - 4096) {
      file.write(buf);
      buf.clear();
    }
  };
  if (all_lengths) buf += "length,";
  buf += "from/to";
  for (auto v : w.targets) buf += "," + io::csv_field(g.label(v));
  buf += "\n";
  for (std::size_t li = 0; li < w.lengths.size(); ++li)
    for (std::int64_t r = 0; r < w.rows(); ++r) {
      if (all_lengths) buf += std::to_string(w.lengths[li]) + ",";
      buf += io::csv_field(g.label(w.sources[r]));
      for (std::int64_t c = 0; c < w.cols(); ++c) {
        buf += ',';
        buf += count_text(w, li, r, c);
        flush(false);
      }
      buf += '\n';
    }
  flush(true);
  file.commit();
}

// The table with labels: "from/to,<targets>" then "<source>,<counts>" (with --all-lengths a
// leading length column, the lengths' tables one after another). Exact and int64 counts go
// through the library's exact table writer (decimal integers, formatted in parallel).
void write_csv_counts(const std::string& path, const Graph& g, const WalkCounts& w, bool all_lengths) {
  if (w.mode == WalkMode::float64) return write_csv_reals(path, g, w, all_lengths);
  LimbTableLabels labels;
  if (all_lengths) labels.corner.push_back("length");
  labels.corner.push_back("from/to");
  for (auto v : w.targets) labels.columns.push_back(g.label(v));
  for (int t : w.lengths)
    for (auto v : w.sources) {
      labels.rows.push_back({});
      if (all_lengths) labels.rows.back().push_back(std::to_string(t));
      labels.rows.back().push_back(g.label(v));
    }
  const auto lengths = static_cast<std::int64_t>(w.lengths.size());
  write_limb_tables(path, LimbTableView{w.words.data(), w.rows(), w.cols(), w.limbs}, lengths, &labels,
                    FileFormat::csv);
}

// The counts as they are in memory, with a leading axis of lengths for --all-lengths:
// float64 in float mode, int64 when every count fits, else the exact words, a '<u8' array
// of shape ([lengths,] rows, cols, limbs), two's complement, least significant word first.
// Int64 counts kept in several words are first narrowed in place (the counts are not used
// after being written), so no copy of the table is made.
void write_npy_counts(const std::string& path, WalkCounts& w, bool all_lengths) {
  std::vector<std::int64_t> shape = {w.rows(), w.cols()};
  if (all_lengths) shape.insert(shape.begin(), static_cast<std::int64_t>(w.lengths.size()));
  if (w.mode == WalkMode::float64) return write_npy_array(path, DType::f64, shape, w.reals.data());
  const LimbTableView first{w.words.data(), w.rows(), w.cols(), w.limbs};
  if (!w.fits_int64()) {
    if (all_lengths) return write_limb_tables(path, first, shape[0], nullptr, FileFormat::npy);
    return write_limb_table(path, first, nullptr, FileFormat::npy);
  }
  if (w.limbs > 1) {
    const std::size_t entries = w.words.size() / static_cast<std::size_t>(w.limbs);
    for (std::size_t i = 0; i < entries; ++i) w.words[i] = w.words[i * static_cast<std::size_t>(w.limbs)];
    w.words.resize(entries);
    w.limbs = 1;
  }
  write_npy_array(path, DType::i64, shape, w.words.data());
}

// For --json: what was counted, and the answer: where the table was written (-o), or the
// counts themselves (decimal strings, exact) when the table is small enough to print.
nlohmann::json walks_answer(const Graph& g, const WalkCounts& w, const WalksOptions& o, bool npy_out) {
  const auto label_or_null = [&](const std::string& given, const std::vector<std::int64_t>& vertices) {
    return given.empty() || vertices.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.label(vertices.front()));
  };
  nlohmann::json counted = {{"length", o.length}, {"all_lengths", o.all_lengths}, {"lengths", w.lengths},
                            {"from", label_or_null(o.from, w.sources)}, {"to", label_or_null(o.to, w.targets)},
                            {"sources", w.rows()}, {"targets", w.cols()}};
  nlohmann::json answer = {{"output", nullptr}, {"output_format", nullptr}, {"source_labels", nullptr},
                           {"target_labels", nullptr}, {"counts", nullptr}, {"counts_omitted", nullptr}};
  if (!o.output.empty()) {
    answer["output"] = o.output;
    answer["output_format"] = npy_out ? "npy" : "csv";
    answer["counts_omitted"] = "written to the output";
  } else if (w.rows() > kPrintLimit || w.cols() > kPrintLimit) {
    answer["counts_omitted"] = "too large to include (more than " + std::to_string(kPrintLimit) +
                               " rows or columns): write it with -o";
  } else {
    nlohmann::json sources = nlohmann::json::array(), targets = nlohmann::json::array();
    for (auto v : w.sources) sources.push_back(g.label(v));
    for (auto v : w.targets) targets.push_back(g.label(v));
    nlohmann::json counts = nlohmann::json::array();  // [length][source][target]
    for (std::size_t li = 0; li < w.lengths.size(); ++li) {
      nlohmann::json table = nlohmann::json::array();
      for (std::int64_t r = 0; r < w.rows(); ++r) {
        nlohmann::json row = nlohmann::json::array();
        for (std::int64_t c = 0; c < w.cols(); ++c) row.push_back(count_text(w, li, r, c));
        table.push_back(std::move(row));
      }
      counts.push_back(std::move(table));
    }
    answer["source_labels"] = std::move(sources);
    answer["target_labels"] = std::move(targets);
    answer["counts"] = std::move(counts);
  }
  return {{"counted", std::move(counted)}, {"answer", std::move(answer)}};
}

// With --bench (on stderr) or --json: the method and time taken, and after the GPU engine
// the references of the same run: cuBLAS's own int8 GEMM and DGEMM of the same order, and
// the time as many DGEMMs as the engine ran int8 GEMMs would take. `answer`: walks_answer's.
void report_timing(const Graph& g, const WalkCounts& w, double seconds, double end_to_end,
                   double write_seconds, const WalksOptions& o, int processes, nlohmann::json answer) {
  if (!o.bench && o.json_path.empty()) return;
  nlohmann::json report = json_document("walks", std::move(answer));
  report.update({{"graph", o.graph_path}, {"vertices", g.n}, {"edges", g.edges()},
                 {"length", o.length}, {"mode", walk_mode_name(w.mode)},
                 {"method", w.method}, {"kernel", w.kernel}, {"bound_bits", w.bound.bit_length()},
                 {"primes", w.primes}, {"seconds", seconds}});
  report["end_to_end_seconds"] = end_to_end;
  if (processes > 0) report["distributed"] = {{"processes", processes}};
  if (!o.output.empty()) report["write_seconds"] = write_seconds;
  if (o.bench) {
    std::fprintf(stderr, "gemmkit walks: %s, %.3f s (%.3f s from reading the graph to every count in memory)\n",
                 w.method.c_str(), seconds, end_to_end);
    if (!o.output.empty()) std::fprintf(stderr, "  written to %s in %.3f s\n", quoted_path(o.output).c_str(), write_seconds);
  }
  if (w.gpu) {
    const double n = static_cast<double>(g.n);
    const double ops = 2.0 * n * n * n * w.gpu->products * w.gpu->primes;
    const double tops = ops / w.gpu->gemm_seconds / 1e12;
    report["gpu"] = {{"products", w.gpu->products}, {"primes", w.gpu->primes},
                     {"int8_gemms", w.gpu->products * w.gpu->primes},
                     {"gemm_seconds", w.gpu->gemm_seconds}, {"build_seconds", w.gpu->build_seconds},
                     {"crt_seconds", w.gpu->crt_seconds}, {"copy_seconds", w.gpu->copy_seconds},
                     {"context_seconds", w.gpu->context_seconds}, {"setup_seconds", w.gpu->setup_seconds},
                     {"engine_seconds", w.gpu->total_seconds},
                     {"int8_tops", tops}};
    if (o.bench)
      std::fprintf(stderr, "  GPU: %d products x %d primes = %d modular int8 GEMMs of order %lld in %.2f ms "
                           "(%.0f TOPS); residues built in %.2f ms, counts rebuilt in %.2f ms, copied "
                           "to the host in %.3f s; device context %.3f s, setup %.3f s; engine %.3f s\n",
                   w.gpu->products, w.gpu->primes, w.gpu->products * w.gpu->primes,
                   static_cast<long long>(g.n), w.gpu->gemm_seconds * 1e3, tops,
                   w.gpu->build_seconds * 1e3, w.gpu->crt_seconds * 1e3, w.gpu->copy_seconds,
                   w.gpu->context_seconds, w.gpu->setup_seconds, w.gpu->total_seconds);
    if (o.bench) {
      const WalkGemmReferences ref = walk_gemm_references(g.n);
      const double ref_tops = 2.0 * n * n * n / ref.int8_seconds / 1e12;
      const double fp64 = ref.fp64_seconds * w.gpu->products * w.gpu->primes;
      report["reference"] = {{"cublas_int8_gemm_seconds", ref.int8_seconds},
                             {"cublas_int8_tops", ref_tops},
                             {"percent_of_cublas_int8", 100.0 * tops / ref_tops},
                             {"cublas_dgemm_seconds", ref.fp64_seconds},
                             {"same_number_of_dgemms_seconds", fp64}};
      std::fprintf(stderr, "  cuBLAS in the same run: int8 GEMM %.0f TOPS, so the modular GEMMs reach "
                           "%.1f%%; %d DGEMMs of the same order would take %.3f s (end to end here: %.3f s)\n",
                   ref_tops, 100.0 * tops / ref_tops, w.gpu->products * w.gpu->primes, fp64, seconds);
    }
  } else if (o.bench) {
    std::fprintf(stderr, "  --bench: the GPU engine did not run (%s), so there is nothing to compare\n",
                 w.method.c_str());
  }
  if (!o.json_path.empty()) write_json(o.json_path, report);
}

// What the checks of the options and the graph give the count.
struct WalksPlan {
  Graph graph;
  WalkQuery query;
  bool npy_out = false;
  std::chrono::steady_clock::time_point read_start;
  int processes = 0;  // of a --distributed run
};

// Cheap checks first, so a typo costs no reading or computing; then the graph.
WalksPlan prepare_walks(const WalksOptions& o) {
  const auto mode = parse_walk_mode(o.mode);
  if (!mode) fail(ErrorCategory::usage, "unknown mode '" + o.mode + "' (expected exact, int64 or float)");
  const auto method = parse_walk_method(o.method);
  if (!method) fail(ErrorCategory::usage, "unknown method '" + o.method + "' (expected auto, dense or sparse)");
  if (o.length < 1) fail(ErrorCategory::usage, "--length must be at least 1");
  const auto backend = parse_walk_backend(o.backend);
  if (!backend) fail(ErrorCategory::usage, "unknown backend '" + o.backend + "' (expected auto, cpu or cuda)");
  if (o.distributed) {
    // What the distributed engine computes: the whole exact table by dense products.
    const auto refuse = [](const std::string& what) {
      fail(ErrorCategory::usage, "--distributed computes the whole exact table by dense products; " + what +
                                     " is not offered with it (docs/distributed.md)");
    };
    if (!o.from.empty() || !o.to.empty()) refuse("--from/--to");
    if (*mode != WalkMode::exact) refuse("--mode " + o.mode);
    if (*method == WalkMethod::sparse) refuse("--method sparse");
    if (o.bench) refuse("--bench");
  }
  // --bench times the GPU engine beside cuBLAS: without a device, say so before any work.
  if (*backend == WalkBackend::cuda || o.bench) require_cuda_device();
  GraphReadOptions read;
  if (o.format == "edges") read.format = GraphFormat::edges;
  else if (o.format == "mtx") read.format = GraphFormat::mtx;
  else if (o.format == "npy") read.format = GraphFormat::npy;
  else if (o.format == "csv") read.format = GraphFormat::csv;
  else if (o.format != "auto")
    fail(ErrorCategory::usage, "unknown format '" + o.format + "' (expected auto, edges, mtx, npy or csv)");
  read.undirected = o.undirected;
  read.labels = o.labels;
  WalksPlan plan;
  check_outputs({{"-o", o.output}, {"--json", o.json_path}}, {{"input GRAPH", o.graph_path}});
  if (!o.output.empty()) {
    const FileFormat format = output_format(o.output, parse_output_format(o.output_format));
    plan.npy_out = format == FileFormat::npy;
    if (format == FileFormat::mtx)
      fail(ErrorCategory::usage, "walk counts are written as .csv (with labels) or .npy, not .mtx");
  }

  plan.read_start = std::chrono::steady_clock::now();
  plan.graph = read_graph(o.graph_path, read);
  WalkQuery& q = plan.query;
  q.length = o.length;
  q.all_lengths = o.all_lengths;
  q.mode = *mode;
  q.method = *method;
  q.backend = *backend;
  if (!o.from.empty()) q.from = plan.graph.vertex(o.from);
  if (!o.to.empty()) q.to = plan.graph.vertex(o.to);
  return plan;
}

// Writes or prints the counts, and the timings asked for.
void finish_walks(const WalksOptions& o, const WalksPlan& plan, WalkCounts& w, double seconds, double end_to_end) {
  const Graph& g = plan.graph;
  if (w.rounded)
    std::fprintf(stderr, "gemmkit: warning: some counts reach 2^53 and are rounded in float mode "
                         "(use --mode exact)\n");
  // Before the write, which may narrow the counts in place.
  nlohmann::json answer = o.json_path.empty() ? nlohmann::json::object() : walks_answer(g, w, o, plan.npy_out);
  if (!o.output.empty()) {
    const auto write_start = std::chrono::steady_clock::now();
    if (plan.npy_out) write_npy_counts(o.output, w, o.all_lengths);
    else write_csv_counts(o.output, g, w, o.all_lengths);
    const double write_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
    std::printf("%s: %lld x %lld walk counts of length %s (%s, %s)\n", quoted_path(o.output).c_str(),
                static_cast<long long>(w.rows()), static_cast<long long>(w.cols()),
                o.all_lengths ? ("1.." + std::to_string(o.length)).c_str() : std::to_string(o.length).c_str(),
                std::string(walk_mode_name(w.mode)).c_str(), w.method.c_str());
    report_timing(g, w, seconds, end_to_end, write_seconds, o, plan.processes, std::move(answer));
    return;
  }
  const bool pair = plan.query.from && plan.query.to;
  const std::int64_t shown_rows = o.all_lengths && w.rows() == 1 ? 1 : w.rows();
  if (shown_rows > kPrintLimit || w.cols() > kPrintLimit)
    print_summary(g, w);
  else
    print_counts(g, w, pair, o.all_lengths);
  report_timing(g, w, seconds, end_to_end, 0, o, plan.processes, std::move(answer));
}

// --distributed: every process of `mpirun -np P gemmkit walks ... --distributed` runs this.
// Rank 0 checks the options and reads the graph as the single-process command does, the
// ranks compute the exact table with the primes spread over them (dist::count_walks), and
// rank 0 writes or prints it through the same writers. An error on any rank is reported once
// by rank 0 as "rank R: ...", and every rank exits with its status.
void run_walks_distributed([[maybe_unused]] const WalksOptions& o) {  // unused without MPI
  run_as_mpi_process([&] {
#ifdef GEMMKIT_HAVE_MPI
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::optional<WalksPlan> plan;
    dist::collective(MPI_COMM_WORLD, [&] {
      if (rank != 0) return;
      plan = prepare_walks(o);
      MPI_Comm_size(MPI_COMM_WORLD, &plan->processes);
    });
    const bool progress = rank == 0 && progress_wanted();
    if (progress) std::fprintf(stderr, "gemmkit walks: counting over the processes...");
    const auto start = std::chrono::steady_clock::now();
    dist::DistWalkOptions options;
    options.backend = parse_walk_backend(o.backend).value_or(WalkBackend::automatic);  // checked on rank 0
    options.all_lengths = o.all_lengths;
    WalkCounts w = dist::count_walks(MPI_COMM_WORLD, plan ? &plan->graph : nullptr, o.length, options);
    if (progress) std::fprintf(stderr, "\r%60s\r", "");
    dist::collective(MPI_COMM_WORLD, [&] {
      if (rank != 0) return;
      const auto now = std::chrono::steady_clock::now();
      finish_walks(o, *plan, w, std::chrono::duration<double>(now - start).count(),
                   std::chrono::duration<double>(now - plan->read_start).count());
    });
#endif
  });
}

void run_walks(const WalksOptions& o) {
  if (o.distributed) return run_walks_distributed(o);
  WalksPlan plan = prepare_walks(o);
  const bool progress = progress_wanted();
  if (progress)
    plan.query.progress = [](const std::string& line) { std::fprintf(stderr, "\rgemmkit walks: %-40s", line.c_str()); };
  const auto start = std::chrono::steady_clock::now();
  WalkCounts w = count_walks(plan.graph, plan.query);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // From reading the graph to every count in memory.
  const double end_to_end = std::chrono::duration<double>(std::chrono::steady_clock::now() - plan.read_start).count();
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  finish_walks(o, plan, w, seconds, end_to_end);
}

}  // namespace

void add_walks(CLI::App& app) {
  auto o = std::make_shared<WalksOptions>();
  CLI::App* cmd = app.add_subcommand(
      "walks", "Count walks of length K between vertices: entries of A^K, exact by default");
  cmd->add_option("GRAPH", o->graph_path,
                  "Edge list ('u v' or 'u v weight' per line, '#' comments), .mtx, .npy or .csv "
                  "adjacency matrix")
      ->required();
  cmd->add_option("-k,--length", o->length, "Walk length K (edges per walk), at least 1")->required();
  cmd->add_option("--from", o->from, "Source vertex (name or index); unset: every vertex");
  cmd->add_option("--to", o->to, "Target vertex; unset: every vertex");
  cmd->add_flag("--all-lengths", o->all_lengths, "Every length 1..K, not K alone");
  cmd->add_option("--mode", o->mode,
                  "exact (arbitrary precision), int64 (refuses on overflow), float (double)")
      ->capture_default_str();
  cmd->add_option("--method", o->method,
                  "auto, dense (powers by repeated squaring) or sparse (K sparse products per "
                  "source or target)")
      ->capture_default_str();
  cmd->add_option("--backend", o->backend,
                  "Exact dense products: auto (GPU int8 tensor cores when a device is present and "
                  "the graph has 512+ vertices), cpu or cuda")
      ->capture_default_str();
  cmd->add_flag("--bench", o->bench,
                "After a GPU run, time cuBLAS int8 GEMM and DGEMM of the same order beside it (needs a GPU)");
  add_json_option(cmd, o->json_path, "Write the answer (the counts, or where -o wrote them), what was counted, "
                                     "the method, timings and references as JSON");
  cmd->add_flag("--undirected", o->undirected, "Edge lists: each line is an edge both ways");
  cmd->add_option("--labels", o->labels, "Vertex names, comma-separated (matrix files)")->delimiter(',');
  cmd->add_option("--format", o->format, "Format of GRAPH: auto (by extension), edges, mtx, npy or csv")
      ->capture_default_str();
  add_output_format_option(cmd, o->output_format, true);
  cmd->add_option("-o,--output", o->output,
                  "Write the table: .csv with labels, or .npy (int64 when every count fits, else "
                  "exact 64-bit limbs; with --all-lengths a leading axis of lengths: see docs/walks.md)");
  cmd->add_flag("--distributed", o->distributed,
                "Be one of the processes of 'mpirun -np P gemmkit walks ... --distributed' (a build with "
                "MPI): the whole exact table (one length or --all-lengths) by dense products, its primes "
                "spread over the processes (--backend: each process's CPU or GPU); rank 0 reads the graph "
                "and writes or prints the counts as a single process does; an error on any rank ends them "
                "all (docs/distributed.md)");
  cmd->callback([o] { run_walks(*o); });
}

}  // namespace gemmkit::cli
