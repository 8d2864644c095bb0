#include "common/base/cli.h"

#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/base/bash_completion.h"
#include "common/base/error.h"
#include "common/base/version.h"

namespace tessera::cli {

void print_error(const std::string& program, const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  while (!line.empty() && line.back() == ' ') line.pop_back();
  // Messages can quote what they refused (a data URI, a line of a file): a line stays readable.
  if (line.size() > kMaxErrorLine) {
    const size_t cut = line.size() - kMaxErrorLine;
    line = line.substr(0, kMaxErrorLine) + "... (" + std::to_string(cut) + " more characters)";
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", program.c_str(), line.c_str());
}

std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  app.set_version_flag("--version", version_line(app.get_name()), "Print version, git commit, build type and OpenCL headers");
  if (argc == 2 && std::strcmp(argv[1], "--print-bash-completion") == 0) {
    std::cout << bash_completion(app);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // CLI11 checks required arguments before unknown ones; the unknown one is the real mistake
    // ("tessera-pack --bogus" is not a missing input)
    const std::vector<std::string> unknown = app.remaining();
    std::string message = e.what();
    if (!unknown.empty()) message = "The following argument was not expected: " + unknown.front();
    print_error(app.get_name(), message + " (see --help)");
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    print_error(app.get_name(), std::string(e.what()) + " (see --help)");
    return kExitUsage;
  }
  return std::nullopt;
}

int fail(const CLI::App& app, const std::exception& error) {
  print_error(app.get_name(), error.what());
  return dynamic_cast<const UsageError*>(&error) ? kExitUsage : kExitRuntimeError;
}

}  // namespace tessera::cli
