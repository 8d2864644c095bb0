#pragma once
// Every buffer a packed scene takes on an OpenCL device in one scene-memory profile
// (common/scene/scene_memory.h), in kernel-argument order (TS_SCENE_PARAMS, then TS_SHADING_PARAMS
// of kernels/device/opencl/kernel_params.h), with the arrays derived at load time (the device's
// kd-node layout, 8- or 6-byte triangles) kept alive beside the spans. worker/render/device_scene.h
// uploads exactly these; SceneFootprint sizes them without a device (the worker's choice of
// profile, tessera-pack's and tessera-bench's bytes a triangle).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/cl/device_memory.h"
#include "common/render/shading_data.h"
#include "common/scene/kd_blocked_layout.h"
#include "common/scene/packed_scene.h"

namespace tessera {

struct SceneUpload {
  std::string name;
  std::span<const uint8_t> bytes;
};

class SceneUploads {
 public:
  SceneUploads(const PackedScene& scene, const KdNodeLayout& kd_layout, SceneMemory memory);
  SceneUploads(const SceneUploads&) = delete;  // the spans point into this object
  SceneUploads& operator=(const SceneUploads&) = delete;

  std::vector<SceneUpload> all() const;  // geometry, then shade

  std::vector<uint32_t> kd_nodes, packed_triangles, triangle_bases;
  // The compact profile's vertices laid out anew for 6-byte triangles where the file's order spans
  // too many vertices in a block of triangles.
  std::vector<uint32_t> windowed_words;
  std::vector<uint16_t> windowed_texcoords;
  std::vector<uint16_t> windowed_normal_indices;
  ShadingData shading;
  SceneConstants constants{};  // TS_SCENE_PACKED_TRIANGLES added where triangles take 8 bytes, TS_SCENE_SHORT_TRIANGLES 6
  std::vector<SceneUpload> geometry, shade;
  // Triangles, vertices (float, 16-byte records, or the compact profile's 12 bytes, with the cell
  // table where wide), kd-tree nodes and leaf lists: the memory ray traversal reads.
  uint64_t mesh_tree_bytes = 0;
};

// What a scene takes on a device in one profile, known before anything is allocated.
struct SceneFootprint {
  std::vector<cl::BufferRequest> buffers;  // every buffer, in order
  uint64_t device_bytes = 0;               // their sum
  uint64_t mesh_tree_bytes = 0;            // SceneUploads::mesh_tree_bytes
};

// The compact profile's 6-byte triangles (TS_SCENE_SHORT_TRIANGLES, kernels/scene/scene_view.h) from
// the .tpk's three indices a triangle: words holds a word of the first two 16-bit offsets from the
// block's base a triangle, then the third offsets as 16-bit halves (padded to a word), bases the
// base of each block of TS_TRIANGLE_BLOCK triangles (its lowest index). False, nothing written,
// where a block spans 2^16 vertices or more.
bool short_triangle_indices(std::span<const uint32_t> indices, std::vector<uint32_t>& words, std::vector<uint32_t>& bases);

SceneFootprint scene_footprint(const PackedScene& scene, const KdNodeLayout& kd_layout, SceneMemory memory);

}  // namespace tessera
