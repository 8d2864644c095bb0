#pragma once
// glTF files with animations written by the tests (tests/test_gltf_animation*.cpp): float accessors
// in one .bin beside the .gltf, a base scene that each bad-input case changes in one place.
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/scene/animation_player.h"

namespace tessera::testing {

class AnimatedGltf {
 public:
  AnimatedGltf() {
    json = {{"asset", {{"version", "2.0"}}},  {"nodes", nlohmann::json::array()},   {"accessors", nlohmann::json::array()},
            {"bufferViews", nlohmann::json::array()}, {"animations", nlohmann::json::array()}};
  }

  // A float accessor of `type` (SCALAR, VEC3, VEC4) holding `values`.
  int accessor(const std::vector<float>& values, const std::string& type) {
    const size_t components = type == "SCALAR" ? 1 : type == "VEC3" ? 3 : 4;
    const size_t offset = bin.size();
    bin.resize(offset + values.size() * 4);
    if (!values.empty()) std::memcpy(bin.data() + offset, values.data(), values.size() * 4);
    json["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", offset}, {"byteLength", values.size() * 4}});
    json["accessors"].push_back({{"bufferView", json["bufferViews"].size() - 1},
                                 {"componentType", 5126},
                                 {"count", values.size() / components},
                                 {"type", type}});
    return int(json["accessors"].size()) - 1;
  }

  int node(nlohmann::json node) {
    json["nodes"].push_back(std::move(node));
    return int(json["nodes"].size()) - 1;
  }

  // Appends a sampler and a channel to animation `animation` (created as needed, named "anim<N>").
  void channel(size_t animation, int node, const std::string& path, const std::string& interpolation, int input, int output) {
    while (json["animations"].size() <= animation)
      json["animations"].push_back(
          {{"name", "anim" + std::to_string(json["animations"].size())}, {"channels", nlohmann::json::array()}, {"samplers", nlohmann::json::array()}});
    auto& a = json["animations"][animation];
    a["samplers"].push_back({{"input", input}, {"output", output}, {"interpolation", interpolation}});
    a["channels"].push_back({{"sampler", a["samplers"].size() - 1}, {"target", {{"node", node}, {"path", path}}}});
  }

  std::filesystem::path write(const std::filesystem::path& gltf_path) {
    const std::filesystem::path bin_path = std::filesystem::path(gltf_path).replace_extension(".bin");
    json["buffers"] = {{{"uri", bin_path.filename().string()}, {"byteLength", bin.size()}}};
    std::ofstream(bin_path, std::ios::binary).write(reinterpret_cast<const char*>(bin.data()), std::streamsize(bin.size()));
    std::ofstream(gltf_path) << json.dump();
    return gltf_path;
  }

  nlohmann::json json;
  std::vector<uint8_t> bin;
};

// Where a node's world matrix puts its origin.
inline std::array<float, 3> world_origin(const anim::Pose& pose, size_t node) {
  return {pose.world[node][12], pose.world[node][13], pose.world[node][14]};
}

}  // namespace tessera::testing
