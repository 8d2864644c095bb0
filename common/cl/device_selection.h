#pragma once
// Finding and choosing an OpenCL device: --device auto|gpu|cpu|N and --list-devices.
#include <string>
#include <string_view>
#include <vector>

#include "common/cl/device_info.h"

namespace tessera::cl {

// Every device of every platform. Platforms are sorted by name, vendor and version (the ICD
// loader's order depends on directory listing order), devices keep the driver's order within a
// platform, so --device N names the same device from run to run.
// Throws Error when there is no OpenCL platform or no device at all.
std::vector<DeviceInfo> enumerate_devices();

// spec: "auto" (first GPU, else first CPU, else the first device), "gpu", "cpu", or an index
// into `devices`. Case-insensitive. Throws Error for an unknown spec, an index out of range, or
// no device of the requested type.
const DeviceInfo& select_device(const std::vector<DeviceInfo>& devices, std::string_view spec);
DeviceInfo select_device(std::string_view spec);

// The --list-devices table: index, platform, device name, type, global memory, compute units,
// max allocation; the device "auto" would choose is marked with '*'. Ends with a newline.
std::string format_device_list(const std::vector<DeviceInfo>& devices);

}  // namespace tessera::cl
