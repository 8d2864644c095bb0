// Things that move in a live session (docs/live-session.md, master/web/PROTOCOL.md "Things that
// move"): the scene clock the pages play, pause and seek, picking the instance a pixel shows, and
// the instances the pages grab and move. Every frame request carries the clock's time and the moved
// instances (update_frame_options), so every tile of a frame shows one instant. A held pose's
// refinements show the instant of its first frame again, so its samples keep joining one mean while
// the clock plays or an object is grabbed elsewhere, until something in its view moved
// (held_view_moved, master/session/motion_in_view.h).
#include <nlohmann/json.hpp>

#include "common/net/log.h"
#include "common/render/stereo.h"
#include "master/live/live_figures.h"
#include "master/live/live_session.h"
#include "master/session/motion_in_view.h"
#include "master/session/rendered_eyes.h"
#include "master/session/scene_picker.h"

namespace tessera::master::live {

using nlohmann::json;

namespace {

// Instances the pages may hold placed at once: their transforms travel in every frame request, which
// has 2 MiB (common/net/message_limits.cpp; about 56 bytes a transform).
constexpr size_t kMaxPlaced = 4096;
// The eyes' view is taken this much wider on every side than rendered: what lies just outside it
// (float error, a head camera's eyes placed a hair differently) counts as in view.
constexpr float kViewMarginDegrees = 1.0f;

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

// A play, pause or seek renders the held view afresh at the clock's new instant (once; then the
// motion check decides).
void LiveSession::clock_moved() {
  if (!pending_) refinement_for(current_);
}

bool LiveSession::held_view_moved(const PoseSample& held) {
  std::lock_guard lock(mutex_);
  if (!held_instant_ || held_instant_->pose_id != held.id) return true;  // no frame of it showed an instant yet
  SceneInstant& then = *held_instant_;
  const double now = clock_.now();
  const bool clock_moved = scene_.animated && now != then.time;
  if (!clock_moved && placed_ == then.placed) return false;
  if (!picker_) return false;  // a single-level scene: nothing in it moves
  try {
    if (then.boxes.empty()) then.boxes = picker_->instance_boxes(then.time, then.placed);
    return moved_in_view(then.boxes, picker_->instance_boxes(now, placed_), rendered_eye_views(held));
  } catch (const std::exception& e) {  // a pose the motion refuses: the workers refuse it too; render afresh
    net::log_warning(std::string("live: motion check: ") + e.what());
    return true;
  }
}

// The eyes a frame of `pose` renders with the options in force, each as wide as it may be rendered
// (the guard band wherever the session has one), plus a margin.
std::vector<EyeView> LiveSession::rendered_eye_views(const PoseSample& pose) const {
  const SessionOptions& o = current_;
  EyeRequest request;
  request.width = o.width;
  request.height = o.height;
  request.vertical_fov_degrees = o.fov ? *o.fov : scene_.manifest.camera().vertical_fov_degrees();
  request.stereo = o.stereo;
  request.ipd = o.ipd > 0 ? o.ipd : (o.stereo ? default_ipd(scene_.manifest) : 0.0f);
  request.guard_band_degrees = o.guard_band_degrees;
  request.eye_views_allowed = true;
  std::vector<EyeView> views = rendered_eyes(pose, request).views;
  for (EyeView& eye : views) eye.frustum = widened_frustum(eye.frustum, kViewMarginDegrees);
  return views;
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
  clock_moved();
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
  poses_.scene_changed();  // the next frame of the held pose asks whether its view saw the move
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
