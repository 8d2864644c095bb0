#include "common/cl/commands.h"

#include <string>

#include "common/base/error.h"
#include "common/cl/cl_error.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/kernel.h"
#include "common/cl/memory_size.h"

namespace tessera::cl {
namespace {

void check_range(const Buffer& buffer, size_t bytes, size_t offset, const char* what) {
  if (!buffer) throw Error(std::string(what) + " of an empty Buffer");
  if (offset > buffer.size() || bytes > buffer.size() - offset)
    throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " exceeds buffer " + buffer.name() + " (" + std::to_string(buffer.size()) + " bytes)");
}

std::string transfer_call(const char* call, const Buffer& buffer, size_t bytes) {
  return std::string(call) + "(" + buffer.name() + ", " + format_memory_size(bytes) + ")";
}

std::string dims(Range2D r) { return std::to_string(r.x) + "x" + std::to_string(r.y); }

cl_ulong profiling_value(cl_event event, cl_profiling_info param) {
  cl_ulong value = 0;
  check_cl(clGetEventProfilingInfo(event, param, sizeof value, &value, nullptr), "clGetEventProfilingInfo");
  return value;
}

size_t round_up(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

void Event::wait() const {
  if (!event_) return;  // an empty Event stands for a command that had nothing to do
  const cl_event event = event_.get();
  check_cl(clWaitForEvents(1, &event), "clWaitForEvents");
}

EventTiming Event::timing() const {
  EventTiming t;
  if (!event_) return t;
  wait();
  t.queued_ns = profiling_value(event_.get(), CL_PROFILING_COMMAND_QUEUED);
  t.submitted_ns = profiling_value(event_.get(), CL_PROFILING_COMMAND_SUBMIT);
  t.start_ns = profiling_value(event_.get(), CL_PROFILING_COMMAND_START);
  t.end_ns = profiling_value(event_.get(), CL_PROFILING_COMMAND_END);
  return t;
}

Event write_buffer(const Device& device, const Buffer& buffer, const void* data, size_t bytes, size_t offset) {
  check_range(buffer, bytes, offset, "write");
  // A zero-byte transfer is an error in OpenCL 1.2; a no-op here (empty scene sections).
  if (bytes == 0) return Event();
  cl_event event = nullptr;
  TESSERA_CL_CHECK(
      clEnqueueWriteBuffer(device.queue(), buffer.get(), CL_TRUE, offset, bytes, data, 0, nullptr, &event),
      transfer_call("clEnqueueWriteBuffer", buffer, bytes));
  return Event(event);
}

namespace {

Event enqueue_read(const Device& device, const Buffer& buffer, void* data, size_t bytes, size_t offset, cl_bool blocking) {
  check_range(buffer, bytes, offset, "read");
  if (bytes == 0) return Event();
  cl_event event = nullptr;
  TESSERA_CL_CHECK(
      clEnqueueReadBuffer(device.queue(), buffer.get(), blocking, offset, bytes, data, 0, nullptr, &event),
      transfer_call("clEnqueueReadBuffer", buffer, bytes));
  return Event(event);
}

}  // namespace

Event read_buffer(const Device& device, const Buffer& buffer, void* data, size_t bytes, size_t offset) {
  return enqueue_read(device, buffer, data, bytes, offset, CL_TRUE);
}

Event read_buffer_async(const Device& device, const Buffer& buffer, void* data, size_t bytes, size_t offset) {
  return enqueue_read(device, buffer, data, bytes, offset, CL_FALSE);
}

Event launch_2d(const Device& device, const Kernel& kernel, Range2D global, Range2D local, Range2D offset) {
  if (global.x == 0 || global.y == 0)
    throw Error("launch of kernel " + kernel.name() + " over an empty range " + dims(global));
  const bool has_local = local.x != 0 && local.y != 0;
  const size_t global_size[2] = {has_local ? round_up(global.x, local.x) : global.x,
                                 has_local ? round_up(global.y, local.y) : global.y};
  const size_t local_size[2] = {local.x, local.y};
  const size_t offset_size[2] = {offset.x, offset.y};
  cl_event event = nullptr;
  TESSERA_CL_CHECK(clEnqueueNDRangeKernel(device.queue(), kernel.get(), 2, offset_size, global_size,
                                          has_local ? local_size : nullptr, 0, nullptr, &event),
                   "clEnqueueNDRangeKernel(" + kernel.name() + ", global " + dims(global) +
                       (has_local ? ", local " + dims(local) : std::string()) +
                       (offset.x || offset.y ? ", offset " + dims(offset) : std::string()) + ")");
  return Event(event);
}

}  // namespace tessera::cl
