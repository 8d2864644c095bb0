#pragma once
// Small helpers shared by the test files: paths, temporary folders, running programs.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <sys/wait.h>

namespace tessera::testing {

// The shared scenes: $TESSERA_SHARED_DIR when set (read at run time, as ./tessera and tessera-pack do),
// else the checkout's ../shared (fixed when the tests were configured).
inline std::filesystem::path shared_dir() {
  if (const char* dir = std::getenv("TESSERA_SHARED_DIR"); dir && *dir) return dir;
  return TESSERA_SHARED_DIR;
}
inline std::filesystem::path source_dir() { return TESSERA_SOURCE_DIR; }
inline std::filesystem::path binary_dir() { return TESSERA_BINARY_DIR; }
inline std::filesystem::path scene_path(const std::string& relative) { return shared_dir() / "scenes" / relative; }

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh, empty folder removed again when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("tessera_" + name + "_" + std::to_string(rd()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A path as one word of a shell command line (test paths hold no single quote).
inline std::string shell_word(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line, capturing its combined output.
inline CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  std::FILE* pipe = ::popen((command_line + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, got);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Runs a shell command line with standard output and standard error kept apart.
struct SplitResult {
  int exit_code = -1;
  std::string out, err;
};
inline SplitResult run_command_split(const std::string& command_line) {
  TempDir dir("run");
  const auto out = dir / "stdout", err = dir / "stderr";
  const int status = std::system((command_line + " >'" + out.string() + "' 2>'" + err.string() + "' </dev/null").c_str());
  auto read = [](const std::filesystem::path& path) {
    std::string text;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      char buffer[4096];
      size_t got;
      while ((got = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, got);
      std::fclose(f);
    }
    return text;
  };
  SplitResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read(out);
  result.err = read(err);
  return result;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

}  // namespace tessera::testing
