#include "master/output/frame_writer.h"

#include <cstdio>

#include "common/base/error.h"
#include "common/image/png_io.h"
#include "master/frame/ownership_overlay.h"

namespace tessera::master {

FrameWriter::FrameWriter(std::filesystem::path dir, bool overlay, size_t max_queued)
    : dir_(std::move(dir)), overlay_(overlay), max_queued_(std::max<size_t>(1, max_queued)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (!std::filesystem::is_directory(dir_)) throw Error("cannot create the output folder " + dir_.string());
  thread_ = std::thread([this] { run(); });
}

FrameWriter::~FrameWriter() {
  try {
    finish();
  } catch (...) {
  }
}

std::string FrameWriter::frame_name(size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06zu.png", index);
  return name;
}

std::string FrameWriter::overlay_name(size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "overlay_%06zu.png", index);
  return name;
}

void FrameWriter::push(FinishedFrame frame) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < max_queued_ || !failure_.empty() || stopping_; });
  if (!failure_.empty()) throw Error(failure_);
  if (stopping_) throw Error("frame writer already finished");
  queue_.push_back(std::move(frame));
  changed_.notify_all();
}

void FrameWriter::finish() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (!failure_.empty()) throw Error(failure_);
}

size_t FrameWriter::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void FrameWriter::run() {
  for (;;) {
    FinishedFrame frame;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      frame = std::move(queue_.front());
      queue_.pop_front();
      changed_.notify_all();
    }
    try {
      write_png(dir_ / frame_name(frame.index), frame.image);
      if (overlay_) write_png(dir_ / overlay_name(frame.index), ownership_overlay(frame.image, frame.grid, frame.owners));
      std::lock_guard lock(mutex_);
      ++written_;
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      failure_ = e.what();
      queue_.clear();
      changed_.notify_all();
      return;
    }
  }
}

}  // namespace tessera::master
