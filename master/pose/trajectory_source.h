#pragma once
// Poses read from a trajectory file (CSV or JSON lines, see pose_parse.h), in file order.
#include <filesystem>
#include <vector>

#include "master/pose/pose_source.h"

namespace tessera::master {

class TrajectorySource final : public PoseSource {
 public:
  // Reads and checks the whole file up front; throws Error on the first bad line or an empty file.
  explicit TrajectorySource(const std::filesystem::path& path);
  std::optional<PoseSample> next() override;
  std::optional<size_t> length() const override { return poses_.size() - next_; }
  std::string describe() const override;

 private:
  std::filesystem::path path_;
  std::vector<PoseSample> poses_;
  size_t next_ = 0;
};

}  // namespace tessera::master
