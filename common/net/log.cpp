#include "common/net/log.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "common/net/peer_text.h"

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
  {
    std::lock_guard lock(log_mutex);
    program = name;
  }
  // libprotobuf reports some malformed input itself (a string field that is not UTF-8): a peer
  // could fill the log with such lines, so they go through a budget, escaped, like peer text.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char*, int, const std::string& message) {
    static LogBudget budget(1, 10);
    if (level >= google::protobuf::LOGLEVEL_WARNING) budget.warning("protobuf: " + printable_peer_text(message, 300));
  });
}
void set_log_quiet(bool q) { quiet = q; }
void log_info(const std::string& message) {
  if (!quiet) emit("", message);
}
void log_warning(const std::string& message) { emit("warning: ", message); }

}  // namespace tessera::net

namespace tessera::net {

void LogBudget::emit(const std::string& message, bool warning) {
  uint64_t left_out = 0;
  {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * per_second_);
    last_ = now;
    if (tokens_ < 1) {
      ++dropped_since_last_;
      ++dropped_total_;
      return;
    }
    tokens_ -= 1;
    left_out = dropped_since_last_;
    dropped_since_last_ = 0;
  }
  const std::string line = left_out ? message + " (" + std::to_string(left_out) + " similar lines left out)" : message;
  warning ? log_warning(line) : log_info(line);
}

uint64_t LogBudget::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_total_;
}

}  // namespace tessera::net
