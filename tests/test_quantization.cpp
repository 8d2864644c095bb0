// Quantization error bounds per attribute (Seo et al. 2022 §3.1) and the mesh clean-up after it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/scene/mesh_loader.h"
#include "common/scene/normal_table.h"
#include "scene-packer/quantizer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using pack::QuantizedMesh;
using pack::quantize_mesh;

// Angle between two directions (table entries are unit length only to half precision).
double angle_degrees(const float* a, const float* b) {
  const double la = std::sqrt(double(a[0]) * a[0] + double(a[1]) * a[1] + double(a[2]) * a[2]);
  const double lb = std::sqrt(double(b[0]) * b[0] + double(b[1]) * b[1] + double(b[2]) * b[2]);
  const double d = (double(a[0]) * b[0] + double(a[1]) * b[1] + double(a[2]) * b[2]) / (la * lb);
  return std::acos(std::clamp(d, -1.0, 1.0)) * 180.0 / M_PI;
}

TEST(NormalTable, AngularErrorIsSmall) {
  const NormalEncoder encoder;
  const auto& table = normal_table();
  std::mt19937 rng(7);
  std::normal_distribution<float> g;
  double worst = 0, sum = 0;
  constexpr int kSamples = 200000;
  for (int i = 0; i < kSamples; ++i) {
    float n[3] = {g(rng), g(rng), g(rng)};
    const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (float& c : n) c /= len;
    const uint16_t index = encoder.encode({n[0], n[1], n[2]});
    const double e = angle_degrees(n, &table[3 * index]);
    worst = std::max(worst, e);
    sum += e;
  }
  // 65,536 near-uniform points: mean ~0.3 deg, worst ~0.5 deg.
  EXPECT_LT(sum / kSamples, 0.35);
  EXPECT_LT(worst, 0.6);
  // Every table entry is unit length (to half precision) and encodes to itself.
  for (uint32_t i = 0; i < kNormalTableSize; i += 97) {
    const float* t = &table[3 * i];
    EXPECT_NEAR(t[0] * t[0] + t[1] * t[1] + t[2] * t[2], 1.0f, 2e-3f);
    EXPECT_EQ(encoder.encode({t[0], t[1], t[2]}), i);
  }
}

TriangleMesh random_mesh(uint32_t triangles, float extent, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-extent, extent), uv(-3.0f, 3.0f), unit(-1.0f, 1.0f);
  TriangleMesh mesh;
  for (uint32_t t = 0; t < triangles; ++t) {
    const float base[3] = {pos(rng), pos(rng), pos(rng)};
    const float u0 = uv(rng), v0 = uv(rng);
    for (int c = 0; c < 3; ++c) {
      for (int a = 0; a < 3; ++a) mesh.positions.push_back(base[a] + pos(rng) * 0.05f);
      float n[3] = {unit(rng), unit(rng), unit(rng) + 0.01f};
      const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (float x : n) mesh.normals.push_back(x / len);
      mesh.texcoords.push_back(u0 + 0.3f * unit(rng));
      mesh.texcoords.push_back(v0 + 0.3f * unit(rng));
      mesh.triangles.push_back(3 * t + c);
    }
    mesh.triangle_materials.push_back(t % 3);
  }
  mesh.materials.resize(3);
  return mesh;
}

TEST(Quantizer, PositionErrorWithinHalfAStep) {
  const TriangleMesh mesh = random_mesh(40000, 100.0f, 1);  // 120,000 vertices
  const QuantizedMesh q = quantize_mesh(mesh, {true, false, false});
  EXPECT_LE(q.quantization.geometry_cells(), 65536u);
  EXPECT_GT(q.quantization.geometry_cells(), 60000u) << "the bisection should use nearly all 16 bits";
  const double step = q.quantization.cell_size() / 1023.0;
  // Half a step, plus float rounding of the decode (a few ulps of the coordinate).
  EXPECT_LE(q.max_position_error, 0.5 * step + 4e-5);
  EXPECT_GT(q.max_position_error, 0.0);
  EXPECT_EQ(q.position_offsets.size(), q.vertex_count);
  EXPECT_EQ(q.position_cells.size(), q.vertex_count);
  EXPECT_EQ(q.cell_table.size(), 3u * q.quantization.geometry_cells());
}

TEST(Quantizer, TexcoordsShiftedPerTriangleAndExact) {
  const TriangleMesh mesh = random_mesh(2000, 10.0f, 2);
  const QuantizedMesh q = quantize_mesh(mesh, {false, false, true});
  ASSERT_EQ(q.triangle_count(), mesh.triangle_count());
  EXPECT_EQ(q.texcoord_triangles_clamped, 0u);
  // Triangle order is regrouped by material; compare each kept triangle's texcoords up to a
  // whole-number shift common to the triangle.
  for (size_t t = 0; t < q.triangle_count(); ++t) {
    // Positions are not quantized here, so the first vertex's position identifies the source.
    const float* p = &q.positions[3 * q.triangles[3 * t]];
    size_t src = 0;
    for (; src < mesh.vertex_count(); ++src)
      if (mesh.positions[3 * src] == p[0] && mesh.positions[3 * src + 1] == p[1] && mesh.positions[3 * src + 2] == p[2]) break;
    ASSERT_LT(src, mesh.vertex_count());
    const size_t tri = src / 3;
    double shift_u = NAN, shift_v = NAN;
    for (int c = 0; c < 3; ++c) {
      const uint32_t v = q.triangles[3 * t + c];
      const double u = q.texcoords_quantized[2 * v] / 32768.0, w = q.texcoords_quantized[2 * v + 1] / 32768.0;
      EXPECT_LT(u, 2.0);
      EXPECT_LT(w, 2.0);
      const double su = mesh.texcoords[2 * (3 * tri + c)] - u, sv = mesh.texcoords[2 * (3 * tri + c) + 1] - w;
      if (c == 0) {
        shift_u = std::round(su);
        shift_v = std::round(sv);
      }
      EXPECT_NEAR(su, shift_u, 0.5 / 32768.0 + 1e-6);
      EXPECT_NEAR(sv, shift_v, 0.5 / 32768.0 + 1e-6);
    }
  }
}

TEST(Quantizer, NormalsUseTheTable) {
  const TriangleMesh mesh = random_mesh(1000, 10.0f, 3);
  const QuantizedMesh q = quantize_mesh(mesh, {false, true, false});
  ASSERT_EQ(q.normal_indices.size(), q.vertex_count);
  const auto& table = normal_table();
  for (size_t v = 0; v < q.vertex_count; ++v) {
    // Find the source vertex by position (positions are exact here).
    const float* p = &q.positions[3 * v];
    for (size_t s = 0; s < mesh.vertex_count(); ++s)
      if (mesh.positions[3 * s] == p[0] && mesh.positions[3 * s + 1] == p[1] && mesh.positions[3 * s + 2] == p[2]) {
        EXPECT_LT(angle_degrees(&mesh.normals[3 * s], &table[3 * q.normal_indices[v]]), 0.6);
        break;
      }
  }
}

TEST(Quantizer, DropsDegenerateTrianglesAndGroupsMaterials) {
  TriangleMesh mesh;
  mesh.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 2, 2, 1e-9f, 0, 0};
  mesh.triangles = {0, 1, 2, /*repeated index*/ 0, 0, 1, /*collinear*/ 0, 1, 3, 3, 1, 2, /*collapses*/ 0, 4, 2};
  mesh.triangle_materials = {1, 0, 0, 0, 1};
  mesh.materials.resize(2);
  const QuantizedMesh q = quantize_mesh(mesh, {true, false, false});
  // (0,1,3) is not collinear: (2,2,2) is off the x axis. Only the repeated-index triangle and
  // the one whose vertex 4 collapses onto vertex 0 are degenerate.
  EXPECT_EQ(q.degenerate_triangles_dropped, 2u);
  ASSERT_EQ(q.triangle_count(), 3u);
  ASSERT_EQ(q.material_runs.size(), 4u);  // material 0 first, then material 1
  EXPECT_EQ(q.material_runs[0], 0u);
  EXPECT_EQ(q.material_runs[1], 0u);
  EXPECT_EQ(q.material_runs[2], 2u);
  EXPECT_EQ(q.material_runs[3], 1u);
  EXPECT_EQ(q.vertex_count, 4u) << "the unused vertex 4 is removed";
}

TEST(Quantizer, CrytekLikeGridOnTeapot) {
  const TriangleMesh mesh = load_mesh(testing::scene_path("teapot/teapot.obj"));
  const QuantizedMesh q = quantize_mesh(mesh, {true, true, true});
  EXPECT_LE(q.quantization.geometry_cells(), 65536u);
  EXPECT_LT(q.position_precision, 1e-5);
  EXPECT_EQ(q.triangle_count() + q.degenerate_triangles_dropped, mesh.triangle_count());
}

}  // namespace
}  // namespace tessera
