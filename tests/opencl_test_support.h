#pragma once
// Whether this machine has an OpenCL device: tests of OpenCL paths skip themselves where it has none.
#include <exception>

#include "common/cl/device_selection.h"

namespace tessera::testing {

inline bool opencl_available() {
  try {
    return !cl::enumerate_devices().empty();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace tessera::testing
