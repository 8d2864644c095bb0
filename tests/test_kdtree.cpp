// kd-tree build (scene-packer/kdtree_*.cpp) and traversal (kernels/accel/kdtree_traverse.h):
// traversal against brute force for all three variants, layout invariants, determinism, sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/base/error.h"
#include "common/scene/kd_compact_layout.h"
#include "kernels/accel/kdtree_traverse.h"
#include "scene-packer/kdtree_builder.h"
#include "test_helpers.h"

namespace tessera::pack {
namespace {

struct TestMesh {
  std::string name;
  std::vector<float> positions;
  std::vector<uint32_t> triangles;
  size_t triangle_count() const { return triangles.size() / 3; }
};

// `v` and `f` lines only; polygons become fans; "i/j/k" and negative indices are understood.
TestMesh load_obj(const std::string& relative) {
  const std::string path = testing::scene_path(relative).string();
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path);
  TestMesh m;
  m.name = relative;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "v") {
      float x, y, z;
      ls >> x >> y >> z;
      m.positions.insert(m.positions.end(), {x, y, z});
    } else if (tag == "f") {
      std::vector<uint32_t> corners;
      std::string token;
      while (ls >> token) {
        const long i = std::stol(token.substr(0, token.find('/')));
        const long vertices = long(m.positions.size() / 3);
        corners.push_back(uint32_t(i < 0 ? vertices + i : i - 1));
      }
      for (size_t k = 2; k < corners.size(); ++k)
        m.triangles.insert(m.triangles.end(), {corners[0], corners[k - 1], corners[k]});
    }
  }
  return m;
}

// A soup meant to hurt: tiny and long thin triangles, axis-aligned triangles on grid planes where
// other triangles' bounds end (so they sit exactly on split candidates), exact duplicates (also
// with rotated corners), and one big floor triangle reaching far beyond everything else.
TestMesh random_soup(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  auto grid = [&](int steps) { return float(int(unit(rng) * float(steps))) / float(steps); };
  TestMesh m;
  m.name = "soup" + std::to_string(seed);
  auto vertex = [&](float x, float y, float z) {
    m.positions.insert(m.positions.end(), {x, y, z});
    return uint32_t(m.positions.size() / 3 - 1);
  };
  auto tri = [&](uint32_t a, uint32_t b, uint32_t c) { m.triangles.insert(m.triangles.end(), {a, b, c}); };
  auto triangle_area_ok = [&](const std::array<std::array<float, 3>, 3>& p) {
    float e1[3], e2[3];
    for (int k = 0; k < 3; ++k) e1[k] = p[1][k] - p[0][k], e2[k] = p[2][k] - p[0][k];
    const float nx = e1[1] * e2[2] - e1[2] * e2[1], ny = e1[2] * e2[0] - e1[0] * e2[2],
                nz = e1[0] * e2[1] - e1[1] * e2[0];
    return nx * nx + ny * ny + nz * nz > 1e-14f;
  };
  auto add = [&](const std::array<std::array<float, 3>, 3>& p) {
    if (!triangle_area_ok(p)) return;
    tri(vertex(p[0][0], p[0][1], p[0][2]), vertex(p[1][0], p[1][1], p[1][2]), vertex(p[2][0], p[2][1], p[2][2]));
  };
  for (int i = 0; i < count; ++i) {
    const int kind = int(unit(rng) * 10.0f);
    if (kind <= 3) {  // small; half of them with corners on a 1/16 grid
      const bool snapped = unit(rng) < 0.5f;
      const std::array<float, 3> c{unit(rng), unit(rng), unit(rng)};
      std::array<std::array<float, 3>, 3> p;
      for (auto& v : p)
        for (int k = 0; k < 3; ++k) {
          v[k] = c[k] + (unit(rng) - 0.5f) * 0.15f;
          if (snapped) v[k] = std::round(v[k] * 16.0f) / 16.0f;
        }
      add(p);
    } else if (kind <= 5) {  // long and thin
      std::array<float, 3> a{unit(rng), unit(rng), unit(rng)}, b{unit(rng), unit(rng), unit(rng)};
      std::array<float, 3> c = a;
      c[int(unit(rng) * 3.0f) % 3] += 1e-3f;
      add({a, b, c});
    } else if (kind <= 7) {  // axis-aligned, lying in a grid plane
      const int axis = int(unit(rng) * 3.0f) % 3;
      const float plane = grid(8);
      std::array<std::array<float, 3>, 3> p;
      for (auto& v : p) {
        for (int k = 0; k < 3; ++k) v[k] = grid(16);
        v[axis] = plane;
      }
      add(p);
    } else if (!m.triangles.empty()) {  // duplicate an earlier triangle, sometimes rotated
      const size_t t = size_t(unit(rng) * float(m.triangle_count())) % m.triangle_count();
      const uint32_t a = m.triangles[3 * t], b = m.triangles[3 * t + 1], c = m.triangles[3 * t + 2];
      if (kind == 8)
        tri(a, b, c);
      else
        tri(b, c, a);
    }
  }
  // big floor, slightly below the rest, and one lying exactly on y = 0
  tri(vertex(-0.5f, -0.01f, -0.5f), vertex(1.5f, -0.01f, -0.5f), vertex(0.5f, -0.01f, 2.0f));
  tri(vertex(-0.2f, 0.0f, -0.2f), vertex(0.5f, 0.0f, 1.2f), vertex(1.2f, 0.0f, -0.2f));
  return m;
}

struct Bounds {
  float min[3], max[3];
};

Bounds mesh_bounds(const TestMesh& m) {
  Bounds b{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (uint32_t v : m.triangles)
    for (int k = 0; k < 3; ++k) {
      b.min[k] = std::min(b.min[k], m.positions[3 * v + k]);
      b.max[k] = std::max(b.max[k], m.positions[3 * v + k]);
    }
  return b;
}

// A SceneView of the tree as traversal reads it: depth-first without empty leaves; narrow: with
// 16-bit leaf lists (the compact profile's).
struct TreeView {
  std::vector<uint32_t> nodes;
  SceneView view;
};

TreeView make_view(const TestMesh& m, const PackedKdTree& tree, bool narrow = false) {
  TreeView out;
  out.nodes = make_compact_kd_nodes(tree.nodes, tree.leaf_refs, narrow);
  SceneView& s = out.view;
  std::memset(&s, 0, sizeof s);
  s.flags = narrow ? TS_SCENE_NARROW_LEAF_LISTS : 0u;  // float positions
  s.triangle_count = uint32_t(m.triangle_count());
  s.positions = m.positions.data();
  s.triangles = m.triangles.data();
  s.kd_nodes = out.nodes.data();
  s.kd_leaf_refs = tree.leaf_refs.data();
  const Bounds b = mesh_bounds(m);
  s.bounds_min_x = b.min[0], s.bounds_min_y = b.min[1], s.bounds_min_z = b.min[2];
  s.bounds_max_x = b.max[0], s.bounds_max_y = b.max[1], s.bounds_max_z = b.max[2];
  return out;
}

PackedKdTree build(const TestMesh& m, KdVariant variant) {
  KdBuildOptions options;
  options.variant = variant;
  return build_kdtree(m.positions, m.triangles, options);
}

size_t tree_bytes(const PackedKdTree& t) { return 4 * (t.nodes.size() + t.leaf_refs.size()); }

// Closest hit over all triangles with the same triangle test the traversal uses.
Hit brute_force(const TestMesh& m, float3 org, float3 dir, float tmin, float tmax) {
  Hit hit{};  // (value-initialised: the host's Hit also has an instanced scene's `inst`)
  hit.tri = TS_KD_NO_TRIANGLE;
  hit.t = tmax;
  const TriangleRay ray = triangle_ray_setup(org, dir);
  float best = tmax;
  for (uint32_t t = 0; t < m.triangle_count(); ++t) {
    const float* p = m.positions.data();
    const uint32_t* v = &m.triangles[3 * t];
    float th, u, w;
    if (triangle_intersect(&ray, v3_load(p + 3 * v[0]), v3_load(p + 3 * v[1]), v3_load(p + 3 * v[2]), tmin, best,
                           &th, &u, &w)) {
      best = th;
      hit.tri = t, hit.t = th, hit.u = u, hit.v = w;
    }
  }
  return hit;
}

struct Ray {
  float3 org, dir;
  float tmin, tmax;
};

// Origins inside and outside the box; random, axis-parallel and zero-component directions
// (including -0); origins snapped onto grid planes so some rays run inside split planes.
std::vector<Ray> random_rays(const TestMesh& m, uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const Bounds b = mesh_bounds(m);
  float c[3], e[3];
  for (int k = 0; k < 3; ++k) c[k] = 0.5f * (b.min[k] + b.max[k]), e[k] = b.max[k] - b.min[k];
  std::vector<Ray> rays;
  for (int i = 0; i < count; ++i) {
    const int kind = i % 8;
    float o[3];
    const float spread = kind < 4 ? 1.0f : 2.0f;  // half the origins may lie outside the box
    for (int k = 0; k < 3; ++k) o[k] = c[k] + (unit(rng) - 0.5f) * spread * e[k];
    if (kind == 3 || kind == 7)  // onto grid planes (the soups' axis-aligned triangles lie there)
      for (int k = 0; k < 3; ++k)
        if (unit(rng) < 0.5f) o[k] = std::round(o[k] * 8.0f) / 8.0f;
    float d[3] = {normal(rng), normal(rng), normal(rng)};
    if (kind == 1 || kind == 5) {  // axis-parallel
      const int axis = i / 8 % 3;
      for (int k = 0; k < 3; ++k) d[k] = k == axis ? (unit(rng) < 0.5f ? -1.0f : 1.0f) : (unit(rng) < 0.5f ? -0.0f : 0.0f);
    } else if (kind == 2 || kind == 3 || kind == 6) {  // one zero component
      d[i / 8 % 3] = unit(rng) < 0.5f ? -0.0f : 0.0f;
    }
    if (kind == 4 || kind == 5) {  // aim at the box so most outside rays enter it
      float target[3];
      for (int k = 0; k < 3; ++k) target[k] = c[k] + (unit(rng) - 0.5f) * e[k];
      for (int k = 0; k < 3; ++k)
        if (d[k] != 0.0f) d[k] = target[k] - o[k];
    }
    if (d[0] == 0.0f && d[1] == 0.0f && d[2] == 0.0f) d[0] = 1.0f;
    const float tmin = i % 5 == 0 ? 0.05f * unit(rng) : 0.0f;
    const float tmax = i % 7 == 0 ? 0.5f * unit(rng) * (e[0] + e[1] + e[2]) : INFINITY;
    rays.push_back({make_float3(o[0], o[1], o[2]), make_float3(d[0], d[1], d[2]), tmin, tmax});
  }
  return rays;
}

struct NamedTree {
  std::string name;
  PackedKdTree tree;
};

std::vector<NamedTree> all_variants(const TestMesh& m) {
  return {{"standard", build(m, KdVariant::Standard)}, {"choi", build(m, KdVariant::Choi)}, {"seo", build(m, KdVariant::Seo)}};
}

void expect_matches_brute_force(const TestMesh& m, const std::vector<Ray>& rays,
                                const std::vector<NamedTree>& trees) {
  std::vector<TreeView> views;  // each tree with 32-bit, then 16-bit leaf lists
  for (const NamedTree& t : trees) {
    views.push_back(make_view(m, t.tree));
    views.push_back(make_view(m, t.tree, /*narrow=*/true));
  }
  int failures = 0;
  for (size_t r = 0; r < rays.size() && failures < 10; ++r) {
    const Ray& ray = rays[r];
    const Hit ref = brute_force(m, ray.org, ray.dir, ray.tmin, ray.tmax);
    const float any_tmax = ref.tri == TS_KD_NO_TRIANGLE ? ray.tmax : (r % 2 ? ref.t * 1.001f : ref.t * 0.999f);
    const bool any_expected = ref.tri != TS_KD_NO_TRIANGLE && ref.t < any_tmax;
    for (size_t v = 0; v < views.size(); ++v) {
      Hit hit;
      const int found = kd_intersect_closest(&views[v].view, ray.org, ray.dir, ray.tmin, ray.tmax, &hit);
      const bool same = found ? ref.tri != TS_KD_NO_TRIANGLE &&
                                    (hit.tri == ref.tri || std::fabs(hit.t - ref.t) <= 1e-5f * std::fabs(ref.t))
                              : ref.tri == TS_KD_NO_TRIANGLE;
      const int any = kd_intersect_any(&views[v].view, ray.org, ray.dir, ray.tmin, any_tmax);
      if (!same || bool(any) != any_expected) {
        ++failures;
        ADD_FAILURE() << m.name << " " << trees[v / 2].name << (v % 2 ? " narrow" : "") << " ray " << r << " org (" << ray.org.x << ", " << ray.org.y
                      << ", " << ray.org.z << ") dir (" << ray.dir.x << ", " << ray.dir.y << ", " << ray.dir.z
                      << ") t [" << ray.tmin << ", " << ray.tmax << "]: kd " << (found ? int64_t(hit.tri) : -1)
                      << " t " << hit.t << ", brute force " << (ref.tri == TS_KD_NO_TRIANGLE ? -1 : int64_t(ref.tri))
                      << " t " << ref.t << "; any-hit " << any << " expected " << any_expected;
      }
    }
  }
}

// Walks the packed layout checking every rule of kernels/accel/kdtree_layout.h; returns the
// set of triangles reachable from the root.
struct LayoutCheck {
  const PackedKdTree& tree;
  uint32_t triangles;
  uint32_t max_refs_per_node;
  uint32_t max_path_refs;
  std::vector<uint8_t> slot_used;
  std::vector<uint8_t> reachable;
  KdTreeStats counted;

  void walk(uint32_t node, uint32_t depth, uint32_t path_refs) {
    const size_t slots = tree.nodes.size() / 2;
    ASSERT_LT(node, slots);
    ASSERT_FALSE(slot_used[node]) << "slot " << node << " reached twice";
    slot_used[node] = 1;
    ASSERT_LE(depth, 60u);
    const uint32_t w0 = tree.nodes[2 * node], w1 = tree.nodes[2 * node + 1];
    if (kd_node_kind(w0) == TS_KD_LEAF) {
      const uint32_t count = kd_leaf_count(w0);
      ++counted.leaves;
      counted.empty_leaves += count == 0;
      counted.leaf_references += count;
      counted.max_depth = std::max(counted.max_depth, depth);
      if (count == 1) {
        ASSERT_LT(w1, triangles);
        reachable[w1] = 1;
      } else if (count >= 2) {
        ASSERT_LE(size_t(w1) + count, tree.leaf_refs.size());
        std::vector<uint32_t> list(tree.leaf_refs.begin() + w1, tree.leaf_refs.begin() + w1 + count);
        std::sort(list.begin(), list.end());
        ASSERT_TRUE(std::adjacent_find(list.begin(), list.end()) == list.end()) << "duplicate in leaf " << node;
        for (uint32_t t : list) {
          ASSERT_LT(t, triangles);
          reachable[t] = 1;
        }
      }
      return;
    }
    const uint32_t refs = kd_inner_ref_count(w0);
    ASSERT_LE(refs, max_refs_per_node);
    ASSERT_TRUE(std::isfinite(ts_as_float(w1)));
    if (refs > 0) {
      ++counted.inner_nodes_with_refs;
      ASSERT_LT(node + 1, slots);
      ASSERT_FALSE(slot_used[node + 1]);
      slot_used[node + 1] = 1;
      const uint32_t a = tree.nodes[2 * node + 2], b = tree.nodes[2 * node + 3];
      ASSERT_LT(a, triangles);
      reachable[a] = 1;
      if (refs == 2) {
        ASSERT_LT(b, triangles);
        ASSERT_NE(a, b);
        reachable[b] = 1;
      } else {
        ASSERT_EQ(b, TS_KD_NO_TRIANGLE);
      }
    } else {
      ++counted.inner_nodes_without_refs;
    }
    counted.inner_references += refs;
    ASSERT_LE(path_refs + refs, max_path_refs);
    const uint32_t below = kd_dfs_below_child(node, w0), above = kd_dfs_above_child(w0);
    ASSERT_GT(above, below);
    walk(below, depth + 1, path_refs + refs);
    walk(above, depth + 1, path_refs + refs);
  }
};

void expect_valid_layout(const TestMesh& m, const PackedKdTree& tree, KdVariant variant) {
  const uint32_t max_refs = variant == KdVariant::Standard ? 0 : variant == KdVariant::Choi ? 1 : 2;
  LayoutCheck check{tree, uint32_t(m.triangle_count()), max_refs, KdBuildOptions().max_path_references, {}, {}, {}};
  ASSERT_EQ(tree.nodes.size() % 2, 0u);
  check.slot_used.assign(tree.nodes.size() / 2, 0);
  check.reachable.assign(m.triangle_count(), 0);
  check.walk(0, 0, 0);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(std::all_of(check.slot_used.begin(), check.slot_used.end(), [](uint8_t u) { return u != 0; }))
      << "unreachable slots";
  EXPECT_EQ(std::count(check.reachable.begin(), check.reachable.end(), 0), 0) << "unreachable triangles";
  const KdTreeStats& s = tree.stats;
  EXPECT_EQ(s.leaves, check.counted.leaves);
  EXPECT_EQ(s.empty_leaves, check.counted.empty_leaves);
  EXPECT_EQ(s.leaf_references, check.counted.leaf_references);
  EXPECT_EQ(s.inner_references, check.counted.inner_references);
  EXPECT_EQ(s.inner_nodes_with_refs, check.counted.inner_nodes_with_refs);
  EXPECT_EQ(s.inner_nodes_without_refs, check.counted.inner_nodes_without_refs);
  EXPECT_EQ(s.max_depth, check.counted.max_depth);
  EXPECT_GT(s.sah_cost, 0.0);
}

const TestMesh& bunny() {
  static const TestMesh m = load_obj("stanford_bunny/bun_zipper_res4.obj");
  return m;
}
const TestMesh& teapot() {
  static const TestMesh m = load_obj("teapot/teapot.obj");
  return m;
}

TEST(KdTree, RandomSoupsMatchBruteForce) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    const TestMesh m = random_soup(seed, 1500);
    expect_matches_brute_force(m, random_rays(m, 100 + seed, 4000), all_variants(m));
  }
}

TEST(KdTree, BunnyMatchesBruteForce) {
  ASSERT_EQ(bunny().triangle_count(), 948u);
  expect_matches_brute_force(bunny(), random_rays(bunny(), 7, 5000), all_variants(bunny()));
}

TEST(KdTree, TeapotMatchesBruteForce) {
  ASSERT_EQ(teapot().triangle_count(), 6320u);
  expect_matches_brute_force(teapot(), random_rays(teapot(), 8, 4000), all_variants(teapot()));
}

TEST(KdTree, LayoutInvariants) {
  std::vector<TestMesh> meshes{random_soup(4, 2000), bunny(), teapot()};
  for (const TestMesh& m : meshes)
    for (KdVariant v : {KdVariant::Standard, KdVariant::Choi, KdVariant::Seo}) {
      SCOPED_TRACE(m.name + " variant " + std::to_string(int(v)));
      expect_valid_layout(m, build(m, v), v);
    }
}

TEST(KdTree, PathReferenceLimitIsRespected) {
  const TestMesh m = random_soup(5, 2000);
  for (uint32_t limit : {0u, 1u, 3u}) {
    KdBuildOptions options;
    options.variant = KdVariant::Seo;
    options.max_path_references = limit;
    options.tau_occupancy = 0.0f;  // move as much as allowed, so the limit is what stops it
    options.tau_frequency = 0.0f;
    const PackedKdTree tree = build_kdtree(m.positions, m.triangles, options);
    LayoutCheck check{tree, uint32_t(m.triangle_count()), 2, limit, {}, {}, {}};
    check.slot_used.assign(tree.nodes.size() / 2, 0);
    check.reachable.assign(m.triangle_count(), 0);
    check.walk(0, 0, 0);
    if (limit == 0) {
      EXPECT_EQ(tree.stats.inner_references, 0u);
    } else {
      EXPECT_GT(tree.stats.inner_references, 0u);
    }
    expect_matches_brute_force(m, random_rays(m, 50 + limit, 1000), {{"seo, limit " + std::to_string(limit), tree}});
  }
}

TEST(KdTree, BuildIsDeterministic) {
  for (const TestMesh& m : {random_soup(6, 2000), teapot()})
    for (KdVariant v : {KdVariant::Standard, KdVariant::Choi, KdVariant::Seo}) {
      const PackedKdTree a = build(m, v), b = build(m, v);
      EXPECT_EQ(a.nodes, b.nodes) << m.name;
      EXPECT_EQ(a.leaf_refs, b.leaf_refs) << m.name;
      EXPECT_EQ(a.stats.sah_cost, b.stats.sah_cost) << m.name;
    }
}

// Small clutter under a few big slanted sheets that cut through it: the sheets straddle many
// split planes and cover whole cells, which is what inner references are for.
TestMesh clutter_under_sheets() {
  TestMesh m = random_soup(9, 3000);
  m.name = "clutter under sheets";
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int i = 0; i < 12; ++i) {
    const float y0 = unit(rng), y1 = unit(rng), y2 = unit(rng);
    const uint32_t v = uint32_t(m.positions.size() / 3);
    m.positions.insert(m.positions.end(), {-0.2f, y0, -0.2f, 1.2f, y1, -0.2f, 0.5f, y2, 1.4f});
    m.triangles.insert(m.triangles.end(), {v, v + 1, v + 2});
  }
  return m;
}

TEST(KdTree, InnerReferencesShrinkTheTree) {
  const TestMesh sheets = clutter_under_sheets();
  for (const TestMesh* m : {&bunny(), &teapot(), &sheets}) {
    const PackedKdTree std_tree = build(*m, KdVariant::Standard);
    const PackedKdTree choi = build(*m, KdVariant::Choi);
    const PackedKdTree seo = build(*m, KdVariant::Seo);
    auto nodes = [](const PackedKdTree& t) {
      return t.stats.inner_nodes_with_refs + t.stats.inner_nodes_without_refs + t.stats.leaves;
    };
    EXPECT_LE(tree_bytes(seo), tree_bytes(choi)) << m->name;
    EXPECT_LE(tree_bytes(choi), tree_bytes(std_tree)) << m->name;
    EXPECT_LE(nodes(seo), nodes(choi)) << m->name;
    EXPECT_LE(nodes(choi), nodes(std_tree)) << m->name;
    EXPECT_EQ(std_tree.stats.inner_references, 0u);
    EXPECT_LE(choi.stats.inner_references, choi.stats.inner_nodes_with_refs);
    EXPECT_LE(seo.stats.inner_references, 2 * seo.stats.inner_nodes_with_refs);
    if (m == &sheets) {  // here the references must pay off clearly
      EXPECT_LT(double(tree_bytes(choi)), 0.985 * double(tree_bytes(std_tree)));
      EXPECT_LT(tree_bytes(seo), tree_bytes(choi));
      EXPECT_GT(seo.stats.inner_references, seo.stats.inner_nodes_with_refs);
      expect_matches_brute_force(*m, random_rays(*m, 99, 1500), {{"choi", choi}, {"seo", seo}});
    }
  }
  EXPECT_GT(build(bunny(), KdVariant::Seo).stats.inner_references, 0u);
}

// The SAH traversal cost trades bytes for triangle tests: a lower one builds more, smaller leaves
// (more nodes, fewer triangles a non-empty leaf) and every tree still finds the brute-force hits.
TEST(KdTree, TraversalCostTradesBytesForSmallerLeaves) {
  for (const TestMesh* m : {&bunny(), &teapot()}) {
    std::vector<PackedKdTree> trees;
    for (double cost : {8.0, 4.5, 2.5, 1.5}) {
      KdBuildOptions options;
      options.traversal_cost = cost;
      trees.push_back(build_kdtree(m->positions, m->triangles, options));
    }
    auto per_leaf = [](const PackedKdTree& t) {
      return double(t.stats.leaf_references) / double(t.stats.leaves - t.stats.empty_leaves);
    };
    for (size_t i = 1; i < trees.size(); ++i) {
      EXPECT_GT(trees[i].stats.leaves, trees[i - 1].stats.leaves) << m->name << " tree " << i;
      EXPECT_GT(tree_bytes(trees[i]), tree_bytes(trees[i - 1])) << m->name << " tree " << i;
      EXPECT_LT(per_leaf(trees[i]), per_leaf(trees[i - 1])) << m->name << " tree " << i;
    }
    expect_matches_brute_force(*m, random_rays(*m, 7, 1500), {{"cost 8", trees[0]}, {"cost 1.5", trees[3]}});
  }
}

// --sah-empty-bonus: a higher bonus cuts empty space off sooner (more empty leaves, fewer triangle
// references a non-empty leaf), and every tree still finds the brute-force hits.
TEST(KdTree, EmptyBonusCutsEmptySpaceSooner) {
  for (const TestMesh* m : {&bunny(), &teapot()}) {
    std::vector<PackedKdTree> trees;
    for (double bonus : {0.0, 0.2, 0.6}) {
      KdBuildOptions options;
      options.empty_bonus = bonus;
      trees.push_back(build_kdtree(m->positions, m->triangles, options));
    }
    for (size_t i = 1; i < trees.size(); ++i)
      EXPECT_GT(trees[i].stats.empty_leaves, trees[i - 1].stats.empty_leaves) << m->name << " tree " << i;
    expect_matches_brute_force(*m, random_rays(*m, 11, 1500), {{"bonus 0", trees[0]}, {"bonus 0.6", trees[2]}});
  }
}

// The surface of the unit cube as an n x n grid of quads on each face, vertices shared.
TestMesh grid_cube(int n) {
  TestMesh m;
  m.name = "cube" + std::to_string(n);
  std::vector<int> index(size_t((n + 1) * (n + 1) * (n + 1)), -1);
  auto vertex = [&](int i, int j, int k) {
    int& slot = index[size_t((i * (n + 1) + j) * (n + 1) + k)];
    if (slot < 0) {
      slot = int(m.positions.size() / 3);
      m.positions.insert(m.positions.end(), {float(i) / float(n), float(j) / float(n), float(k) / float(n)});
    }
    return uint32_t(slot);
  };
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side <= n; side += n)
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          auto at = [&](int u, int v) {
            int c[3];
            c[axis] = side, c[(axis + 1) % 3] = u, c[(axis + 2) % 3] = v;
            return vertex(c[0], c[1], c[2]);
          };
          const uint32_t v00 = at(a, b), v10 = at(a + 1, b), v01 = at(a, b + 1), v11 = at(a + 1, b + 1);
          m.triangles.insert(m.triangles.end(), {v00, v10, v11, v00, v11, v01});
        }
  return m;
}

// Rays from inside a closed mesh aimed exactly at its vertices (which lie on split planes, where
// cells meet edge to edge) and at points between them must all hit: the triangle test is
// watertight and the traversal loses no cell to rounding.
TEST(KdTree, ClosedMeshIsWatertight) {
  for (int n : {6, 8}) {
    const TestMesh m = grid_cube(n);
    const size_t vertices = m.positions.size() / 3;
    for (KdVariant variant : {KdVariant::Standard, KdVariant::Choi, KdVariant::Seo}) {
      const PackedKdTree tree = build(m, variant);
      const TreeView tree_view = make_view(m, tree);
      const SceneView& view = tree_view.view;
      int escaped = 0;
      std::mt19937 rng(11);
      std::uniform_real_distribution<float> unit(0.1f, 0.9f);
      for (int r = 0; r < 100; ++r) {
        const float3 org = make_float3(unit(rng), unit(rng), unit(rng));
        for (size_t v = 0; v < vertices; ++v) {
          const float3 target = v3_load(m.positions.data() + 3 * v);
          const float3 other = v3_load(m.positions.data() + 3 * ((v + 1) % vertices));
          Hit hit;
          escaped += !kd_intersect_closest(&view, org, v3_sub(target, org), 0.0f, INFINITY, &hit);
          const float3 mid = v3_scale(v3_add(target, other), 0.5f);
          escaped += !kd_intersect_closest(&view, org, v3_sub(mid, org), 0.0f, INFINITY, &hit);
        }
      }
      EXPECT_EQ(escaped, 0) << m.name << " variant " << int(variant);
    }
  }
}

TEST(KdTree, TinyAndDegenerateInputs) {
  TestMesh empty;
  const PackedKdTree t0 = build(empty, KdVariant::Seo);
  ASSERT_EQ(t0.nodes.size(), 2u);
  EXPECT_EQ(t0.stats.leaves, 1u);

  TestMesh one;
  one.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  one.triangles = {0, 1, 2};
  for (KdVariant v : {KdVariant::Standard, KdVariant::Choi, KdVariant::Seo}) {
    const PackedKdTree t = build(one, v);
    const TreeView tree_view = make_view(one, t);
    const SceneView& view = tree_view.view;
    Hit hit;
    ASSERT_TRUE(kd_intersect_closest(&view, make_float3(0.25f, 0.25f, 1.0f), make_float3(0, 0, -1), 0.0f, INFINITY, &hit));
    EXPECT_EQ(hit.tri, 0u);
    EXPECT_FLOAT_EQ(hit.t, 1.0f);
    EXPECT_FLOAT_EQ(hit.u, 0.25f);
    EXPECT_FLOAT_EQ(hit.v, 0.25f);
    EXPECT_FALSE(kd_intersect_closest(&view, make_float3(0.25f, 0.25f, 1.0f), make_float3(0, 0, 1), 0.0f, INFINITY, &hit));
    EXPECT_FALSE(kd_intersect_any(&view, make_float3(0.25f, 0.25f, 1.0f), make_float3(0, 0, -1), 0.0f, 0.5f));
    EXPECT_TRUE(kd_intersect_any(&view, make_float3(0.25f, 0.25f, 1.0f), make_float3(0, 0, -1), 0.0f, 1.5f));
  }

  // Many copies of one triangle: no split helps, so one leaf holds them all.
  TestMesh stack;
  stack.positions = one.positions;
  for (int i = 0; i < 50; ++i) stack.triangles.insert(stack.triangles.end(), {0, 1, 2});
  const PackedKdTree ts = build(stack, KdVariant::Seo);
  EXPECT_EQ(ts.stats.leaf_references + ts.stats.inner_references, 50u);
  expect_valid_layout(stack, ts, KdVariant::Seo);

  TestMesh bad = one;
  bad.triangles = {0, 1, 3};
  EXPECT_THROW(build(bad, KdVariant::Standard), Error);
  bad = one;
  bad.positions[4] = NAN;
  EXPECT_THROW(build(bad, KdVariant::Standard), Error);
}

// The compact profile's narrow leaf lists: the teapot has fewer than 2^16 triangles, so every list of
// two or more takes 8 or 16 bits a triangle and the tree shrinks; traversal still finds the brute-force hits.
TEST(KdTree, NarrowLeafListsTakeFewerBytes) {
  KdBuildOptions options;
  options.traversal_cost = 3.0;
  const PackedKdTree tree = build_kdtree(teapot().positions, teapot().triangles, options);
  const auto wide = make_compact_kd_nodes(tree.nodes, tree.leaf_refs);
  const auto narrow = make_compact_kd_nodes(tree.nodes, tree.leaf_refs, /*narrow=*/true);
  EXPECT_LT(double(narrow.size()), 0.9 * double(wide.size()));
  expect_matches_brute_force(teapot(), random_rays(teapot(), 21, 1500), {{"cost 3", tree}});
}

// The triangle tests a ray through the root box makes on average by the SAH's probabilities (a node is
// reached with its surface area over the root's): leaves' triangles and inner nodes' references.
double expected_triangle_tests(const TestMesh& m, const PackedKdTree& t) {
  std::array<float, 3> lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < m.positions.size(); ++i) {
    lo[i % 3] = std::min(lo[i % 3], m.positions[i]);
    hi[i % 3] = std::max(hi[i % 3], m.positions[i]);
  }
  auto area = [](const std::array<float, 3>& a, const std::array<float, 3>& b) {
    const double x = b[0] - a[0], y = b[1] - a[1], z = b[2] - a[2];
    return 2.0 * (x * y + y * z + z * x);
  };
  const double root = area(lo, hi);
  double tests = 0.0;
  std::function<void(uint32_t, std::array<float, 3>, std::array<float, 3>)> walk = [&](uint32_t node, auto a, auto b) {
    const uint32_t w0 = t.nodes[2 * node], w1 = t.nodes[2 * node + 1];
    const double p = area(a, b) / root;
    if (kd_node_kind(w0) == TS_KD_LEAF) {
      tests += p * kd_leaf_count(w0);
      return;
    }
    tests += p * kd_inner_ref_count(w0);
    float split;
    std::memcpy(&split, &w1, 4);
    auto below_hi = b, above_lo = a;
    below_hi[kd_node_kind(w0)] = split;
    above_lo[kd_node_kind(w0)] = split;
    walk(kd_dfs_below_child(node, w0), a, below_hi);
    walk(kd_dfs_above_child(w0), above_lo, b);
  };
  walk(0, lo, hi);
  return tests;
}

// A byte budget prunes the tree (scene-packer/kdtree_prune.h): its compact layout fits the budget,
// it keeps more of the unpruned tree's speed than a tree built whole at a higher SAH cost to the same
// bytes (fewer triangle tests a ray), every pruned tree still finds the brute-force hits, a budget the tree
// already fits changes nothing, and the same input gives the same bytes.
TEST(KdTree, ByteBudgetPrunesWhereFewRaysGo) {
  for (const TestMesh* m : {&bunny(), &teapot()}) {
    KdBuildOptions fine;
    fine.traversal_cost = 2.0;
    const PackedKdTree whole = build_kdtree(m->positions, m->triangles, fine);
    auto compact_bytes = [](const PackedKdTree& t) {
      return 4.0 * double(make_compact_kd_nodes(t.nodes, t.leaf_refs, /*narrow=*/true).size());
    };
    const double triangles = double(m->triangle_count());
    const double budget = 0.75 * compact_bytes(whole) / triangles;
    KdBuildOptions pruned_options = fine;
    pruned_options.byte_budget_per_triangle = budget;
    const PackedKdTree pruned = build_kdtree(m->positions, m->triangles, pruned_options);
    EXPECT_LE(compact_bytes(pruned), budget * triangles) << m->name;
    EXPECT_GT(compact_bytes(pruned), 0.9 * budget * triangles) << m->name;  // pruned only as far as needed
    EXPECT_GT(pruned.stats.pruning_merges, 0u) << m->name;
    // the SAH traversal cost that builds a whole tree of about the same bytes
    PackedKdTree coarse;
    for (double cost = 2.25; cost < 16.0; cost += 0.25) {
      KdBuildOptions o;
      o.traversal_cost = cost;
      coarse = build_kdtree(m->positions, m->triangles, o);
      if (compact_bytes(coarse) <= compact_bytes(pruned)) break;
    }
    EXPECT_LE(compact_bytes(coarse), compact_bytes(pruned)) << m->name;
    // the triangle tests a random ray makes (SAH's probabilities): fewer in the pruned tree
    EXPECT_LT(expected_triangle_tests(*m, pruned), 0.95 * expected_triangle_tests(*m, coarse)) << m->name;
    expect_matches_brute_force(*m, random_rays(*m, 31, 1500), {{"pruned", pruned}});
    const PackedKdTree again = build_kdtree(m->positions, m->triangles, pruned_options);
    EXPECT_EQ(again.nodes, pruned.nodes) << m->name;
    EXPECT_EQ(again.leaf_refs, pruned.leaf_refs) << m->name;
    KdBuildOptions roomy = fine;
    roomy.byte_budget_per_triangle = 2.0 * compact_bytes(whole) / triangles;
    const PackedKdTree untouched = build_kdtree(m->positions, m->triangles, roomy);
    EXPECT_EQ(untouched.nodes, whole.nodes) << m->name;
    EXPECT_EQ(untouched.stats.pruning_merges, 0u) << m->name;
  }
}

// A narrow list takes the narrowest differences its span fits, 8, 16 or 32 bits, beginning in its
// leaf's word0, and gives back its triangles (sorted) through the one decode; a triangle beyond 2^30
// or a leaf beyond 16,383 triangles cannot be narrow.
TEST(KdTree, NarrowListsTakeTheWidthTheirSpanNeeds) {
  struct Case {
    std::vector<uint32_t> list;
    uint32_t code, slots;  // width code; 8-byte slots the leaf takes
  };
  const std::vector<Case> cases = {
      {{7, 3}, 1, 1},                                                  // its difference in word0
      {{2, 9, 4, 1}, 1, 2},                                            // 2 in word0, 1 after
      {{900, 1000, 1155, 1100, 901, 902, 903, 904, 905, 906}, 1, 2},  // 2 in word0, 7 bytes after
      {{60000, 5, 65540, 300}, 2, 2},                                  // span 65535: still 16 bits
      {{1u << 29, 12, 40, 1, 0x3FFFFFFFu}, 3, 3},                      // 4 words after
  };
  for (const Case& c : cases) {
    const std::vector<uint32_t> dfs = {kd_make_leaf_word0(uint32_t(c.list.size())), 0};
    const std::vector<uint32_t> nodes = make_compact_kd_nodes(dfs, c.list, /*narrow=*/true);
    ASSERT_EQ(nodes.size(), 2 * size_t(c.slots)) << c.list[0];
    const auto [lowest, highest] = std::minmax_element(c.list.begin(), c.list.end());
    EXPECT_EQ(narrow_leaf_slots(uint32_t(c.list.size()), *highest - *lowest), c.slots) << c.list[0];
    EXPECT_EQ(nodes[1] >> TS_KD_LIST_WIDTH_SHIFT, c.code);
    std::vector<uint32_t> sorted = c.list, decoded;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < c.list.size(); ++i) decoded.push_back(kd_list_triangle(nodes.data() + 1, nodes[0], nodes[1], i));
    EXPECT_EQ(decoded, sorted);
    // read in order, as the traversal's loop reads it
    std::vector<uint32_t> in_order;
    KdList list = kd_list_begin(nodes.data() + 1, nodes[0], nodes[1]);
    for (uint32_t i = 0; i < c.list.size(); ++i) in_order.push_back(kd_list_next(&list, i));
    EXPECT_EQ(in_order, sorted);
  }
  const std::vector<uint32_t> pair = {kd_make_leaf_word0(2), 0}, single = {kd_make_leaf_word0(1), 1u << 30};
  const std::vector<uint32_t> too_large = {1u << 30, 0};
  EXPECT_FALSE(narrow_leaf_lists_fit(pair, too_large));
  EXPECT_THROW(make_compact_kd_nodes(pair, too_large, true), Error);
  EXPECT_FALSE(narrow_leaf_lists_fit(single, {}));
  EXPECT_THROW(make_compact_kd_nodes(single, {}, true), Error);
  EXPECT_NO_THROW(make_compact_kd_nodes(single, {}, false));
  std::vector<uint32_t> many(16384);
  for (uint32_t i = 0; i < many.size(); ++i) many[i] = i;
  const std::vector<uint32_t> big = {kd_make_leaf_word0(16384), 0}, fits = {kd_make_leaf_word0(16383), 0};
  EXPECT_FALSE(narrow_leaf_lists_fit(big, many));
  EXPECT_THROW(make_compact_kd_nodes(big, many, true), Error);
  EXPECT_TRUE(narrow_leaf_lists_fit(fits, many));
  const std::vector<uint32_t> nodes = make_compact_kd_nodes(fits, many, true);
  EXPECT_EQ(kd_narrow_leaf_count(nodes[0]), 16383u);
  EXPECT_EQ(kd_list_triangle(nodes.data() + 1, nodes[0], nodes[1], 16382), 16382u);
}

// Subtrees build on as many threads as the options allow; the bytes never depend on how many.
TEST(KdTree, SameBytesForAnyThreadCount) {
  const TestMesh cube = grid_cube(48);  // 27,648 triangles: forks down to depth 4 at least
  for (const TestMesh* m : {&cube, &teapot()})
    for (KdVariant v : {KdVariant::Standard, KdVariant::Seo}) {
      SCOPED_TRACE(m->name + " variant " + std::to_string(int(v)));
      std::vector<PackedKdTree> trees;
      for (unsigned threads : {1u, 2u, 7u}) {
        KdBuildOptions options;
        options.variant = v;
        options.threads = threads;
        trees.push_back(build_kdtree(m->positions, m->triangles, options));
      }
      for (size_t i = 1; i < trees.size(); ++i) {
        EXPECT_EQ(trees[i].nodes, trees[0].nodes) << "tree " << i;
        EXPECT_EQ(trees[i].leaf_refs, trees[0].leaf_refs) << "tree " << i;
      }
    }
}

TEST(KdTree, ReportsProgress) {
  std::vector<double> seen;
  KdBuildOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  build_kdtree(teapot().positions, teapot().triangles, options);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_EQ(seen.back(), 1.0);
  EXPECT_LT(seen.size(), 5000u);  // cheap: not once per node
}

}  // namespace
}  // namespace tessera::pack
