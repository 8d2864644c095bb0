#include "master/pose/pose_parse.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "common/base/error.h"

namespace tessera::master {
namespace {

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

void check_gaze(const std::array<float, 2>& gaze, const std::string& where) {
  for (float g : gaze)
    if (!(g >= 0.0f && g <= 1.0f)) throw Error(where + ": gaze coordinates must lie in [0, 1]");
}

PoseSample from_json(const std::string& line, const std::string& where) {
  nlohmann::json record;
  try {
    record = nlohmann::json::parse(line);
  } catch (const std::exception&) {
    throw Error(where + ": not valid JSON");
  }
  const auto numbers = [&](const char* key, size_t count) {
    if (!record.contains(key) || !record[key].is_array() || record[key].size() != count)
      throw Error(where + ": \"" + key + "\" must be an array of " + std::to_string(count) + " numbers");
    std::vector<double> values;  // doubles: a number beyond float's range must be an error, not a cast
    for (const auto& v : record[key]) {
      if (!v.is_number()) throw Error(where + ": \"" + key + "\" must hold numbers");
      values.push_back(v.get<double>());
    }
    return values;
  };
  const auto p = numbers("position", 3), q = numbers("orientation", 4);
  std::ostringstream text;
  text.precision(9);
  text << p[0] << ',' << p[1] << ',' << p[2] << ',' << q[0] << ',' << q[1] << ',' << q[2] << ',' << q[3];
  PoseSample sample;
  try {
    sample.pose = parse_pose(text.str());
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  const char* time_key = record.contains("t") ? "t" : "time";
  if (record.contains(time_key)) {
    if (!record[time_key].is_number()) throw Error(where + ": \"t\" must be a number");
    sample.time = record[time_key].get<double>();
  }
  if (record.contains("gaze")) {
    const auto g = numbers("gaze", 2);
    if (!(g[0] >= 0 && g[0] <= 1 && g[1] >= 0 && g[1] <= 1)) throw Error(where + ": gaze coordinates must lie in [0, 1]");
    sample.gaze = std::array<float, 2>{float(g[0]), float(g[1])};
    check_gaze(*sample.gaze, where);
  }
  return sample;
}

}  // namespace

std::optional<PoseSample> parse_pose_record(const std::string& raw, const std::string& where) {
  const std::string line = trim(raw);
  if (line.empty() || line[0] == '#') return std::nullopt;
  if (line[0] == '{') return from_json(line, where);
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(trim(field));
  if (!fields.empty()) {
    char* end = nullptr;
    std::strtod(fields[0].c_str(), &end);
    if (fields[0].empty() || end != fields[0].c_str() + fields[0].size()) return std::nullopt;  // a header line
  }
  if (fields.size() != 8 && fields.size() != 10)
    throw Error(where + ": expected t,px,py,pz,qw,qx,qy,qz[,gx,gy] (8 or 10 numbers), got " + std::to_string(fields.size()) + " fields");
  PoseSample sample;
  sample.time = std::strtod(fields[0].c_str(), nullptr);
  if (!std::isfinite(sample.time)) throw Error(where + ": the time is not a finite number");
  try {
    // The same parser as tessera-render --pose, so equal text gives bit-equal cameras.
    sample.pose = parse_pose(fields[1] + "," + fields[2] + "," + fields[3] + "," + fields[4] + "," + fields[5] + "," + fields[6] +
                             "," + fields[7]);
    if (fields.size() == 10) {
      const auto g = parse_vec3(fields[8] + "," + fields[9] + ",0", "gaze");
      sample.gaze = std::array<float, 2>{g[0], g[1]};
      check_gaze(*sample.gaze, where);
    }
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  return sample;
}

std::optional<PoseSample> parse_pose_datagram(std::string_view received, size_t datagram_size) {
  if (datagram_size > kMaxPoseDatagramBytes || received.size() != datagram_size)
    throw Error("pose datagram of " + std::to_string(datagram_size) + " bytes (at most " +
                std::to_string(kMaxPoseDatagramBytes) + ")");
  return parse_pose_record(std::string(received), "pose datagram");
}

}  // namespace tessera::master
