// tessera-master: drives a cluster of tessera-worker daemons: poses in, tiles out, frames back.
#include <CLI/CLI.hpp>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "common/base/frame_memory.h"
#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/render/camera_setup.h"
#include "common/base/hash.h"
#include "common/net/address.h"
#include "common/net/auth.h"
#include "common/net/log.h"
#include "master/cluster/cluster.h"
#include "master/cluster/worker_sources.h"
#include "master/live/access_token.h"
#include "master/live/lan_addresses.h"
#include "master/live/live_pose_source.h"
#include "master/live/live_session.h"
#include "master/live/qr_code.h"
#include "master/pose/pose_source.h"
#include "master/session/mode_options.h"
#include "master/session/render_session.h"
#include "master/session/scene_clock.h"

namespace {

using namespace tessera;

std::atomic<master::RenderSession*> running_session{nullptr};
std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  interrupted = true;
  if (auto* session = running_session.load()) session->request_stop();
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the program at once
  std::signal(SIGTERM, SIG_DFL);
}

std::pair<uint32_t, uint32_t> parse_size(const std::string& text) {
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') || w == 0 || h == 0)
    throw UsageError("bad --size '" + text + "' (expected WIDTHxHEIGHT such as 1024x1024)");
  return {w, h};
}

std::chrono::milliseconds seconds(double s, const char* what) {
  if (!(s >= 0) || s > 86400) throw UsageError(std::string("bad ") + what + ": seconds in 0..86400");
  return std::chrono::milliseconds(int64_t(s * 1000));
}

}  // namespace

int main(int argc, char** argv) {
  tessera::keep_frame_buffers_resident();
  CLI::App app{
      "tessera-master: drive a Tessera cluster. Connects to the workers (shared-secret handshake), makes sure each\n"
      "holds the scene (pushing it when missing), then for every pose hands out the frame's tiles (static: dealt\n"
      "round-robin, one batch back per worker; dynamic: on demand, several in flight per worker), composites the\n"
      "tiles and writes whole frames as PNGs. Workers that fail mid-frame have their tiles given to the others and\n"
      "may rejoin; a frame is never written incomplete.\n"
      "Exit status: 0 all frames written, 1 error (e.g. no worker left), 2 bad usage, 3 some frames skipped.",
      "tessera-master"};
  std::string mode = "raytrace", size = "1024x1024", schedule = "static";
  std::string balance = "even", poses = "orbit", out, stats, compression = "auto", tile = "auto", inflight = "auto";
  std::string tile_order = "cost", reissue = "on";
  unsigned pipeline = 1, max_depth = 6, light_samples = 4, orbit_frames = 0;
  size_t frames = 0;
  int zstd_level = 1;
  float fov = 0, ipd = 0, exposure = 1, orbit_scale = 0.3f;
  double frame_timeout = 120, stall_timeout = 60, heartbeat_timeout = 5, connect_timeout = 5, startup_timeout = 60;
  double reconnect_interval = 2, no_worker_timeout = 10, udp_timeout = 10;
  bool overlay = false, json = false, quiet = false, no_status = false, no_qr = false;
  std::string serve, tls_cert, tls_key, token;
  int jpeg_quality = 85;
  unsigned jpeg_threads = 0;
  std::string codec = "auto", stream_bitrate = "auto", reference_frames;
  unsigned video_strips = 0;
  unsigned max_samples = 16, max_path_samples = 256;
  float guard_band = 3;
  double time_scale = 1, scene_time = 0;
  master::WorkerSourcesCli sources;  // --workers, --workers-file, --cluster-file, --discover*, --scene, --secret-file
  master::add_worker_source_options(app, sources);
  app.add_option("--mode", mode, "Render mode: raytrace (Whitted) | pathtrace (stereo VR path tracer) | vct (voxel cone tracing)")
      ->capture_default_str()->check(CLI::IsMember({"raytrace", "pathtrace", "vct"}));
  app.add_option("--size", size, "Image size WIDTHxHEIGHT (per eye)")->capture_default_str();
  app.add_option("--tile", tile, "Tile size in pixels (8..1024), or auto: the largest of 32..256 that still gives every "
                                 "worker 8 tiles a frame, 2 x WORKERS from 4 workers on (pathtrace: 4, as its pairs are merged, "
                                 "resolved and sent one by one), and never more than 1024 tiles a frame (the master's cost per tile)")
      ->capture_default_str();
  app.add_option("--schedule", schedule, "static (Strategy II: round-robin, one batch per worker) | dynamic "
                                         "(Strategy I: tiles on demand, each returned when done)")
      ->capture_default_str()->check(CLI::IsMember({"static", "dynamic"}));
  app.add_option("--inflight", inflight, "dynamic: tiles in flight per worker (1..64), or auto: enough that each worker "
                                         "renders on while finished tiles travel (measured)")
      ->capture_default_str();
  app.add_option("--tile-order", tile_order, "dynamic: cost (the costliest tiles first, by their last render times, so the "
                                             "cheap ones fill the frame's end) | rows")
      ->capture_default_str()->check(CLI::IsMember({"cost", "rows"}));
  app.add_option("--reissue", reissue, "dynamic: at a frame's end, also give a worker that would idle a copy of a tile "
                                       "another still holds when it would have it back sooner; the first copy counts (on | off)")
      ->capture_default_str()->check(CLI::IsMember({"on", "off"}));
  app.add_option("--balance", balance, "static: even shares, or shares by each worker's measured speed (measured)")
      ->capture_default_str()->check(CLI::IsMember({"even", "measured"}));
  app.add_option("--pipeline", pipeline, "Frames in flight: 2 sends the next frame's tiles before this frame's are all back")
      ->capture_default_str()->check(CLI::Range(1u, 8u));
  app.add_option("--poses", poses, "Pose source: a trajectory file (CSV or JSON lines), orbit (around the scene's centre), turntable "
                                   "(around the scene, outside its bounds), camera (the scene's "
                                   "default view, repeated) or udp://HOST:PORT (live from a headset)")
      ->capture_default_str();
  app.add_option("--frames", frames, "Frames to render (default: every pose of a file; 36 for orbit and turntable; 1 for camera; UDP: until the stream stops)");
  app.add_option("--out", out, "Folder for frame_NNNNNN.png (without it frames are composited and counted, not written)");
  app.add_flag("--overlay", overlay, "Also write overlay_NNNNNN.png: tiles coloured by the worker that rendered them");
  app.add_option("--stats", stats, "Per-frame statistics: FILE.json (summary + frames) or FILE.csv");
  app.add_flag("--json", json, "Print the run's summary as JSON on stdout");
  app.add_option("--fov", fov, "Vertical field of view in degrees (default: the scene's)");
  app.add_option("--ipd", ipd, "Stereo: interpupillary distance in scene units; eyes side by side (default mono)");
  master::ModeCli mode_cli;
  master::add_mode_options(app, mode_cli);
  app.add_option("--max-depth", max_depth,
                 "raytrace, vct: mirror/glass bounces (default 6); pathtrace: path vertices (default 8)")
      ->check(CLI::Range(0u, 32u));
  app.add_option("--light-samples", light_samples,
                 "raytrace, vct: shadow rays toward emissive triangles per hit (default 4); pathtrace: emitter "
                 "samples per vertex (default 1)")
      ->check(CLI::Range(0u, 256u));
  app.add_option("--exposure", exposure, "Multiplier on radiance before sRGB encoding")->capture_default_str();
  app.add_option("--compression", compression, "Tile pixels on the wire: zstd | none | auto (per worker: raw on loopback, "
                                               "else zstd unless the measured link moves raw pixels faster)")
      ->capture_default_str()->check(CLI::IsMember({"zstd", "none", "auto"}));
  app.add_option("--zstd-level", zstd_level, "zstd level for tiles")->capture_default_str()->check(CLI::Range(1, 19));
  app.add_option("--frame-timeout", frame_timeout, "Seconds; a frame not whole by then is skipped (not written)")
      ->capture_default_str();
  app.add_option("--stall-timeout", stall_timeout, "Seconds a worker may hold tiles without finishing one before its tiles "
                                                   "go to others")
      ->capture_default_str();
  app.add_option("--heartbeat-timeout", heartbeat_timeout, "Seconds of silence after which a worker counts as gone")
      ->capture_default_str();
  app.add_option("--connect-timeout", connect_timeout, "Seconds to connect to a worker")->capture_default_str();
  app.add_option("--startup-timeout", startup_timeout, "Seconds to wait for every worker to be ready (scene loaded) or to fail")
      ->capture_default_str();
  app.add_option("--reconnect-interval", reconnect_interval, "Seconds between attempts to (re)connect a lost worker; 0 = never")
      ->capture_default_str();
  app.add_option("--no-worker-timeout", no_worker_timeout, "Seconds to wait for a worker to rejoin when none is left; then a run ends, a live session (--serve) drops its open frames and goes on serving")
      ->capture_default_str();
  app.add_option("--udp-timeout", udp_timeout, "UDP poses: seconds to wait for the first pose; silence that long ends the run")
      ->capture_default_str();
  app.add_option("--orbit-frames", orbit_frames, "orbit, turntable: poses per revolution (default: --frames)");
  app.add_option("--orbit-scale", orbit_scale,
                 "orbit: ellipse radii as a share of the scene's half extents (> 1 leaves the bounds); turntable: distance "
                 "as a share of the one that frames the scene (default 1)")
      ->capture_default_str();
  app.add_option("--serve", serve, "Live session: serve the web page over HTTPS/WSS on [HOST:]PORT (host 127.0.0.1 unless given; "
                                   "0.0.0.0 for phones and headsets on the LAN: prints a URL for each of this machine's "
                                   "addresses, and a QR code of the first when stdout is a terminal); the driving page's poses "
                                   "steer the cluster until Ctrl-C (or --frames)");
  app.add_option("--jpeg-quality", jpeg_quality, "Live session: JPEG quality of the frames sent to the pages (1..100)")
      ->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--jpeg-threads", jpeg_threads,
                 "Live session: JPEG bands of a frame encoded at once, one a thread (bands of 128+ rows; 0: one per hardware thread, "
                 "1: one JPEG a frame)")
      ->capture_default_str()->check(CLI::Range(0u, 256u));
  app.add_option("--codec", codec,
                 "Live session: the pages' stream, auto | jpeg | h264 | vp9 | av1 (a video codec only for pages that decode it, "
                 "else JPEG; auto: the first of h264, vp9, av1 the page decodes; docs/streaming.md)")
      ->capture_default_str();
  app.add_option("--stream-bitrate", stream_bitrate,
                 "Live session: video bitrate in Mbit/s, or auto (adapts to each page's link, from 30, at most 80)")
      ->capture_default_str();
  app.add_option("--video-strips", video_strips,
                 "Live session: horizontal strips of a video frame, each its own stream coded in parallel (0: one per 128 rows, "
                 "at most one per core, at most 16)")
      ->capture_default_str()->check(CLI::Range(0u, 16u));
  app.add_option("--reference-frames", reference_frames,
                 "Live session (benchmarks, tests): write every EVERY-th frame (default 30) as it was before encoding, "
                 "DIR/frame-F.ppm, for a client on this host to measure what it decoded");
  app.add_option("--max-samples", max_samples, "Live session, raytrace and vct: jittered samples accumulated while the pose holds")
      ->capture_default_str()->check(CLI::Range(1u, 4096u));
  app.add_option("--max-path-samples", max_path_samples, "Live session, pathtrace: samples per pixel accumulated while the pose holds")
      ->capture_default_str()->check(CLI::Range(1u, 1u << 20));
  // 3 degrees: a head turning at 60 degrees a second (a glance) moves 3 degrees in the 50 ms from
  // the pose to the frame on the display, so the page reprojects without bare edges; it costs about
  // a quarter more pixels at a 60-90 degree field of view.
  app.add_option("--guard-band", guard_band,
                 "Live session: degrees each eye is rendered wider than the page asked, on every side, so the page can "
                 "reproject to where the head turned meanwhile (0..20; 0: off; needs workers with eye views)")
      ->capture_default_str();
  app.add_option("--tls-cert", tls_cert, "Live session: PEM certificate (default: a self-signed one kept in ~/.config/tessera)");
  app.add_option("--tls-key", tls_key, "Live session: PEM private key of --tls-cert");
  app.add_option("--token", token, "Live session: the access token in the page's URL (default: 32 random hex characters)");
  app.add_flag("--no-qr", no_qr, "Live session: no QR code of the URL in the terminal");
  app.add_option("--time-scale", time_scale,
                 "Scene clock: seconds of scene time a second (0..1000; 0: the clock stands still). Live: of wall time "
                 "(the page pauses, plays and seeks it); otherwise: of the poses' time")
      ->capture_default_str();
  app.add_option("--scene-time", scene_time, "Scene clock: the scene time in seconds of the first frame (animations loop)")
      ->capture_default_str();
  app.add_flag("--quiet", quiet, "Log only warnings");
  app.add_flag("--no-status", no_status, "No live status line");
  if (const auto done = cli::parse(app, argc, argv)) return *done;
  net::set_log_program("tessera-master");
  net::set_log_quiet(quiet);
  try {
    if (sources.print_cluster) {
      master::print_cluster(sources);
      return 0;
    }
    auto addresses = master::worker_addresses(sources);  // empty with --discover: found below, after the checks
    const auto whole_number = [](const std::string& text, const char* option, unsigned low, unsigned high) {
      unsigned value = 0;
      char extra = 0;
      if (std::sscanf(text.c_str(), "%u%c", &value, &extra) != 1 || value < low || value > high)
        throw UsageError(std::string("bad ") + option + " '" + text + "' (auto or " + std::to_string(low) + ".." + std::to_string(high) + ")");
      return value;
    };
    const unsigned inflight_depth = inflight == "auto" ? 2 : whole_number(inflight, "--inflight", 1, 64);
    if (!(exposure > 0)) throw UsageError("--exposure must be positive");
    if (!(ipd >= 0)) throw UsageError("--ipd must not be negative");
    check_fov_option(fov);
    const bool live = !serve.empty();
    if (!(time_scale >= 0 && time_scale <= master::SceneClock::kMaxTimeScale)) throw UsageError("--time-scale must lie in 0..1000");
    if (!(std::fabs(scene_time) <= master::SceneClock::kMaxTime)) throw UsageError("--scene-time must be a number of seconds within 1e9 of 0");
    if (live && app.count("--poses")) throw UsageError("--serve takes its poses from the driving page: leave out --poses");
    if (!live && (app.count("--tls-cert") || app.count("--tls-key") || app.count("--token") || app.count("--no-qr")))
      throw UsageError("--tls-cert, --tls-key, --token and --no-qr belong to --serve");
    if (live && !token.empty() && token.size() < 16) throw UsageError("--token must have at least 16 characters");
    if (!(guard_band >= 0 && guard_band <= master::kMaxGuardBandDegrees)) throw UsageError("--guard-band must lie in 0..20 degrees");
    if (!live && app.count("--guard-band")) throw UsageError("--guard-band belongs to --serve");
    // a mistyped port is a usage error, found before the scene is read
    const net::HostPort serve_address = !live ? net::HostPort{} : cli::option_value([&] {
      const bool has_host = serve.find(':') != std::string::npos;
      return net::parse_host_port(has_host ? serve : "127.0.0.1:" + serve, "--serve", true);
    });
    if (!live && (app.count("--codec") || app.count("--stream-bitrate") || app.count("--reference-frames") || app.count("--video-strips")))
      throw UsageError("--codec, --stream-bitrate, --video-strips and --reference-frames belong to --serve");
    master::live::StreamOptions stream_options;
    stream_options.codec = master::live::parse_codec_setting(codec);
    stream_options.rate = master::live::parse_stream_bitrate(stream_bitrate);
    stream_options.strips = video_strips;
    if (!reference_frames.empty()) stream_options.reference = master::live::parse_reference_frames(reference_frames);
    if (live) poses = "live";
    if ((poses == "orbit" || poses == "turntable") && frames == 0) frames = 36;
    if (poses == "camera" && frames == 0) frames = 1;

    master::SessionOptions options;
    std::tie(options.width, options.height) = parse_size(size);
    options.tile_size = tile == "auto" ? 0 : whole_number(tile, "--tile", 8, 1024);
    options.ipd = ipd;
    if (fov > 0) options.fov = fov;
    if (live) options.guard_band_degrees = guard_band;
    options.raytrace.set_max_depth(max_depth);
    options.raytrace.set_light_samples(light_samples);
    options.raytrace.set_exposure(exposure);
    master::apply_mode_options(app, mode, mode_cli, options);
    options.encoding = compression == "none" ? wire::RAW_RGBA8 : wire::ZSTD_RGBA8;
    options.compression_auto = compression == "auto";
    options.zstd_level = zstd_level;
    options.policy.schedule = schedule == "static" ? master::Schedule::static_split : master::Schedule::dynamic;
    options.policy.inflight = inflight_depth;
    options.inflight_auto = inflight == "auto";
    options.policy.cost_order = tile_order == "cost";
    options.policy.reissue = reissue == "on";
    options.policy.balance = balance == "measured" ? master::Balance::measured : master::Balance::even;
    options.pipeline = pipeline;
    options.frames = frames;
    if (!out.empty()) options.out_dir = out;
    options.overlay = overlay;
    if (overlay && out.empty()) throw UsageError("--overlay needs --out");
    if (!stats.empty()) options.stats_path = stats;
    options.status_line = !no_status && !quiet;
    options.frame_timeout = seconds(frame_timeout, "--frame-timeout");
    options.stall_timeout = seconds(stall_timeout, "--stall-timeout");
    options.startup_timeout = seconds(startup_timeout, "--startup-timeout");
    options.no_worker_timeout = seconds(no_worker_timeout, "--no-worker-timeout");
    options.wait_for_workers = live;
    options.time_scale = time_scale;
    options.scene_time_start = scene_time;

    master::LinkOptions link;
    link.secret = net::load_secret(sources.secret_file);
    char host[256] = "master";
    ::gethostname(host, sizeof host - 1);
    link.client_name = std::string("tessera-master on ") + host;
    link.connect_timeout = seconds(connect_timeout, "--connect-timeout");
    link.handshake_timeout = std::max(link.connect_timeout, std::chrono::milliseconds(2000));
    link.heartbeat_timeout = seconds(heartbeat_timeout, "--heartbeat-timeout");
    if (link.heartbeat_timeout < std::chrono::milliseconds(1000)) throw UsageError("--heartbeat-timeout must be at least 1 s");
    link.scene_timeout = options.startup_timeout;
    link.startup_timeout = options.startup_timeout;
    link.mode = mode;
    if (mode == "vct") link.prepare_vct = options.vct;

    const auto scene = master::SceneFile::load(sources.scene);
    master::PoseSourceOptions pose_options;
    pose_options.udp_timeout_seconds = udp_timeout;
    pose_options.orbit_frames = orbit_frames ? orbit_frames : unsigned(std::max<size_t>(frames, 1));
    pose_options.orbit_scale = poses == "turntable" && app.count("--orbit-scale") == 0 ? 1.0f : orbit_scale;
    pose_options.vertical_fov_degrees = fov;
    std::unique_ptr<master::PoseSource> pose_source;
    std::unique_ptr<master::live::LiveSession> live_session;
    master::live::LivePoseSource* live_poses = nullptr;
    if (live) {
      auto source = std::make_unique<master::live::LivePoseSource>();
      live_poses = source.get();
      pose_source = std::move(source);
    } else {
      pose_source = master::make_pose_source(poses, scene->manifest, pose_options);
    }

    if (sources.discover) addresses = master::discover_for_run(sources, link.secret);
    if (options.tile_size == 0)
      options.tile_size = master::auto_tile_size(options.width, options.height, options.stereo || options.ipd > 0, addresses.size(),
                                                 mode == "pathtrace");
    net::log_info("scene " + scene->name + " (" + hash64_hex(scene->hash) + "), " + std::to_string(addresses.size()) +
                  " workers, " + schedule + " schedule, " + size + " in " + std::to_string(options.tile_size) + "-pixel tiles, poses from " +
                  pose_source->describe());
    master::Cluster cluster(addresses, link, scene, seconds(reconnect_interval, "--reconnect-interval"));
    if (live) {
      // the addresses a headset can open (this machine's LAN addresses for 0.0.0.0), best first
      const auto hosts = master::live::served_hosts(serve_address.host, master::live::local_interface_addresses());
      master::live::LiveOptions live_options;
      live_options.server.host = serve_address.host;
      live_options.server.port = serve_address.port;
      live_options.server.url_host = hosts.front();
      live_options.server.token = token.empty() ? master::live::random_token() : token;
      live_options.server.tls = master::live::load_tls_identity(
          tls_cert.empty() ? std::nullopt : std::optional<std::filesystem::path>(tls_cert),
          tls_key.empty() ? std::nullopt : std::optional<std::filesystem::path>(tls_key), hosts);
      live_options.jpeg_quality = jpeg_quality;
      live_options.jpeg_threads = jpeg_threads;
      live_options.stream = stream_options;
      live_options.max_samples = max_samples;
      live_options.max_path_samples = max_path_samples;
      const auto& tls = live_options.server.tls;
      live_session = std::make_unique<master::live::LiveSession>(live_options, *scene, options, *live_poses);
      live_session->start();
      // stdout's first line is "serving URL" (scripts and tests read it); the other addresses follow
      const auto url_for = [&](const std::string& host) { return master::live::page_url(host, live_session->port(), live_options.server.token); };
      std::printf("serving %s\n", url_for(hosts.front()).c_str());
      for (size_t i = 1; i < hosts.size(); ++i) std::printf("also %s\n", url_for(hosts[i]).c_str());
      std::printf("certificate %s%s, SHA-256 fingerprint %s\n", tls.certificate_path.c_str(),
                  tls.replaced ? " (new, self-signed: the one kept did not name every address served)"
                  : tls.created ? " (new, self-signed)"
                                : "",
                  tls.fingerprint.c_str());
      if (!tls.unnamed.empty()) {
        std::string names;
        for (const auto& n : tls.unnamed) names += (names.empty() ? "" : ", ") + n;
        net::log_warning("the certificate does not name " + names + ": browsers opening those addresses will warn about it");
      }
      if (!no_qr && ::isatty(STDOUT_FILENO)) std::fputs(master::live::qr_terminal_text(master::live::QrCode(url_for(hosts.front()))).c_str(), stdout);
      std::fflush(stdout);
    }
    master::RenderSession session(options, cluster, *scene, *pose_source);
    if (live_session) session.set_observer(live_session.get());
    running_session = &session;
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    std::signal(SIGPIPE, SIG_IGN);
    cluster.start();
    master::RunSummary summary;
    try {
      summary = session.run();
    } catch (const std::exception& e) {
      running_session = nullptr;
      if (live_session) live_session->stop(std::string("the master stopped: ") + e.what());
      throw;
    }
    running_session = nullptr;
    cluster.stop();
    if (live_session) live_session->stop(interrupted ? "the master was stopped (Ctrl-C)" : "the session ended");

    if (json) {
      std::cout << master::to_json(summary).dump(2) << std::endl;
    } else {
      std::printf("%zu frames of %ux%u: %.1f ms a frame (%.1f without the first), one every %.1f ms, pose-to-frame %.1f ms, "
                  "%.0f KB a frame on the wire\n",
                  summary.frames_complete, options.width * (options.stereo ? 2 : 1), options.height, summary.mean_frame_ms,
                  summary.mean_frame_ms_after_first, summary.mean_interval_ms, summary.mean_latency_ms,
                  summary.mean_wire_bytes / 1024.0);
      if (live && summary.page_latency_count)
        std::printf("page-measured pose-to-frame latency %.1f ms median, %.1f ms p95 over %zu new poses; %.2f new-pose frames/s, "
                    "%.2f frames/s with refinements\n",
                    summary.page_latency_median_ms, summary.page_latency_p95_ms, summary.page_latency_count,
                    summary.fresh_frames_per_second, summary.frames_per_second);
      if (live && summary.live_stages) {
        const auto& m = *summary.live_stages;
        std::printf("live stages, medians over new poses (ms): pose wait %.2f, render %.2f, wire %.2f, composite %.2f, encode %.2f, "
                    "send %.2f, network+queue %.2f, page decode %.2f, page draw %.2f\n",
                    m.pose_wait, m.render, m.wire, m.composite, m.encode, m.send, m.network, m.decode, m.draw);
      }
      if (options.out_dir && summary.frames_complete)
        std::printf("frames in %s (frame_NNNNNN.png%s)\n", options.out_dir->c_str(), overlay ? ", overlay_NNNNNN.png" : "");
    }
    if (summary.frames_failed) {
      std::fprintf(stderr, "tessera-master: error: %zu of %zu frames could not be completed and were not written\n",
                   summary.frames_failed, summary.frames_failed + summary.frames_complete);
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
