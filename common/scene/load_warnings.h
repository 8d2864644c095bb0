#pragma once
// What a loader finds in a scene file that the packed scene cannot show as written: each distinct
// line once, in the order found (a file with 300 normal-mapped materials says so once).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace tessera {

// The non-empty lines of a third-party loader's report (tinyobjloader's and tinygltf's warnings).
inline std::vector<std::string> report_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

class LoadWarnings {
 public:
  void add(const std::string& line) {
    if (seen_.insert(line).second) lines_.push_back(line);
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::set<std::string> seen_;
  std::vector<std::string> lines_;
};

}  // namespace tessera
