// gemmkit multiply A B -o C: C = alpha op(A) op(B) + beta C0, verified, written atomically;
// with --distributed, one of the processes of an MPI job that computes it by SUMMA (or, for the
// Ozaki emulation, with its moduli spread over the processes' GPUs).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/memory.hpp"
#include "gemmkit/ozaki.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"
#ifdef GEMMKIT_HAVE_MPI
#include "gemmkit/distributed.hpp"
#endif

namespace gemmkit::cli {
namespace {

struct MultiplyOptions {
  std::string a_path, b_path, c_path, c0_path, json_path;
  std::string backend = "auto", kernel = "auto", dtype, out_dtype, verify = "auto", format;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  bool distributed = false;
  std::string grid;
  std::int64_t block = 256;
  int moduli = 0;  // the Ozaki emulation's (0: its default plan)
};

// A kernel that takes moduli (the Ozaki emulation) spreads them over the processes of
// --distributed, instead of SUMMA's blocks.
const KernelEntry* spreads_moduli(const std::string& kernel) {
  const KernelEntry* entry = gemm_registry().find(kernel);
  return entry && entry->takes_moduli ? entry : nullptr;
}

DType parse_dtype_option(const std::string& text, const char* option) {
  const auto dtype = parse_dtype(text);
  if (!dtype) fail(ErrorCategory::usage, std::string("unknown dtype '") + text + "' for " + option);
  return *dtype;
}

// A zero m x n matrix of `dtype`, made in place rather than converted from another.
AnyMatrix zero_matrix(std::int64_t m, std::int64_t n, DType dtype) {
  AnyMatrix typed = convert(AnyMatrix(Matrix<std::int64_t>(0, 0)), dtype);
  std::visit([&](auto& x) { x = std::decay_t<decltype(x)>(m, n); }, typed);
  return typed;
}

struct ProductShape {
  DType dtype;
  std::int64_t m, n, k;
};

// Refuses, before any work, a multiply whose memory beyond the inputs as read cannot fit: C,
// a copy of C0 for verification when it must be converted, converted inputs (each while its
// original lives) and the verification's working set.
void require_multiply_memory(const AnyMatrix& a, const AnyMatrix& b, const std::optional<AnyMatrix>& c0,
                             double beta, DType storage, DType out, ProductShape s, VerifyMode mode) {
  std::uint64_t conversions = 0;
  for (const AnyMatrix* x : {&a, &b})
    if (dtype_of_any(*x) != storage)
      conversions = std::max(conversions, matrix_bytes(rows_of(*x), cols_of(*x), storage));
  GemmProblem shape_only;
  shape_only.dtype = s.dtype, shape_only.m = s.m, shape_only.n = s.n, shape_only.k = s.k;
  shape_only.lda = s.k, shape_only.ldb = s.n, shape_only.ldc = s.n;
  const bool c0_copied = beta != 0 && c0 && dtype_of_any(*c0) != out;  // see c_before
  const std::uint64_t product = matrix_bytes(s.m, s.n, out) * (c0_copied ? 2 : 1) +
                                estimate_gemm_memory(shape_only, mode).host;
  require_host_memory(std::max(conversions, product), "multiply " + std::to_string(s.m) + "x" +
                                                          std::to_string(s.n) + "x" + std::to_string(s.k));
}

struct Extent {
  std::int64_t rows, cols;
};
std::string shape(Extent e) { return std::to_string(e.rows) + "x" + std::to_string(e.cols); }

// The product's M, N and K from the files' shapes (op(A) is M x K, op(B) is K x N), or the
// usage error naming the files whose shapes do not match.
std::array<std::int64_t, 3> product_shape(const MultiplyOptions& o, Extent a, Extent b, std::optional<Extent> c0) {
  const std::int64_t m = o.trans_a ? a.cols : a.rows;
  const std::int64_t k = o.trans_a ? a.rows : a.cols;
  const std::int64_t kb = o.trans_b ? b.cols : b.rows;
  const std::int64_t n = o.trans_b ? b.rows : b.cols;
  if (k != kb)
    fail(ErrorCategory::usage,
         "shape mismatch: " + quoted_path(o.a_path) + " is " + shape(a) + (o.trans_a ? " (transposed)" : "") +
             " and " + quoted_path(o.b_path) + " is " + shape(b) + (o.trans_b ? " (transposed)" : "") +
             ": op(A) has " + std::to_string(k) + " columns but op(B) has " +
             std::to_string(kb) + " rows");
  if (c0 && (c0->rows != m || c0->cols != n))
    fail(ErrorCategory::usage, "shape mismatch: " + quoted_path(o.c0_path) + " is " + shape(*c0) +
                                   " but the product is " + std::to_string(m) + "x" +
                                   std::to_string(n));
  return {m, n, k};
}

// A multiply read, checked and converted, ready to compute: p refers to a, b and c.
struct Prepared {
  AnyMatrix a, b, c;
  std::optional<AnyMatrix> c_before;
  const void* c_before_data = nullptr;
  GemmProblem p;
  DType dtype = DType::f32, storage = DType::f32, out = DType::f32;
  bool converted = false, exact_out = false;
  VerifyMode verify_mode = VerifyMode::automatic;
};

// How it ran.
struct Outcome {
  std::string kernel;
  double seconds = 0;
  GemmRunReport report;  // how a kernel that plans at run time ran (the Ozaki moduli, the exact method)
  std::vector<std::uint64_t> limbs;
  int limb_count = 0;
  nlohmann::json distributed;  // the process grid and blocks of a --distributed run
  bool c_written = false;      // C is already on its way to the output (dist::write_npy)
};

Prepared prepare_multiply(const MultiplyOptions& o) {
  // Cheap checks first, so a typo costs no computation.
  output_format(o.c_path, parse_output_format(o.format));
  check_outputs({{"-o", o.c_path}, {"--json", o.json_path}},
                {{"input A", o.a_path}, {"input B", o.b_path}, {"--c", o.c0_path}});
  parse_backend(o.backend);  // a bad --backend is refused before any file is read
  const VerifyMode verify_mode = parse_verify_mode(o.verify);
  if (o.beta != 0.0 && o.c0_path.empty())
    fail(ErrorCategory::usage, "--beta needs --c FILE, the matrix C0 in alpha*A*B + beta*C0");

  // --dtype f64 lets an integer text file hold integers beyond int64.
  ReadOptions read;
  if (!o.dtype.empty()) read.dtype = parse_dtype(o.dtype);
  AnyMatrix a = read_matrix(o.a_path, read), b = read_matrix(o.b_path, read);
  std::optional<AnyMatrix> c0;
  if (!o.c0_path.empty()) c0 = read_matrix(o.c0_path, read);

  const auto [m, n, k] = product_shape(o, {rows_of(a), cols_of(a)}, {rows_of(b), cols_of(b)},
                                       c0 ? std::optional<Extent>(Extent{rows_of(*c0), cols_of(*c0)}) : std::nullopt);

  DType dtype = common_dtype(dtype_of_any(a), dtype_of_any(b));
  if (c0) dtype = common_dtype(dtype, dtype_of_any(*c0));
  if (!o.dtype.empty()) dtype = parse_dtype_option(o.dtype, "--dtype");
  if (dtype == DType::i8)
    fail(ErrorCategory::usage, "--dtype i8 is not offered for matrix files (use i32 or i64)");
  // C holds the inputs' dtype (tf32: f32), or f32 for f16/bf16 inputs when asked.
  const DType storage = dtype == DType::tf32 ? DType::f32 : dtype;
  DType out = storage;
  // --out-dtype exact: C as big integers (limbs), for i32 and i64 inputs.
  const bool exact_out = o.out_dtype == "exact";
  if (!o.out_dtype.empty() && !exact_out) {
    out = parse_dtype_option(o.out_dtype, "--out-dtype");
    const bool half_in = dtype == DType::f16 || dtype == DType::bf16;
    const bool wider_int = dtype == DType::i32 && out == DType::i64;
    if (out != storage && !(half_in && out == DType::f32) && !wider_int)
      fail(ErrorCategory::usage, "--out-dtype " + o.out_dtype + " with " +
                                     std::string(dtype_name(dtype)) +
                                     " inputs: C is " + std::string(dtype_name(storage)) +
                                     (half_in ? " or f32" : "") + (dtype == DType::i32 ? ", i64 or exact" : "") +
                                     (dtype == DType::i64 ? " or exact" : "") + " (the kernels write no other)");
  }
  if (exact_out && !is_integer(dtype))
    fail(ErrorCategory::usage, "--out-dtype exact takes integer inputs (--dtype i32 or i64), not " +
                                   std::string(dtype_name(dtype)));
  if (exact_out && output_format(o.c_path, parse_output_format(o.format)) == FileFormat::mtx)
    fail(ErrorCategory::usage, "--out-dtype exact writes .csv (decimal integers) or .npy (uint64 limbs), not " +
                                   quoted_path(o.c_path));
  // Verification checks the product of the inputs as converted; it says so when they were.
  const bool converted = dtype_of_any(a) != storage || dtype_of_any(b) != storage ||
                         (c0 && dtype_of_any(*c0) != out);
  require_multiply_memory(a, b, c0, o.beta, storage, out, {dtype, m, n, k}, verify_mode);
  a = convert_input(a, storage, o.a_path);
  b = convert_input(b, storage, o.b_path);
  AnyMatrix c = c0 ? convert_input(*c0, out, o.c0_path) : zero_matrix(m, n, out);
  // C0 as it was, for verification: only when beta != 0 (else C0 is never read), and the
  // file's own matrix when it already has C's dtype.
  std::optional<AnyMatrix> c_before;
  if (o.beta != 0) c_before = dtype_of_any(*c0) == out ? std::move(*c0) : c;
  c0.reset();
  const void* c_before_data =
      c_before ? std::visit([](const auto& x) -> const void* { return x.data(); }, *c_before) : nullptr;

  Prepared w{std::move(a), std::move(b), std::move(c), std::move(c_before), c_before_data, {},
              dtype, storage, out, converted, exact_out, verify_mode};
  w.p = make_problem(w.a, o.trans_a, w.b, o.trans_b, w.c, o.alpha, o.beta);
  w.p.dtype = dtype;  // tf32: f32 storage that the tensor cores read as tf32
  if (verify_mode == VerifyMode::exact && !integer_valued(w.p, c_before_data))
    fail(ErrorCategory::usage, "--verify exact needs integer-valued inputs (integer dtypes, or float "
                               "data whose entries, alpha and beta are all integers below 2^63); " +
                                   o.a_path + " and " + o.b_path + " are not: use full or freivalds");
  return w;
}

// Verifies, writes C and the report, and prints the summary.
void finish_multiply(const MultiplyOptions& o, const Prepared& w, const Outcome& r) {
  const GemmProblem& p = w.p;
  const DType dtype = w.dtype, storage = w.storage, out = w.out;
  const bool exact_out = w.exact_out, converted = w.converted;
  const std::int64_t m = p.m, n = p.n, k = p.k;
  const std::string& kernel = r.kernel;
  const double seconds = r.seconds;
  const int limb_count = r.limb_count;
  // A kernel that computes in a lower precision than the dtype (cuda_cublas_tf32: tf32 on f32
  // data) is held to the tolerance of the precision it computes in.
  const KernelEntry* entry = gemm_registry().find(kernel);
  const std::optional<DType> accuracy = entry ? entry->accuracy : std::nullopt;
  const bool exact_kernel = entry && entry->exact_integers;  // its integers are exact or an error
  VerifyResult check;
  if (!exact_out) check = verify(p, w.c_before_data, w.verify_mode, 0x5eed, accuracy);
  else if (w.verify_mode != VerifyMode::none) check = verify_limbs(p, w.c_before_data, r.limbs.data(), n, limb_count);
  const std::string of_inputs =
      converted ? " (of the inputs as converted to " + std::string(dtype_name(dtype)) + ")" : "";

  nlohmann::json report = {
      {"a", o.a_path}, {"b", o.b_path}, {"output", o.c_path},
      {"m", m}, {"n", n}, {"k", k}, {"dtype", dtype_name(dtype)},
      {"out_dtype", exact_out ? std::string("exact") : std::string(dtype_name(out))},
      {"trans_a", o.trans_a}, {"trans_b", o.trans_b}, {"alpha", o.alpha}, {"beta", o.beta},
      {"kernel", kernel}, {"seconds", seconds},
      {"gflops", seconds > 0 ? p.flops() / seconds / 1e9 : 0.0},
      {"verify", {{"method", verify_mode_name(check.method)}, {"passed", check.passed},
                  {"check", check.check}, {"guarantee", check.guarantee},
                  {"error", check.error}, {"tolerance", check.tolerance},
                  {"backward_error", std::isnan(check.backward_error) ? nlohmann::json(nullptr)
                                                                      : nlohmann::json(check.backward_error)},
                  {"tolerance_dtype", dtype_name(tolerance_dtype(dtype, accuracy))},
                  {"of_converted_inputs", converted},
                  {"detail", check.detail}}},
  };
  if (!r.distributed.is_null()) report["distributed"] = r.distributed;
  if (!check.passed) {
    // A failed run writes nothing (not even the report): the error line carries the detail.
    // With --verify none only integer overflow is looked for.
    fail(ErrorCategory::numeric,
         (check.method == VerifyMode::none ? "kernel " + kernel + ": "
                                           : "verification (" + check.check + ") failed for kernel " +
                                                 kernel + ": ") +
             check.detail + of_inputs + "; " + quoted_path(o.c_path) + " was not written");
  }
  if (!r.report.section.empty()) {
    nlohmann::json& section = report[r.report.section];
    section["method"] = r.report.method;
    for (const GemmRunReport::Fact& fact : r.report.facts)
      std::visit([&](const auto& value) { section[fact.name] = value; }, fact.value);
  }
  const std::optional<FileFormat> format = parse_output_format(o.format);
  if (exact_out) write_limb_table(o.c_path, LimbTableView{r.limbs.data(), m, n, limb_count}, nullptr, format);
  else if (!r.c_written) write_matrix(o.c_path, w.c, format);
  if (!o.json_path.empty()) write_json(o.json_path, json_document("multiply", report));

  const std::string dtypes = std::string(dtype_name(dtype)) +
                             (exact_out ? " -> exact" : out != storage ? " -> " + std::string(dtype_name(out)) : "");
  std::printf("%s = %s%s x %s%s: %s %s on %s, %.3f ms, %.2f GFLOP/s\n", quoted_path(o.c_path).c_str(),
              quoted_path(o.a_path).c_str(), o.trans_a ? "^T" : "", quoted_path(o.b_path).c_str(), o.trans_b ? "^T" : "",
              p.shape_string().c_str(), dtypes.c_str(), kernel.c_str(), seconds * 1e3,
              report["gflops"].get<double>());
  if (!r.report.section.empty()) std::printf("%s: %s\n", r.report.section.c_str(), r.report.method.c_str());
  if (check.method == VerifyMode::none)
    std::printf("not verified (--verify none)%s\n",
                is_integer(dtype) && !exact_kernel ? "; no entry of the exact product overflows"
                : exact_kernel && !exact_out       ? "; every entry computed exactly (an overflow would have stopped it)"
                                           : "");
  else
    std::printf("verified (%s)%s: %s\n", check.check.c_str(), of_inputs.c_str(), check.guarantee.c_str());
}

#ifdef GEMMKIT_HAVE_MPI
// SUMMA between two barriers: the local kernel and the seconds (the time multiply reports).
std::pair<std::string, double> timed_summa(const MultiplyOptions& o, const dist::DistMatrix& a,
                                           const dist::DistMatrix& b, dist::DistMatrix& c) {
  MPI_Barrier(c.grid().comm());
  const auto start = std::chrono::steady_clock::now();
  dist::SummaOptions options;
  options.kernel = o.kernel;
  std::string kernel = dist::summa(o.alpha, a, b, o.beta, c, options);
  MPI_Barrier(c.grid().comm());
  return {std::move(kernel), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// Rank 0: whether every input is a .npy file that dist::read_npy reads as it is, all of one
// dtype and nothing to convert (no --dtype other than it, no --out-dtype). The rest go through
// rank 0 and scatter.
bool parallel_npy_inputs(const MultiplyOptions& o) {
  std::vector<std::string> paths = {o.a_path, o.b_path};
  if (!o.c0_path.empty()) paths.push_back(o.c0_path);
  std::optional<DType> dtype;
  output_format(o.c_path, parse_output_format(o.format));  // the cheap check first, as the single-process path makes it
  for (const std::string& path : paths) {
    std::error_code error;
    if (format_from_path(path) != FileFormat::npy || !std::filesystem::is_regular_file(path, error)) return false;
    const NpyLayout layout = read_npy_layout(path);
    const bool held = layout.dtype == DType::f64 || layout.dtype == DType::f32 || layout.dtype == DType::i32 ||
                      layout.dtype == DType::i64;
    if (!held || layout.widened || (dtype && *dtype != layout.dtype)) return false;
    dtype = layout.dtype;
  }
  return (o.dtype.empty() || parse_dtype(o.dtype) == dtype) && o.out_dtype.empty();
}

// Every rank reads its own blocks of op(A), op(B) and C0 from the .npy files (dist::read_npy);
// after SUMMA rank 0 gathers C and, to verify it, A and B (and C0). Floats with --verify none
// need none of them on rank 0: then C goes to a .npy file by the parallel write
// (dist::write_npy), and no whole matrix is anywhere.
void multiply_npy_in_parallel(const MultiplyOptions& o, const dist::ProcessGrid& grid) {
  const int rank = grid.rank();
  const std::int64_t nb = o.block;
  VerifyMode verify_mode = VerifyMode::automatic;
  dist::collective(grid.comm(), [&] {
    // The single-process path's checks, on the headers.
    output_format(o.c_path, parse_output_format(o.format));
    verify_mode = parse_verify_mode(o.verify);
    if (rank != 0) return;
    check_outputs({{"-o", o.c_path}, {"--json", o.json_path}},
                  {{"input A", o.a_path}, {"input B", o.b_path}, {"--c", o.c0_path}});
    if (o.beta != 0.0 && o.c0_path.empty())
      fail(ErrorCategory::usage, "--beta needs --c FILE, the matrix C0 in alpha*A*B + beta*C0");
    const NpyLayout a = read_npy_layout(o.a_path), b = read_npy_layout(o.b_path);
    std::optional<Extent> c0;
    if (!o.c0_path.empty()) {
      const NpyLayout c = read_npy_layout(o.c0_path);
      c0 = Extent{c.rows, c.cols};
    }
    product_shape(o, {a.rows, a.cols}, {b.rows, b.cols}, c0);
  });
  const auto start = std::chrono::steady_clock::now();
  const dist::DistMatrix a = dist::read_npy(grid, o.a_path, nb, nb, o.trans_a);
  const dist::DistMatrix b = dist::read_npy(grid, o.b_path, nb, nb, o.trans_b);
  const DType dtype = a.dtype();
  // beta == 0: C0 is never read, so C starts as zeros where it lives.
  dist::DistMatrix c = o.beta != 0 ? dist::read_npy(grid, o.c0_path, nb, nb)
                                   : dist::DistMatrix(grid, dtype, a.rows(), b.cols(), nb, nb);
  const bool operands_to_rank0 = is_integer(dtype) || verify_mode != VerifyMode::none;
  bool write_in_parallel = false;  // to a file (not a stream), as AtomicFile writes one
  if (!operands_to_rank0) {
    if (rank == 0) {
      std::error_code error;
      const auto kind = std::filesystem::status(o.c_path, error).type();
      write_in_parallel = output_format(o.c_path, parse_output_format(o.format)) == FileFormat::npy &&
                          (kind == std::filesystem::file_type::regular || kind == std::filesystem::file_type::not_found);
    }
    MPI_Bcast(&write_in_parallel, 1, MPI_CXX_BOOL, 0, grid.comm());
  }
  std::optional<AnyMatrix> c_before;
  if (o.beta != 0 && operands_to_rank0) c_before = dist::gather(c);
  const auto [local_kernel, summa_seconds] = timed_summa(o, a, b, c);
  Prepared w;
  if (write_in_parallel) dist::write_npy(c, o.c_path);  // committed with the run's other outputs
  else w.c = dist::gather(c);
  const auto end = std::chrono::steady_clock::now();
  if (operands_to_rank0) {
    w.a = dist::gather(a);
    w.b = dist::gather(b);
  }
  dist::collective(grid.comm(), [&] {
    if (rank != 0) return;
    w.dtype = w.storage = w.out = dtype;
    w.verify_mode = verify_mode;
    if (operands_to_rank0) {
      w.p = make_problem(w.a, false, w.b, false, w.c, o.alpha, o.beta);
    } else {
      w.p.dtype = dtype, w.p.m = a.rows(), w.p.n = b.cols(), w.p.k = a.cols();
      w.p.alpha = o.alpha, w.p.beta = o.beta;
      w.p.c = std::visit([](auto& x) -> void* { return x.data(); }, w.c), w.p.ldc = std::max<std::int64_t>(1, b.cols());
    }
    if (c_before) {
      w.c_before = std::move(c_before);
      w.c_before_data = std::visit([](const auto& x) -> const void* { return x.data(); }, *w.c_before);
    }
    if (verify_mode == VerifyMode::exact && !integer_valued(w.p, w.c_before_data))
      fail(ErrorCategory::usage, "--verify exact needs integer-valued inputs (integer dtypes, or float "
                                 "data whose entries, alpha and beta are all integers below 2^63); " +
                                     o.a_path + " and " + o.b_path + " are not: use full or freivalds");
    Outcome r;
    const std::string grid_text = dist::grid_name(grid.shape());
    r.kernel = "summa(" + grid_text + ", block " + std::to_string(nb) + ", " + local_kernel + ")";
    r.seconds = summa_seconds;
    r.c_written = write_in_parallel;
    r.distributed = {{"processes", grid.size()}, {"grid", grid_text}, {"block", nb}, {"backend", "cpu"},
                     {"local_kernel", local_kernel},
                     {"parallel_read", true}, {"parallel_write", write_in_parallel}, {"summa_seconds", r.seconds},
                     {"with_io_seconds", std::chrono::duration<double>(end - start).count()}};
    finish_multiply(o, w, r);
  });
}
#endif

#ifdef GEMMKIT_HAVE_MPI
// --distributed with the Ozaki emulation (--kernel cuda_ozaki_f64 or _f32): its moduli spread
// over one GPU per process (dist::ozaki_gemm); rank 0 reads and checks the inputs, and
// verifies and writes C, as the single-process command does.
void multiply_ozaki_distributed(const MultiplyOptions& o, const dist::ProcessGrid& grid) {
  const int rank = grid.rank();
  std::optional<Prepared> w;
  dist::collective(grid.comm(), [&] {
    if (rank != 0) return;
    w = prepare_multiply(o);
    if (!spreads_moduli(o.kernel)->supports(w->p.dtype))
      fail(ErrorCategory::usage, "kernel " + o.kernel + " does not take dtype " + std::string(dtype_name(w->p.dtype)));
  });
  const dist::GpuGrid gpus(grid);
  MPI_Barrier(grid.comm());
  const auto start = std::chrono::steady_clock::now();
  const OzakiPlan plan = dist::ozaki_gemm(gpus, w ? &w->p : nullptr, o.moduli);
  MPI_Barrier(grid.comm());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  dist::collective(grid.comm(), [&] {
    if (rank != 0) return;
    Outcome r;
    r.report = plan.report();
    r.kernel = o.kernel + " (moduli over " + std::to_string(grid.size()) + " processes)";
    r.seconds = seconds;
    const std::vector<int> first = ozaki_moduli_by_rank(plan.moduli, grid.size());
    r.distributed = {{"processes", grid.size()}, {"backend", "cuda"}, {"spread", "moduli"},
                     {"moduli_first_by_rank", first}, {"seconds", seconds}};
    finish_multiply(o, *w, r);
  });
}
#endif

// --distributed: every process of `mpirun -np P gemmkit multiply ... --distributed` runs this.
// .npy inputs that need no conversion are read in parallel (multiply_npy_in_parallel); others:
// rank 0 reads and checks the inputs as the single-process path does, scatters op(A), op(B)
// and C0 over the grid, gathers C after SUMMA, then verifies and writes it as that path does.
// Each step is collective (dist::collective): an error on any rank ends every rank, reported
// once by rank 0 as "rank R: ...".
void run_multiply_distributed([[maybe_unused]] const MultiplyOptions& o) {  // unused without MPI
  run_as_mpi_process([&] {
#ifdef GEMMKIT_HAVE_MPI
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::optional<dist::GridShape> shape;
    bool on_gpu = false;  // --backend cuda: blocks in device memory, panels over NCCL
    dist::collective(MPI_COMM_WORLD, [&] {
      on_gpu = parse_backend(o.backend) == Backend::cuda;
      if (!o.grid.empty()) shape = dist::parse_grid(o.grid);
      if (o.block < 1) fail(ErrorCategory::usage, "--block must be at least 1, not " + std::to_string(o.block));
      if (spreads_moduli(o.kernel) && parse_backend(o.backend) == Backend::cpu)
        fail(ErrorCategory::usage, "kernel " + o.kernel + " runs on the cuda backend, not --backend cpu");
      if (o.moduli != 0 && !spreads_moduli(o.kernel)) {  // SUMMA's local kernels take none
        GemmOptions asked;
        asked.moduli = o.moduli;
        const KernelEntry* named = gemm_registry().find(o.kernel);
        const auto why = named ? kernel_options_refusal(*named, asked, GemmProblem{})
                               : auto_options_refusal(parse_backend(o.backend).value_or(Backend::cpu), asked);
        fail(ErrorCategory::usage, why.value_or("--moduli is not taken by --kernel " + o.kernel));
      }
      if (spreads_moduli(o.kernel) && shape)
        fail(ErrorCategory::usage, "--grid is for SUMMA's blocks; kernel " + o.kernel +
                                       " spreads its moduli over all the processes");
    });
    const dist::ProcessGrid grid(MPI_COMM_WORLD, shape);
    if (spreads_moduli(o.kernel)) return multiply_ozaki_distributed(o, grid);
    // .npy inputs of one dtype a host distributed matrix holds: read in parallel (CPU backend).
    bool parallel = false;
    dist::collective(grid.comm(), [&] {
      if (rank == 0 && !on_gpu) parallel = parallel_npy_inputs(o);
    });
    MPI_Bcast(&parallel, 1, MPI_CXX_BOOL, 0, grid.comm());
    if (parallel) return multiply_npy_in_parallel(o, grid);
    std::optional<Prepared> w;
    dist::collective(grid.comm(), [&] {
      if (rank != 0) return;
      w = prepare_multiply(o);
      const bool half = w->dtype == DType::f16 || w->dtype == DType::bf16;
      if (w->exact_out || (w->out != w->storage && !(on_gpu && half && w->out == DType::f32)))
        fail(ErrorCategory::usage, "--distributed writes C in the inputs' dtype, or f32 for f16 and bf16 with "
                                   "--backend cuda (no --out-dtype " + o.out_dtype + ")");
      if (on_gpu ? (!half && w->dtype != DType::f64 && w->dtype != DType::f32)
                 : (w->dtype != DType::f64 && w->dtype != DType::f32 && !is_integer(w->dtype)))
        fail(ErrorCategory::usage, std::string("--distributed multiplies ") +
                                       (on_gpu ? "f64, f32, f16 or bf16 with --backend cuda" : "f64, f32, i32 or i64") +
                                       ", not " + std::string(dtype_name(w->dtype)));
    });
    int out_dtype = w ? int(w->out) : 0;  // C's dtype, which rank 0 knows
    MPI_Bcast(&out_dtype, 1, MPI_INT, 0, grid.comm());
    std::optional<dist::GpuGrid> gpus;
    if (on_gpu) gpus.emplace(grid);
    const auto scatter = [&](const AnyMatrix* whole, bool transpose) {
      return gpus ? dist::scatter(*gpus, whole, o.block, o.block, transpose)
                  : dist::scatter(grid, whole, o.block, o.block, transpose);
    };
    const std::int64_t nb = o.block;
    const auto start = std::chrono::steady_clock::now();
    const dist::DistMatrix a = scatter(w ? &w->a : nullptr, o.trans_a);
    const dist::DistMatrix b = scatter(w ? &w->b : nullptr, o.trans_b);
    // beta == 0: C0 is never read, so C starts as zeros where it lives.
    const auto c_dtype = static_cast<DType>(out_dtype);
    dist::DistMatrix c = o.beta != 0 ? scatter(w ? &w->c : nullptr, false)
                         : gpus      ? dist::DistMatrix(*gpus, c_dtype, a.rows(), b.cols(), nb, nb)
                                     : dist::DistMatrix(grid, c_dtype, a.rows(), b.cols(), nb, nb);
    const auto [local_kernel, summa_seconds] = timed_summa(o, a, b, c);
    AnyMatrix whole = dist::gather(c);
    const auto end = std::chrono::steady_clock::now();
    dist::collective(grid.comm(), [&] {
      if (rank != 0) return;
      w->c = std::move(whole);
      w->p.c = std::visit([](auto& x) -> void* { return x.data(); }, w->c);
      Outcome r;
      const std::string grid_text = dist::grid_name(grid.shape());
      r.kernel = "summa(" + grid_text + ", block " + std::to_string(nb) + ", " + local_kernel + ")";
      r.seconds = summa_seconds;
      r.distributed = {{"processes", size}, {"grid", grid_text}, {"block", nb},
                       {"backend", on_gpu ? "cuda" : "cpu"}, {"local_kernel", local_kernel},
                       {"summa_seconds", r.seconds},
                       {"parallel_read", false}, {"parallel_write", false},
                       {"with_scatter_gather_seconds", std::chrono::duration<double>(end - start).count()}};
      finish_multiply(o, *w, r);
    });
#endif
  });
}
void run_multiply(const MultiplyOptions& o) {
  if (o.distributed) return run_multiply_distributed(o);
  Prepared w = prepare_multiply(o);
  GemmProblem& p = w.p;
  const std::optional<Backend> backend = parse_backend(o.backend);
  const std::int64_t m = p.m, n = p.n;
  GemmOptions options;
  options.backend = backend;
  options.kernel = o.kernel;
  options.moduli = o.moduli;  // the library refuses them to a kernel that takes none
  Outcome r;
  if (w.exact_out) {  // the exact product as limbs instead of C
    r.limb_count = exact_output_limbs(p);
    r.limbs.assign(std::size_t(m * n * r.limb_count), 0);
    options.limbs = {r.limbs.data(), n, r.limb_count};
  }
  const auto start = std::chrono::steady_clock::now();
  GemmRun ran = gemm_with_report(p, options);
  r.kernel = std::move(ran.kernel);
  r.report = std::move(ran.report);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  finish_multiply(o, w, r);
}

}  // namespace

void add_multiply(CLI::App& app) {
  auto o = std::make_shared<MultiplyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "multiply", "C = alpha * op(A) * op(B) + beta * C0, verified against the exact product");
  cmd->add_option("A", o->a_path, "Left operand (.npy, .mtx, .csv, .txt)")->required();
  cmd->add_option("B", o->b_path, "Right operand")->required();
  cmd->add_option("-o,--output", o->c_path, "Result file; written only if the run succeeds")
      ->required();
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernel", o->kernel, "Kernel name (see 'gemmkit list') or auto")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "Compute dtype: f64, f32, tf32, f16, bf16, i32, i64 (default: the inputs' "
                  "common dtype); inputs are converted to it, rounding to nearest");
  cmd->add_option("--out-dtype", o->out_dtype,
                  "dtype of C: the compute dtype (default; tf32 writes f32), f32 for f16 and "
                  "bf16 (their FP32 sums unrounded), i64 for i32 (exact), or exact for i32 "
                  "and i64: big integers as a .csv of decimal integers or a .npy of uint64 "
                  "limbs shaped (rows, cols, limbs) (GPU)");
  cmd->add_flag("--transpose-a", o->trans_a, "Use A^T");
  cmd->add_flag("--transpose-b", o->trans_b, "Use B^T");
  cmd->add_option("--alpha", o->alpha, "Scale of the product")->capture_default_str();
  cmd->add_option("--beta", o->beta, "Scale of C0 (needs --c)")->capture_default_str();
  cmd->add_option("--c", o->c0_path, "C0, the matrix added as beta * C0");
  cmd->add_option("--verify", o->verify,
                  "auto (full up to 2e9 multiply-adds, else exact for integer data, else "
                  "freivalds), full, freivalds, exact (integer-valued inputs) or none; integer "
                  "overflow is reported even with none; Inf and NaN are checked as IEEE arithmetic "
                  "gives them")
      ->capture_default_str();
  add_json_option(cmd, o->json_path, "Also write the run's details as JSON");
  add_output_format_option(cmd, o->format);
  CLI::Option* distributed = cmd->add_flag(
      "--distributed", o->distributed,
      "Be one of the processes of 'mpirun -np P gemmkit multiply ... --distributed' (a build with "
      "MPI): rank 0 reads A, B and C0 and scatters them block-cyclically over a process grid, SUMMA "
      "multiplies them on the CPU backend (--backend cuda: on one GPU per process, panels over NCCL; "
      "a build with NCCL), rank 0 gathers, verifies and writes C; .npy inputs are read in parallel "
      "on the CPU backend; with --kernel cuda_ozaki_f64 or _f32, the emulation's moduli are spread "
      "over one GPU per process instead; an error on any rank ends them all (docs/distributed.md)");
  add_grid_options(cmd, distributed, o->grid, o->block);
  cmd->add_option("--moduli", o->moduli,
                  "Int8 primes of the Ozaki emulation (--kernel cuda_ozaki_f64 or cuda_ozaki_f32), 2 to 53: "
                  "more are more accurate, fewer faster; 0 (default) takes as many as keep native "
                  "accuracy for these operands (docs/exact.md)")
      ->capture_default_str();
  cmd->callback([o] {
    run_multiply(*o);
  });
}

}  // namespace gemmkit::cli
