#include "common/cl/device_selection.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/cl/cl_error.h"
#include "common/cl/memory_size.h"

namespace tessera::cl {
namespace {

const char kNoPlatform[] = "no OpenCL platform found; install pocl-opencl-icd or a GPU driver";

std::vector<cl_platform_id> platform_ids() {
  cl_uint count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &count);
  // The ICD loader reports "no platform" as CL_PLATFORM_NOT_FOUND_KHR (-1001), not as count 0.
  if (status == -1001 || (status == CL_SUCCESS && count == 0)) throw Error(kNoPlatform);
  check_cl(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> ids(count);
  check_cl(clGetPlatformIDs(count, ids.data(), nullptr), "clGetPlatformIDs");
  return ids;
}

std::vector<cl_device_id> device_ids(cl_platform_id platform) {
  cl_uint count = 0;
  const cl_int status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && count == 0)) return {};
  check_cl(status, "clGetDeviceIDs");
  std::vector<cl_device_id> ids(count);
  check_cl(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr), "clGetDeviceIDs");
  return ids;
}

std::string lower(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string device_summary(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const DeviceInfo& d : devices) {
    if (!out.empty()) out += "; ";
    out += std::to_string(d.index) + ": " + d.name + " (" + device_type_name(d.type) + ")";
  }
  return out;
}

const DeviceInfo* first_of_type(const std::vector<DeviceInfo>& devices, DeviceType type) {
  for (const DeviceInfo& d : devices)
    if (d.type == type) return &d;
  return nullptr;
}

const DeviceInfo& auto_choice(const std::vector<DeviceInfo>& devices) {
  if (const DeviceInfo* gpu = first_of_type(devices, DeviceType::gpu)) return *gpu;
  if (const DeviceInfo* cpu = first_of_type(devices, DeviceType::cpu)) return *cpu;
  return devices.front();
}

}  // namespace

std::vector<DeviceInfo> enumerate_devices() {
  struct PlatformEntry {
    cl_platform_id id;
    std::string name, vendor, version;
  };
  std::vector<PlatformEntry> platforms;
  for (cl_platform_id id : platform_ids()) {
    // Only the sort key is needed here; query_device_info fetches the rest per device.
    PlatformEntry entry{id, {}, {}, {}};
    auto text = [&](cl_platform_info param) {
      size_t size = 0;
      check_cl(clGetPlatformInfo(id, param, 0, nullptr, &size), "clGetPlatformInfo");
      std::string value(size, '\0');
      check_cl(clGetPlatformInfo(id, param, size, value.data(), nullptr), "clGetPlatformInfo");
      while (!value.empty() && value.back() == '\0') value.pop_back();
      return value;
    };
    entry.name = text(CL_PLATFORM_NAME);
    entry.vendor = text(CL_PLATFORM_VENDOR);
    entry.version = text(CL_PLATFORM_VERSION);
    platforms.push_back(std::move(entry));
  }
  std::stable_sort(platforms.begin(), platforms.end(), [](const PlatformEntry& a, const PlatformEntry& b) {
    return std::tie(a.name, a.vendor, a.version) < std::tie(b.name, b.vendor, b.version);
  });

  std::vector<DeviceInfo> devices;
  for (const PlatformEntry& platform : platforms) {
    for (cl_device_id id : device_ids(platform.id)) {
      DeviceInfo info = query_device_info(platform.id, id);
      info.index = devices.size();
      devices.push_back(std::move(info));
    }
  }
  if (devices.empty()) {
    std::string names;
    for (const PlatformEntry& p : platforms) names += (names.empty() ? "" : ", ") + p.name;
    throw Error("OpenCL platform(s) found (" + names + ") but no OpenCL device; check the driver installation");
  }
  return devices;
}

const DeviceInfo& select_device(const std::vector<DeviceInfo>& devices, std::string_view spec) {
  if (devices.empty()) throw Error(kNoPlatform);
  const std::string key = lower(spec);
  if (key == "auto") return auto_choice(devices);
  if (key == "gpu" || key == "cpu") {
    const DeviceType type = key == "gpu" ? DeviceType::gpu : DeviceType::cpu;
    if (const DeviceInfo* found = first_of_type(devices, type)) return *found;
    throw Error(std::string("--device ") + key + ": no OpenCL " + device_type_name(type) +
                " device found (devices: " + device_summary(devices) + "); use --device auto or an index");
  }
  if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (key.size() <= 9 && std::stoul(key) < devices.size()) return devices[std::stoul(key)];
    throw Error("--device " + key + ": device index out of range (devices: " + device_summary(devices) +
                "); see --list-devices");
  }
  throw UsageError("--device '" + std::string(spec) +
              "': unknown device; expected auto, gpu, cpu or a device index (see --list-devices)");
}

DeviceInfo select_device(std::string_view spec) {
  const std::vector<DeviceInfo> devices = enumerate_devices();
  return select_device(devices, spec);
}

std::string format_device_list(const std::vector<DeviceInfo>& devices) {
  std::vector<std::vector<std::string>> rows = {
      {"", "#", "platform", "device", "type", "global mem", "CUs", "max alloc"}};
  const DeviceInfo* chosen = devices.empty() ? nullptr : &auto_choice(devices);
  for (const DeviceInfo& d : devices) {
    rows.push_back({&d == chosen ? "*" : "", std::to_string(d.index), d.platform_name, d.name,
                    device_type_name(d.type), format_memory_size(d.global_mem_bytes),
                    std::to_string(d.compute_units), format_memory_size(d.max_alloc_bytes)});
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (chosen) out += "(* = chosen by --device auto)\n";
  return out;
}

}  // namespace tessera::cl
