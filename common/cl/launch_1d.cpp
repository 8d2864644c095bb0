#include "common/cl/launch_1d.h"

#include <string>

#include "common/base/error.h"
#include "common/cl/cl_error.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/kernel.h"

namespace tessera::cl {

Event launch_1d(const Device& device, const Kernel& kernel, size_t global, size_t local) {
  if (global == 0) return Event();
  const size_t global_size = local ? (global + local - 1) / local * local : global;
  cl_event event = nullptr;
  TESSERA_CL_CHECK(clEnqueueNDRangeKernel(device.queue(), kernel.get(), 1, nullptr, &global_size, local ? &local : nullptr, 0,
                                          nullptr, &event),
                   "clEnqueueNDRangeKernel(" + kernel.name() + ", global " + std::to_string(global) +
                       (local ? ", local " + std::to_string(local) : std::string()) + ")");
  return Event(event);
}

Event fill_buffer_u32(const Device& device, const Buffer& buffer, uint32_t value, size_t bytes, size_t offset) {
  if (bytes == 0) return Event();
  if (!buffer) throw Error("fill of an empty Buffer");
  if (bytes % 4 || offset % 4 || offset > buffer.size() || bytes > buffer.size() - offset)
    throw Error("fill of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " does not fit buffer " +
                buffer.name() + " (" + std::to_string(buffer.size()) + " bytes)");
  cl_event event = nullptr;
  TESSERA_CL_CHECK(clEnqueueFillBuffer(device.queue(), buffer.get(), &value, sizeof value, offset, bytes, 0, nullptr, &event),
                   "clEnqueueFillBuffer(" + buffer.name() + ", " + std::to_string(bytes) + " bytes)");
  return Event(event);
}

}  // namespace tessera::cl
