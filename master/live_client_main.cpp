// tessera-live-client: drives a live session (tessera-master --serve) the way a page does, for
// benchmarks and tests without a browser: connects with the token, sends poses of an orbit at a
// steady rate (mono, or stereo as two XR eye views), answers every frame with `displayed`, and
// reports pose -> frame latency (median, p95) and frame rates. Frames' JPEG bands are decoded in
// parallel, as a page does, or its video stream (--codec) frame by frame, asking for a key frame
// when it cannot go on; `displayed` carries received and decoded times (it draws nothing: drawn
// is decoded). With --reference, the PSNR of what it decoded against the frames the master wrote
// before encoding (tessera-master --reference-frames, same host). For soak runs (deploy/soak):
// --reconnect outlives a dropped connection or a restarting master, --frames-log writes every frame.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base/frame_memory.h"
#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/image/png_io.h"
#include "master/live/frame_message.h"
#include "master/live/frames_log.h"
#include "master/live/live_client.h"
#include "master/live/page_decoder.h"
#include "common/image/metrics.h"
#include "master/pose/orbit_source.h"

namespace {

using namespace tessera;
using namespace tessera::master::live;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(double(v.size()) * q))];
}

json array3(const std::array<float, 3>& v) { return {v[0], v[1], v[2]}; }
json array4(const std::array<float, 4>& v) { return {v[0], v[1], v[2], v[3]}; }

// The scene's bounds and camera as the session message gives them, for the orbit.
tpk::Manifest manifest_from(const json& scene) {
  tpk::Manifest m;
  const auto& b = scene.at("bounds");
  auto set = [](tpk::Vec3* v, const json& a) {
    v->set_x(a.at(0).get<float>());
    v->set_y(a.at(1).get<float>());
    v->set_z(a.at(2).get<float>());
  };
  set(m.mutable_bounds()->mutable_min(), b.at(0));
  set(m.mutable_bounds()->mutable_max(), b.at(1));
  const auto& c = scene.at("camera");
  set(m.mutable_camera()->mutable_position(), c.at("position"));
  m.mutable_camera()->set_qw(c.at("orientation").at(0).get<float>());
  m.mutable_camera()->set_vertical_fov_degrees(c.at("fov").get<float>());
  return m;
}

// A binary PPM (P6, maxval 255) as tessera-master --reference-frames writes it; nullopt when absent.
std::optional<ImageRgba8> read_reference(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  const std::string bytes = read_file_text(path);
  int width = 0, height = 0, maxval = 0, used = 0;
  if (std::sscanf(bytes.c_str(), "P6 %d %d %d%n", &width, &height, &maxval, &used) != 3 || maxval != 255 || width <= 0 || height <= 0)
    throw Error("not a binary PPM: " + path.string());
  const size_t start = size_t(used) + 1, pixels = size_t(width) * size_t(height);
  if (bytes.size() < start + pixels * 3) throw Error("short PPM: " + path.string());
  ImageRgba8 image(width, height);
  auto out = image.pixels();
  for (size_t i = 0; i < pixels; ++i)
    for (int c = 0; c < 3; ++c) out[i * 4 + size_t(c)] = uint8_t(bytes[start + i * 3 + size_t(c)]);
  return image;
}

// hello's "decoders" for --codec: the codec asked for (auto: every one this client decodes).
json decoders_for(const std::string& codec) {
  if (codec == "jpeg") return json::array();
  if (codec == "auto") return {"h264", "vp9", "av1"};
  return {codec};
}

}  // namespace

int main(int argc, char** argv) {
  tessera::keep_frame_buffers_resident();
  CLI::App app{"tessera-live-client: drive a tessera-master --serve session without a browser and measure pose -> frame latency",
               "tessera-live-client"};
  std::string url, fingerprint, mode, schedule, size, save_frame, codec = "jpeg", reference, frames_log_path;
  double duration = 10, rate = 30, revolution = 20, hold = 0, ipd = 0;
  unsigned tile = 0, spp = 0;
  bool stereo = false, json_out = false, no_decode = false, depth = false, transparent = false, reconnect = false;
  app.add_option("url", url, "The URL tessera-master printed: https://HOST:PORT/?token=TOKEN")->required();
  app.add_option("--duration", duration, "Seconds of moving poses")->capture_default_str();
  app.add_option("--rate", rate, "Poses per second (a headset sends one per display frame)")->capture_default_str();
  app.add_option("--revolution", revolution, "Seconds per revolution of the orbit around the scene")->capture_default_str();
  app.add_option("--hold", hold, "Then seconds of holding still (frames refine: their sample count rises)")->capture_default_str();
  app.add_flag("--stereo", stereo, "Send two XR eye views (each its pose and frustum): the master renders them side by side");
  app.add_option("--ipd", ipd, "Stereo: eye distance in scene units (default: 1/200 of the scene's width)");
  app.add_option("--mode", mode, "Settings to ask for first: raytrace | pathtrace | vct");
  app.add_option("--size", size, "Settings: WIDTHxHEIGHT per eye");
  app.add_option("--tile", tile, "Settings: tile size");
  app.add_option("--schedule", schedule, "Settings: static | dynamic");
  app.add_option("--spp", spp, "Settings: pathtrace samples per frame");
  app.add_option("--fingerprint", fingerprint, "Refuse a server whose certificate has another SHA-256 fingerprint (as printed)");
  app.add_option("--save-frame", save_frame, "Write the last frame, decoded, here as a PNG");
  app.add_flag("--no-decode", no_decode, "Do not decode the JPEGs (a page decodes before it displays)");
  app.add_flag("--json", json_out, "Print the results as JSON");
  app.add_option("--codec", codec, "The stream to ask for: jpeg | h264 | vp9 | av1 | auto (hello lists that decoder; auto: all three)")
      ->capture_default_str();
  app.add_option("--reference", reference,
                 "PSNR of the decoded frames against DIR/frame-F.ppm the master wrote (tessera-master --reference-frames DIR, same host)");
  app.add_flag("--depth", depth, "Ask for every frame's depth (as a reprojecting page does) and inflate it");
  app.add_flag("--transparent", transparent, "Ask for a transparent background: frames carry an alpha plane, inflated here");
  app.add_flag("--reconnect", reconnect,
               "When the connection fails, closes or stays silent for 5 s (a master restarting, a dropped link), connect again "
               "(backoff 0.1 s doubling to 2 s) and go on until the session's time is up; the results count the reconnects");
  app.add_option("--frames-log", frames_log_path,
                 "Write one CSV row per frame shown: unix_ms,connection,frame,pose_id,samples,latency_ms (latency on the first "
                 "frame of a pose only)");
  if (const auto done = cli::parse(app, argc, argv)) return *done;

  try {
    if (!(rate > 0 && rate <= 1000)) throw UsageError("--rate must be in (0, 1000]");
    if (!(duration >= 0) || !(hold >= 0) || !(revolution > 0)) throw UsageError("--duration, --hold and --revolution must be positive");
    if (!mode.empty() && mode != "raytrace" && mode != "pathtrace" && mode != "vct") throw UsageError("--mode: raytrace, pathtrace or vct");
    if (!schedule.empty() && schedule != "static" && schedule != "dynamic") throw UsageError("--schedule: static or dynamic");
    if (codec != "jpeg" && codec != "auto" && !video::parse_codec(codec)) throw UsageError("--codec: jpeg, h264, vp9, av1 or auto");
    if (!reference.empty() && !std::filesystem::is_directory(reference)) throw UsageError("--reference: no folder '" + reference + "'");
    const LiveUrl where = cli::option_value([&] { return parse_live_url(url); });
    std::optional<FramesLog> frames_log;
    if (!frames_log_path.empty()) frames_log.emplace(frames_log_path);
    const auto start = Clock::now();
    auto now_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
    const double moving_until = duration * 1000, end_ms = (duration + hold) * 1000;

    // One connection: hello, the session message, the settings asked for. With --reconnect a page
    // that finds another driving takes control (as a headset does), and the settings go again: a
    // restarted master starts from its command line's.
    std::optional<LiveClient> client;
    json session;
    auto open_connection = [&] {
      client.reset();
      client.emplace(where.host, where.port, "/ws?token=" + where.token, "https://" + where.host + ":" + std::to_string(where.port),
                     fingerprint.empty() ? std::nullopt : std::optional(fingerprint), std::chrono::seconds(10));
      client->send_text(json{{"type", "hello"}, {"want", "drive"}, {"client", stereo ? "xr" : "desktop"}, {"depth", depth},
                             {"decoders", decoders_for(codec)}}.dump());
      // The session message (settings apply between frames, so after the frames in flight), within the
      // session's own time: a master busy with a huge frame is an error line, not a wait without end.
      const double patience_s = reconnect ? 10.0 : std::max(10.0, duration + hold);
      auto wait_session = [&] {
        const auto until = Clock::now() + std::chrono::milliseconds(int64_t(patience_s * 1000));
        for (;;) {
          const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
          auto m = left.count() > 0 ? client->receive(left) : std::nullopt;
          if (!m) {
            char text[160];
            std::snprintf(text, sizeof text, "no session message from the master within %.0f s (frames in flight first: is one huge?)",
                          patience_s);
            throw Error(text);
          }
          if (m->binary) continue;
          const json j = json::parse(m->data);
          const std::string type = j.value("type", "");
          if (type == "event" && j.value("text", "").rfind("settings refused", 0) == 0) throw UsageError(j.value("text", ""));
          if (type == "session") return j;
        }
      };
      session = wait_session();
      if (session.value("role", "") != "drive") {
        if (!reconnect) throw Error("another page drives this session");
        client->send_text(json{{"type", "take_control"}}.dump());
        while (session.value("role", "") != "drive") session = wait_session();
      }
      json settings = {{"type", "settings"}};
      if (!mode.empty()) settings["mode"] = mode;
      if (!schedule.empty()) settings["schedule"] = schedule;
      if (tile) settings["tile"] = tile;
      if (spp) settings["spp"] = spp;
      if (!size.empty()) {
        unsigned w = 0, h = 0;
        if (std::sscanf(size.c_str(), "%ux%u", &w, &h) != 2) throw UsageError("bad --size '" + size + "'");
        settings["size"] = {w, h};
      }
      if (!stereo && session.value("stereo", false)) settings["stereo"] = false;
      if (transparent) settings["background"] = "transparent";
      if (settings.size() > 1) {
        client->send_text(settings.dump());
        session = wait_session();
      }
    };
    // --reconnect: a connection that fails, closes or stays silent is opened again (with backoff)
    // until the session's time is up; anything else (a usage error, a bad message) still ends the run.
    ReconnectBackoff backoff;
    unsigned connection = 0, reconnects = 0;
    double last_message_ms = 0;
    auto connect_until_done = [&]() -> bool {
      for (;;) {
        try {
          open_connection();
          ++connection;
          last_message_ms = now_ms();
          return true;
        } catch (const UsageError&) {
          throw;
        } catch (const std::exception&) {
          if (!reconnect) throw;
          client.reset();
          const auto wait = backoff.next();
          if (now_ms() + double(wait.count()) >= end_ms) return false;
          std::this_thread::sleep_for(wait);
        }
      }
    };
    if (!connect_until_done()) throw Error("could not reach the master within the session's time");

    const tpk::Manifest manifest = manifest_from(session.at("scene"));
    const auto& b = manifest.bounds();
    if (ipd <= 0) ipd = (b.max().x() - b.min().x()) / 200.0;
    const unsigned per_revolution = unsigned(std::max(1.0, revolution * rate));
    master::OrbitSource orbit(manifest, per_revolution, 0.3f);
    const double fov = session.at("scene").at("camera").at("fov").get<double>();
    const double aspect = session.at("size").at(0).get<double>() / session.at("size").at(1).get<double>();

    std::map<uint64_t, double> sent_at;  // pose id -> client ms
    std::map<uint64_t, bool> seen_pose;  // pose ids that already had a frame
    std::vector<double> latency;
    size_t frames = 0, fresh = 0;
    uint32_t max_samples_seen = 0, last_samples = 0;
    double first_frame_ms = -1, last_frame_ms = 0, last_fresh_ms = 0, first_fresh_ms = -1;
    uint64_t pose_id = 0;
    std::optional<PageDecoder> decoder;
    decoder.emplace();
    std::vector<double> decode_ms, encode_ms, depth_bytes, alpha_bytes, inflate_ms, psnr;
    std::optional<ImageRgba8> last_image;
    size_t image_bytes = 0, key_frames = 0, keyframe_requests = 0, undecoded = 0, refused_frames = 0;
    std::string stream_codec = session.value("codec", "jpeg");
    double next_pose_ms = 0;
    // The master sends status messages four times a second: silence this long is a dead link.
    constexpr double kSilentConnectionMs = 5000;
    while (now_ms() < end_ms) {
      try {
        if (now_ms() >= next_pose_ms && now_ms() < moving_until) {
          auto pose = orbit.next()->pose;
          json message = {{"type", "pose"}, {"id", ++pose_id}, {"t", now_ms()}, {"position", array3(pose.position)},
                          {"orientation", array4(pose.orientation)}};
          if (stereo) {
            const float half_v = float(std::tan(fov * M_PI / 360.0)), half_h = float(half_v * aspect);
            const auto right = rotate(pose.orientation, {1, 0, 0});
            json views = json::array();
            for (float side : {-0.5f, 0.5f}) {
              std::array<float, 3> p = pose.position;
              for (int i = 0; i < 3; ++i) p[size_t(i)] += side * float(ipd) * right[size_t(i)];
              views.push_back({{"position", array3(p)}, {"orientation", array4(pose.orientation)},
                               {"frustum", {-half_h, half_h, -half_v, half_v}}});
            }
            message["views"] = views;
          }
          sent_at[pose_id] = message["t"].get<double>();
          if (pose_id > 10000) {  // an hour of poses: forget those no frame will answer any more
            sent_at.erase(sent_at.begin(), sent_at.lower_bound(pose_id - 10000));
            seen_pose.erase(seen_pose.begin(), seen_pose.lower_bound(pose_id - 10000));
          }
          client->send_text(message.dump());
          next_pose_ms += 1000.0 / rate;
          if (next_pose_ms < now_ms()) next_pose_ms = now_ms();  // a stall: keep the rate, do not burst
        }
        const double wait = std::max(1.0, std::min(next_pose_ms, end_ms) - now_ms());
        auto m = client->receive(std::chrono::milliseconds(int64_t(now_ms() < moving_until ? wait : end_ms - now_ms() + 1)));
        if (!m) {
          if (reconnect && now_ms() - last_message_ms > kSilentConnectionMs) throw ConnectionClosed(-1, "silent for 5 s");
          continue;
        }
        last_message_ms = now_ms();
        if (!m->binary) continue;
        const double received = now_ms();
        FrameMessage frame = unpack_frame_message(m->data);
        // The master's time on the frame's image: the codec's (conversion and encoding) or the JPEG bands'.
        if (const auto stages = frame.header.find("stages"); stages != frame.header.end() && stages->is_object()) {
          if (const auto encode = stages->find("encode"); encode != stages->end() && encode->is_number())
            encode_ms.push_back(encode->get<double>());
        }
        const uint64_t frame_id = frame.header.at("frame").get<uint64_t>();
        if (frame.video) {
          image_bytes += frame.video->size();
          stream_codec = frame.header["video"].value("codec", stream_codec);
          if (frame.header["video"].value("key", false)) ++key_frames;
        } else {
          for (const auto& band : frame.bands) image_bytes += band.jpeg.size();
          stream_codec = "jpeg";
        }
        const std::filesystem::path reference_file =
            reference.empty() ? std::filesystem::path() : std::filesystem::path(reference) / ("frame-" + std::to_string(frame_id) + ".ppm");
        const bool compare = !reference.empty() && std::filesystem::exists(reference_file);
        if (!no_decode) {
          auto decoded = decoder->decode(frame, compare || !save_frame.empty());
          if (decoded.refused) {  // a malformed header: one line, and the stream starts again at a key frame
            std::cerr << "tessera-live-client: frame " << frame_id << ": " << *decoded.refused << "\n";
            ++refused_frames;
          }
          if (decoded.keyframe_reason) {  // as a page does: the master's next frame to it is a key frame
            client->send_text(json{{"type", "keyframe"}, {"reason", decoded.keyframe_reason->substr(0, 200)}}.dump());
            ++keyframe_requests;
          }
          if (!decoded.decoded) {
            ++undecoded;
            continue;  // nothing to show: no `displayed`
          }
          if (decoded.image) last_image = std::move(decoded.image);
        }
        if (frame.depth || frame.alpha) {
          const double inflate_start = now_ms();
          if (frame.depth) {
            depth_bytes.push_back(double(frame.depth->size()));
            frame.depth_values();  // inflated as a page does (and checked)
          }
          if (frame.alpha) {
            alpha_bytes.push_back(double(frame.alpha->size()));
            frame.alpha_values();
          }
          inflate_ms.push_back(now_ms() - inflate_start);
        }
        const double shown = now_ms();
        decode_ms.push_back(shown - received);
        const uint64_t id = frame.header.at("pose_id").get<uint64_t>();
        const uint32_t samples = frame.header.at("samples").get<uint32_t>();
        client->send_text(json{{"type", "displayed"}, {"frame", frame.header.at("frame")}, {"pose_id", id}, {"received", received},
                               {"decoded", shown}, {"t", shown}}
                              .dump());
        ++frames;
        if (first_frame_ms < 0) first_frame_ms = shown;
        last_frame_ms = shown;
        last_samples = samples;
        max_samples_seen = std::max(max_samples_seen, samples);
        // the first frame that answers a pose (a path tracer's holds its spp samples, a held pose's more)
        std::optional<double> pose_latency;
        if (!seen_pose[id] && sent_at.count(id)) {
          pose_latency = shown - sent_at[id];
          latency.push_back(*pose_latency);
          if (first_fresh_ms < 0) first_fresh_ms = shown;
          last_fresh_ms = shown;
          ++fresh;
        }
        seen_pose[id] = true;
        if (frames_log) frames_log->add(connection, frame_id, id, samples, pose_latency);
        if (compare && last_image) {  // after the report: the comparison is no part of the page's time
          if (const auto expected = read_reference(reference_file);
              expected && expected->width() == last_image->width() && expected->height() == last_image->height())
            psnr.push_back(std::min(99.0, psnr_rgb(*expected, *last_image)));
        }
      } catch (const ConnectionClosed& e) {
        if (!reconnect) throw;
        std::fprintf(stderr, "tessera-live-client: connection %u lost (%s); reconnecting\n", connection, e.what());
        ++reconnects;
        backoff.reset();
        std::this_thread::sleep_for(backoff.next());
        if (!connect_until_done()) break;
        decoder.emplace();  // a new stream starts with a key frame
      }
    }
    if (!save_frame.empty() && last_image) write_png(save_frame, *last_image);
    const double span_s = (last_frame_ms - first_frame_ms) / 1000.0, fresh_span_s = (last_fresh_ms - first_fresh_ms) / 1000.0;
    const json result = {{"poses_sent", pose_id},
                         {"frames", frames},
                         {"new_pose_frames", fresh},
                         {"latency_ms", latency.empty() ? json{{"median", nullptr}, {"p95", nullptr}}
                                                        : json{{"median", percentile(latency, 0.5)}, {"p95", percentile(latency, 0.95)}}},
                         {"fps", frames > 1 && span_s > 0 ? double(frames - 1) / span_s : 0.0},
                         {"new_pose_fps", fresh > 1 && fresh_span_s > 0 ? double(fresh - 1) / fresh_span_s : 0.0},
                         {"decode_ms", {{"median", percentile(decode_ms, 0.5)}, {"p95", percentile(decode_ms, 0.95)}}},
                         {"encode_ms", {{"median", percentile(encode_ms, 0.5)}, {"p95", percentile(encode_ms, 0.95)}}},
                         {"aux", {{"depth_bytes", percentile(depth_bytes, 0.5)}, {"alpha_bytes", percentile(alpha_bytes, 0.5)},
                                  {"inflate_ms", percentile(inflate_ms, 0.5)}}},
                         {"codec", stream_codec},
                         {"mbit_per_s", span_s > 0 ? double(image_bytes) * 8 / 1e6 / span_s : 0.0},
                         {"bytes_per_frame", frames ? double(image_bytes) / double(frames) : 0.0},
                         {"psnr_db", psnr.empty() ? json(nullptr) : json(percentile(psnr, 0.5))},
                         {"psnr_frames", psnr.size()},
                         {"key_frames", key_frames},
                         {"keyframe_requests", keyframe_requests},
                         {"refused_frames", refused_frames},
                         {"undecoded_frames", undecoded},
                         {"max_samples", max_samples_seen},
                         {"last_samples", last_samples},
                         {"eyes", stereo ? 2 : 1},
                         {"connections", connection},
                         {"reconnects", reconnects},
                         {"size", session.at("size")},
                         {"mode", session.at("settings").at("mode")}};
    if (json_out) {
      std::cout << result.dump(2) << std::endl;
    } else {
      char latency_text[96] = "n/a (no frame answered a pose)";
      if (!latency.empty())
        std::snprintf(latency_text, sizeof latency_text, "%.1f ms median, %.1f ms p95", percentile(latency, 0.5),
                      percentile(latency, 0.95));
      std::printf("%zu frames (%zu of new poses) for %llu poses: pose -> frame %s; %.2f fps, %.2f new-pose fps; "
                  "up to %u samples; master encode %.1f ms, decode %.1f ms median\n",
                  frames, fresh, (unsigned long long)pose_id, latency_text, result["fps"].get<double>(),
                  result["new_pose_fps"].get<double>(), max_samples_seen, result["encode_ms"]["median"].get<double>(),
                  result["decode_ms"]["median"].get<double>());
      std::printf("%s stream: %.1f Mbit/s, %.0f bytes a frame, %zu key frames (%zu asked for)", stream_codec.c_str(),
                  result["mbit_per_s"].get<double>(), result["bytes_per_frame"].get<double>(), key_frames, keyframe_requests);
      if (!psnr.empty()) std::printf(", PSNR %.2f dB median over %zu frames", percentile(psnr, 0.5), psnr.size());
      std::printf("\n");
      if (!depth_bytes.empty() || !alpha_bytes.empty())
        std::printf("depth %.0f bytes, alpha %.0f bytes a frame (medians), inflated in %.2f ms\n", percentile(depth_bytes, 0.5),
                    percentile(alpha_bytes, 0.5), percentile(inflate_ms, 0.5));
    }
    if (!frames) throw Error("no frame arrived in the session's time: the master is busy or its workers are gone");
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
