// The instance data model (common/scene/scene_nodes.h, top_level_bvh.h): node hierarchies give world
// transforms, and bad transforms, deep nesting and too many instances are one clear error each.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/base/error.h"
#include "error_text.h"
#include "common/scene/scene_nodes.h"
#include "common/scene/scene_objects.h"
#include "common/scene/top_level_bvh.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera {
namespace {

using testing::error_of;

TEST(Instances, HierarchyComposesParentThenChild) {
  // parent: translate (10, 0, 0); child: 90° about z, scale 2, translate (0, 1, 0) in the parent's frame
  std::vector<SceneNode> nodes(2);
  nodes[0].local.translation = {10, 0, 0};
  nodes[1].parent = 0;
  nodes[1].local = {{0, 1, 0}, {0, 0, std::sqrt(0.5f), std::sqrt(0.5f)}, {2, 2, 2}};
  nodes[1].object = 0;
  const std::vector<Instance> instances = instances_of(nodes, 1, "scene.gltf");
  ASSERT_EQ(instances.size(), 1u);
  EXPECT_EQ(instances[0].node, 1u);
  const auto p = instances[0].world.apply_point({1, 0, 0});  // (1,0,0) -> rotated (0,2,0) -> (10, 3, 0)
  EXPECT_NEAR(p[0], 10.0f, 1e-5f);
  EXPECT_NEAR(p[1], 3.0f, 1e-5f);
  EXPECT_NEAR(p[2], 0.0f, 1e-5f);
  // the inverse takes it back
  const auto q = instances[0].world.inverse("test").apply_point(p);
  EXPECT_NEAR(q[0], 1.0f, 1e-5f);
  EXPECT_NEAR(q[1], 0.0f, 1e-5f);
}

TEST(Instances, IdentityNodesGiveExactlyTheIdentity) {
  std::vector<SceneNode> nodes(3);
  nodes[1].parent = 0;
  nodes[2].parent = 1;
  nodes[2].object = 0;
  const std::vector<Instance> instances = instances_of(nodes, 1, "scene.gltf");
  ASSERT_EQ(instances.size(), 1u);
  EXPECT_TRUE(instances[0].world.is_identity());
  const TopLevelBvh top = build_top_level(instances, std::vector<Aabb>{Aabb{{0, 0, 0}, {1, 1, 1}}}, "scene.gltf");
  EXPECT_EQ(top.instances[14], TS_INSTANCE_IDENTITY);  // traversal takes its rays as they are
}

TEST(Instances, BadTransformsAreOneClearError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<SceneNode> nodes(1);
  nodes[0].object = 0;
  nodes[0].local.scale = {1, 0, 1};
  EXPECT_EQ(error_of([&] { instances_of(nodes, 1, "a.gltf"); }), "a.gltf: node 0: transform has scale 0 (the object would be flat)");
  nodes[0].local.scale = {1, 1, 1};
  nodes[0].local.translation = {0, nan, 0};
  EXPECT_EQ(error_of([&] { instances_of(nodes, 1, "a.gltf"); }), "a.gltf: node 0: transform has a NaN or infinite component");
  nodes[0].local.translation = {0, 0, 0};
  nodes[0].local.rotation = {0, 0, 0, 2};
  EXPECT_EQ(error_of([&] { instances_of(nodes, 1, "a.gltf"); }), "a.gltf: node 0: rotation is not a unit quaternion");
  // explicit transforms (a frame request's) are checked the same way
  Transform3x4 flat;
  flat.m[5] = 0.0f;
  EXPECT_EQ(error_of([&] { build_top_level(std::vector<Instance>{{0, 0, flat}}, std::vector<Aabb>{Aabb{}}, "frame 3"); }),
            "frame 3: instance 0: transform has scale 0 (the object would be flat)");
  Transform3x4 broken;
  broken.m[3] = nan;
  EXPECT_EQ(error_of([&] { build_top_level(std::vector<Instance>{{0, 0, broken}}, std::vector<Aabb>{Aabb{}}, "frame 3"); }),
            "frame 3: instance 0: transform has a NaN or infinite entry");
}

TEST(Instances, NestingAndCountLimitsAreOneClearError) {
  std::vector<SceneNode> chain(kMaxNodeDepth + 1);
  for (uint32_t i = 1; i < chain.size(); ++i) chain[i].parent = i - 1;
  EXPECT_EQ(error_of([&] { instances_of(chain, 0, "deep.gltf"); }),
            "deep.gltf: node 32: nested 33 deep, more than the 32 a scene may nest");
  chain.pop_back();
  EXPECT_NO_THROW(instances_of(chain, 0, "deep.gltf"));

  std::vector<SceneNode> crowd(kMaxInstances + 1);
  for (SceneNode& node : crowd) node.object = 0;
  EXPECT_EQ(error_of([&] { instances_of(crowd, 1, "crowd.gltf"); }),
            "crowd.gltf: more than 65536 instances, the most a scene may hold");

  std::vector<SceneNode> bad_parent(2);
  bad_parent[0].parent = 1;
  EXPECT_EQ(error_of([&] { instances_of(bad_parent, 0, "loop.gltf"); }), "loop.gltf: node 0: parent 1 does not come before it");
  std::vector<SceneNode> bad_object(1);
  bad_object[0].object = 4;
  EXPECT_EQ(error_of([&] { instances_of(bad_object, 2, "x.gltf"); }), "x.gltf: node 0: object 4 of 2");
}

TEST(Instances, ObjectTreesNameSceneTriangles) {
  // a depth-first tree: inner node with one reference (slot 1), a one-triangle leaf, a two-triangle leaf
  std::vector<uint32_t> nodes{0u | (1u << 2) | (3u << 4), 0, 7, TS_KD_NO_TRIANGLE, TS_KD_LEAF | (1u << 2), 5,
                              TS_KD_LEAF | (2u << 2), 0};
  std::vector<uint32_t> refs{1, 2};
  offset_kd_triangles(nodes, refs, 100);
  EXPECT_EQ(nodes[2], 107u);
  EXPECT_EQ(nodes[3], TS_KD_NO_TRIANGLE);
  EXPECT_EQ(nodes[5], 105u);
  EXPECT_EQ(nodes[7], 0u);  // a leaf list's first index, not a triangle
  EXPECT_EQ(refs, (std::vector<uint32_t>{101, 102}));
}

}  // namespace
}  // namespace tessera
