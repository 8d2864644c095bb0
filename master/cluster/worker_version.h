#pragma once
// Workers announce their build in WorkerInfo.version (common/base/version.h: version, commit, build
// type, OpenCL headers). A cluster of mixed builds still renders, but frames may differ from one
// build to another, so the master names every worker whose build is not its own.
#include <string>

namespace tessera::master {

// The warning for a worker running `worker_version` beside a master built as `master_version`;
// empty when they are the same build.
std::string worker_version_warning(const std::string& worker_name, const std::string& worker_version,
                                   const std::string& master_version);

}  // namespace tessera::master
