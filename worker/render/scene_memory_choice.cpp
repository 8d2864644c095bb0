#include "worker/render/scene_memory_choice.h"

#include <algorithm>
#include <cstdio>

#include "common/base/error.h"
#include "common/cl/device_memory.h"
#include "common/cl/device_selection.h"
#include "common/cl/memory_size.h"

namespace tessera {
namespace {

bool fits(const SceneFootprint& f, const SceneMemoryBudget& budget) {
  if (budget.bytes && f.device_bytes > budget.bytes) return false;
  return std::none_of(f.buffers.begin(), f.buffers.end(),
                      [&](const cl::BufferRequest& b) { return budget.max_alloc && b.bytes > budget.max_alloc; });
}

std::string bytes_text(uint64_t bytes) { return cl::format_memory_size(bytes) + " (" + std::to_string(bytes) + " bytes)"; }

}  // namespace

SceneMemoryBudget scene_memory_budget(const RendererOptions& options) {
  SceneMemoryBudget budget;
  if (options.device != "host" && options.device != "null") {
    const cl::DeviceInfo info = cl::select_device(options.device);
    budget.max_alloc = info.max_alloc_bytes;
    budget.bytes = uint64_t(double(info.global_mem_bytes) * kDefaultSceneMemoryShare);
    char text[160];
    std::snprintf(text, sizeof text, "%.0f %% of %s's %s", kDefaultSceneMemoryShare * 100, info.name.c_str(),
                  cl::format_memory_size(info.global_mem_bytes).c_str());
    budget.source = text;
  }
  if (options.gpu_memory_limit) {
    budget.bytes = *options.gpu_memory_limit;
    budget.source = "--gpu-mem-limit " + cl::format_memory_size(*options.gpu_memory_limit);
  }
  return budget;
}

SceneMemoryDecision choose_scene_memory(const PackedScene& scene, SceneMemoryMode mode, const SceneMemoryBudget& budget) {
  SceneMemoryDecision d;
  if (mode == SceneMemoryMode::fast || mode == SceneMemoryMode::compact) {
    d.memory = mode == SceneMemoryMode::fast ? SceneMemory::fast : SceneMemory::compact;
    d.summary = std::string(scene_memory_name(d.memory)) + " scene memory (--scene-memory " + scene_memory_name(d.memory) + ")";
    return d;
  }
  if (!budget.bytes && !budget.max_alloc) {
    d.summary = "fast scene memory (auto: no device-memory budget)";
    return d;
  }
  const KdNodeLayout& layout = kd_node_layout_from_environment();
  const SceneFootprint fast = scene_footprint(scene, layout, SceneMemory::fast);
  d.fast_bytes = fast.device_bytes;
  if (fits(fast, budget)) {
    d.summary = "fast scene memory (auto: " + cl::format_memory_size(fast.device_bytes) + " within " + budget.source + ")";
    return d;
  }
  const SceneFootprint compact = scene_footprint(scene, layout, SceneMemory::compact);
  d.compact_bytes = compact.device_bytes;
  if (!fits(compact, budget)) {
    std::string largest;
    if (budget.max_alloc)
      for (const auto& b : compact.buffers)
        if (b.bytes > budget.max_alloc)
          largest = "; its " + b.name + " buffer (" + cl::format_memory_size(b.bytes) + ") exceeds the device's largest allocation (" +
                    cl::format_memory_size(budget.max_alloc) + ")";
    throw Error("scene needs " + bytes_text(compact.device_bytes) + " of device memory even in the compact profile (fast: " +
                bytes_text(fast.device_bytes) + ") but the scene-memory budget is " + budget.source + largest +
                "; compact buffers: " + cl::describe_buffers(compact.buffers));
  }
  d.memory = SceneMemory::compact;
  d.summary = "compact scene memory (auto: " + cl::format_memory_size(compact.device_bytes) + "; fast would need " +
              cl::format_memory_size(fast.device_bytes) + ", over " + budget.source + ")";
  return d;
}

SceneMemoryDecision choose_scene_memory(const PackedScene& scene, SceneMemoryMode mode, const RendererOptions& options) {
  if (mode != SceneMemoryMode::automatic) return choose_scene_memory(scene, mode, SceneMemoryBudget{});
  return choose_scene_memory(scene, mode, scene_memory_budget(options));
}

}  // namespace tessera
