#pragma once
// A live session (tessera-master --serve) with two local workers on the host device, and a page's
// side of it through LiveClient: for the live session's end-to-end tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_bands.h"
#include "master/live/live_client.h"

namespace tessera::testing::live {

using namespace std::chrono_literals;
using namespace master::live;
using nlohmann::json;

inline constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

inline ImageRgba8 decode_frame(const FrameMessage& frame) {
  return BandedJpegDecoder().decode(frame.bands, frame.image_width(), frame.image_height());
}

struct LiveMaster {
  TempDir dir{"live"};
  std::filesystem::path secret = dir / "secret", scenes = dir / "scenes";
  std::optional<WorkerProcess> a, b;
  std::optional<Process> master;
  uint16_t port = 0;

  // freeze_b: worker b is stopped (SIGSTOP) before the master starts: it accepts connections, says nothing.
  // route_b: the address the master is given for worker b (a relay in front of it), from b's own.
  // scene: the .tpk the master serves (default: the Cornell box).
  explicit LiveMaster(std::vector<std::string> extra = {}, std::vector<std::string> worker_extra = {"--device", "host", "--threads", "1"},
                      bool freeze_b = false, std::function<std::string(const std::string&)> route_b = {},
                      std::filesystem::path scene = {}) {
    if (scene.empty()) scene = cornell_tpk();
    write_secret(secret, kClusterSecret);
    std::filesystem::create_directories(scenes);
    std::filesystem::copy_file(cornell_tpk(), scenes / "cornell.tpk");
    a.emplace(dir.path(), "a", scenes, secret, worker_extra);
    b.emplace(dir.path(), "b", scenes, secret, worker_extra);
    if (freeze_b) b->process().signal(SIGSTOP);
    // The guard band changes the frames' size: tests that want it ask for it.
    if (std::find(extra.begin(), extra.end(), "--guard-band") == extra.end()) extra.insert(extra.end(), {"--guard-band", "0"});
    std::vector<std::string> args{master_binary().string(), "--workers", a->address() + "," + (route_b ? route_b(b->address()) : b->address()), "--scene",
                                  scene.string(), "--secret-file", secret.string(), "--no-status", "--size", "64x48",
                                  "--tile", "32", "--serve", "127.0.0.1:0", "--token", kToken, "--reconnect-interval", "0.5"};
    args.insert(args.end(), extra.begin(), extra.end());
    ScopedEnv config("XDG_CONFIG_HOME", (dir / "config").string());  // the self-signed identity lands here
    master.emplace(args, dir / "master.log");
    for (int i = 0; i < 1000 && !port; ++i) {
      const std::string log = master->log();
      const size_t at = log.find("serving https://127.0.0.1:");
      if (at != std::string::npos && log.find("/?token=", at) != std::string::npos)
        port = uint16_t(std::stoi(log.substr(at + 26)));
      else if (master->wait(10ms))
        break;
    }
  }
  std::string log() const { return master->log(); }
  LiveClient connect(const std::string& target = std::string("/ws?token=") + kToken, std::optional<std::string> origin = std::nullopt) {
    return LiveClient("127.0.0.1", port, target, origin, std::nullopt, 10s);
  }
};

inline std::optional<json> next_text(LiveClient& c, const std::string& type, std::chrono::milliseconds timeout = 20s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    auto m = c.receive(std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()));
    if (!m) return std::nullopt;
    if (m->binary) continue;
    json j = json::parse(m->data);
    if (j["type"] == type) return j;
  }
  return std::nullopt;
}

inline std::optional<FrameMessage> next_frame(LiveClient& c, std::chrono::milliseconds timeout = 30s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    auto m = c.receive(std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()));
    if (!m) return std::nullopt;
    if (m->binary) return unpack_frame_message(m->data);
  }
  return std::nullopt;
}

// The first frame of pose `id` (older frames still on their way are skipped).
inline std::optional<FrameMessage> frame_of_pose(LiveClient& c, uint64_t id, std::chrono::milliseconds timeout = 30s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    auto f = next_frame(c, std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()));
    if (!f) return std::nullopt;
    if (f->header["pose_id"] == id) return f;
  }
  return std::nullopt;
}

// Waits for a frame of pose `id`, noting whether an event on the way says something was refused
// (after a test's one expected refusal: the session must go on with nothing more refused).
struct FrameAfterRefusals {
  bool framed = false, more_refused = false;
};
inline FrameAfterRefusals frame_of_pose_noting_refusals(LiveClient& c, uint64_t id, std::chrono::milliseconds timeout = 30s) {
  FrameAfterRefusals r;
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!r.framed && std::chrono::steady_clock::now() < end) {
    const auto msg = c.receive(1s);
    if (!msg) continue;
    if (msg->binary) {
      r.framed = unpack_frame_message(msg->data).header["pose_id"] == id;
    } else {
      const json j = json::parse(msg->data);
      r.more_refused = r.more_refused || (j["type"] == "event" && j["text"].get<std::string>().find("refused") != std::string::npos);
    }
  }
  return r;
}

inline json pose_message(uint64_t id, std::array<float, 3> position) {
  return {{"type", "pose"}, {"id", id}, {"t", double(id) * 10}, {"position", {position[0], position[1], position[2]}},
          {"orientation", {0, 0, 1, 0}}};  // the Cornell box's camera: looking down +z
}

inline LiveClient driver(LiveMaster& m) {
  LiveClient c = m.connect();
  c.send_text(R"({"type":"hello","want":"drive","client":"desktop"})");
  const auto session = next_text(c, "session");
  EXPECT_TRUE(session) << m.log();
  if (session) {
    EXPECT_EQ((*session)["role"], "drive");
  }
  return c;
}

}  // namespace tessera::testing::live
