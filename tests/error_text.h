#pragma once
// The one line a user sees: the message of the tessera::Error a call throws ("" when it throws none).
#include <functional>
#include <string>

#include "common/base/error.h"

namespace tessera::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace tessera::testing
