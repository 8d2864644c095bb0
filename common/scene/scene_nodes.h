#pragma once
// Objects placed in a scene: the node hierarchy of a glTF (each node a local translation, rotation
// and scale under its parent) and the instances it yields (an object, the node that places it, and
// the node's world transform). The packer keeps the hierarchy with the local TRS so that an
// animation can change a node's TRS and recompute the world transforms (world_transforms), which
// is what the worker does before it rebuilds the top level (common/scene/top_level_bvh.h).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

// Limits a scene's hierarchy and instances keep (one clear error beyond them).
inline constexpr uint32_t kMaxInstances = 65536;
inline constexpr uint32_t kMaxNodes = 1u << 20;
inline constexpr uint32_t kMaxNodeDepth = 32;  // root nodes are at depth 1
inline constexpr uint32_t kNoParent = 0xFFFFFFFFu;
inline constexpr uint32_t kNoObject = 0xFFFFFFFFu;

// Object to world: p' = m · p + t, rows of m in 0..2 (a 3×4 matrix, row major: m00 m01 m02 t0 ...).
struct Transform3x4 {
  std::array<float, 12> m{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

  static Transform3x4 identity() { return {}; }
  bool is_identity() const { return *this == Transform3x4{}; }
  std::array<float, 3> apply_point(const std::array<float, 3>& p) const;
  // this · other (other applied first).
  Transform3x4 then_after(const Transform3x4& other) const;
  // The inverse; throws Error("<what>: ...") when the matrix is singular or not finite.
  Transform3x4 inverse(const std::string& what) const;
  // The inverse of a transform transform_problem finds nothing wrong with.
  Transform3x4 inverse_of_checked() const;
  bool operator==(const Transform3x4&) const = default;
};

// A glTF node's local transform: translation, unit rotation quaternion (x, y, z, w), scale.
struct NodeTrs {
  std::array<float, 3> translation{0, 0, 0};
  std::array<float, 4> rotation{0, 0, 0, 1};
  std::array<float, 3> scale{1, 1, 1};

  Transform3x4 matrix() const;
  bool operator==(const NodeTrs&) const = default;
};

struct SceneNode {
  uint32_t parent = kNoParent;  // an index below this node's own (parents come first)
  NodeTrs local;
  uint32_t object = kNoObject;  // the object this node places, if any
};

struct Instance {
  uint32_t object = 0;
  uint32_t node = 0;  // the node that places it (its index in the hierarchy)
  Transform3x4 world;
};

// An instance as a packed scene stores it (SCENE_INSTANCES): the node that places it (an index into
// the scene's node hierarchy, docs/animation.md) and the object it places.
struct InstanceSource {
  uint32_t node = 0;
  uint32_t object = 0;
};

// Throws Error("<what>: ...") for a NaN or infinite component, a zero scale or a rotation that is
// not a unit quaternion.
void check_node_trs(const NodeTrs& trs, const std::string& what);
// What is wrong with a transform (a NaN or infinite entry, a (near-)zero determinant), or nullptr:
// the top level checks every instance at each rebuild without building a message.
const char* transform_problem(const Transform3x4& transform);
// Throws Error("<what>: <transform_problem>") where there is one.
void check_transform(const Transform3x4& transform, const std::string& what);

// Checks the hierarchy (parents before children, depth, counts, objects below object_count, every
// TRS) and returns the instances of the nodes that place an object, in node order, with their world
// transforms. Throws Error("<name>: ...") naming the first node at fault.
std::vector<Instance> instances_of(const std::vector<SceneNode>& nodes, uint32_t object_count, const std::string& name);

// The world transform of every node (parents first), for nodes instances_of has accepted.
std::vector<Transform3x4> world_transforms(const std::vector<SceneNode>& nodes);

}  // namespace tessera
