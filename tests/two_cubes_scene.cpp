#include "two_cubes_scene.h"

#include "instanced_pack_support.h"

namespace tessera::testing {

std::filesystem::path pack_two_cubes(const std::filesystem::path& dir) {
  AnimatedGltf gltf;
  const int cube = add_cube_mesh(gltf, 1.0f);
  gltf.node({{"mesh", cube}});
  const int node = gltf.node({{"mesh", cube}, {"translation", {3.0, 0.0, 0.0}}});
  const int times = gltf.accessor({0.0f, 1.0f, 2.0f}, "SCALAR");
  gltf.channel(0, node, "translation", "LINEAR", times, gltf.accessor({3, 0, 0, 5, 0, 0, 3, 0, 0}, "VEC3"));
  add_default_scene(gltf);
  const auto tpk = dir / "cubes.tpk";
  pack::pack_scene(instanced_pack_options(gltf.write(dir / "cubes.gltf"), tpk));
  return tpk;
}

}  // namespace tessera::testing
