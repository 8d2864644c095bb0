// The command-line convention (docs/conventions.md) for every program the build makes
// (build/programs.txt, written by CMake from the tessera-* executable targets) and every script
// (the executables in deploy/ and ./tessera): --help exits 0 and prints usage on stdout, an unknown
// option and a bad value exit 2 with one error line on stderr. Also --version and the generated bash
// completions and man pages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "common/base/version.h"
#include "test_helpers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::run_command_split;
using testing::SplitResult;

using testing::shell_word;

std::vector<fs::path> built_programs() {
  std::vector<fs::path> programs;
  std::ifstream list(testing::binary_dir() / "programs.txt");
  for (std::string line; std::getline(list, line);)
    if (!line.empty()) programs.push_back(line);
  return programs;
}

std::vector<fs::path> scripts() {
  std::vector<fs::path> found{testing::source_dir() / "tessera"};
  for (const auto& entry : fs::directory_iterator(testing::source_dir() / "deploy"))
    if (entry.is_regular_file() && (entry.status().permissions() & fs::perms::owner_exec) != fs::perms::none)
      found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

// Arguments with one bad value each, found by the program's own checks before it touches any file,
// device or network. A program or script without an entry fails the test: add one.
// std::nullopt: takes no option with a value.
const std::map<std::string, std::optional<std::string>>& bad_values() {
  static const std::map<std::string, std::optional<std::string>> table{
      {"tessera-pack", "in.obj -o out.tpk --replicate 0,1,1"},
      {"tessera-render", "scene.tpk -o out.png --size 12"},
      {"tessera-bench", "rays scene.tpk --local 3"},
      {"tessera-worker", "--scenes /nonexistent --secret-file /nonexistent --max-scene-size 12Q"},
      {"tessera-master", "--workers 127.0.0.1:1 --scene x.tpk --secret-file /nonexistent --size 12"},
      {"tessera-compare", "a.png b.png --threshold 300"},
      {"tessera-live-client", "https://127.0.0.1:1/?token=x --rate 0"},
      {"tessera-jpeg-bench", "--threads 0"},
      {"tessera-video-bench", "--codecs h265"},
      {"tessera-netem-relay", "--route 127.0.0.1:0=127.0.0.1:1 --delay 5parsecs"},
      {"tessera", "live --port many"},
      {"android", "status --port 0"},
      {"bench-cluster", "--workers many"},
      {"bench-latency", "--spp 0"},
      {"bench-rays", "--settings"},
      {"cluster-bench", "--workers many"},
      {"cross-arm64", "test --jobs 0"},
      {"hosts", "status"},
      {"kernel-sass", "x.clbin --arch 90"},
      {"live-bench", "x.tpk --workers many"},
      {"local-cluster", "start many"},
      {"make-animated-scene", "--output x.gltf --count -1"},
      {"make-bundle", "--programs 'not a list' out"},
      {"scale-bench", "--workers many"},
      {"soak", "--duration banana"},
  };
  return table;
}

// The name in a command's error lines: deploy/cluster-bench is deploy/bench-cluster under its former name.
std::string error_name(const std::string& name) { return name == "cluster-bench" ? "bench-cluster" : name; }

// A usage error: status 2, nothing on stdout, exactly one line on stderr naming the command.
void expect_usage_error(const SplitResult& r, const std::string& name, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << name << " " << what << ": " << r.err;
  EXPECT_EQ(r.out, "") << name << " " << what;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << " " << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind(error_name(name) + ": error: ", 0), 0u) << name << " " << what << ": " << r.err;
}

void check_conventions(const fs::path& command) {
  const std::string name = command.filename().string();
  const SplitResult help = run_command_split(shell_word(command) + " --help");
  EXPECT_EQ(help.exit_code, 0) << name << " --help: " << help.err;
  EXPECT_EQ(help.err, "") << name << " --help";
  EXPECT_GT(help.out.size(), 40u) << name << " --help prints no usage";
  EXPECT_EQ(help.out.find("set -euo"), std::string::npos) << name << " --help prints script code";

  expect_usage_error(run_command_split(shell_word(command) + " --no-such-option"), name, "--no-such-option");

  const auto bad = bad_values().find(name);
  ASSERT_NE(bad, bad_values().end()) << name << " has no bad-value case in tests/test_cli_conventions.cpp";
  if (bad->second) expect_usage_error(run_command_split(shell_word(command) + " " + *bad->second), name, *bad->second);
}

TEST(CliConventions, EveryProgram) {
  const auto programs = built_programs();
  ASSERT_GE(programs.size(), 7u) << "programs.txt lists too few programs";
  for (const auto& program : programs) {
    check_conventions(program);
    // the unknown option is what the line names, even where a required argument is missing too
    const SplitResult r = run_command_split(shell_word(program) + " --no-such-option");
    EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << program << ": " << r.err;
  }
  // a message quoting a huge input (a data URI, a path) stays one readable line
  const SplitResult r = run_command_split(shell_word(testing::binary_dir() / "tessera-pack") + " " + std::string(3000, 'x') +
                                          ".obj -o out.tpk");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(r.err.size(), 600u) << r.err;
  EXPECT_NE(r.err.find("more characters)"), std::string::npos) << r.err;
}

TEST(CliConventions, EveryScript) {
  const auto all = scripts();
  ASSERT_GE(all.size(), 9u);
  testing::TempDir state("cli_state");  // local-cluster: a state folder of its own, never a running cluster's
  testing::ScopedEnv cluster_state("TESSERA_CLUSTER_STATE", state.path().string());
  for (const auto& script : all) check_conventions(script);
}

TEST(CliConventions, VersionNamesTheBuild) {
  for (const auto& program : built_programs()) {
    const SplitResult r = run_command_split(shell_word(program) + " --version");
    EXPECT_EQ(r.exit_code, 0) << program;
    EXPECT_EQ(r.out, program.filename().string() + " " + build_description() + "\n");
  }
  const BuildInfo& b = build_info();
  EXPECT_FALSE(b.version.empty());
  EXPECT_FALSE(b.commit.empty());
  EXPECT_NE(b.opencl_headers, "unknown");
  EXPECT_EQ(b.opencl_target, "1.2");
  // The sources are a git checkout here: the commit is its HEAD (12 hex digits, "-dirty" with changes).
  const auto head = testing::run_command("git -C " + shell_word(testing::source_dir()) + " rev-parse --short=12 HEAD");
  if (head.exit_code == 0) {
    EXPECT_EQ(b.commit.substr(0, 12), head.output.substr(0, 12));
  }
}

// Completion as bash would ask for it: COMP_WORDS and COMP_CWORD set, the function called.
std::string complete(const fs::path& completion, const std::string& program, const std::string& words) {
  const std::string script = "source " + shell_word(completion) + "; COMP_WORDS=(" + program + " " + words +
                             "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
                             "f=$(complete -p " + program + " | sed 's/.* -F \\([^ ]*\\) .*/\\1/'); $f; "
                             "printf '%s\\n' \"${COMPREPLY[@]}\"";
  testing::TempDir dir("complete");
  testing::write_text(dir / "c.sh", script);
  return testing::run_command("cd " + shell_word(dir.path()) + " && bash c.sh").output;
}

TEST(CliConventions, GeneratedBashCompletion) {
  const fs::path dir = testing::binary_dir() / "completions";
  for (const auto& program : built_programs()) EXPECT_TRUE(fs::exists(dir / program.filename())) << program;
  const fs::path render = dir / "tessera-render";
  EXPECT_NE(complete(render, "tessera-render", "--max-d").find("--max-depth\n"), std::string::npos);
  EXPECT_EQ(complete(render, "tessera-render", "--mode p"), "pathtrace\n");
  EXPECT_NE(complete(render, "tessera-render", "--").find("--version\n"), std::string::npos);
  const fs::path bench = dir / "tessera-bench";
  EXPECT_EQ(complete(bench, "tessera-bench", "r"), "rays\n");
  const std::string rays = complete(bench, "tessera-bench", "rays --");
  EXPECT_NE(rays.find("--embree-threads\n"), std::string::npos) << rays;
  EXPECT_EQ(rays.find("--grids\n"), std::string::npos) << "an option of vct offered for rays";
}

TEST(CliConventions, ManPages) {
  if (testing::run_command("command -v help2man").exit_code != 0) GTEST_SKIP() << "help2man not installed";
  for (const auto& program : built_programs()) {
    const fs::path page = testing::binary_dir() / "man" / (program.filename().string() + ".1.gz");
    ASSERT_TRUE(fs::exists(page)) << page;
    const auto text = testing::run_command("zcat " + shell_word(page));
    ASSERT_EQ(text.exit_code, 0) << text.output;
    EXPECT_NE(text.output.find(".SH OPTIONS"), std::string::npos) << page;
    EXPECT_NE(text.output.find(build_info().version), std::string::npos) << page;
  }
}

}  // namespace
}  // namespace tessera
