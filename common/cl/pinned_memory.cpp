#include "common/cl/pinned_memory.h"

#include <utility>

#include "common/cl/cl_error.h"
#include "common/cl/device.h"

namespace tessera::cl {

PinnedHostMemory::PinnedHostMemory(const Device& device, size_t bytes) : device_(&device), bytes_(bytes) {
  cl_int status = CL_SUCCESS;
  mem_ = MemHandle(clCreateBuffer(device.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &status));
  check_cl(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
  mapped_ = clEnqueueMapBuffer(device.queue(), mem_.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                               nullptr, &status);
  check_cl(status, "clEnqueueMapBuffer");
}

PinnedHostMemory::~PinnedHostMemory() { release(); }

PinnedHostMemory::PinnedHostMemory(PinnedHostMemory&& other) noexcept
    : device_(other.device_), mem_(std::move(other.mem_)), mapped_(std::exchange(other.mapped_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

PinnedHostMemory& PinnedHostMemory::operator=(PinnedHostMemory&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    mem_ = std::move(other.mem_);
    mapped_ = std::exchange(other.mapped_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void PinnedHostMemory::release() {
  if (mapped_ && mem_) {
    // Unmapping is queued; the buffer is released once the queue has run it.
    if (clEnqueueUnmapMemObject(device_->queue(), mem_.get(), mapped_, 0, nullptr, nullptr) == CL_SUCCESS)
      clFinish(device_->queue());
  }
  mapped_ = nullptr;
  mem_ = MemHandle();
  bytes_ = 0;
}

}  // namespace tessera::cl
