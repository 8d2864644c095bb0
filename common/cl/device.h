#pragma once
// One opened OpenCL device: its context and an in-order command queue with profiling enabled
// (every command's start/end time is available for benchmarks at negligible cost).
// The queue is shared: commands from several threads are fine, but kernel arguments of one
// Kernel object must not be set from two threads at once (an OpenCL rule).
#include <string_view>

#include "common/cl/device_info.h"
#include "common/cl/handle.h"

namespace tessera::cl {

class Device {
 public:
  explicit Device(const DeviceInfo& info);
  // select_device(spec) + open it: the one call a program needs for --device.
  static Device open(std::string_view spec);

  const DeviceInfo& info() const { return info_; }
  cl_device_id id() const { return info_.id; }
  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }

  void flush() const;   // clFlush: submit queued commands without waiting
  void finish() const;  // clFinish: wait until every queued command completed

 private:
  DeviceInfo info_;
  ContextHandle context_;
  QueueHandle queue_;
};

}  // namespace tessera::cl
