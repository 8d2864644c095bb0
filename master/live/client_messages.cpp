#include "master/live/client_messages.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tessera::master::live {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& why) { throw ProtocolError(1008, why); }

double number(const json& m, const char* key, double lo, double hi) {
  const auto it = m.find(key);
  if (it == m.end() || !it->is_number()) bad(std::string("'") + key + "' must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) bad(std::string("'") + key + "' out of range");
  return v;
}

template <size_t N>
std::array<float, N> floats(const json& v, const char* what, double limit = 1e7) {
  if (!v.is_array() || v.size() != N) bad(std::string("'") + what + "' must be an array of " + std::to_string(N) + " numbers");
  std::array<float, N> out{};
  for (size_t i = 0; i < N; ++i) {
    if (!v[i].is_number()) bad(std::string("'") + what + "' must hold numbers");
    const double x = v[i].get<double>();
    if (!std::isfinite(x) || std::abs(x) > limit) bad(std::string("'") + what + "' out of range");
    out[i] = float(x);
  }
  return out;
}

std::array<float, 4> unit_quaternion(const json& v, const char* what) {
  auto q = floats<4>(v, what, 2.0);
  const double n = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] + double(q[2]) * q[2] + double(q[3]) * q[3]);
  if (std::abs(n - 1.0) > 0.01) bad(std::string("'") + what + "' is not a unit quaternion");
  for (float& c : q) c = float(c / n);
  return q;
}

const json& field(const json& m, const char* key) {
  const auto it = m.find(key);
  if (it == m.end()) bad(std::string("missing '") + key + "'");
  return *it;
}

PoseUpdate parse_pose(const json& m) {
  PoseUpdate u;
  PoseSample& p = u.pose;
  p.id = uint64_t(number(m, "id", 0, 9.0e15));
  p.client_time_ms = number(m, "t", -1e15, 1e15);
  p.time = p.client_time_ms / 1000.0;
  p.pose.position = floats<3>(field(m, "position"), "position");
  p.pose.orientation = unit_quaternion(field(m, "orientation"), "orientation");
  if (const auto g = m.find("gaze"); g != m.end() && !g->is_null()) {
    const auto gaze = floats<2>(*g, "gaze", 1.0);
    if (gaze[0] < 0 || gaze[1] < 0) bad("'gaze' must lie in [0, 1]");
    p.gaze = gaze;
  }
  if (const auto views = m.find("views"); views != m.end() && !views->is_null()) {
    if (!views->is_array() || views->empty() || views->size() > 2) bad("'views' must hold 1 or 2 eye views");
    for (const json& v : *views) {
      if (!v.is_object()) bad("an eye view must be an object");
      EyeView eye;
      eye.pose.position = floats<3>(field(v, "position"), "views.position");
      eye.pose.orientation = unit_quaternion(field(v, "orientation"), "views.orientation");
      const auto f = floats<4>(field(v, "frustum"), "views.frustum", 100.0);
      if (!(f[0] < f[1] && f[2] < f[3])) bad("'views.frustum' needs left < right and bottom < top");
      eye.frustum = {f[0], f[1], f[2], f[3]};
      p.views.push_back(eye);
    }
  }
  return u;
}

SettingsChange parse_settings(const json& m) {
  SettingsChange s;
  if (m.contains("mode")) {
    const json& v = m["mode"];
    if (!v.is_string() || (v != "raytrace" && v != "pathtrace" && v != "vct")) bad("'mode' must be raytrace, pathtrace or vct");
    s.mode = v.get<std::string>();
  }
  if (m.contains("schedule")) {
    const json& v = m["schedule"];
    if (!v.is_string() || (v != "static" && v != "dynamic")) bad("'schedule' must be static or dynamic");
    s.schedule = v.get<std::string>();
  }
  if (m.contains("spp")) s.spp = uint32_t(number(m, "spp", 1, 1024));
  if (m.contains("preset")) s.preset = uint32_t(number(m, "preset", 1, 5));
  if (m.contains("tile")) s.tile = uint32_t(number(m, "tile", 8, 1024));
  if (m.contains("size")) {
    const auto size = floats<2>(m["size"], "size", 8192);
    if (size[0] < 8 || size[1] < 8 || size[0] != std::floor(size[0]) || size[1] != std::floor(size[1]))
      bad("'size' must be two whole numbers in 8..8192");
    s.size = std::array<uint32_t, 2>{uint32_t(size[0]), uint32_t(size[1])};
  }
  if (m.contains("stereo")) {
    if (!m["stereo"].is_boolean()) bad("'stereo' must be true or false");
    s.stereo = m["stereo"].get<bool>();
  }
  if (m.contains("background")) {
    const json& v = m["background"];
    if (!v.is_string() || (v != "opaque" && v != "transparent")) bad("'background' must be opaque or transparent");
    s.transparent = v == "transparent";
  }
  return s;
}

constexpr size_t kMaxDecoders = 8;
constexpr size_t kMaxKeyframeReason = 200;

// "decoders" (PROTOCOL.md, "Video streams"): at most 8 names of known codecs. Anything else is
// answered with an event and JPEG, not a closed connection: the page's video is optional.
void parse_decoders(const json& list, Hello& h) {
  auto refuse = [&](const std::string& why) {
    h.decoders.clear();
    h.decoders_refused = why;
  };
  if (!list.is_array()) return refuse("'decoders' must be an array of codec names");
  if (list.size() > kMaxDecoders) return refuse("'decoders' lists more than 8 entries");
  for (const json& name : list) {
    if (!name.is_string()) return refuse("'decoders' must hold strings");
    const auto codec = video::parse_codec(name.get<std::string>());
    if (!codec) return refuse("unknown codec '" + name.get<std::string>().substr(0, 32) + "' (h264, vp9 or av1)");
    if (std::find(h.decoders.begin(), h.decoders.end(), *codec) == h.decoders.end()) h.decoders.push_back(*codec);
  }
}

constexpr double kMaxPlaceDistance = 1e6;  // scene units from the origin
constexpr double kMaxIrradiance = 1e4;     // SunOverride's limit (wire.proto)

Place parse_place(const json& m) {
  Place p;
  p.floor = floats<3>(field(m, "floor"), "floor", kMaxPlaceDistance);
  const double r = std::sqrt(double(p.floor[0]) * p.floor[0] + double(p.floor[1]) * p.floor[1] + double(p.floor[2]) * p.floor[2]);
  if (r > kMaxPlaceDistance) bad("'floor' lies farther than 1e6 from the origin");
  return p;
}

Light parse_light(const json& m) {
  Light l;
  const bool direction = m.contains("direction"), irradiance = m.contains("irradiance");
  if (!direction && !irradiance) return l;  // the scene's own sun again
  if (!direction || !irradiance) bad("a light needs both 'direction' and 'irradiance' (or neither)");
  Light::Sun sun;
  sun.direction = floats<3>(m["direction"], "direction", 1e6);
  const double n = std::sqrt(double(sun.direction[0]) * sun.direction[0] + double(sun.direction[1]) * sun.direction[1] +
                             double(sun.direction[2]) * sun.direction[2]);
  if (!(n > 1e-6)) bad("'direction' must not be zero");
  sun.irradiance = floats<3>(m["irradiance"], "irradiance", kMaxIrradiance);
  for (float c : sun.irradiance)
    if (c < 0) bad("'irradiance' components must lie in [0, 1e4]");
  l.sun = sun;
  return l;
}

constexpr double kMaxSceneTime = 1e9;    // seconds (the animations' key-time limit)
constexpr double kMaxPickCoordinate = 1e7;
constexpr double kMaxInstanceIndex = 65535;  // kMaxInstances - 1 (common/scene/scene_nodes.h)
constexpr double kMaxMatrixEntry = 1e15;

ClockChange parse_clock(const json& m) {
  ClockChange c;
  if (const auto playing = m.find("playing"); playing != m.end()) {
    if (!playing->is_boolean()) bad("'playing' must be true or false");
    c.playing = playing->get<bool>();
  }
  if (m.contains("time")) c.time = number(m, "time", -kMaxSceneTime, kMaxSceneTime);
  return c;
}

Pick parse_pick(const json& m) {
  Pick p;
  if (m.contains("id")) p.id = uint64_t(number(m, "id", 0, 9.0e15));
  p.origin = floats<3>(field(m, "origin"), "origin", kMaxPickCoordinate);
  p.direction = floats<3>(field(m, "direction"), "direction", kMaxPickCoordinate);
  const auto& d = p.direction;
  if (!(double(d[0]) * d[0] + double(d[1]) * d[1] + double(d[2]) * d[2] > 1e-12)) bad("'direction' must not be zero");
  return p;
}

Move parse_move(const json& m) {
  Move move;
  const double index = number(m, "instance", 0, kMaxInstanceIndex);
  if (index != std::floor(index)) bad("'instance' must be a whole number");
  move.instance = uint32_t(index);
  const json& world = field(m, "transform");
  if (!world.is_null()) move.world = floats<12>(world, "transform", kMaxMatrixEntry);  // a page's NaN arrives as null: refused
  return move;
}

}  // namespace

ClientMessage parse_client_message(const std::string& text) {
  const json m = json::parse(text, nullptr, false);
  if (m.is_discarded()) bad("not JSON");
  if (!m.is_object()) bad("not a JSON object");
  const auto type = m.find("type");
  if (type == m.end() || !type->is_string()) bad("no 'type'");
  const std::string t = type->get<std::string>();
  if (t == "pose") return parse_pose(m);
  if (t == "displayed") {
    Displayed d;
    d.frame = uint64_t(number(m, "frame", 0, 9.0e15));
    d.pose_id = uint64_t(number(m, "pose_id", 0, 9.0e15));
    d.t = number(m, "t", -1e15, 1e15);
    if (m.contains("received")) d.received = number(m, "received", -1e15, 1e15);
    if (m.contains("decoded")) d.decoded = number(m, "decoded", -1e15, 1e15);
    return d;
  }
  if (t == "hello") {
    Hello h;
    const std::string want = m.value("want", "watch");
    if (want != "drive" && want != "watch") bad("'want' must be drive or watch");
    h.drive = want == "drive";
    if (const auto depth = m.find("depth"); depth != m.end()) {
      if (!depth->is_boolean()) bad("'depth' must be true or false");
      h.depth = depth->get<bool>();
    }
    const auto client = m.find("client");
    if (client != m.end()) {
      if (!client->is_string() || client->get<std::string>().size() > 32) bad("'client' must be a short string");
      h.client = client->get<std::string>();
    }
    if (const auto decoders = m.find("decoders"); decoders != m.end()) parse_decoders(*decoders, h);
    return h;
  }
  if (t == "take_control") return TakeControl{};
  if (t == "keyframe") {
    KeyframeRequest k;
    if (const auto reason = m.find("reason"); reason != m.end()) {
      if (!reason->is_string() || reason->get<std::string>().size() > kMaxKeyframeReason) bad("'reason' must be a string of at most 200 chars");
      k.reason = reason->get<std::string>();
    }
    return k;
  }
  if (t == "settings") {
    try {
      return parse_settings(m);
    } catch (const ProtocolError& e) {
      return RefusedSettings{e.what()};
    }
  }
  // AR requests: a value out of range (a tracking glitch, a NaN serialized as null) is refused, the page stays.
  if (t == "place" || t == "light") {
    try {
      if (t == "place") return parse_place(m);
      return parse_light(m);
    } catch (const ProtocolError& e) {
      return RefusedRequest{t, e.what()};
    }
  }
  // Things that move: a value out of range (a NaN serialized as null) is refused, the page stays.
  if (t == "clock" || t == "pick" || t == "move") {
    try {
      if (t == "clock") return parse_clock(m);
      if (t == "pick") return parse_pick(m);
      return parse_move(m);
    } catch (const ProtocolError& e) {
      return RefusedRequest{t, e.what()};
    }
  }
  bad("unknown message type '" + t.substr(0, 32) + "'");
}

}  // namespace tessera::master::live
