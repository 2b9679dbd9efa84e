// gemmkit gen ROWS COLS -o FILE: a seeded random matrix, or with --kind one of the
// deterministic exercise matrices (Pascal, sine/cosine, identity, ...).
#include <cstdio>

#include "cli.hpp"
#include "gemmkit/generate.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/random.hpp"

namespace gemmkit::cli {

void add_gen(CLI::App& app) {
  struct Options {
    std::int64_t rows = 0, cols = 0;
    std::string output, dist, dtype = "f32", kind = "random", format;
    std::uint64_t seed = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("gen", "Write a seeded random matrix, or an exercise matrix (--kind)");
  std::string kinds_help = "What to write (default random):";
  for (const MatrixKindInfo& k : matrix_kinds())
    kinds_help += "\n  " + std::string(k.name) + ": " + std::string(k.formula);
  kinds_help += "\n(i, j are 0-based row and column. Integer kinds are written exactly or refused, "
                "naming the first entry the dtype cannot hold)";
  cmd->add_option("rows", opt->rows, "Number of rows (at least 1)")->required();
  cmd->add_option("cols", opt->cols, "Number of columns (at least 1)")->required();
  cmd->add_option("-o,--output", opt->output, "Output file (.npy, .mtx, .csv, .txt)")->required();
  cmd->add_option("--dist", opt->dist,
                  "uniform ([-1,1)), uniform:LO:HI, normal, normal:MEAN:STD or ints:LO:HI "
                  "(default: uniform, or ints:-9:9 for integer dtypes)");
  cmd->add_option("--seed", opt->seed, "Random seed, 0 to 2^64 - 1; the same seed gives the same matrix")
      ->capture_default_str()
      ->check(non_negative_integer());
  cmd->add_option("--kind", opt->kind, kinds_help)->capture_default_str();
  cmd->add_option("--dtype", opt->dtype,
                  "f32, f64, f16, bf16, i32 or i64 (f16/bf16: drawn in double, rounded once; "
                  ".npy keeps them as <f2 and bfloat16, text formats as decimals)")
      ->capture_default_str();
  add_output_format_option(cmd, opt->format);
  cmd->callback([opt, cmd] {
    if (opt->rows < 1 || opt->cols < 1)
      fail(ErrorCategory::usage, "gen: ROWS and COLS must be at least 1, not " +
                                     std::to_string(opt->rows) + " and " + std::to_string(opt->cols));
    const auto dtype = parse_dtype(opt->dtype);
    if (!dtype) fail(ErrorCategory::usage, "unknown dtype '" + opt->dtype + "'");
    const std::optional<MatrixKind> kind = parse_matrix_kind(opt->kind);
    if (!kind) fail(ErrorCategory::usage, "gen: unknown --kind '" + opt->kind + "' (see gemmkit gen --help)");
    const std::optional<FileFormat> format = parse_output_format(opt->format);
    output_format(opt->output, format);  // reject an unknown extension before any work
    check_outputs({{"-o", opt->output}});
    if (*kind != MatrixKind::random) {
      for (const char* flag : {"--dist", "--seed"})
        if (cmd->count(flag) > 0)
          fail(ErrorCategory::usage, std::string("gen: ") + flag + " applies to --kind random only, not " +
                                         opt->kind);
      const AnyMatrix m = generate_matrix(*kind, opt->rows, opt->cols, *dtype);
      write_matrix(opt->output, m, format);
      std::printf("wrote %s: %lld x %lld %s, %s (entry (i, j) = %s)\n", quoted_path(opt->output).c_str(),
                  static_cast<long long>(opt->rows), static_cast<long long>(opt->cols),
                  std::string(dtype_name(*dtype)).c_str(), opt->kind.c_str(),
                  std::string(matrix_kind_info(*kind).formula).c_str());
      return;
    }
    const std::string dist_text =
        !opt->dist.empty() ? opt->dist : is_integer(*dtype) ? "ints:-9:9" : "uniform";
    const Distribution dist = Distribution::parse(dist_text);
    checked_element_count(opt->rows, opt->cols, "gen");
    const AnyMatrix m = random_matrix(opt->rows, opt->cols, *dtype, dist, opt->seed);
    write_matrix(opt->output, m, format);
    std::printf("wrote %s: %lld x %lld %s, %s, seed %llu\n", quoted_path(opt->output).c_str(),
                static_cast<long long>(opt->rows), static_cast<long long>(opt->cols),
                std::string(dtype_name(*dtype)).c_str(), dist.to_string().c_str(),
                static_cast<unsigned long long>(opt->seed));
  });
}

}  // namespace gemmkit::cli
