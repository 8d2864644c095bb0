// tessera-worker: the render daemon a master drives over the network.
#include <CLI/CLI.hpp>
#include <csignal>
#include <optional>
#include <random>
#include <cstdio>
#include <thread>
#include <unistd.h>

#include "common/base/frame_memory.h"
#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/cl/device_selection.h"
#include "common/cl/memory_size.h"
#include "common/net/address.h"
#include "common/net/asio.h"
#include "common/net/auth.h"
#include "common/net/log.h"
#include "common/net/protocol.h"
#include "worker/daemon/beacon.h"
#include "worker/daemon/worker_server.h"
#include "worker/render/render_environment.h"

int main(int argc, char** argv) {
  tessera::keep_frame_buffers_resident();
  using namespace tessera;
  CLI::App app{
      "tessera-worker: render daemon of a Tessera cluster. Listens for masters, proves and checks the shared\n"
      "secret, loads scenes from its scene directory by content hash (or takes them pushed by the master,\n"
      "verified, into that directory) and renders the tiles it is asked for on its own render thread while\n"
      "the network thread sends finished tiles back. Stops cleanly on SIGINT/SIGTERM.",
      "tessera-worker"};
  std::string listen = "0.0.0.0:7100", scenes_dir, secret_file, device = "auto", mem_limit, name, port_file, max_scene = "4G";
  unsigned threads = 0, max_connections = 32, slowdown_ms = 0, encode_threads = 0, send_backlog_mib = 64;
  double heartbeat_timeout = 30;
  bool quiet = false;
  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0: any free port, see --port-file)")->capture_default_str();
  app.add_option("--scenes", scenes_dir, "Scene directory: .tpk files, indexed by content hash; pushed scenes land here (required)");
  app.add_option("--secret-file", secret_file, "File holding the cluster's shared secret: 32+ random bytes as hex, mode 600 "
                                               "(required; make one with --make-secret)");
  std::string make_secret_file;
  app.add_option("--make-secret", make_secret_file, "Write a fresh random secret (32 bytes as hex) into this new file with mode 600, "
                                                    "then exit; copy it to the master and every worker");
  app.add_option("--device", device, "auto | gpu | cpu | <index> (OpenCL; cpu = PoCL) | host (kernels compiled for this CPU) | "
                                     "null (answers every tile at once with a fixed image: a load test of the master, docs/scale.md)")
      ->capture_default_str();
  app.add_option("--gpu-mem-limit", mem_limit, "Refuse scenes that need more device memory, e.g. 950M");
  std::string scene_memory = "auto";
  app.add_option("--scene-memory", scene_memory,
                 "How scenes lie in device memory: fast (decoded vertices, small-leaf tree), compact (12-byte vertices,\n"
                 "larger leaves) or auto (fast where the scene fits --gpu-mem-limit, or 75 % of the device's memory, else\n"
                 "compact; docs/scene-memory.md)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "fast", "compact"}));
  app.add_option("--threads", threads, "Render threads of the host backend (0 = all cores)")->capture_default_str();
  app.add_option("--name", name, "Name shown to masters (default: host name and port)");
  app.add_option("--port-file", port_file, "Write the bound HOST:PORT here once listening (for scripts and tests)");
  app.add_option("--max-scene-size", max_scene, "Largest scene a master may push, e.g. 2G")->capture_default_str();
  std::string scene_quota = "16G";
  app.add_option("--scene-quota", scene_quota, "Most bytes of scenes the scene directory keeps; a push beyond it deletes "
                                               "the least recently used scenes first (0: no limit)")
      ->capture_default_str();
  app.add_option("--max-connections", max_connections, "Authenticated masters served at once; more are refused as busy "
                                                       "(connections still in the handshake have a budget of their own)")
      ->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--heartbeat-timeout", heartbeat_timeout, "Seconds of silence after which a master counts as gone")
      ->capture_default_str()->check(CLI::Range(1.0, 3600.0));
  app.add_option("--slowdown-ms", slowdown_ms, "Sleep this long after every tile: emulates a slower device (tests, "
                                               "load-balancing experiments)")
      ->capture_default_str();
  app.add_option("--encode-threads", encode_threads, "Threads encoding finished tiles beside the render thread (0 = half the cores)")
      ->capture_default_str()->check(CLI::Range(0u, 256u));
  app.add_option("--send-backlog", send_backlog_mib, "MiB of output a master's connection may have waiting before its "
                                                     "rendering pauses (other masters' does not)")
      ->capture_default_str()->check(CLI::Range(1u, 4096u));
  unsigned cpu_threads = 0;
  app.add_option("--cpu-threads", cpu_threads, "pathtrace: CPU helper threads tracing extra samples beside an OpenCL device")
      ->capture_default_str()->check(CLI::Range(0u, 256u));
  bool beacon = false;
  std::string beacon_to = "255.255.255.255:" + std::to_string(net::kDiscoveryPort);
  double beacon_interval = 1;
  app.add_flag("--beacon,!--no-beacon", beacon, "Announce this worker by UDP beacon (name, TCP port, protocol version; never "
                                               "the secret) so tessera-master --discover finds it")
      ->capture_default_str();
  app.add_option("--beacon-to", beacon_to, "Where beacons go: HOST:PORT,... (default the IPv4 broadcast address)")
      ->capture_default_str();
  app.add_option("--beacon-interval", beacon_interval, "Seconds between beacons")->capture_default_str()->check(CLI::Range(0.05, 3600.0));
  app.add_flag("--quiet", quiet, "Log only warnings");
  bool list_devices = false;
  app.add_flag("--list-devices", list_devices, "List the OpenCL devices --device can name, and exit");
  if (const auto done = cli::parse(app, argc, argv)) return *done;
  if (list_devices) {
    try {
      std::printf("%s", cl::format_device_list(cl::enumerate_devices()).c_str());
      return 0;
    } catch (const std::exception& e) {
      return cli::fail(app, e);
    }
  }
  net::set_log_program("tessera-worker");
  net::set_log_quiet(quiet);
  if (make_secret_file.empty())
    for (const auto& [value, option] : {std::pair{&scenes_dir, "--scenes"}, std::pair{&secret_file, "--secret-file"}})
      if (value->empty()) {
        std::fprintf(stderr, "tessera-worker: error: %s is required (see --help)\n", option);
        return 2;
      }
  try {
    if (!make_secret_file.empty()) {
      net::write_new_secret_file(make_secret_file);
      std::printf("wrote a new secret to %s (mode 600)\n", make_secret_file.c_str());
      return 0;
    }
    check_render_environment();  // a bad TESSERA_* render switch is refused at start
    worker::WorkerConfig config;
    config.device = device;
    config.host_threads = threads;
    if (!mem_limit.empty()) config.gpu_memory_limit = cl::parse_memory_size(mem_limit);
    config.max_scene_bytes = cl::parse_memory_size(max_scene);
    const uint64_t quota = scene_quota == "0" ? 0 : cli::option_value([&] { return cl::parse_memory_size(scene_quota); });
    config.max_connections = max_connections;
    config.slowdown_ms = slowdown_ms;
    config.send_backlog_bytes = uint64_t(send_backlog_mib) << 20;
    config.pathtrace_cpu_threads = cpu_threads;
    config.heartbeat_timeout = std::chrono::milliseconds(int64_t(heartbeat_timeout * 1000));
    const net::HostPort address = cli::option_value([&] { return net::parse_host_port(listen, "--listen", true); });
    if (device != "host" && threads != 0) throw UsageError("--threads applies to --device host only");
    config.secret = net::load_secret(secret_file);  // after the option checks: a bad option is a usage error
    if (device == "null") {
      config.device_name = "null (a fixed image, for load tests)";
    } else if (device == "host") {
      config.device_name = "host (" + std::to_string(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) + " threads)";
    } else {  // pick the device now, so a bad --device is an error at start-up, not at the first scene
      const cl::DeviceInfo picked = cl::select_device(device);
      config.device_name = picked.name + " (" + picked.platform_name + ")";
      config.device_memory_bytes = picked.global_mem_bytes;
    }

    RendererOptions renderer;
    renderer.device = device;
    if (config.gpu_memory_limit) renderer.gpu_memory_limit = config.gpu_memory_limit;
    renderer.host_threads = threads;
    worker::SceneStore scenes(scenes_dir, renderer, 2, quota);
    scenes.set_scene_memory_mode(*parse_scene_memory_mode(scene_memory));
    worker::RenderThread render;
    worker::WorkerCounters counters;
    TaskPool encoders(encode_threads);

    asio::io_context io;
    worker::WorkerServer server(io, {config, scenes, render, counters, &encoders});
    const net::HostPort bound = server.listen(address);
    if (name.empty()) {
      char host[256] = "worker";
      ::gethostname(host, sizeof host - 1);
      name = std::string(host) + ":" + std::to_string(bound.port);
    }
    config.name = name;
    if (!port_file.empty()) {
      const std::string text = bound.text() + "\n";
      write_file_atomically(port_file, text.data(), text.size());
    }
    std::optional<worker::Beacon> beacon_sender;
    if (beacon) {
      discovery::Beacon message;
      message.set_protocol_version(net::kProtocolVersion);
      message.set_port(bound.port);
      message.set_name(name.substr(0, net::kMaxBeaconName));
      message.set_device(config.device_name.substr(0, net::kMaxBeaconName));
      message.set_instance(std::random_device{}() * 0x100000000ull + std::random_device{}());
      worker::BeaconOptions options{cli::option_value([&] { return net::parse_host_port_list(beacon_to, "--beacon-to"); }),
                                    std::chrono::milliseconds(int64_t(beacon_interval * 1000))};
      beacon_sender.emplace(io, options, message);
      beacon_sender->start();
      net::log_info("beacon every " + std::to_string(beacon_interval).substr(0, 4) + " s to " + beacon_to);
    }
    net::log_info("listening on " + bound.text() + " as '" + name + "' (device " + config.device_name + ", " +
                  std::to_string(scenes.entries().size()) + " scenes in " + scenes.dir().string() + ")");

    std::signal(SIGPIPE, SIG_IGN);
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const asio::error_code& ec, int signal) {
      if (ec) return;
      net::log_info(std::string("caught ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + ", shutting down");
      server.stop("the worker is shutting down");
      if (beacon_sender) beacon_sender->stop();
      // Let the closes run (they unblock a render job waiting to send), then leave the loop; the
      // render thread is joined after it, never from this io thread.
      auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(100));
      timer->async_wait([&io, timer](const asio::error_code&) { io.stop(); });
    });
    io.run();
    render.stop();
    net::log_info("stopped (" + std::to_string(counters.tiles_rendered.load()) + " tiles rendered)");
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
