#include "worker/bench/motion_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/base/error.h"
#include "common/base/median.h"
#include "common/base/usage_error.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/scene/packed_scene.h"
#include "common/scene/scene_motion.h"
#include "worker/render/frame_render.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

}  // namespace

MotionCommand::MotionCommand(CLI::App& app) {
  command_ = app.add_subcommand("motion", "Frames of an animated (instanced) scene against the same frames frozen at time 0");
  command_->add_option("scene", scene_, "Instanced scene (.tpk, tessera-pack --instances)")->required();
  command_->add_option("--frames", frames_, "Frames rendered each way")->capture_default_str()->check(CLI::Range(1u, 100000u));
  command_->add_option("--fps", fps_, "Scene seconds advance 1 / fps a frame")->capture_default_str()->check(CLI::Range(0.001, 1000.0));
  command_->add_option("--size", size_, "Frame size WIDTHxHEIGHT")->capture_default_str();
  command_->add_option("--device", device_, "auto | gpu | cpu | <index> (OpenCL) | host")->capture_default_str();
  command_->add_flag("--json", json_, "Print the results as one JSON object");
}

int MotionCommand::run() {
  unsigned width = 0, height = 0;
  char x = 0, extra = 0;
  if (std::sscanf(size_.c_str(), "%u%c%u%c", &width, &x, &height, &extra) != 3 || x != 'x' || width == 0 || height == 0 ||
      width > 8192 || height > 8192)
    throw UsageError("bad --size '" + size_ + "' (expected WIDTHxHEIGHT such as 640x360)");
  const PackedScene scene = PackedScene::load(scene_);
  auto motion = SceneMotion::of_scene(scene, scene_);
  if (!motion) throw Error(scene_ + ": the scene has no instances (pack a glTF with tessera-pack --instances)");
  RendererOptions options;
  options.device = device_;
  auto renderer = make_tile_renderer(scene, options);
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  const CameraParams camera = make_camera(spec, width, height);
  const RenderSettings settings = default_render_settings(scene);
  renderer->place_instances(motion->top_level());
  render_frame(*renderer, camera, settings);  // warm-up: programs built, buffers sized

  std::vector<double> frozen_ms, animated_ms, update_ms;
  for (uint32_t f = 0; f < frames_; ++f) {  // frozen at time 0: nothing moves, nothing placed again
    const auto start = Clock::now();
    render_frame(*renderer, camera, settings);
    frozen_ms.push_back(ms_since(start));
  }
  for (uint32_t f = 0; f < frames_; ++f) {  // the clock runs: a new top level each frame
    const auto start = Clock::now();
    motion->set_time(double(f + 1) / fps_);
    if (motion->changed()) renderer->place_instances(motion->top_level());
    update_ms.push_back(ms_since(start));
    render_frame(*renderer, camera, settings);
    animated_ms.push_back(ms_since(start));
  }
  const double frozen = median(frozen_ms), animated = median(animated_ms), update = median(update_ms);
  if (json_) {
    const nlohmann::json out{{"scene", scene_},          {"device", renderer->description()}, {"instances", motion->instance_count()},
                             {"frames", frames_},        {"width", width},                    {"height", height},
                             {"frozen_ms_median", frozen}, {"animated_ms_median", animated},  {"update_ms_median", update}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%s: %u instances, %ux%u, %u frames each, %s\n", scene_.c_str(), motion->instance_count(), width, height, frames_,
                renderer->description().c_str());
    std::printf("frozen ms/frame  animated ms/frame  of which time + top level  animated / frozen\n");
    std::printf("%15.2f  %17.2f  %25.3f  %17.3f\n", frozen, animated, update, animated / frozen);
  }
  return 0;
}

}  // namespace tessera::bench
