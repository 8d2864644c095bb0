#include "worker/render/device_scene.h"

#include <algorithm>
#include <span>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/program.h"
#include "common/render/scene_uploads.h"
#include "common/scene/scene_motion.h"
#include "common/scene/scene_objects.h"
#include "kernels/device/opencl/kernel_params.h"

namespace tessera {
namespace {

// In TS_SHADING_PARAMS order: materials, material_runs, textures, texels, lights, emitters
constexpr size_t kLightsBuffer = 4;
constexpr size_t kEmittersBuffer = 5;

// Checks the whole set against the budget first, so a scene that does not fit is refused before
// anything is allocated, with every buffer listed.
std::vector<cl::Buffer> upload_all(const cl::Device& device, cl::DeviceMemoryBudget& budget, const std::vector<SceneUpload>& uploads,
                                   uint64_t& total) {
  std::vector<cl::BufferRequest> requests;
  for (const auto& u : uploads) requests.push_back({u.name, u.bytes.size()});
  budget.check(requests, "scene");
  std::vector<cl::Buffer> buffers;
  for (const auto& u : uploads) {
    buffers.push_back(budget.create(u.name, u.bytes.size(), cl::BufferAccess::read_only));
    if (!u.bytes.empty()) cl::write_buffer(device, buffers.back(), u.bytes.data(), u.bytes.size());
    total += u.bytes.size();
  }
  return buffers;
}

}  // namespace

DeviceScene::DeviceScene(const cl::Device& device, cl::DeviceMemoryBudget& budget, const PackedScene& scene,
                         const KdNodeLayout& kd_layout, SceneMemory memory)
    : scene_(scene), kd_layout_(kd_layout), memory_(memory) {
  const SceneUploads plan(scene, kd_layout, memory);
  kd_node_bytes_ = plan.kd_nodes.size() * sizeof(uint32_t);
  constants_ = plan.constants;
  if (!cl::uses_cpu_paths(device)) build_options_ = "-D TS_SCENE_FLAGS=" + std::to_string(constants_.flags);
  mesh_tree_bytes_ = plan.mesh_tree_bytes;
  std::vector<cl::Buffer> buffers = upload_all(device, budget, plan.all(), device_bytes_);
  device.finish();
  for (size_t i = 0; i < buffers.size(); ++i)
    (i < plan.geometry.size() ? scene_buffers_ : shading_buffers_).push_back(std::move(buffers[i]));
  const ShadingData& shading = plan.shading;
  material_run_count_ = uint32_t(shading.material_runs.size() / 2);
  light_count_ = uint32_t(shading.lights.size());
  scene_lights_ = shading.lights;
  emitter_count_ = uint32_t(shading.emitters.size());
  if (scene.instanced()) {  // the objects, and the top level as packed (time 0) until placed otherwise
    if (kd_layout.blocked) throw Error("TESSERA_KD_LAYOUT=" + kd_layout.name() + " does not hold an instanced scene's objects");
    instanced_ = true;
    build_options_ += std::string(build_options_.empty() ? "" : " ") + "-D TS_SCENE_INSTANCED_BUILD";
    const std::vector<uint32_t> words = object_words(scene.objects());
    objects_ = budget.create("objects", words.size() * 4, cl::BufferAccess::read_only);
    cl::write_buffer(device, objects_, words.data(), words.size() * 4);
    device_bytes_ += words.size() * 4;
    instance_emitters_.emplace(scene, shading);
    place_instances(device, budget, SceneMotion::of_scene(scene, "scene")->top_level());
  }
}

void DeviceScene::place_instances(const cl::Device& device, cl::DeviceMemoryBudget& budget, const TopLevelBvh& top) {
  if (!instanced_) return;
  budget.ensure(tlas_nodes_, "top_level", top.nodes.size() * 4, cl::BufferAccess::read_only);
  budget.ensure(instance_records_, "instances", std::max<size_t>(top.instances.size(), 1) * 4, cl::BufferAccess::read_only);
  cl::write_buffer(device, tlas_nodes_, top.nodes.data(), top.nodes.size() * 4);
  if (!top.instances.empty()) cl::write_buffer(device, instance_records_, top.instances.data(), top.instances.size() * 4);
  instance_count_ = top.instance_count;
  // The scene's box is the instances' where they are now (ray set-up and epsilons read it).
  constants_.bounds_min_x = top.bounds.min[0], constants_.bounds_min_y = top.bounds.min[1], constants_.bounds_min_z = top.bounds.min[2];
  constants_.bounds_max_x = top.bounds.max[0], constants_.bounds_max_y = top.bounds.max[1], constants_.bounds_max_z = top.bounds.max[2];
  if (instance_emitters_ && !instance_emitters_->empty()) {  // each emitter where its instance is now
    const std::vector<EmitterGpu> emitters = instance_emitters_->place(top);
    const uint64_t bytes = emitters.size() * sizeof(EmitterGpu);
    budget.ensure(shading_buffers_[kEmittersBuffer], "emitters", bytes, cl::BufferAccess::read_only);
    cl::write_buffer(device, shading_buffers_[kEmittersBuffer], emitters.data(), bytes);
    emitter_count_ = uint32_t(emitters.size());
  }
}

void DeviceScene::set_lights(const cl::Device& device, cl::DeviceMemoryBudget& budget, std::span<const LightGpu> lights) {
  cl::Buffer& buffer = shading_buffers_[kLightsBuffer];
  const uint64_t bytes = std::max<uint64_t>(lights.size_bytes(), sizeof(LightGpu));
  budget.ensure(buffer, "lights", bytes, cl::BufferAccess::read_only);
  if (!lights.empty()) cl::write_buffer(device, buffer, lights.data(), lights.size_bytes());
  light_count_ = uint32_t(lights.size());
}

cl_uint DeviceScene::set_scene_args(cl::Kernel& kernel, cl_uint first) const {
  kernel.set_arg(first++, constants_);
  for (const auto& b : scene_buffers_) kernel.set_arg(first++, b);
  if (instanced_) {
    kernel.set_arg(first++, cl_uint(instance_count_));
    kernel.set_arg(first++, tlas_nodes_);
    kernel.set_arg(first++, instance_records_);
    kernel.set_arg(first++, objects_);
  }
  return first;
}

cl_uint DeviceScene::set_shading_args(cl::Kernel& kernel, cl_uint first) const {
  const ShadingCounts counts{material_run_count_, light_count_, emitter_count_, 0};
  kernel.set_arg(first++, counts);
  for (const auto& b : shading_buffers_) kernel.set_arg(first++, b);
  return first;
}

}  // namespace tessera
