#pragma once
// A packed scene resident on an OpenCL device: one buffer per .tpk section (the kd-tree nodes in
// the layout of TESSERA_KD_LAYOUT, common/scene/kd_blocked_layout.h) plus the shading buffers,
// all created through the device-memory budget (so --gpu-mem-limit refuses a scene that does not
// fit and says which buffers need how much). Kernels take the buffers in the argument
// order of kernels/device/opencl/kernel_params.h.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/kernel.h"
#include "common/render/instance_emitters.h"
#include "common/render/shading_data.h"
#include "common/scene/kd_blocked_layout.h"
#include "common/scene/packed_scene.h"
#include "common/scene/top_level_bvh.h"

namespace tessera {

class DeviceScene {
 public:
  // kd_layout must be the layout the kernels were built for (TESSERA_KD_LAYOUT unless a caller
  // builds its programs with other layout options).
  // memory: the scene-memory profile (common/scene/scene_memory.h; the fast one unless asked).
  DeviceScene(const cl::Device& device, cl::DeviceMemoryBudget& budget, const PackedScene& scene,
              const KdNodeLayout& kd_layout = kd_node_layout_from_environment(), SceneMemory memory = SceneMemory::fast);

  static constexpr cl_uint kSceneArgCount = 14;  // an instanced scene's programs take 4 more (its top level)
  static constexpr cl_uint kShadingArgCount = 9;
  // An instanced scene's instances as placed from now on (SceneMotion::top_level()), and its
  // emitters where they place them (common/render/instance_emitters.h); the buffers grow through
  // the budget where needed. Nothing for a single-level scene.
  void place_instances(const cl::Device& device, cl::DeviceMemoryBudget& budget, const TopLevelBvh& top);

  // Sets TS_SCENE_PARAMS starting at argument `first`; returns the next argument index.
  cl_uint set_scene_args(cl::Kernel& kernel, cl_uint first = 0) const;
  // Sets TS_SHADING_PARAMS starting at argument `first`; returns the next argument index.
  cl_uint set_shading_args(cl::Kernel& kernel, cl_uint first) const;

  // The lights the kernels read (TS_SHADING_PARAMS), from now on; the buffer grows when needed.
  void set_lights(const cl::Device& device, cl::DeviceMemoryBudget& budget, std::span<const LightGpu> lights);
  // The scene's own lights, as uploaded first.
  const std::vector<LightGpu>& scene_lights() const { return scene_lights_; }

  uint64_t device_bytes() const { return device_bytes_; }
  SceneMemory scene_memory() const { return memory_; }
  const KdNodeLayout& kd_layout() const { return kd_layout_; }
  uint64_t kd_node_bytes() const { return kd_node_bytes_; }
  // Triangles, vertices (all their attributes in the compact profile: 12 bytes), the cell table,
  // kd-tree nodes and leaf lists: the memory ray traversal reads.
  uint64_t mesh_tree_bytes() const { return mesh_tree_bytes_; }
  // Build options of the programs that render this scene: on GPUs the scene's flags as constants
  // (TS_SCENE_FLAGS, kernels/scene/scene_view.h), empty on CPU devices.
  const std::string& build_options() const { return build_options_; }
  const PackedScene& scene() const { return scene_; }

 private:
  const PackedScene& scene_;
  KdNodeLayout kd_layout_;
  SceneMemory memory_;
  uint64_t kd_node_bytes_ = 0, mesh_tree_bytes_ = 0;
  SceneConstants constants_{};
  std::string build_options_;
  std::vector<cl::Buffer> scene_buffers_;    // in TS_SCENE_PARAMS order (after the constants)
  std::vector<cl::Buffer> shading_buffers_;  // in TS_SHADING_PARAMS order (after the counts)
  bool instanced_ = false;
  uint32_t instance_count_ = 0;
  cl::Buffer tlas_nodes_, instance_records_, objects_;  // an instanced scene's top level and objects
  std::optional<InstanceEmitters> instance_emitters_;   // an instanced scene's emissive triangles, object space
  std::vector<LightGpu> scene_lights_;
  uint32_t material_run_count_ = 0, light_count_ = 0, emitter_count_ = 0;
  uint64_t device_bytes_ = 0;
};

}  // namespace tessera
