#include "master/pose/trajectory_source.h"

#include <sstream>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "master/pose/pose_parse.h"

namespace tessera::master {

TrajectorySource::TrajectorySource(const std::filesystem::path& path) : path_(path) {
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const std::exception& e) {
    throw Error("cannot read the pose file: " + std::string(e.what()));
  }
  std::stringstream stream(text);
  std::string line;
  for (int number = 1; std::getline(stream, line); ++number)
    if (auto pose = parse_pose_record(line, path.string() + " line " + std::to_string(number))) poses_.push_back(*pose);
  if (poses_.empty()) throw Error("pose file " + path.string() + " holds no pose");
}

std::optional<PoseSample> TrajectorySource::next() {
  if (next_ >= poses_.size()) return std::nullopt;
  PoseSample sample = poses_[next_++];
  sample.acquired = std::chrono::steady_clock::now();
  return sample;
}

std::string TrajectorySource::describe() const { return path_.string() + " (" + std::to_string(poses_.size()) + " poses)"; }

}  // namespace tessera::master
