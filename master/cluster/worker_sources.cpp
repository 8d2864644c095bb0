#include "master/cluster/worker_sources.h"

#include <iostream>

#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/net/discovery.h"
#include "common/net/peer_text.h"
#include "common/net/log.h"
#include "master/cluster/cluster_file.h"
#include "master/cluster/discovery.h"

namespace tessera::master {

void add_worker_source_options(CLI::App& app, WorkerSourcesCli& cli) {
  auto* workers = app.add_option("--workers", cli.workers, "Workers as HOST:PORT,HOST:PORT,...");
  auto* workers_file = app.add_option("--workers-file", cli.workers_file, "File with one worker HOST:PORT a line ('#' comments)");
  auto* cluster_file = app.add_option("--cluster-file", cli.cluster_file,
                                      "Cluster file (protobuf text, proto/cluster_file.proto): workers, secret_file, scene; "
                                      "--scene/--secret-file override its entries");
  auto* discover = app.add_flag("--discover", cli.discover,
                                "Find the workers on the local network by their UDP beacons (tessera-worker --beacon); "
                                "they still must pass the secret handshake");
  workers->excludes(workers_file)->excludes(cluster_file)->excludes(discover);
  workers_file->excludes(cluster_file)->excludes(discover);
  app.add_option("--discover-timeout", cli.discover_timeout, "--discover: seconds to listen for beacons")
      ->capture_default_str()->check(CLI::Range(0.1, 600.0))->needs(discover);
  app.add_option("--discover-port", cli.discover_port, "--discover: UDP port the beacons arrive on")
      ->capture_default_str()->check(CLI::Range(1u, 65535u))->needs(discover);
  app.add_option("--discover-workers", cli.discover_workers, "--discover: stop listening once this many workers are heard")
      ->check(CLI::Range(1u, 4096u))->needs(discover);
  app.add_flag("--print-cluster", cli.print_cluster,
               "Print the --cluster-file's entries as tab-separated lines (for deploy/hosts) and exit")
      ->needs(cluster_file);
  app.add_option("--scene", cli.scene, "Packed scene (.tpk); pushed to workers that do not hold it (required unless the "
                                       "--cluster-file names one)");
  app.add_option("--secret-file", cli.secret_file, "File holding the cluster's shared secret (required unless --cluster-file)");
}

std::vector<net::HostPort> worker_addresses(WorkerSourcesCli& cli) {
  std::vector<net::HostPort> addresses;
  if (!cli.cluster_file.empty()) {
    const auto contents = read_cluster_file(cli.cluster_file);
    if (cli.scene.empty()) cli.scene = contents.file.scene();
    if (cli.secret_file.empty()) cli.secret_file = contents.file.secret_file();
    if (!cli.discover) {
      if (contents.workers.empty()) throw Error(cli.cluster_file + " lists no worker (add worker { address: ... } or use --discover)");
      addresses = contents.workers;
    }
  } else if (!cli.workers.empty()) {
    addresses = tessera::cli::option_value([&] { return net::parse_host_port_list(cli.workers, "--workers"); });
  } else if (!cli.workers_file.empty()) {
    addresses = net::read_host_port_file(cli.workers_file);
  } else if (!cli.discover) {
    throw UsageError("give the workers with --workers, --workers-file, --cluster-file or --discover");
  }
  if (cli.secret_file.empty()) throw UsageError("give the shared secret with --secret-file (or secret_file in a --cluster-file)");
  if (cli.scene.empty()) throw UsageError("give the scene with --scene (or scene in the --cluster-file)");
  return addresses;
}

std::vector<net::HostPort> discover_for_run(const WorkerSourcesCli& cli, const std::string& secret) {
  DiscoveryOptions options;
  options.port = uint16_t(cli.discover_port);
  options.timeout = std::chrono::milliseconds(int64_t(cli.discover_timeout * 1000));
  options.enough = cli.discover_workers;
  options.secret = secret;
  net::log_info("listening for worker beacons on UDP port " + std::to_string(options.port) + " for up to " +
                std::to_string(cli.discover_timeout).substr(0, 4) + " s");
  const DiscoveryResult found = discover_workers(options);
  for (const auto& note : found.other_versions) net::log_warning("left out: " + note);
  for (const auto& note : found.unproven) net::log_warning("left out (no handshake with the secret): " + note);
  if (found.workers.empty())
    throw Error(found.unproven.empty()
                    ? "no worker beacon heard on UDP port " + std::to_string(options.port) + " within " +
                          std::to_string(cli.discover_timeout).substr(0, 4) + " s (workers need --beacon)"
                    : "no worker heard on UDP port " + std::to_string(options.port) + " passed the handshake with this secret");
  std::vector<net::HostPort> addresses;
  for (const auto& w : found.workers) {
    net::log_info("discovered '" + net::printable_peer_text(w.name) + "' at " + w.address.text() +
                  (w.device.empty() ? "" : " (" + net::printable_peer_text(w.device) + ")"));
    addresses.push_back(w.address);
  }
  return addresses;
}

void print_cluster(const WorkerSourcesCli& cli) {
  std::cout << cluster_file_as_lines(read_cluster_file(cli.cluster_file)) << std::flush;
}

}  // namespace tessera::master
