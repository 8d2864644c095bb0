#pragma once
// Device memory accounting. Every device buffer is created through a DeviceMemoryBudget with a
// name ("kd_nodes") and size, so the program can refuse a scene BEFORE allocating anything, with
// a message that says which buffers need how much:
//   scene needs 1.21 GB of device memory (kd_nodes 610 MB, triangles 150 MB, ...) but
//   --gpu-mem-limit is 950 MB
// GPU drivers allocate lazily and report exhaustion late and vaguely (or not at all on
// phones), hence the explicit bookkeeping.
#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cl/handle.h"

namespace tessera::cl {

class Device;

struct BufferRequest {
  std::string name;
  uint64_t bytes = 0;
};

// How kernels use a buffer (CL_MEM_READ_ONLY etc.); lets drivers place read-only data better.
enum class BufferAccess { read_only, write_only, read_write };

namespace detail {
struct MemoryLedger;
}

// A device buffer, released (and taken off the budget) when destroyed. Move-only.
class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  cl_mem get() const { return mem_.get(); }
  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }  // as requested; 0-byte buffers get a tiny placeholder
  explicit operator bool() const { return static_cast<bool>(mem_); }
  void release();  // frees the device memory now

 private:
  friend class DeviceMemoryBudget;
  MemHandle mem_;
  std::string name_;
  uint64_t size_ = 0;
  uint64_t allocated_ = 0;
  uint64_t id_ = 0;
  std::shared_ptr<detail::MemoryLedger> ledger_;
};

// "kd_nodes 610 MB, triangles 150 MB, ..." largest first, the tail summed up.
std::string describe_buffers(std::vector<BufferRequest> buffers);

class DeviceMemoryBudget {
 public:
  // limit_bytes: --gpu-mem-limit (nullopt: none). The device's global memory is always a limit.
  explicit DeviceMemoryBudget(const Device& device, std::optional<uint64_t> limit_bytes = std::nullopt);
  ~DeviceMemoryBudget();
  DeviceMemoryBudget(const DeviceMemoryBudget&) = delete;
  DeviceMemoryBudget& operator=(const DeviceMemoryBudget&) = delete;

  // Throws Error unless every buffer of the set fits on top of the live buffers, and none is
  // larger than CL_DEVICE_MAX_MEM_ALLOC_SIZE. `purpose` starts the message ("scene", "VCT grid").
  void check(const std::vector<BufferRequest>& buffers, std::string_view purpose = "scene") const;

  // Checks (as a set of one) and creates a buffer. Throws Error / ClError.
  Buffer create(std::string name, uint64_t bytes, BufferAccess access = BufferAccess::read_write);

  // Keeps `buffer` when it holds at least `bytes`, else replaces it by a new one (the old one is
  // released first, so the budget never counts both): scratch buffers that grow with the largest tile.
  void ensure(Buffer& buffer, std::string name, uint64_t bytes, BufferAccess access = BufferAccess::read_write);

  uint64_t used_bytes() const;   // bytes of live buffers
  uint64_t peak_bytes() const;   // most bytes live at once
  std::optional<uint64_t> limit_bytes() const;
  uint64_t max_alloc_bytes() const;
  std::vector<BufferRequest> live_buffers() const;  // in creation order

 private:
  std::shared_ptr<detail::MemoryLedger> ledger_;  // shared with the buffers, which may outlive this
};

}  // namespace tessera::cl
