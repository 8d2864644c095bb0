#include "common/cl/kernel.h"

#include "common/cl/device_memory.h"
#include "common/cl/cl_error.h"
#include "common/cl/device.h"

namespace tessera::cl {

Kernel::Kernel(cl_program program, std::string name) : name_(std::move(name)) {
  cl_int status = CL_SUCCESS;
  kernel_.reset(clCreateKernel(program, name_.c_str(), &status));
  TESSERA_CL_CHECK(status, "clCreateKernel(" + name_ + ")");
}

void Kernel::set_arg(cl_uint index, const Buffer& buffer) {
  const cl_mem mem = buffer.get();
  TESSERA_CL_CHECK(clSetKernelArg(kernel_.get(), index, sizeof mem, &mem),
                   "clSetKernelArg(" + name_ + ", arg " + std::to_string(index) + ", buffer " + buffer.name() + ")");
}

void Kernel::set_local_arg(cl_uint index, size_t bytes) {
  TESSERA_CL_CHECK(clSetKernelArg(kernel_.get(), index, bytes, nullptr),
                   "clSetKernelArg(" + name_ + ", arg " + std::to_string(index) + ", __local " +
                       std::to_string(bytes) + " bytes)");
}

void Kernel::set_arg_bytes(cl_uint index, size_t size, const void* value) {
  TESSERA_CL_CHECK(clSetKernelArg(kernel_.get(), index, size, value),
                   "clSetKernelArg(" + name_ + ", arg " + std::to_string(index) + ", " + std::to_string(size) +
                       " bytes)");
}

size_t Kernel::max_work_group_size(const Device& device) const {
  size_t size = 0;
  TESSERA_CL_CHECK(clGetKernelWorkGroupInfo(kernel_.get(), device.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof size,
                                            &size, nullptr),
                   "clGetKernelWorkGroupInfo(" + name_ + ", CL_KERNEL_WORK_GROUP_SIZE)");
  return size;
}

}  // namespace tessera::cl
