#pragma once
// What we know about one OpenCL device, queried once: enough to choose a device, to print
// --list-devices, to size work and memory, and to key the program binary cache.
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::cl {

enum class DeviceType { gpu, cpu, accelerator, other };
const char* device_type_name(DeviceType type);  // "GPU", "CPU", "accelerator", "other"

struct DeviceInfo {
  size_t index = 0;  // position in enumerate_devices(), the N of --device N
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name, platform_vendor, platform_version;
  std::string name, vendor, driver_version, device_version, opencl_c_version;
  DeviceType type = DeviceType::other;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest single buffer
  uint64_t local_mem_bytes = 0;
  uint32_t compute_units = 0;
  size_t max_work_group_size = 0;
  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in CL_DEVICE_SINGLE_FP_CONFIG: the device can divide and
  // take square roots correctly rounded, as the host does (OpenCL's default allows 2.5 and 3 ulp).
  bool correctly_rounded_divide_sqrt = false;
  // cl_nv_compiler_options: NVIDIA's build options such as -cl-nv-maxrregcount are accepted.
  bool nv_compiler_options = false;
};

DeviceInfo query_device_info(cl_platform_id platform, cl_device_id device);

// "pthread-haswell-AMD EPYC (CPU, Portable Computing Language, driver 3.1+debian)": for logs.
std::string describe_device(const DeviceInfo& info);

}  // namespace tessera::cl
