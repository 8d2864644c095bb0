#pragma once
// `tessera-bench seal`: what sealing the session (common/net/frame_cipher.h) costs per frame: one
// frame's tile results as a worker sends them (one TileResult per tile, raw RGBA8 unless --zstd),
// sealed as the worker does and opened as the master does, timed on this CPU. Raw tiles are the
// most bytes a frame can take; the figure for a real run is its bytes per frame times the rate.
// --threads N seals and opens the frame's messages on N threads at once, as a worker's encode
// threads and the master's tile threads do, and times the wall clock of the whole frame.
#include <CLI/CLI.hpp>
#include <string>

namespace tessera::bench {

class SealCommand {
 public:
  explicit SealCommand(CLI::App& app);
  bool parsed() const { return command_->parsed(); }
  int run();  // prints one table; throws Error on bad input

 private:
  CLI::App* command_;
  std::string size_ = "1920x1080";
  uint32_t tile_ = 128;
  int frames_ = 30;
  int zstd_level_ = 0;
  unsigned threads_ = 1;
};

}  // namespace tessera::bench
