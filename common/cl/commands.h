#pragma once
// Queue commands: blocking buffer transfers, 2D kernel launches, and per-command timing from
// the profiling queue (nanosecond device timestamps) for benchmarks.
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/cl/handle.h"

namespace tessera::cl {

class Buffer;
class Device;
class Kernel;

struct EventTiming {
  uint64_t queued_ns = 0, submitted_ns = 0, start_ns = 0, end_ns = 0;  // device clock
  double run_ms() const { return static_cast<double>(end_ns - start_ns) * 1e-6; }
  double queued_to_end_ms() const { return static_cast<double>(end_ns - queued_ns) * 1e-6; }
};

// A queued command. Move-only. Empty for commands that had nothing to do (zero-byte transfers):
// wait() returns at once and timing() is all zeros.
class Event {
 public:
  Event() = default;
  explicit Event(cl_event event) : event_(event) {}
  cl_event get() const { return event_.get(); }
  explicit operator bool() const { return static_cast<bool>(event_); }

  void wait() const;           // throws ClError if the command failed
  EventTiming timing() const;  // waits, then reads the profiling counters

 private:
  EventHandle event_;
};

// Blocking: returns once `bytes` are copied, so `data` may be reused at once. Throws Error if
// offset + bytes exceeds the buffer.
Event write_buffer(const Device& device, const Buffer& buffer, const void* data, size_t bytes, size_t offset = 0);
Event read_buffer(const Device& device, const Buffer& buffer, void* data, size_t bytes, size_t offset = 0);
// Non-blocking read: `data` must stay valid until the returned event has completed.
Event read_buffer_async(const Device& device, const Buffer& buffer, void* data, size_t bytes, size_t offset = 0);

template <typename T>
Event write_buffer(const Device& device, const Buffer& buffer, const std::vector<T>& values) {
  return write_buffer(device, buffer, values.data(), values.size() * sizeof(T));
}
template <typename T>
std::vector<T> read_buffer(const Device& device, const Buffer& buffer, size_t count) {
  std::vector<T> values(count);
  read_buffer(device, buffer, values.data(), count * sizeof(T));
  return values;
}

struct Range2D {
  size_t x = 0, y = 0;
};

// Enqueues `kernel` over global (x, y) work-items starting at `offset`; does not wait.
// local {0, 0} lets the driver choose the work-group size. With a local size, global is rounded
// up to a multiple of it, so kernels must ignore work-items beyond their image bounds.
Event launch_2d(const Device& device, const Kernel& kernel, Range2D global, Range2D local = {}, Range2D offset = {});

}  // namespace tessera::cl
