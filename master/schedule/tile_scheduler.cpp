#include "master/schedule/tile_scheduler.h"

#include <algorithm>

namespace tessera::master {

uint32_t auto_tile_size(uint32_t width, uint32_t height, bool stereo, size_t workers, bool pathtrace) {
  const uint64_t wanted = (pathtrace ? 4 : 8) * std::max<uint64_t>(1, workers);
  for (uint32_t tile = 256; tile > 32; tile /= 2) {
    const uint64_t tiles = uint64_t((width + tile - 1) / tile) * ((height + tile - 1) / tile) * (stereo ? 2 : 1);
    if (tiles >= wanted) return tile;
  }
  return 32;
}

TileScheduler::TileScheduler(SchedulerPolicy policy, ScheduleOutput& output) : policy_(policy), output_(output) {
  policy_.inflight = std::max(1u, policy_.inflight);
}

void TileScheduler::add_worker(int worker) {
  auto& w = workers_[worker];
  w.ready = true;
  w.outstanding = 0;
  place_pending();
}

uint32_t TileScheduler::remove_worker(int worker) {
  auto it = workers_.find(worker);
  if (it == workers_.end() || !it->second.ready) return 0;
  it->second.ready = false;
  it->second.outstanding = 0;
  uint32_t taken = 0;
  for (auto& [id, frame] : frames_) {
    frame.requested.erase(worker);  // a rejoined worker gets the frame anew
    std::vector<uint32_t> back;
    for (uint32_t t = 0; t < frame.count; ++t)
      if (frame.holder[t] == worker) {
        frame.holder[t] = -1;
        back.push_back(t);
      }
    frame.pending.insert(frame.pending.begin(), back.begin(), back.end());  // first in line, in row order
    frame.reassigned += uint32_t(back.size());
    taken += uint32_t(back.size());
  }
  place_pending();
  return taken;
}

void TileScheduler::record_speed(int worker, double tiles_per_second) {
  auto& w = workers_[worker];
  w.speed = w.speed > 0 ? 0.5 * w.speed + 0.5 * tiles_per_second : tiles_per_second;
}

void TileScheduler::open_frame(uint64_t id, uint32_t tile_count, std::set<int> excluded) {
  Frame& frame = frames_[id];
  frame.excluded = std::move(excluded);
  frame.count = tile_count;
  frame.holder.assign(tile_count, -1);
  frame.done.assign(tile_count, 0);
  for (uint32_t t = 0; t < tile_count; ++t) frame.pending.push_back(t);
  place_pending();
}

void TileScheduler::take(Batch& batch, int worker, uint64_t id, uint32_t tile) {
  Frame& frame = frames_[id];
  frame.holder[tile] = worker;
  frame.assigned++;
  workers_[worker].outstanding++;
  batch[{worker, id}].push_back(tile);
}

void TileScheduler::send(const Batch& batch) {
  for (const auto& [key, tiles] : batch) {
    const auto [worker, id] = key;
    Frame& frame = frames_[id];
    if (frame.requested.insert(worker).second)
      output_.request_tiles(worker, id, tiles);
    else
      output_.assign_tiles(worker, id, tiles);
  }
}

bool TileScheduler::can_render(const Frame& frame, int worker) const {
  const auto it = workers_.find(worker);
  return it != workers_.end() && it->second.ready && !frame.excluded.contains(worker);
}

void TileScheduler::deal(uint64_t id, std::vector<uint32_t> tiles, Batch& batch) {
  std::vector<int> ready;
  std::vector<double> weight;
  bool measured = policy_.balance == Balance::measured;
  for (const auto& [index, w] : workers_)
    if (can_render(frames_[id], index)) {
      ready.push_back(index);
      weight.push_back(w.speed);
      measured &= w.speed > 0;
    }
  if (ready.empty()) return;
  if (!measured) std::fill(weight.begin(), weight.end(), 1.0);
  double total = 0;
  for (double x : weight) total += x;
  // Smooth weighted round-robin: shares follow the weights while neighbouring tiles still go to
  // different workers (equal weights give plain round-robin).
  std::vector<double> current(ready.size(), 0.0);
  for (uint32_t tile : tiles) {
    size_t best = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
      current[i] += weight[i];
      if (current[i] > current[best]) best = i;
    }
    current[best] -= total;
    take(batch, ready[best], id, tile);
  }
}

void TileScheduler::place_pending() {
  Batch batch;
  if (policy_.schedule == Schedule::static_split) {
    for (auto& [id, frame] : frames_) {
      if (frame.pending.empty() ||
          std::none_of(workers_.begin(), workers_.end(), [&](const auto& w) { return can_render(frame, w.first); }))
        continue;
      std::vector<uint32_t> tiles(frame.pending.begin(), frame.pending.end());
      frame.pending.clear();
      deal(id, std::move(tiles), batch);
    }
  } else {
    // Deal one tile per free slot in turn, oldest frame first, until slots or tiles run out.
    for (bool progress = true; progress;) {
      progress = false;
      for (auto& [index, w] : workers_) {
        if (!w.ready || w.outstanding >= policy_.inflight) continue;
        auto it = std::find_if(frames_.begin(), frames_.end(),
                               [&](const auto& f) { return !f.second.pending.empty() && !f.second.excluded.contains(index); });
        if (it == frames_.end()) break;
        const auto chosen = pick(it->second.pending, index);
        const uint32_t tile = *chosen;
        it->second.pending.erase(chosen);
        take(batch, index, it->first, tile);
        progress = true;
      }
    }
  }
  send(batch);
}

std::deque<uint32_t>::iterator TileScheduler::pick(std::deque<uint32_t>& pending, int worker) {
  if (!policy_.tile_affinity) return pending.begin();
  const auto owner = [&](uint32_t tile) { return tile < last_owner_.size() ? last_owner_[tile] : -1; };
  auto it = std::find_if(pending.begin(), pending.end(), [&](uint32_t t) { return owner(t) == worker; });
  if (it != pending.end()) return it;
  it = std::find_if(pending.begin(), pending.end(), [&](uint32_t t) {
    const auto w = workers_.find(owner(t));
    return w == workers_.end() || !w->second.ready;
  });
  if (it != pending.end()) return it;
  return std::prev(pending.end());
}

TileScheduler::Receipt TileScheduler::tile_done(int worker, uint64_t id, uint32_t tile) {
  const auto it = frames_.find(id);
  if (it == frames_.end() || tile >= it->second.count) return Receipt::unknown_frame;
  Frame& frame = it->second;
  if (frame.done[tile]) return Receipt::duplicate;
  frame.done[tile] = 1;
  const int holder = frame.holder[tile];
  if (holder >= 0) {
    auto& h = workers_[holder];
    if (h.outstanding) h.outstanding--;
    frame.holder[tile] = -1;
  } else {
    frame.pending.erase(std::remove(frame.pending.begin(), frame.pending.end(), tile), frame.pending.end());
  }
  if (tile >= last_owner_.size()) last_owner_.resize(size_t(tile) + 1, -1);
  last_owner_[tile] = worker;
  if (policy_.schedule == Schedule::dynamic && !held_) place_pending();
  return Receipt::accepted;
}

void TileScheduler::set_policy(SchedulerPolicy policy) {
  policy_ = policy;
  policy_.inflight = std::max(1u, policy_.inflight);
  last_owner_.clear();  // tile ids change with the tile size
}

void TileScheduler::close_frame(uint64_t id) {
  const auto it = frames_.find(id);
  if (it == frames_.end()) return;
  std::map<int, uint32_t> held;
  for (int holder : it->second.holder)
    if (holder >= 0) held[holder]++;
  frames_.erase(it);
  for (const auto& [worker, count] : held) {
    auto& w = workers_[worker];
    w.outstanding -= std::min(w.outstanding, count);
    if (w.ready) output_.cancel_frame(worker, id);
  }
  if (policy_.schedule == Schedule::dynamic) place_pending();
}

bool TileScheduler::fully_assigned(uint64_t id) const {
  const auto it = frames_.find(id);
  return it == frames_.end() || it->second.pending.empty();
}

size_t TileScheduler::ready_workers() const {
  size_t n = 0;
  for (const auto& [index, w] : workers_) n += w.ready;
  return n;
}

uint32_t TileScheduler::outstanding(int worker) const {
  const auto it = workers_.find(worker);
  return it == workers_.end() ? 0 : it->second.outstanding;
}

uint32_t TileScheduler::assignments(uint64_t id) const {
  const auto it = frames_.find(id);
  return it == frames_.end() ? 0 : it->second.assigned;
}

uint32_t TileScheduler::reassigned(uint64_t id) const {
  const auto it = frames_.find(id);
  return it == frames_.end() ? 0 : it->second.reassigned;
}

void TileScheduler::release() {
  held_ = false;
  if (policy_.schedule == Schedule::dynamic) place_pending();
}

void TileScheduler::set_inflight(unsigned inflight) {
  policy_.inflight = std::max(1u, inflight);
  if (policy_.schedule == Schedule::dynamic) place_pending();
}

double TileScheduler::speed(int worker) const {
  const auto it = workers_.find(worker);
  return it == workers_.end() ? 0 : it->second.speed;
}

}  // namespace tessera::master
