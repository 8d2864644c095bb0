#include "common/scene/scene_nodes.h"

#include <cmath>

#include "common/base/error.h"

namespace tessera {
namespace {

bool all_finite(const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

double determinant(const Transform3x4& t) {
  const auto& m = t.m;
  return double(m[0]) * (double(m[5]) * m[10] - double(m[6]) * m[9]) -
         double(m[1]) * (double(m[4]) * m[10] - double(m[6]) * m[8]) +
         double(m[2]) * (double(m[4]) * m[9] - double(m[5]) * m[8]);
}

// |det| below this share of the largest entry cubed: the transform squashes an object flat.
constexpr double kSingularRatio = 1e-12;

}  // namespace

std::array<float, 3> Transform3x4::apply_point(const std::array<float, 3>& p) const {
  return {m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3], m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7],
          m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11]};
}

Transform3x4 Transform3x4::then_after(const Transform3x4& other) const {
  Transform3x4 r;
  const auto& a = m;
  const auto& b = other.m;
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 4; ++col) {
      double sum = col == 3 ? a[4 * row + 3] : 0.0;
      for (int k = 0; k < 3; ++k) sum += double(a[4 * row + k]) * b[4 * k + col];
      r.m[4 * row + col] = float(sum);
    }
  }
  return r;
}

Transform3x4 Transform3x4::inverse(const std::string& what) const {
  check_transform(*this, what);
  return inverse_of_checked();
}

Transform3x4 Transform3x4::inverse_of_checked() const {
  if (is_identity()) return {};
  const auto& a = m;
  const double inv_det = 1.0 / determinant(*this);
  double c[9];  // the inverse of the linear part: adjugate / det
  c[0] = (double(a[5]) * a[10] - double(a[6]) * a[9]) * inv_det;
  c[1] = (double(a[2]) * a[9] - double(a[1]) * a[10]) * inv_det;
  c[2] = (double(a[1]) * a[6] - double(a[2]) * a[5]) * inv_det;
  c[3] = (double(a[6]) * a[8] - double(a[4]) * a[10]) * inv_det;
  c[4] = (double(a[0]) * a[10] - double(a[2]) * a[8]) * inv_det;
  c[5] = (double(a[2]) * a[4] - double(a[0]) * a[6]) * inv_det;
  c[6] = (double(a[4]) * a[9] - double(a[5]) * a[8]) * inv_det;
  c[7] = (double(a[1]) * a[8] - double(a[0]) * a[9]) * inv_det;
  c[8] = (double(a[0]) * a[5] - double(a[1]) * a[4]) * inv_det;
  Transform3x4 r;
  for (int row = 0; row < 3; ++row) {
    double t = 0.0;
    for (int k = 0; k < 3; ++k) {
      r.m[4 * row + k] = float(c[3 * row + k]);
      t -= c[3 * row + k] * a[4 * k + 3];
    }
    r.m[4 * row + 3] = float(t);
  }
  return r;
}

Transform3x4 NodeTrs::matrix() const {
  const double x = rotation[0], y = rotation[1], z = rotation[2], w = rotation[3];
  const double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                       2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                       2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
  Transform3x4 t;
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 3; ++col) t.m[4 * row + col] = float(r[3 * row + col] * scale[col]);
    t.m[4 * row + 3] = translation[row];
  }
  return t;
}

void check_node_trs(const NodeTrs& trs, const std::string& what) {
  if (!all_finite(trs.translation.data(), 3) || !all_finite(trs.rotation.data(), 4) || !all_finite(trs.scale.data(), 3))
    throw Error(what + ": transform has a NaN or infinite component");
  for (float s : trs.scale)
    if (s == 0.0f) throw Error(what + ": transform has scale 0 (the object would be flat)");
  const double q = double(trs.rotation[0]) * trs.rotation[0] + double(trs.rotation[1]) * trs.rotation[1] +
                   double(trs.rotation[2]) * trs.rotation[2] + double(trs.rotation[3]) * trs.rotation[3];
  if (std::fabs(q - 1.0) > 1e-3) throw Error(what + ": rotation is not a unit quaternion");
}

const char* transform_problem(const Transform3x4& transform) {
  if (!all_finite(transform.m.data(), 12)) return "transform has a NaN or infinite entry";
  double largest = 0.0;
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col) largest = std::max(largest, std::fabs(double(transform.m[4 * row + col])));
  const double det = determinant(transform);
  if (largest == 0.0 || std::fabs(det) <= kSingularRatio * largest * largest * largest)
    return "transform has scale 0 (the object would be flat)";
  return nullptr;
}

void check_transform(const Transform3x4& transform, const std::string& what) {
  if (const char* problem = transform_problem(transform)) throw Error(what + ": " + problem);
}

std::vector<Instance> instances_of(const std::vector<SceneNode>& nodes, uint32_t object_count, const std::string& name) {
  if (nodes.size() > kMaxNodes)
    throw Error(name + ": " + std::to_string(nodes.size()) + " nodes, more than the " + std::to_string(kMaxNodes) +
                " a scene may hold");
  std::vector<uint32_t> depth(nodes.size(), 1);
  uint32_t placed = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const SceneNode& node = nodes[i];
    const std::string what = name + ": node " + std::to_string(i);
    if (node.parent != kNoParent) {
      if (node.parent >= i) throw Error(what + ": parent " + std::to_string(node.parent) + " does not come before it");
      depth[i] = depth[node.parent] + 1;
      if (depth[i] > kMaxNodeDepth)
        throw Error(what + ": nested " + std::to_string(depth[i]) + " deep, more than the " +
                    std::to_string(kMaxNodeDepth) + " a scene may nest");
    }
    check_node_trs(node.local, what);
    if (node.object != kNoObject) {
      if (node.object >= object_count)
        throw Error(what + ": object " + std::to_string(node.object) + " of " + std::to_string(object_count));
      if (++placed > kMaxInstances)
        throw Error(name + ": more than " + std::to_string(kMaxInstances) + " instances, the most a scene may hold");
    }
  }
  const std::vector<Transform3x4> world = world_transforms(nodes);
  std::vector<Instance> instances;
  instances.reserve(placed);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].object == kNoObject) continue;
    check_transform(world[i], name + ": node " + std::to_string(i));
    instances.push_back({nodes[i].object, uint32_t(i), world[i]});
  }
  return instances;
}

std::vector<Transform3x4> world_transforms(const std::vector<SceneNode>& nodes) {
  std::vector<Transform3x4> world(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Transform3x4 local = nodes[i].local.matrix();
    world[i] = nodes[i].parent == kNoParent ? local : world[nodes[i].parent].then_after(local);
  }
  return world;
}

}  // namespace tessera
