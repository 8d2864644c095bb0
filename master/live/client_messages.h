#pragma once
// What pages send the master over the WebSocket (master/web/PROTOCOL.md), parsed and checked.
// Anything else (not JSON, unknown type, a field of the wrong kind or out of range) is a
// ProtocolError: the connection that sent it is closed with its close code and reason.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "common/video/video_codec.h"
#include "master/pose/pose_sample.h"

namespace tessera::master::live {

struct ProtocolError : std::runtime_error {
  ProtocolError(uint16_t code, const std::string& reason) : std::runtime_error(reason), close_code(code) {}
  uint16_t close_code;  // 1008 policy violation, 1009 too big
};

struct Hello {
  bool drive = false;
  bool depth = false;  // the page reprojects: it wants every frame's depth
  std::string client;  // desktop | phone | xr
  std::vector<video::Codec> decoders;    // the video codecs the page decodes (none: JPEG only)
  std::optional<std::string> decoders_refused;  // a malformed "decoders": why (the page gets JPEG, stays connected)
};
// The page cannot go on decoding its video stream: its next frame is a key frame.
struct KeyframeRequest {
  std::string reason;
};
struct TakeControl {};
struct PoseUpdate {
  PoseSample pose;  // id, client_time_ms, pose, gaze, views
};
struct Displayed {
  uint64_t frame = 0, pose_id = 0;
  double t = 0;  // drawn, page clock (ms)
  // When the page had the frame message and when its bands were decoded (same clock), if it says.
  std::optional<double> received, decoded;
};
struct SettingsChange {
  std::optional<std::string> mode, schedule;
  std::optional<uint32_t> spp, preset, tile;
  std::optional<std::array<uint32_t, 2>> size;
  std::optional<bool> stereo;
  std::optional<bool> transparent;  // "background": "transparent" | "opaque"
};

// AR tap-to-place: the scene point `floor` stands on a real surface; its y is the shadow catcher's height.
struct Place {
  std::array<float, 3> floor{};
};
// AR light estimation: the real primary light drives the scene's sun; none: the scene's own sun again.
struct Light {
  struct Sun {
    std::array<float, 3> direction{}, irradiance{};
  };
  std::optional<Sun> sun;
};

// Things that move (docs/live-session.md). The scene clock: play or pause it, seek it (any subset).
struct ClockChange {
  std::optional<bool> playing;
  std::optional<double> time;  // seconds, finite, within 1e9 of 0
};
// Which instance does this ray (scene space, from the eye through a pixel or a controller's ray) meet
// first? Answered with a `picked` message to the page that asked; `id` is echoed.
struct Pick {
  uint64_t id = 0;
  std::array<float, 3> origin{}, direction{};  // direction not zero
};
// Instance `instance` placed by `world` (object to world, a 3x4 matrix in rows) from the next frame
// on; none: back to its animated (or packed) placement. The live session checks the matrix (scale 0)
// and the index against the scene.
struct Move {
  uint32_t instance = 0;
  std::optional<std::array<float, 12>> world;
};

// A well-formed settings message with a value the master cannot use (a size out of range, ...): the
// session answers it with an event and the settings still in force, and the page stays connected.
struct RefusedSettings {
  std::string reason;
};

// A place, light, clock, pick or move message with values the master cannot use (not finite, out of range): refused
// with an event, the page stays connected.
struct RefusedRequest {
  std::string type, reason;
};

using ClientMessage = std::variant<Hello, TakeControl, PoseUpdate, Displayed, SettingsChange, RefusedSettings, Place, Light, RefusedRequest,
                                   KeyframeRequest, ClockChange, Pick, Move>;

ClientMessage parse_client_message(const std::string& text);

}  // namespace tessera::master::live
