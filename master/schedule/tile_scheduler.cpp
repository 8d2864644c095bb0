#include "master/schedule/tile_scheduler.h"

#include <algorithm>

namespace tessera::master {

uint32_t auto_tile_size(uint32_t width, uint32_t height, bool stereo, size_t workers, bool pathtrace) {
  const auto tiles_of = [&](uint32_t tile) {
    return uint64_t((width + tile - 1) / tile) * ((height + tile - 1) / tile) * (stereo ? 2 : 1);
  };
  const uint64_t s = std::max<uint64_t>(1, workers);
  const uint64_t wanted = (pathtrace ? 4 : std::max<uint64_t>(8, 2 * s)) * s;
  uint32_t tile = 32;
  for (uint32_t t = 256; t > 32; t /= 2)
    if (tiles_of(t) >= wanted) {
      tile = t;
      break;
    }
  while (tile < 256 && tiles_of(tile) > kMaxAutoTilesPerFrame) tile *= 2;
  return tile;
}

TileScheduler::TileScheduler(SchedulerPolicy policy, ScheduleOutput& output) : policy_(policy), output_(output) {
  policy_.inflight = std::max(1u, policy_.inflight);
}

void TileScheduler::add_worker(int worker) {
  auto& w = workers_[worker];
  w.ready = true;
  w.outstanding = 0;
  w.heard = {};  // (re)joined: not silent until it has spoken and stopped
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
    frame.moot.erase(worker);
    std::vector<uint32_t> back;
    for (uint32_t t = 0; t < frame.count; ++t) {
      if (frame.copy[t] == worker) frame.copy[t] = -1;
      if (frame.holder[t] != worker) continue;
      ++taken;
      ++frame.reassigned;
      if (frame.copy[t] >= 0) {  // its copy's holder keeps it
        frame.holder[t] = frame.copy[t];
        frame.order[t] = frame.copy_order[t];
        frame.copy[t] = -1;
      } else {
        frame.holder[t] = -1;
        back.push_back(t);
      }
    }
    frame.pending.insert(frame.pending.begin(), back.begin(), back.end());  // first in line, in row order
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
  frame.copy.assign(tile_count, -1);
  frame.order.assign(tile_count, 0);
  frame.copy_order.assign(tile_count, 0);
  frame.done.assign(tile_count, 0);
  frame.copied.assign(tile_count, 0);
  for (uint32_t t = 0; t < tile_count; ++t) frame.pending.push_back(t);
  if (policy_.schedule == Schedule::dynamic && policy_.cost_order && costs_known_ > 0)
    std::stable_sort(frame.pending.begin(), frame.pending.end(), [&](uint32_t a, uint32_t b) { return cost(a) > cost(b); });
  place_pending();
}

void TileScheduler::take(Batch& batch, int worker, uint64_t id, uint32_t tile) {
  Frame& frame = frames_[id];
  frame.holder[tile] = worker;
  frame.order[tile] = ++sequence_;
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
    reissue_tail(batch);
  }
  send(batch);
}

double TileScheduler::cost(uint32_t tile) const {
  if (tile < cost_ms_.size() && cost_ms_[tile] > 0) return cost_ms_[tile];
  return costs_known_ ? cost_sum_ / costs_known_ : 0.0;
}

double TileScheduler::slowness(int worker) const {
  double sum = 0;
  int n = 0;
  for (const auto& [index, w] : workers_)
    if (w.ready && w.speed > 0) {
      sum += w.speed;
      ++n;
    }
  const auto it = workers_.find(worker);
  if (it == workers_.end() || it->second.speed <= 0 || n == 0) return 1.0;
  return (sum / n) / it->second.speed;
}

void TileScheduler::record_cost(int worker, uint32_t tile, double ms) {
  if (!(ms > 0)) return;
  ms /= slowness(worker);  // as an average worker would take
  if (tile >= cost_ms_.size()) cost_ms_.resize(size_t(tile) + 1, 0.0);
  if (cost_ms_[tile] > 0)
    cost_sum_ -= cost_ms_[tile];
  else
    ++costs_known_;
  cost_ms_[tile] = ms;
  cost_sum_ += ms;
}

// At the frames' end, with no tile left to hand out, workers that would idle take copies of the
// tiles whose holders would return them last, as long as (by the predicted times) the copy would be
// back sooner: its new holder's queue, the round trip and its render time against the old holder's
// queue up to and including the tile.
void TileScheduler::heard_from(int worker, std::chrono::steady_clock::time_point when) {
  const auto it = workers_.find(worker);
  if (it != workers_.end()) it->second.heard = when;
}

bool TileScheduler::is_silent(int worker, std::chrono::steady_clock::time_point now) const {
  const auto it = workers_.find(worker);
  if (it == workers_.end()) return false;
  const auto heard = it->second.heard;
  return heard != std::chrono::steady_clock::time_point{} && now - heard > kSilentAfter;
}

// Either schedule: every tile a silent worker holds (none copied yet) gets a copy on the ready worker
// holding fewest, slots or not; the first copy back counts, as with the tail's copies. Path-traced
// tiles too: the copy starts the tile's samples afresh where it goes, fewer samples for a while
// rather than a frozen view.
void TileScheduler::rescue_silent(Batch& batch) {
  const auto now = std::chrono::steady_clock::now();
  bool any = false;
  for (const auto& [index, w] : workers_) any |= w.ready && is_silent(index, now);
  if (!any) return;
  for (auto& [id, frame] : frames_)
    for (uint32_t t = 0; t < frame.count; ++t) {
      const int holder = frame.holder[t];
      if (frame.done[t] || holder < 0 || frame.copy[t] >= 0 || frame.copied[t] || !is_silent(holder, now)) continue;
      int thief = -1;
      for (const auto& [index, w] : workers_)
        if (w.ready && index != holder && !is_silent(index, now) && !frame.excluded.contains(index) &&
            (thief < 0 || w.outstanding < workers_[thief].outstanding))
          thief = index;
      if (thief < 0) return;  // nobody to take them
      give_copy(batch, id, t, thief);
    }
}

void TileScheduler::give_copy(Batch& batch, uint64_t id, uint32_t tile, int worker) {
  Frame& frame = frames_.at(id);
  frame.copy[tile] = worker;
  frame.copy_order[tile] = ++sequence_;
  frame.copied[tile] = 1;
  frame.reissued++;
  workers_[worker].outstanding++;
  batch[{worker, id}].push_back(tile);
}

void TileScheduler::reissue_tail(Batch& batch) {
  // Pathtrace (tile affinity) accumulates a tile's samples on its worker: a copy elsewhere would not have them.
  if (!policy_.reissue || policy_.tile_affinity || costs_known_ == 0) return;
  for (const auto& [id, frame] : frames_)
    if (!frame.pending.empty()) return;
  // Each ready worker's held tiles in the order it got them, as predicted render times.
  struct Held {
    uint64_t order;
    double ms;
  };
  std::map<int, std::vector<Held>> queue;
  for (const auto& [index, w] : workers_)
    if (w.ready) queue[index];
  if (queue.size() < 2) return;
  for (const auto& [id, frame] : frames_)
    for (uint32_t t = 0; t < frame.count; ++t) {
      if (frame.done[t]) continue;
      if (queue.contains(frame.holder[t])) queue[frame.holder[t]].push_back({frame.order[t], cost(t) * slowness(frame.holder[t])});
      if (queue.contains(frame.copy[t])) queue[frame.copy[t]].push_back({frame.copy_order[t], cost(t) * slowness(frame.copy[t])});
    }
  std::map<int, double> left;  // predicted time until a worker has rendered all it holds
  for (auto& [index, held] : queue) {
    std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) { return a.order < b.order; });
    double sum = 0;
    for (Held& h : held) h.ms = sum += h.ms;  // now: the time until this one is done
    left[index] = sum;
  }
  // The candidates: tiles without a copy, by when their holders would have them done, latest first.
  struct Candidate {
    double ready_ms;
    uint64_t frame;
    uint32_t tile;
    int holder;
  };
  std::vector<Candidate> candidates;
  for (const auto& [id, frame] : frames_)
    for (uint32_t t = 0; t < frame.count; ++t) {
      if (frame.done[t] || frame.copy[t] >= 0 || frame.copied[t] || !queue.contains(frame.holder[t])) continue;
      const auto& held = queue[frame.holder[t]];
      const auto at = std::lower_bound(held.begin(), held.end(), frame.order[t], [](const Held& h, uint64_t o) { return h.order < o; });
      if (at != held.end()) candidates.push_back({at->ms, id, t, frame.holder[t]});
    }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.ready_ms > b.ready_ms; });
  for (const Candidate& c : candidates) {
    Frame& frame = frames_[c.frame];
    int thief = -1;
    for (const auto& [index, w] : workers_)
      if (w.ready && w.outstanding < policy_.inflight && index != c.holder && !frame.excluded.contains(index) &&
          (thief < 0 || left[index] < left[thief]))
        thief = index;
    if (thief < 0) continue;
    const double back_ms = left[thief] + round_trip_ms_ + cost(c.tile) * slowness(thief);
    if (back_ms >= c.ready_ms) break;  // later candidates are due sooner still
    give_copy(batch, c.frame, c.tile, thief);
    left[thief] = back_ms - round_trip_ms_;
  }
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
    for (const int h : {holder, frame.copy[tile]}) {
      if (h < 0) continue;
      auto& w = workers_[h];
      if (w.outstanding) w.outstanding--;
      if (h != worker) frame.moot.insert(h);  // it may render its copy still; the frame's close cancels it
    }
    frame.holder[tile] = frame.copy[tile] = -1;
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
  cost_ms_.clear();
  cost_sum_ = 0;
  costs_known_ = 0;
}

void TileScheduler::close_frame(uint64_t id) {
  const auto it = frames_.find(id);
  if (it == frames_.end()) return;
  std::map<int, uint32_t> held;
  for (int holder : it->second.holder)
    if (holder >= 0) held[holder]++;
  for (int holder : it->second.copy)
    if (holder >= 0) held[holder]++;
  for (int worker : it->second.moot) held[worker];  // nothing outstanding, but maybe rendering a discarded copy
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

uint32_t TileScheduler::reissued(uint64_t id) const {
  const auto it = frames_.find(id);
  return it == frames_.end() ? 0 : it->second.reissued;
}

bool TileScheduler::was_reissued(uint64_t id, uint32_t tile) const {
  const auto it = frames_.find(id);
  return it != frames_.end() && tile < it->second.count && it->second.copied[tile];
}

void TileScheduler::release() {
  held_ = false;
  if (policy_.schedule == Schedule::dynamic) place_pending();
  Batch batch;
  rescue_silent(batch);  // after every burst of events: heartbeats come from the others twice a second
  send(batch);
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
