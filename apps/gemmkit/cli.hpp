// Shared pieces of the gemmkit subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gemmkit/gemm.hpp"

namespace gemmkit::cli {

// Each subcommand adds itself to the app; its callback throws gemmkit::Error on failure.
void add_multiply(CLI::App& app);
void add_gen(CLI::App& app);
void add_bench(CLI::App& app);
void add_list(CLI::App& app);
void add_device(CLI::App& app);
void add_walks(CLI::App& app);
void add_reduce(CLI::App& app);
void add_spmv(CLI::App& app);
void add_conv1d(CLI::App& app);

// "--backend auto|cpu|cuda": nullopt for auto.
std::optional<Backend> parse_backend(const std::string& text);
inline constexpr const char* kBackendHelp =
    "auto (the CUDA device when there is one), cpu or cuda";

// Writes JSON to `path` through a temporary file renamed on success.
void write_json(const std::string& path, const nlohmann::json& value);

// True when stderr is a terminal: long work then shows progress there.
bool progress_wanted();

// Where and when a result was made: gemmkit version, commit, date, host, CPU, GPU.
nlohmann::json environment_json();

}  // namespace gemmkit::cli
