// tessera-netem-relay: TCP relay that adds delay ± jitter (and optionally a shared link rate) between
// the master and its workers, for deploy/bench-cluster. See netem_relay.h.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>

#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/file_io.h"
#include "deploy/netem-relay/netem_relay.h"

int main(int argc, char** argv) {
  using namespace tessera;
  CLI::App app{
      "tessera-netem-relay: forwards TCP connections (LISTEN -> TARGET, one --route each) and holds every chunk for\n"
      "delay ± jitter (uniform) while keeping each direction's byte order, so that a master and its workers see a\n"
      "link with latency. --rate additionally serializes all chunks of every route and both directions onto one\n"
      "shared link (half-duplex air time, as on Wi-Fi). Runs until SIGINT or SIGTERM.\n"
      "Example: tessera-netem-relay --route 127.0.0.1:0=10.77.0.10:7100 --delay 5ms --jitter 2ms --port-file F",
      "tessera-netem-relay"};
  std::vector<std::string> routes;
  std::string delay = "0", jitter = "0", rate = "0", port_file, control;
  uint64_t seed = 1;
  app.add_option("--route", routes, "LISTEN_HOST:PORT=TARGET_HOST:PORT (repeatable; port 0 = any free port)")->required();
  app.add_option("--delay", delay, "One-way delay added to every chunk: 5ms, 500us, 0.01s (default ms)")->capture_default_str();
  app.add_option("--jitter", jitter, "Uniform jitter ± this much around --delay; order is kept")->capture_default_str();
  app.add_option("--rate", rate, "Shared link rate for all routes and both directions: 300mbit, 54mbit; 0 = unlimited")
      ->capture_default_str();
  app.add_option("--seed", seed, "Seed of the jitter's random numbers")->capture_default_str();
  app.add_option("--port-file", port_file, "Write the listening addresses, one HOST:PORT a line in --route order, then "
                                           "go on running (a --workers-file for tessera-master)");
  app.add_option("--control", control,
                 "On SIGHUP read this file's words and apply them over the command line's settings to every chunk from then on: "
                 "delay=5ms jitter=1ms rate=2mbit loss=20% partition=on|off (deploy/soak's link faults; an empty file: back to the "
                 "command line's)");
  if (const auto done = cli::parse(app, argc, argv)) return *done;

  try {
    netem::LinkProfile profile;
    profile.delay = cli::option_value([&] { return netem::parse_duration(delay, "--delay"); });
    profile.jitter = cli::option_value([&] { return netem::parse_duration(jitter, "--jitter"); });
    profile.rate_bits_per_s = cli::option_value([&] { return netem::parse_rate(rate, "--rate"); });
    profile.seed = seed;
    if (profile.jitter > profile.delay)
      throw UsageError("--jitter (" + jitter + ") must not exceed --delay (" + delay + ")");

    asio::io_context io;
    netem::Relay relay(io, profile);
    // --control: SIGHUP applies the file's settings (a bad file: one line on stderr, the link as it
    // was). Set before the port file is written: whoever reads it may signal at once.
    asio::signal_set reload(io);
    std::function<void()> wait_reload = [&] {
      reload.async_wait([&](std::error_code ec, int) {
        if (ec) return;
        try {
          relay.set_profile(netem::parse_profile_words(control.empty() ? "" : read_file_text(control), profile));
        } catch (const std::exception& e) {
          std::cerr << "tessera-netem-relay: --control " << control << ": " << e.what() << "\n";
        }
        wait_reload();
      });
    };
    if (!control.empty()) {
      reload.add(SIGHUP);
      wait_reload();
    }
    std::string listening;
    for (const auto& text : routes) {
      const auto eq = text.find('=');
      if (eq == std::string::npos) throw UsageError("--route '" + text + "' is not LISTEN=TARGET");
      netem::Route route{
          cli::option_value([&] { return net::parse_host_port(text.substr(0, eq), "--route listen address", true); }),
          cli::option_value([&] { return net::parse_host_port(text.substr(eq + 1), "--route target"); })};
      uint16_t port = 0;
      try {
        port = relay.add_route(route);
      } catch (const std::exception& e) {
        throw std::runtime_error("cannot listen on " + route.listen.text() + ": " + e.what());
      }
      route.listen.port = port;
      listening += route.listen.text() + "\n";
    }
    if (!port_file.empty()) {
      const std::string tmp = port_file + ".tmp";
      std::ofstream(tmp) << listening;
      if (std::rename(tmp.c_str(), port_file.c_str()) != 0) throw std::runtime_error("cannot write " + port_file);
    }
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](std::error_code, int) {
      relay.stop();
      reload.cancel();
      io.stop();
    });
    io.run();
    const auto c = relay.counters();
    std::cerr << "tessera-netem-relay: " << c.connections << " connections, " << c.bytes_to_target << " bytes to targets, "
              << c.bytes_from_target << " bytes back\n";
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
