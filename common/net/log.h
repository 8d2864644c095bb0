#pragma once
// Timestamped log lines on stderr for the daemons and the cluster ("12:04:05.123 tessera-worker:
// ..."), whole lines at a time, safe from any thread.
#include <string>

namespace tessera::net {

void set_log_program(const std::string& name);  // once, at start-up
void set_log_quiet(bool quiet);                 // drops info lines, keeps warnings
void log_info(const std::string& message);
void log_warning(const std::string& message);

}  // namespace tessera::net
