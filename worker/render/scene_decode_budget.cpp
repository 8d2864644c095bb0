#include "worker/render/scene_decode_budget.h"

#include "common/cl/device_selection.h"

namespace tessera {

DecodeBudget scene_decode_budget(const RendererOptions& options) {
  DecodeBudget budget = host_decode_budget();
  if (options.device != "host" && options.device != "null") {  // OpenCL: the scene goes to the device too
    const cl::DeviceInfo device = cl::select_device(options.device);
    budget = lower_device(budget, device.global_mem_bytes, "the device's memory");
    budget.section_bytes = device.max_alloc_bytes;
    budget.section_limit = "the device's largest buffer";
  }
  if (options.gpu_memory_limit) budget = lower_device(budget, *options.gpu_memory_limit, "--gpu-mem-limit");
  return budget;
}

}  // namespace tessera
