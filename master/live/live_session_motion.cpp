// Things that move in a live session (docs/live-session.md, master/web/PROTOCOL.md "Things that
// move"): the scene clock the pages play, pause and seek, picking the instance a pixel shows, and
// the instances the pages grab and move. Every frame request carries the clock's time and the moved
// instances (update_frame_options), so every tile of a frame shows one instant.
#include <nlohmann/json.hpp>

#include "common/net/log.h"
#include "master/live/live_figures.h"
#include "master/live/live_session.h"
#include "master/session/scene_picker.h"

namespace tessera::master::live {

using nlohmann::json;

namespace {

// Instances the pages may hold placed at once: their transforms travel in every frame request, which
// has 2 MiB (common/net/message_limits.cpp; about 56 bytes a transform).
constexpr size_t kMaxPlaced = 4096;

json matrix_json(const Transform3x4& t) {
  json m = json::array();
  for (float v : t.m) m.push_back(v);
  return m;
}

}  // namespace

json LiveSession::clock_json() const {
  return {{"time", clock_.now()},
          {"playing", clock_.playing()},
          {"scale", clock_.time_scale()},
          {"duration", scene_.duration_s},
          {"animated", scene_.animated}};
}

json LiveSession::moved_json() const {
  json moved = json::array();
  for (const auto& [instance, world] : placed_) moved.push_back({{"instance", instance}, {"transform", matrix_json(world)}});
  return moved;
}

// The held view renders afresh (its samples so far show the scene as it was), and frames follow one
// another while the clock plays over animations.
void LiveSession::scene_moved() {
  poses_.set_moving(clock_.playing() && scene_.animated);
  if (!pending_) refinement_for(current_);
}

void LiveSession::clock_change(const ClockChange& change) {
  const auto now = Clock::now();
  if (change.time) clock_.seek(*change.time, now);
  if (change.playing) {
    if (*change.playing && clock_.time_scale() <= 0) event("clock: the time scale is 0 (tessera-master --time-scale): the clock stands still");
    if (*change.playing)
      clock_.play(now);
    else
      clock_.pause(now);
  }
  scene_moved();
  json message = clock_json();
  message["type"] = "clock";
  broadcast_text(message.dump());
}

void LiveSession::move(const Move& move) {
  const uint32_t instances = picker_ ? picker_->instance_count() : 0;
  const std::string what = "move refused: instance " + std::to_string(move.instance);
  if (move.instance >= instances) {
    net::log_warning("live: " + what + ": the scene has " + std::to_string(instances) + " instances");
    return event(what + ": the scene has " + std::to_string(instances) + " instances");
  }
  if (!move.world) {
    if (placed_.erase(move.instance) == 0) return;
  } else {
    Transform3x4 world;
    world.m = *move.world;
    if (const char* problem = transform_problem(world)) {
      net::log_warning("live: " + what + ": " + problem);
      return event(what + ": " + problem);
    }
    const auto it = placed_.find(move.instance);
    if (it != placed_.end() && it->second == world) return;
    if (it == placed_.end() && placed_.size() >= kMaxPlaced) {
      net::log_warning("live: " + what + ": " + std::to_string(kMaxPlaced) + " instances are placed already");
      return event(what + ": " + std::to_string(kMaxPlaced) + " instances are placed already (give one back with \"transform\":null)");
    }
    placed_[move.instance] = world;
  }
  scene_moved();
}

void LiveSession::pick(uint64_t connection, const Pick& pick) {
  json answer = {{"type", "picked"}, {"id", pick.id}, {"instance", nullptr}, {"time", clock_.now()}};
  if (picker_) {
    const auto hit = picker_->pick(pick.origin, pick.direction, clock_.now(), placed_);
    if (hit) {
      answer["instance"] = hit->instance;
      answer["distance"] = hit->distance;
      answer["point"] = {hit->point[0], hit->point[1], hit->point[2]};
      answer["transform"] = matrix_json(hit->world);
    }
  }
  send_text(connection, answer.dump());
}

void LiveSession::motion_message(uint64_t connection, const ClientMessage& message) {
  if (const auto* p = std::get_if<Pick>(&message)) return pick(connection, *p);  // any page may ask
  if (connection != driver_) {  // a watcher does not steer the driver's scene
    send_text(connection, json{{"type", "event"}, {"t", ms_between(started_, Clock::now())},
                               {"text", "the clock and moves come from the driving page only"}}.dump());
    return;
  }
  if (const auto* clock = std::get_if<ClockChange>(&message)) return clock_change(*clock);
  if (const auto* m = std::get_if<Move>(&message)) return move(*m);
}

}  // namespace tessera::master::live
