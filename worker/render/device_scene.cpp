#include "worker/render/device_scene.h"

#include <algorithm>
#include <span>

#include "common/cl/commands.h"
#include "common/cl/program.h"
#include "kernels/device/opencl/kernel_params.h"

namespace tessera {
namespace {

constexpr size_t kLightsBuffer = 4;  // in TS_SHADING_PARAMS order: materials, material_runs, textures, texels, lights

struct Upload {
  std::string name;
  std::span<const uint8_t> bytes;
};

template <typename T>
std::span<const uint8_t> as_bytes(std::span<const T> values) {
  return {reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()};
}
template <typename T>
std::span<const uint8_t> as_bytes(const std::vector<T>& values) {
  return as_bytes(std::span<const T>(values));
}

// Checks the whole set against the budget first, so a scene that does not fit is refused before
// anything is allocated, with every buffer listed.
std::vector<cl::Buffer> upload_all(const cl::Device& device, cl::DeviceMemoryBudget& budget, const std::vector<Upload>& uploads,
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

// The triangles' vertex indices in 8 bytes each (kernels/scene/scene_view.h).
std::vector<uint32_t> packed_triangle_indices(std::span<const uint32_t> indices) {
  std::vector<uint32_t> out(indices.size() / 3 * 2);
  for (size_t t = 0; t < indices.size() / 3; ++t) {
    const uint2 w = scene_pack_triangle(indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]);
    out[2 * t] = w.x;
    out[2 * t + 1] = w.y;
  }
  return out;
}

}  // namespace

DeviceScene::DeviceScene(const cl::Device& device, cl::DeviceMemoryBudget& budget, const PackedScene& scene,
                         const KdNodeLayout& kd_layout)
    : scene_(scene), kd_layout_(kd_layout) {
  const SceneView view = scene.host_view();
  // The node layout the kernels were built for (program.cpp adds its -D options); the .tpk holds
  // the depth-first one.
  const std::vector<uint32_t> kd_nodes =
      device_kd_nodes(scene.section_as<uint32_t>(tpk::KD_NODES), scene.kd_nodes(), kd_layout);
  kd_node_bytes_ = kd_nodes.size() * sizeof(uint32_t);
  constants_ = scene_constants(view);
  // 8 bytes a triangle where the scene has few enough vertices, else 12 as in the .tpk
  const bool pack = scene.vertex_count() <= TS_PACKED_TRIANGLE_MAX_VERTICES;
  const std::vector<uint32_t> packed_triangles =
      pack ? packed_triangle_indices(scene.section_as<uint32_t>(tpk::TRIANGLES)) : std::vector<uint32_t>{};
  if (pack) constants_.flags |= TS_SCENE_PACKED_TRIANGLES;
  if (!cl::uses_cpu_paths(device)) build_options_ = "-D TS_SCENE_FLAGS=" + std::to_string(constants_.flags);
  const std::vector<uint16_t>& table = scene.normal_table();
  // Scene buffers in TS_SCENE_PARAMS order; absent sections become empty placeholders.
  std::vector<Upload> geometry = {
      {"triangles", pack ? as_bytes(packed_triangles) : scene.section(tpk::TRIANGLES)},
      {"positions", scene.section(tpk::POSITIONS)},
      {"vertex_records", as_bytes(scene.vertex_records())},
      {"normals", scene.section(tpk::NORMALS)},
      {"normal_indices", as_bytes(scene.normal_indices())},
      {"normal_table", (view.flags & TS_SCENE_NORMALS_QUANTIZED) ? as_bytes(table) : std::span<const uint8_t>{}},
      {"texcoords", scene.section(tpk::TEXCOORDS)},
      // with quantized positions the vertex records hold the texture coordinates
      {"texcoords_quantized", (view.flags & TS_SCENE_POSITIONS_QUANTIZED) ? std::span<const uint8_t>{}
                                                                          : scene.section(tpk::TEXCOORDS_QUANTIZED)},
      {"kd_nodes", as_bytes(kd_nodes)},
      // only the blocked layouts read leaf lists apart from the nodes
      {"kd_leaf_refs", kd_layout.blocked ? scene.section(tpk::KD_LEAF_REFS) : std::span<const uint8_t>{}},
  };
  const ShadingData shading = ShadingData::build(scene);
  std::vector<Upload> shade = {
      {"materials", as_bytes(shading.materials)},
      {"material_runs", as_bytes(shading.material_runs)},
      {"textures", as_bytes(shading.textures)},
      {"texels", as_bytes(shading.texels)},
      {"lights", as_bytes(shading.lights)},
      {"emitters", as_bytes(shading.emitters)},
      {"srgb_to_linear", as_bytes(shading.srgb_to_linear)},
      {"linear_to_srgb_threshold", as_bytes(shading.linear_to_srgb_threshold)},
  };
  // What traversal reads: triangles, vertices (float or records), kd-tree nodes and leaf lists.
  for (const char* name : {"triangles", "positions", "vertex_records", "kd_nodes", "kd_leaf_refs"})
    for (const auto& u : geometry)
      if (u.name == name) mesh_tree_bytes_ += u.bytes.size();
  std::vector<Upload> all = geometry;
  all.insert(all.end(), shade.begin(), shade.end());
  std::vector<cl::Buffer> buffers = upload_all(device, budget, all, device_bytes_);
  device.finish();
  for (size_t i = 0; i < buffers.size(); ++i)
    (i < geometry.size() ? scene_buffers_ : shading_buffers_).push_back(std::move(buffers[i]));
  material_run_count_ = uint32_t(shading.material_runs.size() / 2);
  light_count_ = uint32_t(shading.lights.size());
  scene_lights_ = shading.lights;
  emitter_count_ = uint32_t(shading.emitters.size());
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
  return first;
}

cl_uint DeviceScene::set_shading_args(cl::Kernel& kernel, cl_uint first) const {
  const ShadingCounts counts{material_run_count_, light_count_, emitter_count_, 0};
  kernel.set_arg(first++, counts);
  for (const auto& b : shading_buffers_) kernel.set_arg(first++, b);
  return first;
}

}  // namespace tessera
