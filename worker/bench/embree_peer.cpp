#include "worker/bench/embree_peer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/base/hash.h"
#include "kernels/integrators/bench_rays.h"

#ifdef TESSERA_HAVE_EMBREE
#include <embree3/rtcore.h>
#endif

namespace tessera::bench {
namespace {

// Runs fn(y) for every image row on `threads` threads; returns wall milliseconds.
template <typename Fn>
double parallel_rows(uint32_t rows, unsigned threads, Fn fn) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<uint32_t> next{0};
  auto work = [&] {
    for (uint32_t y; (y = next.fetch_add(1)) < rows;) fn(y);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<RayKindResult> host_trace(const PackedScene& scene, const CameraParams& camera, const std::array<float, 3>& light,
                                      const RayBenchOptions& options) {
  const SceneView view = scene.host_view(options.scene_memory);
  const unsigned threads = options.embree_threads ? options.embree_threads : std::max(1u, std::thread::hardware_concurrency());
  const uint32_t w = camera.width, h = camera.height;
  std::vector<float4> hits(size_t(w) * h);
  const float3 l = make_float3(light[0], light[1], light[2]);
  const int facing = options.shadow_rays == "facing";
  auto timed = [&](uint32_t rows, auto pass) {
    parallel_rows(rows, threads, pass);
    std::vector<double> ms;
    for (int i = 0; i < options.passes; ++i) ms.push_back(parallel_rows(rows, threads, pass));
    return median_of(ms);
  };
  std::vector<RayKindResult> out;
  // Primary and shadow rays of 2 x (TS_SIMD_LANES / 2) pixels as one packet, as on OpenCL CPU devices
  // (kernels/integrators/bench_rays.h); a pass hands out rows of blocks.
  auto block_rows = [&](auto&& trace) {
    return timed((h + TS_PACKET_BLOCK_H - 1) / TS_PACKET_BLOCK_H, [&](uint32_t row) {
      for (uint32_t x0 = 0; x0 < w; x0 += TS_PACKET_BLOCK_W) trace(x0, row * TS_PACKET_BLOCK_H);
    });
  };
  const double primary_ms =
      block_rows([&](uint32_t x0, uint32_t y0) { bench_trace_primary_block(&view, &camera, x0, y0, hits.data()); });
  const uint64_t hit_count = uint64_t(std::count_if(hits.begin(), hits.end(), [](const float4& r) { return r.x >= 0.0f; }));
  auto hash = [](const auto& v) { return hash64_hex(hash64(v.data(), v.size() * sizeof(v[0]))); };
  out.push_back({"primary", uint64_t(w) * h, primary_ms, hash(hits)});
  // Results are stored so the compiler cannot drop the tracing as unused.
  std::vector<uint32_t> occluded(hits.size());
  std::vector<float4> bounce(hits.size());
  const double shadow_ms = block_rows(
      [&](uint32_t x0, uint32_t y0) { bench_trace_shadow_block(&view, &camera, x0, y0, hits.data(), l, facing, occluded.data()); });
  out.push_back(shadow_kind_result(occluded, shadow_ms));
  out.push_back({"diffuse", hit_count, timed(h, [&](uint32_t y) {
                   for (uint32_t x = 0; x < w; ++x) {
                     const size_t i = size_t(y) * w + x;
                     bounce[i] = bench_trace_diffuse(&view, &camera, x, y, hits[i], TS_BENCH_DIFFUSE_SEED);
                   }
                 }), hash(bounce)});
  return out;
}

bool embree_available() {
#ifdef TESSERA_HAVE_EMBREE
  return true;
#else
  return false;
#endif
}

#ifndef TESSERA_HAVE_EMBREE
std::vector<RayKindResult> embree_trace(const PackedScene&, const CameraParams&, const std::array<float, 3>&,
                                        const RayBenchOptions&, std::string& note) {
  note = "not built with Embree (install libembree-dev and rebuild)";
  return {};
}
#else
namespace {

void set_ray(RTCRay& ray, float3 org, float3 dir, float tfar) {
  ray.org_x = org.x;
  ray.org_y = org.y;
  ray.org_z = org.z;
  ray.dir_x = dir.x;
  ray.dir_y = dir.y;
  ray.dir_z = dir.z;
  ray.tnear = 0.0f;
  ray.tfar = tfar;
  ray.mask = 0xFFFFFFFFu;
  ray.flags = 0;
  ray.time = 0;
}

}  // namespace

std::vector<RayKindResult> embree_trace(const PackedScene& scene, const CameraParams& camera, const std::array<float, 3>& light,
                                        const RayBenchOptions& options, std::string& note) {
  const SceneView view = scene.host_view();
  RTCDevice device = rtcNewDevice(nullptr);
  if (!device) {
    note = "Embree device could not be created";
    return {};
  }
  RTCGeometry geometry = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
  auto* vertices = static_cast<float*>(
      rtcSetNewGeometryBuffer(geometry, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), scene.vertex_count()));
  for (uint32_t v = 0; v < scene.vertex_count(); ++v) {
    const float3 p = scene_vertex_position(&view, v);
    vertices[3 * v] = p.x;
    vertices[3 * v + 1] = p.y;
    vertices[3 * v + 2] = p.z;
  }
  auto* indices = static_cast<uint32_t*>(
      rtcSetNewGeometryBuffer(geometry, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(uint32_t), scene.triangle_count()));
  std::copy(view.triangles, view.triangles + 3 * size_t(scene.triangle_count()), indices);
  rtcCommitGeometry(geometry);
  RTCScene rtc_scene = rtcNewScene(device);
  rtcSetSceneBuildQuality(rtc_scene, RTC_BUILD_QUALITY_HIGH);
  rtcAttachGeometry(rtc_scene, geometry);
  rtcReleaseGeometry(geometry);
  rtcCommitScene(rtc_scene);

  const unsigned threads = options.embree_threads ? options.embree_threads : std::max(1u, std::thread::hardware_concurrency());
  const uint32_t w = camera.width, h = camera.height;
  std::vector<float4> hits(size_t(w) * h);
  const float eps = bench_epsilon(&view);
  const int facing = options.shadow_rays == "facing";
  const float3 l = make_float3(light[0], light[1], light[2]);
  auto primary_pass = [&](uint32_t y) {
    RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    for (uint32_t x = 0; x < w; ++x) {
      RTCRayHit rh;
      set_ray(rh.ray, camera_origin(&camera), camera_direction(&camera, x + 0.5f, y + 0.5f), INFINITY);
      rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
      rtcIntersect1(rtc_scene, &context, &rh);
      hits[size_t(y) * w + x] = rh.hit.geomID == RTC_INVALID_GEOMETRY_ID
                                    ? make_float4(-1.0f, 0.0f, 0.0f, 0.0f)
                                    : make_float4(rh.ray.tfar, ts_as_float(rh.hit.primID), rh.hit.u, rh.hit.v);
    }
  };
  auto shadow_pass = [&](uint32_t y) {
    RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    for (uint32_t x = 0; x < w; ++x) {
      float3 org, dir;
      if (!bench_shadow_ray(&view, &camera, x, y, hits[size_t(y) * w + x], l, eps, facing, &org, &dir)) continue;
      RTCRay ray;
      set_ray(ray, org, dir, 0.9999f);
      rtcOccluded1(rtc_scene, &context, &ray);
    }
  };
  auto diffuse_pass = [&](uint32_t y) {
    RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    for (uint32_t x = 0; x < w; ++x) {
      float3 org, dir;
      if (!bench_diffuse_ray(&view, &camera, x, y, hits[size_t(y) * w + x], TS_BENCH_DIFFUSE_SEED, eps, &org, &dir)) continue;
      RTCRayHit rh;
      set_ray(rh.ray, org, dir, INFINITY);
      rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
      rtcIntersect1(rtc_scene, &context, &rh);
    }
  };
  auto timed = [&](auto pass) {
    parallel_rows(h, threads, pass);  // warm-up
    std::vector<double> ms;
    for (int i = 0; i < options.passes; ++i) ms.push_back(parallel_rows(h, threads, pass));
    return median_of(ms);
  };
  std::vector<RayKindResult> out;
  const double primary_ms = timed(primary_pass);
  const uint64_t hit_count = uint64_t(std::count_if(hits.begin(), hits.end(), [](const float4& r) { return r.x >= 0.0f; }));
  auto hash = [](const auto& v) { return hash64_hex(hash64(v.data(), v.size() * sizeof(v[0]))); };
  out.push_back({"primary", uint64_t(w) * h, primary_ms, hash(hits)});
  const double shadow_ms = timed(shadow_pass);
  uint64_t shadow_rays = 0;  // the rays the pass casts, counted apart so the timed pass writes nothing
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      float3 org, dir;
      shadow_rays += uint64_t(bench_shadow_ray(&view, &camera, x, y, hits[size_t(y) * w + x], l, eps, facing, &org, &dir));
    }
  out.push_back({"shadow", shadow_rays, shadow_ms, ""});  // occlusion flags only: no hit records to hash
  out.push_back({"diffuse", hit_count, timed(diffuse_pass), ""});
  rtcReleaseScene(rtc_scene);
  rtcReleaseDevice(device);
  note = "Embree " + std::to_string(RTC_VERSION_MAJOR) + "." + std::to_string(RTC_VERSION_MINOR) + ", " + std::to_string(threads) +
         " threads";
  return out;
}
#endif

}  // namespace tessera::bench
