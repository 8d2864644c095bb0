#pragma once
// Writes finished frames (and ownership overlays) as PNGs on a thread of its own, so encoding
// never holds up the scheduling of the next tiles. Only whole frames ever reach it.
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/image/image.h"
#include "common/net/tile_grid.h"

namespace tessera::master {

struct FinishedFrame {
  size_t index = 0;
  ImageRgba8 image;
  net::TileGrid grid;
  std::vector<int> owners;
};

class FrameWriter {
 public:
  // Creates `dir` if needed; throws Error when it cannot. max_queued bounds memory.
  FrameWriter(std::filesystem::path dir, bool overlay, size_t max_queued = 4);
  ~FrameWriter();
  // Blocks while the queue is full. Throws Error if an earlier write failed.
  void push(FinishedFrame frame);
  // Writes what is queued and stops; throws Error if a write failed.
  void finish();
  static std::string frame_name(size_t index);    // frame_000012.png
  static std::string overlay_name(size_t index);  // overlay_000012.png
  const std::filesystem::path& dir() const { return dir_; }
  size_t written() const;

 private:
  void run();

  std::filesystem::path dir_;
  bool overlay_;
  size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<FinishedFrame> queue_;
  bool stopping_ = false;
  std::string failure_;
  size_t written_ = 0;
  std::thread thread_;
};

}  // namespace tessera::master
