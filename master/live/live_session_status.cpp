// The live session's dashboard: the status message about 4 times a second (frame rate, latency,
// the pages' side, the driver's stream, workers' rates).
#include <nlohmann/json.hpp>

#include "common/base/frame_memory.h"
#include "master/live/live_figures.h"
#include "master/live/live_session.h"

namespace tessera::master::live {

using nlohmann::json;

void LiveSession::tick() {
  const auto now = Clock::now();
  if (now >= next_memory_release_) {
    next_memory_release_ = now + kFreeMemoryReleaseInterval;
    release_free_heap_memory();
  }
  if (now < next_status_) return;
  next_status_ = now + kStatusInterval;
  while (!recent_load_.empty() && now - recent_load_.front().at > kRateWindow) recent_load_.pop_front();
  const double window_s = std::chrono::duration<double>(kRateWindow).count();
  json workers = json::array();
  for (size_t i = 0; i < workers_.size(); ++i) {
    double tiles = 0, busy = 0;
    for (const auto& load : recent_load_)
      if (i < load.tiles_busy.size()) {
        tiles += load.tiles_busy[i].first;
        busy += load.tiles_busy[i].second;
      }
    workers.push_back({{"name", workers_[i].name},
                       {"device", workers_[i].device},
                       {"scene_memory", workers_[i].scene_memory},
                       {"state", workers_[i].state},
                       {"tiles_per_s", tiles / window_s},
                       {"busy_pct", std::min(100.0, busy / (window_s * 10.0))},
                       {"scene", scene_.name}});
  }
  std::lock_guard lock(mutex_);
  while (!recent_frames_.empty() && now - recent_frames_.front() > kRateWindow) recent_frames_.pop_front();
  while (!recent_latency_.empty() && now - recent_latency_.front().first > kLatencyWindow) recent_latency_.pop_front();
  std::vector<double> latency;
  for (const auto& [at, ms] : recent_latency_) latency.push_back(ms);
  while (!recent_page_.empty() && now - recent_page_.front().at > kLatencyWindow) recent_page_.pop_front();
  std::vector<double> network, decode, draw;
  for (const auto& p : recent_page_) {
    network.push_back(p.network);
    decode.push_back(p.decode);
    draw.push_back(p.draw);
  }
  std::vector<double> depth_bytes, alpha_bytes, aux_ms;
  for (const auto& [at, cost] : recent_aux_) {
    depth_bytes.push_back(double(cost.depth_bytes));
    alpha_bytes.push_back(double(cost.alpha_bytes));
    aux_ms.push_back(cost.ms);
  }
  double page_bytes = 0;
  {
    std::lock_guard bytes_lock(bytes_mutex_);
    while (!page_bytes_.empty() && now - page_bytes_.front().first > kRateWindow) page_bytes_.pop_front();
    for (const auto& [at, bytes] : page_bytes_) page_bytes += double(bytes);
  }
  broadcast_text(json{{"type", "status"},
                               {"fps", double(recent_frames_.size()) / window_s},
                               {"latency_ms", {{"median", percentile(latency, 0.5)}, {"p95", percentile(latency, 0.95)}}},
                               {"page_ms",
                                {{"network", percentile(network, 0.5)}, {"decode", percentile(decode, 0.5)}, {"draw", percentile(draw, 0.5)}}},
                               {"frames", frames_sent_},
                               {"samples", last_samples_},
                               {"pages", connections_.size()},
                               {"page_mbit_s", page_bytes * 8 / 1e6 / window_s},
                               {"aux", {{"depth_bytes", median(depth_bytes)}, {"alpha_bytes", median(alpha_bytes)}, {"ms", median(aux_ms)}}},
                               {"stream", stream_status()},
                               {"clock", clock_json()},
                               {"moved", moved_json()},
                               {"workers", workers}}
                              .dump());
}

}  // namespace tessera::master::live
