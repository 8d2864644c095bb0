#include "master/live/frames_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/base/error.h"

namespace tessera::master::live {

FramesLog::FramesLog(const std::filesystem::path& path) : file_(std::fopen(path.c_str(), "w")) {
  if (!file_) throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
  std::fputs("unix_ms,connection,frame,pose_id,samples,latency_ms\n", file_);
  std::fflush(file_);
}

FramesLog::~FramesLog() {
  if (file_) std::fclose(file_);
}

void FramesLog::add(unsigned connection, uint64_t frame, uint64_t pose_id, uint32_t samples, std::optional<double> latency_ms) {
  const double unix_ms =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::fprintf(file_, "%.1f,%u,%llu,%llu,%u,", unix_ms, connection, (unsigned long long)frame, (unsigned long long)pose_id,
               samples);
  if (latency_ms) std::fprintf(file_, "%.2f", *latency_ms);
  std::fputc('\n', file_);
  std::fflush(file_);
}

}  // namespace tessera::master::live
