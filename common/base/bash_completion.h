#pragma once
// Bash completion generated from a program's CLI11 definition, so it lists exactly the options the
// program takes: option names (per subcommand), the choices of options checked with CLI::IsMember,
// file names for other values and for positional arguments. Plain bash (compgen), no
// bash-completion helpers needed.
#include <CLI/CLI.hpp>
#include <string>

namespace tessera::cli {

std::string bash_completion(const CLI::App& app);

}  // namespace tessera::cli
