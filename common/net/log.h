#pragma once
// Timestamped log lines on stderr for the daemons and the cluster ("12:04:05.123 tessera-worker:
// ..."), whole lines at a time, safe from any thread.
#include <chrono>
#include <mutex>
#include <string>

namespace tessera::net {

void set_log_program(const std::string& name);  // once, at start-up
void set_log_quiet(bool quiet);                 // drops info lines, keeps warnings
void log_info(const std::string& message);
void log_warning(const std::string& message);

// A token bucket for lines that peers can cause (connections, refusals, their errors): at most
// `burst` lines at once and `per_second` on average; the lines dropped are counted, and the next
// line let through says how many were left out. Safe from any thread.
class LogBudget {
 public:
  LogBudget(double per_second, double burst) : per_second_(per_second), burst_(burst), tokens_(burst) {}
  void info(const std::string& message) { emit(message, false); }
  void warning(const std::string& message) { emit(message, true); }
  uint64_t dropped() const;  // lines left out so far

 private:
  using Clock = std::chrono::steady_clock;
  void emit(const std::string& message, bool warning);
  const double per_second_, burst_;
  mutable std::mutex mutex_;
  double tokens_;
  Clock::time_point last_ = Clock::now();
  uint64_t dropped_since_last_ = 0, dropped_total_ = 0;
};

}  // namespace tessera::net
