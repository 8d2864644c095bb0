// Two-level traversal on OpenCL (kernels/device/opencl/instances.cl, PoCL here): the CPU paths and
// the GPU code path return the host's hits bit for bit, for identity and for moved instances.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/launch_1d.h"
#include "common/cl/program.h"
#include "instanced_test_scene.h"
#include "opencl_test_support.h"
#include "test_helpers.h"

namespace tessera::testing {
namespace {

const PlainMesh& bunny() {
  static const PlainMesh mesh = load_plain_mesh("stanford_bunny/bun_zipper_res4.obj");
  return mesh;
}

// Rays as the kernel reads them: origin and tmax, direction and tmin.
std::vector<float> random_rays(const Aabb& box, uint32_t seed, uint32_t count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> rays;
  for (uint32_t i = 0; i < count; ++i) {
    float from[3], to[3];
    for (int a = 0; a < 3; ++a) {
      from[a] = box.min[a] + (unit(rng) * 2.0f - 0.5f) * box.extent(a);
      to[a] = box.min[a] + unit(rng) * box.extent(a);
    }
    const float3 dir = v3_normalize(make_float3(to[0] - from[0], to[1] - from[1], to[2] - from[2]));
    rays.insert(rays.end(), {from[0], from[1], from[2], TS_INFINITY, dir.x, dir.y, dir.z, 0.0f});
  }
  return rays;
}

// What the kernel writes for each ray, computed on the host.
std::vector<uint32_t> host_hits(const InstancedScene& scene, const std::vector<float>& rays, bool any_hit) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < rays.size() / 8; ++i) {
    const float* r = &rays[8 * i];
    Hit hit;
    uint32_t slot = 0;
    const int found = instance_traverse(&scene.view, &scene.instances, make_float3(r[0], r[1], r[2]),
                                        make_float3(r[4], r[5], r[6]), r[7], r[3], any_hit, &hit, &slot);
    out.insert(out.end(), {any_hit ? uint32_t(found) : (found ? hit.tri : TS_KD_NO_TRIANGLE), ts_as_uint(hit.t),
                           ts_as_uint(hit.u), ts_as_uint(hit.v), found ? instance_id(&scene.instances, slot) : TS_NO_INSTANCE});
  }
  return out;
}

template <typename T>
cl::Buffer upload(const cl::Device& device, cl::DeviceMemoryBudget& budget, const std::string& name, const std::vector<T>& values) {
  cl::Buffer buffer = budget.create(name, std::max<size_t>(4, values.size() * sizeof(T)), cl::BufferAccess::read_only);
  if (!values.empty()) cl::write_buffer(device, buffer, values);
  return buffer;
}

std::vector<uint32_t> device_hits(const InstancedScene& scene, const std::vector<float>& rays, bool any_hit) {
  const cl::Device device = cl::Device::open("cpu");
  cl::DeviceMemoryBudget budget(device);
  const cl::Program program = cl::build_program(device, "kernels/device/opencl/instances.cl");
  const std::vector<uint32_t> none{0};
  cl::Buffer triangles = upload(device, budget, "triangles", scene.mesh.triangles);
  cl::Buffer positions = upload(device, budget, "positions", scene.mesh.positions);
  cl::Buffer nodes = upload(device, budget, "kd nodes", scene.kd_nodes);
  cl::Buffer refs = upload(device, budget, "kd leaf refs", scene.kd_leaf_refs);
  cl::Buffer unused = upload(device, budget, "unused", none);
  cl::Buffer tlas = upload(device, budget, "top level", scene.top.nodes);
  cl::Buffer records = upload(device, budget, "instances", scene.top.instances);
  cl::Buffer objects = upload(device, budget, "objects", scene.object_words);
  cl::Buffer ray_buffer = upload(device, budget, "rays", rays);
  const uint32_t count = uint32_t(rays.size() / 8);
  cl::Buffer hits = budget.create("hits", size_t(count) * 20, cl::BufferAccess::write_only);

  SceneConstants constants{};
  constants.flags = scene.view.flags;
  constants.triangle_count = scene.view.triangle_count;
  constants.bounds_min_x = scene.view.bounds_min_x, constants.bounds_min_y = scene.view.bounds_min_y;
  constants.bounds_min_z = scene.view.bounds_min_z, constants.bounds_max_x = scene.view.bounds_max_x;
  constants.bounds_max_y = scene.view.bounds_max_y, constants.bounds_max_z = scene.view.bounds_max_z;
  cl::Kernel kernel = program.kernel("instance_trace_stored");
  kernel.set_args(constants, triangles, positions, unused, unused, unused, unused, unused, unused, nodes, refs, unused,
                  unused, unused, scene.top.instance_count, tlas, records, objects, count, uint32_t(any_hit), ray_buffer,
                  hits);
  cl::launch_1d(device, kernel, count).wait();
  return cl::read_buffer<uint32_t>(device, hits, size_t(count) * 5);
}

void expect_device_matches_host(const InstancedScene& scene, uint32_t seed) {
  const std::vector<float> rays = random_rays(scene.top.bounds, seed, 4000);
  for (bool any_hit : {false, true}) {
    const std::vector<uint32_t> host = host_hits(scene, rays, any_hit);
    size_t found = 0;
    for (size_t i = 0; i < host.size(); i += 5) found += host[i + 4] != TS_NO_INSTANCE;
    EXPECT_GT(found, 400u);
    for (const char* paths : {"on", "off"}) {  // the CPU paths, then the GPU code path
      ScopedEnv env("TESSERA_CPU_PATHS", paths);
      const std::vector<uint32_t> device = device_hits(scene, rays, any_hit);
      ASSERT_EQ(device.size(), host.size());
      if (any_hit) {  // a shadow ray's first hit may be any: whether it hit is what counts
        for (size_t i = 0; i < host.size(); i += 5) ASSERT_EQ(device[i], host[i]) << "ray " << i / 5 << ", paths " << paths;
      } else {
        EXPECT_TRUE(device == host) << "closest hits differ, CPU paths " << paths;
      }
    }
  }
}

TEST(InstanceTraverseOpenCl, IdentityInstancesTraceTheHostsHits) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  Transform3x4 beside;
  beside.m[3] = 0.09f;
  const InstancedScene scene =
      make_instanced_scene({bunny(), transformed(bunny(), beside)}, {{0, 0, Transform3x4{}}, {1, 1, Transform3x4{}}});
  expect_device_matches_host(scene, 21);
}

TEST(InstanceTraverseOpenCl, MovedInstancesTraceTheHostsHits) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  std::vector<Instance> placed;
  for (uint32_t i = 0; i < 12; ++i)
    placed.push_back({0, i, NodeTrs{{0.1f * float(i % 4), 0.02f * float(i), 0.1f * float(i / 4)},
                                    {0.0f, 0.6f, 0.0f, 0.8f}, {1.0f + 0.1f * float(i), 1.0f, 0.5f}}.matrix()});
  const InstancedScene scene = make_instanced_scene({bunny()}, placed);
  expect_device_matches_host(scene, 22);
}

}  // namespace
}  // namespace tessera::testing
