#pragma once
// One exception type for every user-facing failure: its message is the single line a program
// prints before exiting non-zero.
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tessera
