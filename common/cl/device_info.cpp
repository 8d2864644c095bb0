#include "common/cl/device_info.h"

#include "common/cl/cl_error.h"

namespace tessera::cl {
namespace {

std::string trimmed(std::string text) {
  // Drivers return NUL-terminated strings, some padded with spaces (NVIDIA device names).
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ' || text.back() == '\n')) text.pop_back();
  size_t start = 0;
  while (start < text.size() && text[start] == ' ') ++start;
  return text.substr(start);
}

std::string platform_string(cl_platform_id platform, cl_platform_info param, const char* what) {
  size_t size = 0;
  TESSERA_CL_CHECK(clGetPlatformInfo(platform, param, 0, nullptr, &size), std::string("clGetPlatformInfo(") + what + ")");
  std::string value(size, '\0');
  TESSERA_CL_CHECK(clGetPlatformInfo(platform, param, size, value.data(), nullptr),
                   std::string("clGetPlatformInfo(") + what + ")");
  return trimmed(value);
}

std::string device_string(cl_device_id device, cl_device_info param, const char* what) {
  size_t size = 0;
  TESSERA_CL_CHECK(clGetDeviceInfo(device, param, 0, nullptr, &size), std::string("clGetDeviceInfo(") + what + ")");
  std::string value(size, '\0');
  TESSERA_CL_CHECK(clGetDeviceInfo(device, param, size, value.data(), nullptr),
                   std::string("clGetDeviceInfo(") + what + ")");
  return trimmed(value);
}

template <typename T>
T device_value(cl_device_id device, cl_device_info param, const char* what) {
  T value{};
  TESSERA_CL_CHECK(clGetDeviceInfo(device, param, sizeof value, &value, nullptr),
                   std::string("clGetDeviceInfo(") + what + ")");
  return value;
}

}  // namespace

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::gpu: return "GPU";
    case DeviceType::cpu: return "CPU";
    case DeviceType::accelerator: return "accelerator";
    case DeviceType::other: break;
  }
  return "other";
}

DeviceInfo query_device_info(cl_platform_id platform, cl_device_id device) {
  DeviceInfo info;
  info.platform = platform;
  info.id = device;
  info.platform_name = platform_string(platform, CL_PLATFORM_NAME, "CL_PLATFORM_NAME");
  info.platform_vendor = platform_string(platform, CL_PLATFORM_VENDOR, "CL_PLATFORM_VENDOR");
  info.platform_version = platform_string(platform, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION");
  info.name = device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME");
  info.vendor = device_string(device, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR");
  info.driver_version = device_string(device, CL_DRIVER_VERSION, "CL_DRIVER_VERSION");
  info.device_version = device_string(device, CL_DEVICE_VERSION, "CL_DEVICE_VERSION");
  info.opencl_c_version = device_string(device, CL_DEVICE_OPENCL_C_VERSION, "CL_DEVICE_OPENCL_C_VERSION");
  const auto type = device_value<cl_device_type>(device, CL_DEVICE_TYPE, "CL_DEVICE_TYPE");
  // A device may report several bits (e.g. GPU | DEFAULT); GPU wins, then CPU.
  info.type = (type & CL_DEVICE_TYPE_GPU)           ? DeviceType::gpu
              : (type & CL_DEVICE_TYPE_CPU)         ? DeviceType::cpu
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? DeviceType::accelerator
                                                    : DeviceType::other;
  info.global_mem_bytes = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
  info.max_alloc_bytes = device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  info.local_mem_bytes = device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE");
  info.compute_units = device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS");
  info.max_work_group_size = device_value<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  info.correctly_rounded_divide_sqrt =
      (device_value<cl_device_fp_config>(device, CL_DEVICE_SINGLE_FP_CONFIG, "CL_DEVICE_SINGLE_FP_CONFIG") &
       CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  // Space-separated names; match whole names only.
  const std::string extensions = " " + device_string(device, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS") + " ";
  info.nv_compiler_options = extensions.find(" cl_nv_compiler_options ") != std::string::npos;
  return info;
}

std::string describe_device(const DeviceInfo& info) {
  return info.name + " (" + device_type_name(info.type) + ", " + info.platform_name + ", driver " +
         info.driver_version + ")";
}

}  // namespace tessera::cl
