#include "common/net/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace tessera::net {
namespace {

std::mutex log_mutex;
std::string program = "tessera";
std::atomic<bool> quiet{false};

void emit(const char* level, const std::string& message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const int millis = int(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
  std::lock_guard lock(log_mutex);
  std::fprintf(stderr, "%s.%03d %s: %s%s\n", stamp, millis, program.c_str(), level, message.c_str());
  std::fflush(stderr);
}

}  // namespace

void set_log_program(const std::string& name) {
  std::lock_guard lock(log_mutex);
  program = name;
}
void set_log_quiet(bool q) { quiet = q; }
void log_info(const std::string& message) {
  if (!quiet) emit("", message);
}
void log_warning(const std::string& message) { emit("warning: ", message); }

}  // namespace tessera::net
