// The blocked kd-tree node layout (kernels/accel/kdtree_layout.h, common/scene/kd_blocked_layout.cpp)
// is the depth-first tree rearranged: the same nodes with the same words, every child where its
// parent's word0 says, blocks aligned. Traversal over it (and over the depth-first layout read
// through the block cache) reports bit for bit the hits the depth-first traversal reports, on the
// host, on the OpenCL CPU device and through tessera-bench rays' hit hashes.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/device_selection.h"
#include "common/cl/program.h"
#include "common/render/camera_setup.h"
#include "common/scene/kd_blocked_layout.h"
#include "common/scene/kd_compact_layout.h"
#include "common/scene/packed_scene.h"
#include "kernels/accel/kdtree_packet.h"
#include "scene-packer/kdtree_builder.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "tests/kd_layout_traversal.h"
#include "worker/render/device_scene.h"
#include "opencl_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

// ---- structure ----

// A random depth-first tree in the .tpk layout: any shape up to depth 40, inner nodes holding 0, 1
// or 2 references, leaves holding 0, 1 or a list.
std::vector<uint32_t> random_dfs_tree(uint32_t seed, uint32_t max_nodes, double leaf_chance, double ref_chance) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<uint32_t> words;
  uint32_t nodes = 0;
  auto emit = [&](auto&& self, uint32_t depth) -> void {
    ++nodes;
    if (depth >= 40 || nodes >= max_nodes || unit(rng) < leaf_chance) {
      const uint32_t count = rng() % 4;  // 0, 1, 2, 3
      words.push_back(kd_make_leaf_word0(count));
      words.push_back(rng() % 1000);
      return;
    }
    const uint32_t refs = unit(rng) < ref_chance ? 1 + rng() % 2 : 0;
    const size_t slot = words.size() / 2;
    words.push_back(kd_make_inner_word0(rng() % 3, refs, 0));
    words.push_back(rng());  // split bits: compared, never used as a float here
    if (refs) {
      words.push_back(rng() % 1000);
      words.push_back(refs == 2 ? rng() % 1000 : TS_KD_NO_TRIANGLE);
    }
    self(self, depth + 1);  // below
    words[2 * slot] |= uint32_t(words.size() / 2) << 4;
    self(self, depth + 1);  // above
  };
  emit(emit, 0);
  return words;
}

// Walks both trees together: same words node for node; every blocked node in its own slot; the
// above child 1..8 slots after the below child; whole blocks.
void expect_same_tree(std::span<const uint32_t> dfs, std::span<const uint32_t> blocked, uint32_t block_slots) {
  ASSERT_EQ(blocked.size() % (2 * block_slots), 0u);
  const size_t slots = blocked.size() / 2;
  std::vector<uint8_t> used(slots, 0);
  struct Pair {
    uint32_t d, b;
  };
  std::vector<Pair> stack{{0, 0}};
  size_t visited = 0;
  while (!stack.empty()) {
    const Pair p = stack.back();
    stack.pop_back();
    ++visited;
    ASSERT_LT(p.b, slots);
    ASSERT_FALSE(used[p.b]) << "slot " << p.b << " holds two nodes";
    used[p.b] = 1;
    const uint32_t dw0 = dfs[2 * p.d], bw0 = blocked[2 * p.b];
    ASSERT_EQ(kd_node_kind(dw0), kd_node_kind(bw0));
    ASSERT_EQ(dfs[2 * p.d + 1], blocked[2 * p.b + 1]);
    if (kd_node_kind(dw0) == TS_KD_LEAF) {
      ASSERT_EQ(dw0, bw0);
      continue;
    }
    ASSERT_EQ(kd_inner_ref_count(dw0), kd_inner_ref_count(bw0));
    if (kd_inner_ref_count(dw0)) {
      ASSERT_LT(p.b + 1, slots);
      ASSERT_FALSE(used[p.b + 1]);
      used[p.b + 1] = 1;
      ASSERT_EQ(dfs[2 * p.d + 2], blocked[2 * p.b + 2]);
      ASSERT_EQ(dfs[2 * p.d + 3], blocked[2 * p.b + 3]);
    }
    const uint32_t below = kd_blocked_below_child(bw0), above = kd_blocked_above_child(bw0);
    ASSERT_GT(above, below);
    ASSERT_LE(above - below, TS_KD_BLOCKED_MAX_DELTA);
    stack.push_back({kd_dfs_above_child(dw0), above});
    stack.push_back({kd_dfs_below_child(p.d, dw0), below});
  }
  EXPECT_GT(visited, 0u);
}

// Random tree shapes: node count, chance of a leaf, chance of references on an inner node.
struct RandomShape {
  uint32_t nodes;
  double leaf_chance, ref_chance;
};

TEST(KdNodeLayout, BlockedIsTheSameTreeForRandomShapes) {
  // bushy, chain-like (mostly leaves: every other node a leaf), many references, a single leaf
  const RandomShape shapes[] = {{3000, 0.05, 0.1}, {3000, 0.5, 0.0}, {2000, 0.3, 0.9}, {1, 1.0, 0.0}, {200, 0.2, 1.0}};
  for (uint32_t seed = 1; seed <= 6; ++seed)
    for (const RandomShape& s : shapes) {
      const auto dfs = random_dfs_tree(seed, s.nodes, s.leaf_chance, s.ref_chance);
      for (uint32_t block : {4u, 8u}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(s.nodes) + " nodes, block " +
                     std::to_string(block));
        BlockedKdStats stats;
        const auto blocked = make_blocked_kd_nodes(dfs, block, &stats);
        expect_same_tree(dfs, blocked, block);
        // memory stays within 2x of the depth-first layout plus one block
        EXPECT_LE(blocked.size(), 2 * dfs.size() + 2 * block);
      }
    }
}

// Depth-first without empty leaves: node for node the .tpk's tree, in the same order, with every
// empty leaf child left out and marked in its parent, and each leaf's triangles beside it.
void expect_same_tree_without_empty_leaves(std::span<const uint32_t> dfs, std::span<const uint32_t> refs,
                                           std::span<const uint32_t> compact, size_t* left_out) {
  auto empty_leaf = [&](uint32_t n) {
    return kd_node_kind(dfs[2 * n]) == TS_KD_LEAF && kd_leaf_count(dfs[2 * n]) == 0;
  };
  size_t& empty_children = *left_out;
  uint32_t next_slot = 0;  // depth-first order: each node's slot is the next one
  struct Pair {
    uint32_t d, c;
  };
  std::vector<Pair> stack{{0, 0}};
  while (!stack.empty()) {
    const Pair p = stack.back();
    stack.pop_back();
    ASSERT_EQ(p.c, next_slot);
    ASSERT_LT(2 * size_t(p.c) + 1, compact.size());
    const uint32_t dw0 = dfs[2 * p.d], cw0 = compact[2 * p.c];
    ASSERT_EQ(kd_node_kind(dw0), kd_node_kind(cw0));
    next_slot = p.c + 1;
    if (kd_node_kind(dw0) == TS_KD_LEAF) {
      ASSERT_EQ(dw0, cw0);
      const uint32_t count = kd_leaf_count(dw0);
      if (count <= 1) {
        ASSERT_EQ(dfs[2 * p.d + 1], compact[2 * p.c + 1]);
        continue;
      }
      const uint32_t slots = 1 + count / 2;  // word1 and the following slots, two triangles each
      ASSERT_LE(2 * size_t(p.c + slots), compact.size());
      for (uint32_t i = 0; i < count; ++i) {
        ASSERT_EQ(compact[2 * size_t(p.c) + 1 + i], refs[dfs[2 * p.d + 1] + i]) << i;
      }
      if (count % 2 == 0) {
        ASSERT_EQ(compact[2 * size_t(p.c) + 1 + count], TS_KD_NO_TRIANGLE);
      }
      next_slot = p.c + slots;
      continue;
    }
    ASSERT_EQ(dfs[2 * p.d + 1], compact[2 * p.c + 1]);
    ASSERT_EQ(kd_inner_ref_count(dw0), kd_inner_ref_count(cw0));
    if (kd_inner_ref_count(dw0)) {
      ASSERT_EQ(dfs[2 * p.d + 2], compact[2 * p.c + 2]);
      ASSERT_EQ(dfs[2 * p.d + 3], compact[2 * p.c + 3]);
      ++next_slot;
    }
    const uint32_t below = kd_dfs_below_child(p.d, dw0), above = kd_dfs_above_child(dw0);
    const uint32_t c_below = kd_compact_below_child(p.c, cw0), c_above = kd_compact_above_child(cw0);
    ASSERT_EQ(empty_leaf(below), c_below == TS_KD_NO_CHILD);
    ASSERT_EQ(empty_leaf(above), c_above == TS_KD_NO_CHILD);
    empty_children += empty_leaf(below) + empty_leaf(above);
    if (!empty_leaf(above)) stack.push_back({above, c_above});
    if (!empty_leaf(below)) stack.push_back({below, c_below});
  }
  EXPECT_EQ(size_t(next_slot), compact.size() / 2);
}

TEST(KdNodeLayout, CompactIsTheSameTreeWithoutEmptyLeaves) {
  const RandomShape shapes[] = {{3000, 0.05, 0.1}, {3000, 0.5, 0.0}, {2000, 0.3, 0.9}, {1, 1.0, 0.0}, {200, 0.2, 1.0}};
  std::vector<uint32_t> refs(1003);  // random_dfs_tree's lists start below 1000 and hold up to 3
  for (uint32_t i = 0; i < refs.size(); ++i) refs[i] = i * 7 + 1;
  size_t empty_leaves = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed)
    for (const RandomShape& s : shapes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(s.nodes) + " nodes");
      const auto dfs = random_dfs_tree(seed, s.nodes, s.leaf_chance, s.ref_chance);
      const auto compact = make_compact_kd_nodes(dfs, refs);
      expect_same_tree_without_empty_leaves(dfs, refs, compact, &empty_leaves);
    }
  EXPECT_GT(empty_leaves, 0u) << "the random trees have empty leaves to leave out";
}

TEST(KdNodeLayout, BlocksHoldTreelets) {
  // A complete tree without references: every 32-byte block holds a node and both children, every
  // 64-byte block a node, its children and grandchildren.
  const auto dfs = random_dfs_tree(7, 1u << 14, 0.0, 0.0);
  BlockedKdStats four, eight;
  make_blocked_kd_nodes(dfs, 4, &four);
  make_blocked_kd_nodes(dfs, 8, &eight);
  const double local4 = double(four.inner_with_local_children) / double(four.inner_nodes);
  const double local8 = double(eight.inner_with_local_children) / double(eight.inner_nodes);
  EXPECT_GT(local4, 0.33) << "a third of the inner nodes";  // heads of blocks: every other level
  EXPECT_GT(local8, 0.42) << "three of seven";              // two levels of three
}

TEST(KdNodeLayout, PaddedDfsKeepsTheTree) {
  const auto dfs = random_dfs_tree(3, 101, 0.3, 0.3);
  const auto padded = padded_dfs_kd_nodes(dfs);
  ASSERT_EQ(padded.size() % 16, 0u);
  ASSERT_GE(padded.size(), dfs.size());
  EXPECT_TRUE(std::equal(dfs.begin(), dfs.end(), padded.begin()));
}

TEST(KdNodeLayout, EnvironmentValues) {
  EXPECT_FALSE(parse_kd_node_layout("").blocked);
  EXPECT_FALSE(parse_kd_node_layout("dfs").blocked);
  EXPECT_EQ(parse_kd_node_layout("blocked").block_slots, 4u);
  EXPECT_EQ(parse_kd_node_layout("blocked64").block_slots, 8u);
  EXPECT_EQ(parse_kd_node_layout("blocked").build_options(), "-D TS_KD_LAYOUT_BLOCKED=1 -D TS_KD_BLOCK_SLOTS=4");
  EXPECT_EQ(parse_kd_node_layout("dfs").build_options(), "");
  try {
    parse_kd_node_layout("bfs");
    ADD_FAILURE() << "bfs accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "TESSERA_KD_LAYOUT must be dfs, blocked or blocked64, not 'bfs'");
  }
}

// ---- hits on the host ----

struct LayoutView {
  const testing::LayoutTraversal* traversal;
  std::vector<uint32_t> nodes;
  SceneView view;
};

std::vector<LayoutView> layout_views(const SceneView& dfs_view, std::span<const uint32_t> dfs_nodes,
                                     std::span<const uint32_t> leaf_refs) {
  std::vector<LayoutView> views;
  views.push_back({&testing::kBlocked4Traversal, make_blocked_kd_nodes(dfs_nodes, 4), dfs_view});
  views.push_back({&testing::kBlocked8Traversal, make_blocked_kd_nodes(dfs_nodes, 8), dfs_view});
  views.push_back({&testing::kDfsCachedTraversal, padded_dfs_kd_nodes(make_compact_kd_nodes(dfs_nodes, leaf_refs)), dfs_view});
  for (auto& v : views) v.view.kd_nodes = v.nodes.data();
  return views;
}

// Bit for bit in what a single-level traversal writes (an instanced scene's `inst` is left as it was).
bool same_hit(const Hit& a, const Hit& b) {
  return a.tri == b.tri && std::memcmp(&a.t, &b.t, sizeof a.t) == 0 && std::memcmp(&a.u, &b.u, sizeof a.u) == 0 &&
         std::memcmp(&a.v, &b.v, sizeof a.v) == 0;
}

// Random rays in and around the box, a quarter of them axis-parallel or with zero components,
// some with tmin > 0 or a finite tmax; each traced closest, any-hit and in a packet of four.
// Returns how many hit something.
int expect_layouts_agree(const SceneView& dfs_view, std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> leaf_refs,
                         uint32_t seed, int rays) {
  const auto views = layout_views(dfs_view, dfs_nodes, leaf_refs);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), sym(-1.0f, 1.0f);
  const float lo[3] = {dfs_view.bounds_min_x, dfs_view.bounds_min_y, dfs_view.bounds_min_z};
  const float hi[3] = {dfs_view.bounds_max_x, dfs_view.bounds_max_y, dfs_view.bounds_max_z};
  int hits = 0, failures = 0;
  for (int i = 0; i < rays && failures < 10; i += 4) {
    float3 org[4], dir[4];
    float tmin[4], tmax[4];
    float base[3];
    for (int a = 0; a < 3; ++a) base[a] = lo[a] - 0.2f * (hi[a] - lo[a]) + 1.4f * (hi[a] - lo[a]) * unit(rng);
    for (int l = 0; l < 4; ++l) {
      float o[3], d[3];
      for (int a = 0; a < 3; ++a) {
        o[a] = (i / 4) % 2 ? base[a] : lo[a] + (hi[a] - lo[a]) * unit(rng);  // odd packets share an origin
        const float target = lo[a] + (hi[a] - lo[a]) * (0.2f + 0.6f * unit(rng));
        d[a] = target - o[a];
      }
      if ((i + l) % 8 == 1) d[(i / 8) % 3] = 0.0f;
      if ((i + l) % 8 == 5) d[(i / 8 + 1) % 3] = -0.0f, d[(i / 8 + 2) % 3] = 0.0f;
      if (d[0] == 0.0f && d[1] == 0.0f && d[2] == 0.0f) d[0] = 1.0f;
      org[l] = make_float3(o[0], o[1], o[2]);
      dir[l] = make_float3(d[0], d[1], d[2]);
      tmin[l] = (i + l) % 5 == 0 ? 0.1f * unit(rng) : 0.0f;
      tmax[l] = (i + l) % 7 == 0 ? 0.3f + unit(rng) : INFINITY;
    }
    Hit expected[4], expected_packet[4];
    int expected_any[4], expected_found[4];
    for (int l = 0; l < 4; ++l) {
      expected_found[l] = kd_intersect_closest(&dfs_view, org[l], dir[l], tmin[l], tmax[l], &expected[l]);
      expected_any[l] = kd_intersect_any(&dfs_view, org[l], dir[l], tmin[l], tmax[l]);
      hits += expected_found[l];
    }
    {
      KdPacket p;
      int found[4];
      for (int l = 0; l < 4; ++l) p.org[l] = org[l], p.dir[l] = dir[l], p.tmin[l] = tmin[l], p.tmax[l] = tmax[l];
      kd_traverse_packet(&dfs_view, &p, 0, found, expected_packet);
    }
    for (const LayoutView& v : views) {
      Hit packet_hits[4];
      int packet_found[4];
      v.traversal->packet(&v.view, org, dir, tmin, tmax, 0, packet_found, packet_hits);
      for (int l = 0; l < 4; ++l) {
        Hit hit;
        const int found = v.traversal->closest(&v.view, org[l], dir[l], tmin[l], tmax[l], &hit);
        const int any = v.traversal->any(&v.view, org[l], dir[l], tmin[l], tmax[l]);
        if (found != expected_found[l] || !same_hit(hit, expected[l]) || any != expected_any[l] ||
            !same_hit(packet_hits[l], expected_packet[l])) {
          ++failures;
          ADD_FAILURE() << v.traversal->name << " ray " << i + l << ": tri " << hit.tri << " t " << hit.t << ", dfs tri "
                        << expected[l].tri << " t " << expected[l].t << "; any " << any << " dfs " << expected_any[l]
                        << "; packet tri " << packet_hits[l].tri << " dfs " << expected_packet[l].tri;
        }
      }
    }
  }
  return hits;
}

// A SceneView of a mesh and its tree as traversal reads it (depth-first without empty leaves).
struct MeshView {
  std::vector<uint32_t> nodes;
  SceneView view;
};

MeshView mesh_view(const std::vector<float>& positions, const std::vector<uint32_t>& triangles,
                   const pack::PackedKdTree& tree) {
  MeshView out;
  out.nodes = make_compact_kd_nodes(tree.nodes, tree.leaf_refs);
  SceneView& s = out.view;
  std::memset(&s, 0, sizeof s);
  s.triangle_count = uint32_t(triangles.size() / 3);
  s.positions = positions.data();
  s.triangles = triangles.data();
  s.kd_nodes = out.nodes.data();
  s.kd_leaf_refs = tree.leaf_refs.data();
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (uint32_t v : triangles)
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], positions[3 * v + k]), hi[k] = std::max(hi[k], positions[3 * v + k]);
  s.bounds_min_x = lo[0], s.bounds_min_y = lo[1], s.bounds_min_z = lo[2];
  s.bounds_max_x = hi[0], s.bounds_max_y = hi[1], s.bounds_max_z = hi[2];
  return out;
}

// Small adversarial trees: one triangle (the root is a leaf), axis-aligned triangles on a grid
// (splits on their planes, rays inside them), and a soup with Seo references on inner nodes.
TEST(KdNodeLayout, SmallTreesTraceTheSameHits) {
  struct Mesh {
    std::string name;
    std::vector<float> positions;
    std::vector<uint32_t> triangles;
  };
  std::vector<Mesh> meshes;
  meshes.push_back({"one triangle", {0, 0, 0, 1, 0, 0, 0, 1, 0.5f}, {0, 1, 2}});
  {
    Mesh grid{"axis-aligned grid", {}, {}};
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        for (int axis = 0; axis < 3; ++axis) {
          const uint32_t v = uint32_t(grid.positions.size() / 3);
          float p[3][3] = {{0, 0, 0}, {0.5f, 0, 0}, {0, 0.5f, 0}};
          for (auto& q : p) {
            float r[3] = {q[0] + i * 0.25f, q[1] + j * 0.25f, float((i + j) % 4) * 0.25f};
            for (int k = 0; k < 3; ++k) q[k] = r[(k + axis) % 3];
          }
          for (auto& q : p) grid.positions.insert(grid.positions.end(), q, q + 3);
          grid.triangles.insert(grid.triangles.end(), {v, v + 1, v + 2});
        }
    meshes.push_back(grid);
  }
  {
    Mesh soup{"soup", {}, {}};
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (uint32_t t = 0; t < 400; ++t) {
      const float c[3] = {unit(rng), unit(rng), unit(rng)};
      const float size = t % 20 == 0 ? 0.8f : 0.05f;  // a few large triangles become inner-node references
      for (int k = 0; k < 3; ++k)
        for (int a = 0; a < 3; ++a) soup.positions.push_back(c[a] + size * (unit(rng) - 0.5f));
      soup.triangles.insert(soup.triangles.end(), {3 * t, 3 * t + 1, 3 * t + 2});
    }
    meshes.push_back(soup);
  }
  for (const Mesh& m : meshes)
    for (pack::KdVariant variant : {pack::KdVariant::Standard, pack::KdVariant::Seo}) {
      SCOPED_TRACE(m.name);
      pack::KdBuildOptions options;
      options.variant = variant;
      const pack::PackedKdTree tree = pack::build_kdtree(m.positions, m.triangles, options);
      const MeshView view = mesh_view(m.positions, m.triangles, tree);
      for (uint32_t block : {4u, 8u}) expect_same_tree(tree.nodes, make_blocked_kd_nodes(tree.nodes, block), block);
      const int hits = expect_layouts_agree(view.view, tree.nodes, tree.leaf_refs, 5, 2000);
      EXPECT_GT(hits, m.triangles.size() == 3 ? 50 : 400) << "too few hits to test much";
    }
}

struct PackedFixture {
  TempDir dir{"kd_layout"};
  std::filesystem::path path;
  PackedFixture(const std::string& scene, const std::string& settings) {
    pack::PackOptions o;
    o.input = testing::scene_path(scene);
    if (!settings.empty()) o.settings = testing::source_dir() / "scene-packer/scenes" / settings;
    o.output = path = dir / "scene.tpk";
    o.load_textures = false;
    o.show_progress = false;
    o.zstd_level = 1;
    pack::pack_scene(o);
  }
};

TEST(KdNodeLayout, CrytekSponzaTracesTheSameHits) {
  PackedFixture f("crytek_sponza/sponza.obj.zst", "");
  const PackedScene scene = PackedScene::load(f.path);
  const auto dfs = scene.section_as<uint32_t>(tpk::KD_NODES);
  for (uint32_t block : {4u, 8u}) {
    BlockedKdStats stats;
    const auto blocked = make_blocked_kd_nodes(dfs, block, &stats);
    expect_same_tree(dfs, blocked, block);
    EXPECT_GT(stats.inner_with_local_children * 4, stats.inner_nodes) << "block " << block;
  }
  EXPECT_GT(expect_layouts_agree(scene.host_view(), dfs, scene.section_as<uint32_t>(tpk::KD_LEAF_REFS), 9, 6000), 4000);
}

// ---- OpenCL (PoCL here) ----

using testing::opencl_available;

// Primary hits and shadow rays of the one-ray-per-pixel kernels and of the CPU's packet kernels,
// for one layout: kernels built for it, buffers uploaded in it.
std::vector<uint8_t> opencl_hits(const PackedScene& scene, const KdNodeLayout& layout, uint32_t w, uint32_t h) {
  const cl::Device device = cl::Device::open("cpu");
  const bool packets = cl::uses_cpu_paths(device);  // the _block kernels exist on CPU paths only
  cl::DeviceMemoryBudget budget(device);
  const DeviceScene device_scene(device, budget, scene, layout);
  const cl::Program program = cl::build_program(device, "kernels/device/opencl/raytrace.cl", layout.build_options());
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  const CameraParams camera = make_camera(spec, w, h);
  const auto& b = scene.manifest().bounds();
  const float light[3] = {0.5f * (b.min().x() + b.max().x()), b.max().y() - 0.05f * (b.max().y() - b.min().y()),
                          0.5f * (b.min().z() + b.max().z())};
  const size_t pixels = size_t(w) * h;
  std::vector<uint8_t> out;
  for (const std::string suffix : {"", "_block"}) {
    if (!suffix.empty() && !packets) continue;
    const size_t gx = suffix.empty() ? w : (w + 1) / 2, gy = suffix.empty() ? h : (h + 3) / 4;
    cl::Buffer hits = budget.create("hits", pixels * 16), occluded = budget.create("occluded", pixels * 4);
    cl::Kernel primary = program.kernel("bench_primary" + suffix);
    cl_uint arg = device_scene.set_scene_args(primary);
    primary.set_arg(arg++, camera);
    primary.set_arg(arg++, hits);
    cl::launch_2d(device, primary, {gx, gy}, {1, 1}).wait();
    cl::Kernel shadow = program.kernel("bench_shadow" + suffix);
    arg = device_scene.set_scene_args(shadow);
    shadow.set_arg(arg++, camera);
    shadow.set_arg(arg++, hits);
    for (float c : light) shadow.set_arg(arg++, c);
    shadow.set_arg(arg++, occluded);
    cl::launch_2d(device, shadow, {gx, gy}, {1, 1}).wait();
    const auto h4 = cl::read_buffer<cl_float4>(device, hits, pixels);
    const auto o = cl::read_buffer<cl_uint>(device, occluded, pixels);
    const auto* hb = reinterpret_cast<const uint8_t*>(h4.data());
    const auto* ob = reinterpret_cast<const uint8_t*>(o.data());
    out.insert(out.end(), hb, hb + pixels * 16);
    out.insert(out.end(), ob, ob + pixels * 4);
  }
  return out;
}

TEST(KdNodeLayout, OpenClKernelsTraceTheSameHits) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("dabrovic_sponza/sponza.obj.zst", "dabrovic_sponza.scene.txtpb");
  const PackedScene scene = PackedScene::load(f.path);
  const auto dfs = opencl_hits(scene, parse_kd_node_layout("dfs"), 48, 40);
  size_t hit_pixels = 0;
  for (size_t i = 0; i < 48 * 40; ++i) {
    float t;
    std::memcpy(&t, dfs.data() + 16 * i, 4);
    hit_pixels += t >= 0.0f;
  }
  EXPECT_GT(hit_pixels, 48u * 40u / 2);
  for (const char* name : {"blocked", "blocked64"}) {
    const auto other = opencl_hits(scene, parse_kd_node_layout(name), 48, 40);
    ASSERT_EQ(other.size(), dfs.size());
    EXPECT_TRUE(other == dfs) << name << " traced other hits than dfs";
  }
  // the GPU code path (no SIMD leaves, no packets), built for the CPU device
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  const auto gpu_dfs = opencl_hits(scene, parse_kd_node_layout("dfs"), 48, 40);
  EXPECT_TRUE(std::equal(gpu_dfs.begin(), gpu_dfs.end(), dfs.begin())) << "GPU path traced other hits than CPU path";
  for (const char* name : {"blocked", "blocked64"})
    EXPECT_TRUE(opencl_hits(scene, parse_kd_node_layout(name), 48, 40) == gpu_dfs) << name << " on the GPU path";
}

// What a user compares: tessera-bench rays' hit hashes with TESSERA_KD_LAYOUT set and unset.
TEST(KdNodeLayout, BenchHitHashesAgreeAcrossLayouts) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("stanford_bunny/bun_zipper_res4.ply", "");
  auto run = [&](const std::string& layout) {
    const auto r = testing::run_command("TESSERA_KD_LAYOUT=" + layout + " " +
                                        (testing::binary_dir() / "worker/tessera-bench").string() + " rays " +
                                        f.path.string() + " --device cpu --size 32 --passes 5 --no-embree --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output)[0];
  };
  const auto dfs = run("dfs"), blocked = run("blocked");
  EXPECT_EQ(dfs["kd_layout"], "dfs");
  EXPECT_EQ(blocked["kd_layout"], "blocked");
  for (const char* kind : {"primary", "shadow", "diffuse"})
    EXPECT_EQ(dfs["kernels"][kind]["hits_xxh64"], blocked["kernels"][kind]["hits_xxh64"]) << kind;
  const auto bad = testing::run_command("TESSERA_KD_LAYOUT=bfs " + (testing::binary_dir() / "worker/tessera-bench").string() +
                                        " rays " + f.path.string() + " --device cpu --size 16 --passes 5 --no-embree");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("TESSERA_KD_LAYOUT must be dfs, blocked or blocked64"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace tessera
