#pragma once
// Where tessera-master's workers, secret and scene come from: --workers, --workers-file,
// --cluster-file (proto/cluster_file.proto) or --discover (UDP beacons, master/cluster/discovery.h),
// with --scene and --secret-file given directly or taken from the cluster file.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/net/address.h"

namespace tessera::master {

struct WorkerSourcesCli {
  std::string workers, workers_file, cluster_file, scene, secret_file;
  bool discover = false, print_cluster = false;
  double discover_timeout = 3;
  unsigned discover_port = 7199, discover_workers = 0;
};

// Declares --workers, --workers-file, --cluster-file, --print-cluster, --discover,
// --discover-timeout, --discover-port, --discover-workers, --scene and --secret-file.
void add_worker_source_options(CLI::App& app, WorkerSourcesCli& cli);

// The workers of --workers / --workers-file / --cluster-file (empty with --discover, see below);
// fills cli.scene and cli.secret_file from the cluster file where they were not given. Throws
// Error with one clear line when the sources are missing, ambiguous or invalid.
std::vector<net::HostPort> worker_addresses(WorkerSourcesCli& cli);

// --discover: listens for beacons and puts each worker heard through the handshake with `secret`;
// logs and returns those that passed (and logs those that did not, or speak another protocol
// version). Throws Error when none passed.
std::vector<net::HostPort> discover_for_run(const WorkerSourcesCli& cli, const std::string& secret);

// --print-cluster: the cluster file as tab-separated lines (master/cluster/cluster_file.h) on stdout.
void print_cluster(const WorkerSourcesCli& cli);

}  // namespace tessera::master
