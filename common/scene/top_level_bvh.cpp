#include "common/scene/top_level_bvh.h"

#include <algorithm>
#include <bit>

#include "common/base/error.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera {
namespace {

constexpr uint32_t kLeafInstances = 2;

struct Builder {
  std::span<const Instance> instances;
  std::vector<Aabb> boxes;  // world box of each instance
  std::vector<uint32_t> order;
  TopLevelBvh* out;

  static void put_box(uint32_t* node, const Aabb& box) {
    for (int a = 0; a < 3; ++a) {
      node[a] = std::bit_cast<uint32_t>(box.min[a]);
      node[3 + a] = std::bit_cast<uint32_t>(box.max[a]);
    }
  }
  float centroid(uint32_t i, int axis) const { return boxes[i].min[axis] + boxes[i].max[axis]; }

  // Fills node `node` with instances order[begin, end).
  void build(uint32_t node, uint32_t begin, uint32_t end, uint32_t depth) {
    out->depth = std::max(out->depth, depth);
    Aabb box, centroids;
    for (uint32_t i = begin; i < end; ++i) {
      box.extend(boxes[order[i]].min);
      box.extend(boxes[order[i]].max);
      centroids.extend({centroid(order[i], 0), centroid(order[i], 1), centroid(order[i], 2)});
    }
    uint32_t* words = &out->nodes[TS_TLAS_NODE_WORDS * node];
    put_box(words, box);
    if (end - begin <= kLeafInstances) {
      words[6] = begin;
      words[7] = end - begin;
      return;
    }
    const int axis = centroids.longest_axis();
    const uint32_t middle = begin + (end - begin) / 2;
    std::nth_element(order.begin() + begin, order.begin() + middle, order.begin() + end,
                     [&](uint32_t a, uint32_t b) { return centroid(a, axis) < centroid(b, axis); });
    const uint32_t children = uint32_t(out->nodes.size() / TS_TLAS_NODE_WORDS);
    out->nodes.resize(out->nodes.size() + 2 * TS_TLAS_NODE_WORDS);
    words = &out->nodes[TS_TLAS_NODE_WORDS * node];  // the resize may have moved it
    words[6] = children;
    words[7] = 0;
    build(children, begin, middle, depth + 1);
    build(children + 1, middle, end, depth + 1);
  }
};

}  // namespace

Aabb transformed_bounds(const Aabb& box, const Transform3x4& transform) {
  Aabb out;
  for (int corner = 0; corner < 8; ++corner)
    out.extend(transform.apply_point({(corner & 1) ? box.max[0] : box.min[0], (corner & 2) ? box.max[1] : box.min[1],
                                      (corner & 4) ? box.max[2] : box.min[2]}));
  if (!transform.is_identity()) {
    // float rounding of the corners may lose an ulp; a hair of margin keeps every surface inside
    for (int a = 0; a < 3; ++a) {
      const float pad = 1e-6f * std::max({std::abs(out.min[a]), std::abs(out.max[a]), out.extent(a)});
      out.min[a] -= pad;
      out.max[a] += pad;
    }
  }
  return out;
}

TopLevelBvh build_top_level(std::span<const Instance> instances, std::span<const Aabb> object_bounds,
                            const std::string& name) {
  if (instances.size() > kMaxInstances)
    throw Error(name + ": " + std::to_string(instances.size()) + " instances, more than the " +
                std::to_string(kMaxInstances) + " a scene may hold");
  TopLevelBvh bvh;
  bvh.instance_count = uint32_t(instances.size());
  if (instances.empty()) return bvh;
  Builder builder{instances, {}, {}, &bvh};
  builder.boxes.reserve(instances.size());
  for (size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].object >= object_bounds.size())
      throw Error(name + ": instance " + std::to_string(i) + " names object " + std::to_string(instances[i].object) +
                  " of " + std::to_string(object_bounds.size()));
    if (const char* problem = transform_problem(instances[i].world))
      throw Error(name + ": instance " + std::to_string(i) + ": " + problem);
    builder.boxes.push_back(transformed_bounds(object_bounds[instances[i].object], instances[i].world));
    bvh.bounds.extend(builder.boxes.back().min);
    bvh.bounds.extend(builder.boxes.back().max);
  }
  builder.order.resize(instances.size());
  for (uint32_t i = 0; i < builder.order.size(); ++i) builder.order[i] = i;
  bvh.nodes.reserve(2 * instances.size() * TS_TLAS_NODE_WORDS);
  bvh.nodes.resize(TS_TLAS_NODE_WORDS);
  builder.build(0, 0, uint32_t(instances.size()), 1);
  if (bvh.depth > TS_TLAS_STACK_SIZE) throw Error(name + ": the instance hierarchy is too deep to traverse");

  bvh.instances.resize(instances.size() * TS_INSTANCE_WORDS);
  for (size_t slot = 0; slot < builder.order.size(); ++slot) {
    const uint32_t id = builder.order[slot];
    const Instance& instance = instances[id];
    uint32_t* rec = &bvh.instances[slot * TS_INSTANCE_WORDS];
    const Transform3x4 to_object = instance.world.inverse_of_checked();
    for (int w = 0; w < 12; ++w) rec[w] = std::bit_cast<uint32_t>(to_object.m[w]);
    rec[12] = instance.object;
    rec[13] = id;
    rec[14] = instance.world.is_identity() ? TS_INSTANCE_IDENTITY : 0u;
    rec[15] = 0;
  }
  return bvh;
}

}  // namespace tessera
