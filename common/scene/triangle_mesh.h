#pragma once
// A scene's geometry on the host before packing: an indexed face set with float attributes,
// plus its materials and textures, and what a scene file may bring besides (glTF: lights, a
// camera). Loaders (OBJ, PLY, glTF) produce it; tessera-pack quantizes it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/scene/scene_nodes.h"
#include "tpk.pb.h"

namespace tessera {

// Most corners one polygon of an input mesh may have: polygons are triangulated one by one (OBJ
// polygons by ear clipping, which takes time quadratic in the corners), so this bounds the work a
// single line of input can cause.
inline constexpr size_t kMaxPolygonVertices = 256;

struct TextureImage {
  std::string name;
  uint32_t width = 0;
  uint32_t height = 0;
  bool has_alpha_mask = false;
  std::vector<uint8_t> rgba;  // sRGB-encoded RGBA8, rows top to bottom
};

struct TriangleMesh {
  std::vector<float> positions;    // xyz per vertex
  std::vector<float> normals;      // xyz per vertex, or empty
  std::vector<float> texcoords;    // uv per vertex, or empty
  std::vector<uint32_t> triangles; // 3 vertex indices per triangle
  std::vector<uint32_t> triangle_materials;  // material index per triangle
  std::vector<tpk::Material> materials;
  std::vector<TextureImage> textures;
  std::vector<tpk::PointLight> point_lights;
  std::vector<tpk::DirectionalLight> directional_lights;
  std::optional<tpk::Camera> camera;
  // Loaded with MeshLoadOptions::objects: the first triangle of each object (its triangles run to the
  // next one's first), and the instances placing them (node: the glTF node, or the object's own index
  // for OBJ groups). Empty otherwise: one flattened mesh.
  std::vector<uint32_t> object_first_triangles;
  std::vector<InstanceSource> instances;
  // What the file holds that the scene cannot show as written, one line each (e.g. "normal maps
  // are not supported"): the packer prints them.
  std::vector<std::string> warnings;

  size_t vertex_count() const { return positions.size() / 3; }
  size_t triangle_count() const { return triangles.size() / 3; }
  bool has_normals() const { return !normals.empty(); }
  bool has_texcoords() const { return !texcoords.empty(); }
  std::array<float, 3> position(uint32_t vertex) const {
    return {positions[3 * vertex], positions[3 * vertex + 1], positions[3 * vertex + 2]};
  }
};

}  // namespace tessera
