#include "worker/bench/seal_bench.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <thread>
#include <cstdio>
#include <vector>

#include "common/base/error.h"
#include "common/base/median.h"
#include "common/net/auth.h"
#include "common/net/frame_cipher.h"
#include "common/net/framing.h"
#include "common/net/tile_codec.h"
#include "common/net/tile_grid.h"

namespace tessera::bench {
namespace {

// CPU time of this thread: what sealing costs the sender's thread, whatever else the machine runs.
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs work(i) for i in [0, count) on `threads` threads, message i on thread i % threads.
void spread(unsigned threads, size_t count, const std::function<void(size_t)>& work) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t i = t; i < count; i += threads) work(i);
    });
  for (auto& thread : pool) thread.join();
}

// Smooth colour ramps with a little noise: compresses about as well as rendered pixels do.
std::vector<uint32_t> tile_pixels(uint32_t width, uint32_t height, uint32_t seed) {
  std::vector<uint32_t> pixels(size_t(width) * height);
  uint32_t noise = seed * 2654435761u + 1;
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      noise = noise * 1664525u + 1013904223u;
      const uint32_t r = (x * 255 / std::max(1u, width - 1) + (noise >> 29)) & 255, g = (y * 255 / std::max(1u, height - 1)) & 255;
      pixels[size_t(y) * width + x] = r | g << 8 | ((seed * 37) & 255) << 16 | 0xffu << 24;
    }
  return pixels;
}

}  // namespace

SealCommand::SealCommand(CLI::App& app) {
  command_ = app.add_subcommand("seal",
                                "Cost of the sealed session per frame: a frame's tile results (one per tile) sealed with\n"
                                "ChaCha20-Poly1305 as the worker does and opened as the master does, in CPU time of this machine.");
  command_->add_option("--size", size_, "Frame size WxH")->capture_default_str();
  command_->add_option("--tile", tile_, "Tile size in pixels")->capture_default_str()->check(CLI::Range(8u, 1024u));
  command_->add_option("--frames", frames_, "Timed frames")->capture_default_str()->check(CLI::Range(3, 10000));
  command_->add_option("--threads", threads_, "Seal and open on this many threads at once (wall time; 1: thread CPU time)")
      ->capture_default_str()->check(CLI::Range(1u, 256u));
  command_->add_option("--zstd", zstd_level_, "Compress tiles with this zstd level first (0: raw RGBA8, the most bytes)")
      ->capture_default_str()->check(CLI::Range(0, 19));
}

int SealCommand::run() {
  unsigned width = 0, height = 0;
  char rest = 0;
  if (std::sscanf(size_.c_str(), "%ux%u%c", &width, &height, &rest) != 2) throw Error("--size '" + size_ + "' is not WxH");
  const net::TileGrid grid(width, height, tile_, 1);
  std::vector<std::vector<uint8_t>> plain;
  size_t frame_bytes = 0;
  for (uint32_t t = 0; t < grid.tile_count(); ++t) {
    const net::TileSpec spec = grid.tile(t);
    wire::Envelope m;
    auto& r = *m.mutable_tile_result();
    r.set_frame_id(1);
    r.set_tile_id(t);
    r.set_width(spec.width);
    r.set_height(spec.height);
    net::encode_tile_pixels(tile_pixels(spec.width, spec.height, t), zstd_level_, r);
    plain.push_back(net::encode_frame(m));
    frame_bytes += plain.back().size();
  }
  const auto keys = net::derive_session_keys(net::make_secret(), 2, net::random_nonce(), net::random_nonce());
  net::FrameSealer sealer(keys.worker_to_master);
  net::FrameOpener opener(keys.worker_to_master);
  std::vector<double> seal_ms, open_ms;
  for (int f = 0; f <= frames_; ++f) {  // the first frame warms up
    std::vector<std::vector<uint8_t>> frames;  // as encode_frame leaves them: room for the tag
    for (const auto& frame : plain) {
      frames.emplace_back().reserve(frame.size() + net::kSealTagBytes);
      frames.back().assign(frame.begin(), frame.end());
    }
    std::vector<std::vector<uint8_t>> payloads(frames.size());  // as the master reads them: after the length prefix
    double t0 = 0, t1 = 0, t_open = 0, t2 = 0;
    if (threads_ == 1) {
      t0 = cpu_ms();
      for (auto& frame : frames) sealer.seal(frame);
      t1 = cpu_ms();
      for (size_t i = 0; i < frames.size(); ++i) payloads[i].assign(frames[i].begin() + net::kFrameHeaderBytes, frames[i].end());
      t_open = cpu_ms();
      for (size_t i = 0; i < frames.size(); ++i) opener.open(std::span<const uint8_t, 4>(frames[i].data(), 4), payloads[i]);
      t2 = cpu_ms();
    } else {  // tickets in stream order first, as the connection takes them; then the work side by side
      std::vector<net::SealTicket> seal_tickets, open_tickets;
      t0 = wall_ms();
      for (size_t i = 0; i < frames.size(); ++i) seal_tickets.push_back(sealer.next());
      spread(threads_, frames.size(), [&](size_t i) { sealer.seal(frames[i], std::move(seal_tickets[i])); });
      t1 = wall_ms();
      for (size_t i = 0; i < frames.size(); ++i) payloads[i].assign(frames[i].begin() + net::kFrameHeaderBytes, frames[i].end());
      t_open = wall_ms();
      for (size_t i = 0; i < frames.size(); ++i) open_tickets.push_back(opener.next());
      spread(threads_, frames.size(), [&](size_t i) {
        opener.open(std::span<const uint8_t, 4>(frames[i].data(), 4), payloads[i], std::move(open_tickets[i]));
      });
      t2 = wall_ms();
    }
    if (f == 0) continue;
    seal_ms.push_back(t1 - t0);
    open_ms.push_back(t2 - t_open);
  }
  const double mib = double(frame_bytes) / (1 << 20), seal = median(seal_ms), open = median(open_ms);
  std::printf("frame %ux%u, %u tiles of %u px, %s: %.2f MiB on the wire per frame (+%zu B of tags)\n", width, height,
              grid.tile_count(), tile_, zstd_level_ ? ("zstd level " + std::to_string(zstd_level_)).c_str() : "raw RGBA8", mib,
              grid.tile_count() * net::kSealTagBytes);
  std::printf("seal (worker)  %8.3f ms per frame  %7.2f GiB/s\n", seal, mib / 1024 / (seal / 1000));
  std::printf("open (master)  %8.3f ms per frame  %7.2f GiB/s\n", open, mib / 1024 / (open / 1000));
  if (threads_ == 1)
    std::printf("(thread CPU time, medians of %d frames)\n", frames_);
  else
    std::printf("(wall time on %u threads, medians of %d frames)\n", threads_, frames_);
  return 0;
}

}  // namespace tessera::bench
