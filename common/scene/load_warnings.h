#pragma once
// What a loader finds in a scene file that the packed scene cannot show as written: each distinct
// line once, in the order found (a file with 300 normal-mapped materials says so once).
#include <set>
#include <string>
#include <vector>

namespace tessera {

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
