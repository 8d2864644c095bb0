#pragma once
// Cluster files (proto/cluster_file.proto, protobuf text format): the workers, the secret file and
// the scene of a cluster, for tessera-master --cluster-file and deploy/hosts.
#include <filesystem>
#include <string>
#include <vector>

#include "cluster_file.pb.h"
#include "common/net/address.h"

namespace tessera::master {

struct ClusterFileContents {
  cluster::ClusterFile file;                // paths made absolute (relative to the file's folder)
  std::vector<net::HostPort> workers;       // parsed worker addresses, in file order
};

// Throws Error naming the file (and line:column for syntax errors) when it is unreadable or
// invalid: no secret_file, a worker without a valid address, the same address twice.
ClusterFileContents read_cluster_file(const std::filesystem::path& path);

// One tab-separated line each, for scripts (deploy/hosts):
//   secret_file PATH / scene PATH / remote_dir DIR /
//   worker ADDRESS SSH DEVICE NAME ARGS...   (SSH defaults to the address's host, DEVICE to auto,
//   NAME to "-" when not given)
std::string cluster_file_as_lines(const ClusterFileContents& contents);

}  // namespace tessera::master
