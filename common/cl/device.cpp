#include "common/cl/device.h"

#include "common/cl/cl_error.h"
#include "common/cl/device_selection.h"

namespace tessera::cl {

Device::Device(const DeviceInfo& info) : info_(info) {
  const cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(info.platform), 0};
  cl_int status = CL_SUCCESS;
  context_.reset(clCreateContext(properties, 1, &info_.id, nullptr, nullptr, &status));
  TESSERA_CL_CHECK(status, "clCreateContext(" + info_.name + ")");
  queue_.reset(clCreateCommandQueue(context_.get(), info_.id, CL_QUEUE_PROFILING_ENABLE, &status));
  TESSERA_CL_CHECK(status, "clCreateCommandQueue(" + info_.name + ", profiling)");
}

Device Device::open(std::string_view spec) { return Device(select_device(spec)); }

void Device::flush() const { check_cl(clFlush(queue_.get()), "clFlush"); }

void Device::finish() const { check_cl(clFinish(queue_.get()), "clFinish"); }

}  // namespace tessera::cl
