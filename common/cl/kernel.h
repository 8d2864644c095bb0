#pragma once
// One kernel of a built program, with checked argument setting. Errors name the kernel and the
// argument index, e.g. "clSetKernelArg(raytrace, arg 3, 4 bytes) failed: CL_INVALID_ARG_SIZE (-51)".
#include <CL/cl.h>

#include <string>
#include <type_traits>

#include "common/cl/handle.h"

namespace tessera::cl {

class Buffer;
class Device;

class Kernel {
 public:
  Kernel(cl_program program, std::string name);

  cl_kernel get() const { return kernel_.get(); }
  const std::string& name() const { return name_; }

  void set_arg(cl_uint index, const Buffer& buffer);
  // Plain values: scalars, cl_float4, structs shared with kernels/ headers.
  template <typename T>
  void set_arg(cl_uint index, const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>,
                  "kernel arguments are plain values or Buffers");
    set_arg_bytes(index, sizeof(T), &value);
  }
  void set_local_arg(cl_uint index, size_t bytes);  // __local scratch of `bytes`
  // set_args(a, b, c) sets arguments 0, 1, 2.
  template <typename... Args>
  void set_args(const Args&... args) {
    cl_uint index = 0;
    (set_arg(index++, args), ...);
  }

  // CL_KERNEL_WORK_GROUP_SIZE: the largest work-group this kernel can launch with on `device`.
  size_t max_work_group_size(const Device& device) const;

 private:
  void set_arg_bytes(cl_uint index, size_t size, const void* value);

  KernelHandle kernel_;
  std::string name_;
};

}  // namespace tessera::cl
