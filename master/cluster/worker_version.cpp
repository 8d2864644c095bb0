#include "master/cluster/worker_version.h"

namespace tessera::master {

std::string worker_version_warning(const std::string& worker_name, const std::string& worker_version,
                                   const std::string& master_version) {
  if (worker_version == master_version) return {};
  const std::string theirs = worker_version.empty() ? "an unnamed build" : "tessera " + worker_version;
  return worker_name + " runs " + theirs + ", this master tessera " + master_version +
         ": workers of other builds may render other pixels";
}

}  // namespace tessera::master
