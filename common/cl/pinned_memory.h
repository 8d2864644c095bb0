#pragma once
// Host memory the device copies into directly: a CL_MEM_ALLOC_HOST_PTR buffer (page-locked by
// drivers such as NVIDIA's, so a readback runs at full bus speed without a staging copy), mapped
// once for the host. Readbacks of tile batches land here.
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>

#include "common/cl/handle.h"

namespace tessera::cl {

class Device;

class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  PinnedHostMemory(const Device& device, size_t bytes);  // throws ClError
  ~PinnedHostMemory();
  PinnedHostMemory(PinnedHostMemory&& other) noexcept;
  PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;

  uint8_t* data() const { return static_cast<uint8_t*>(mapped_); }
  size_t size() const { return bytes_; }

 private:
  void release();

  const Device* device_ = nullptr;
  MemHandle mem_;
  void* mapped_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tessera::cl
