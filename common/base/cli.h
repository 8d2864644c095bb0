#pragma once
// The command-line convention every Tessera program follows:
//   --help and --version print to standard output and exit 0;
//   a usage error (unknown option, missing or bad value, options that do not go together) prints one
//   line "PROGRAM: error: ..." and exits 2;
//   a runtime error (a file, a device, the network) prints one such line and exits 1.
// Programs call parse() instead of CLI::App::parse and end their main with
//   catch (const std::exception& e) { return cli::fail(app, e); }
// and throw UsageError (common/base/usage_error.h) for bad option values they find after parsing.
#include <CLI/CLI.hpp>
#include <exception>
#include <optional>
#include <string>

#include "common/base/usage_error.h"

namespace tessera::cli {

inline constexpr int kExitRuntimeError = 1;
inline constexpr int kExitUsage = 2;

// Adds --version to `app` and parses the command line. Returns the exit status when the program is
// done (help or version printed: 0; usage error printed: 2), nothing when it should go on.
// `PROGRAM --print-bash-completion` prints the program's bash completion script (used by the build).
std::optional<int> parse(CLI::App& app, int argc, char** argv);

// Prints `error` as one line and returns its exit status: 2 for a UsageError, 1 for anything else.
int fail(const CLI::App& app, const std::exception& error);

// Runs `parse` on an option's text: whatever it throws becomes a UsageError (exit 2). For parsers
// that also read files or the network, where the same mistake is a runtime error.
template <class Parse>
auto option_value(Parse&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

// The one error line: "PROGRAM: error: MESSAGE", line breaks of MESSAGE turned into spaces and
// anything past kMaxErrorLine characters left out (saying how much).
inline constexpr size_t kMaxErrorLine = 400;
void print_error(const std::string& program, const std::string& message);

}  // namespace tessera::cli
