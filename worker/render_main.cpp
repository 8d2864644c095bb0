// tessera-render: renders one frame of a packed scene on this machine, no network.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/base/error.h"
#include "common/base/progress.h"
#include "common/cl/device_selection.h"
#include "common/cl/memory_size.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "worker/render/frame_render.h"

namespace {

using namespace tessera;

constexpr uint32_t kMaxSide = 16384;

std::pair<uint32_t, uint32_t> parse_size(const std::string& text) {
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X'))
    throw Error("bad --size '" + text + "' (expected WIDTHxHEIGHT such as 1024x1024)");
  if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide)
    throw Error("bad --size '" + text + "': each side must be 1.." + std::to_string(kMaxSide));
  return {w, h};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tessera-render: render one frame of a packed scene (.tpk) on this machine, without the cluster.\n"
      "The camera is the scene's default unless --pose or --eye/--target/--up is given. A quaternion that is\n"
      "not unit length (norm off by more than 1 %) is refused rather than guessed.",
      "tessera-render"};
  std::string scene_path, output, mode = "raytrace", size = "1024x1024", pose_text, eye, target, up = "0,1,0";
  std::string device = "auto", mem_limit;
  float fov = 0.0f, exposure = 1.0f;
  unsigned max_depth = 6, light_samples = 4, tile_size = 256;
  bool list_devices = false, json = false;
  app.add_option("scene", scene_path, "Packed scene (.tpk)");
  app.add_option("-o,--output", output, "Output PNG (written atomically)");
  app.add_option("--mode", mode, "Render mode: raytrace (Whitted)")->capture_default_str();
  app.add_option("--size", size, "Image size WIDTHxHEIGHT")->capture_default_str();
  app.add_option("--pose", pose_text, "Camera pose px,py,pz,qw,qx,qy,qz (camera looks down -z, +y up)");
  app.add_option("--eye", eye, "Camera position X,Y,Z (with --target)");
  app.add_option("--target", target, "Point to look at X,Y,Z");
  app.add_option("--up", up, "Up direction X,Y,Z for --eye/--target")->capture_default_str();
  app.add_option("--fov", fov, "Vertical field of view in degrees (default: the scene's)");
  app.add_option("--device", device, "auto | gpu | cpu | <index> (OpenCL) | host (kernels compiled for this CPU)")
      ->capture_default_str();
  app.add_option("--gpu-mem-limit", mem_limit, "Refuse scenes that need more device memory, e.g. 950M");
  app.add_option("--max-depth", max_depth, "Mirror/glass bounces")->capture_default_str()->check(CLI::Range(0u, 32u));
  app.add_option("--light-samples", light_samples, "Shadow rays toward emissive triangles per hit")
      ->capture_default_str()->check(CLI::Range(0u, 256u));
  app.add_option("--exposure", exposure, "Multiplier on radiance before sRGB encoding")->capture_default_str();
  app.add_option("--tile", tile_size, "Tile size in pixels")->capture_default_str()->check(CLI::Range(8u, 4096u));
  app.add_flag("--list-devices", list_devices, "List OpenCL devices and exit");
  app.add_flag("--json", json, "Print timings and device as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tessera-render: error: %s (see --help)\n", e.what());
    return 2;
  }
  try {
    if (list_devices) {
      std::cout << cl::format_device_list(cl::enumerate_devices());
      return 0;
    }
    if (scene_path.empty()) throw Error("no scene given (see --help)");
    if (output.empty()) throw Error("no output given: -o OUT.png");
    if (mode != "raytrace") throw Error("unknown --mode '" + mode + "' (expected raytrace)");
    const auto [width, height] = parse_size(size);
    if (!pose_text.empty() && !eye.empty()) throw Error("give either --pose or --eye/--target, not both");
    if (!eye.empty() && target.empty()) throw Error("--eye needs --target");
    RendererOptions renderer_options;
    renderer_options.device = device;
    if (!mem_limit.empty()) renderer_options.gpu_memory_limit = cl::parse_memory_size(mem_limit);
    if (!(exposure > 0.0f)) throw Error("--exposure must be positive");

    const PackedScene scene = PackedScene::load(scene_path);
    CameraSpec camera_spec;
    camera_spec.pose = pose_from_manifest(scene.manifest().camera());
    camera_spec.vertical_fov_degrees = fov > 0 ? fov : scene.manifest().camera().vertical_fov_degrees();
    if (!pose_text.empty()) camera_spec.pose = parse_pose(pose_text);
    if (!eye.empty())
      camera_spec.pose = look_at(parse_vec3(eye, "--eye"), parse_vec3(target, "--target"), parse_vec3(up, "--up"));
    const CameraParams camera = make_camera(camera_spec, width, height);
    RenderSettings settings = default_render_settings(scene);
    settings.max_depth = max_depth;
    settings.light_samples = light_samples;
    settings.exposure = exposure;

    auto renderer = make_tile_renderer(scene, renderer_options);
    ProgressBar bar("render");
    const auto start = std::chrono::steady_clock::now();
    const ImageRgba8 frame = render_frame(*renderer, camera, settings, tile_size, [&](size_t done, size_t total) {
      bar.update(double(done) / double(total), std::to_string(done) + "/" + std::to_string(total) + " tiles");
    });
    bar.finish();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    write_png(output, frame);
    if (json) {
      std::cout << nlohmann::json{{"output", output},
                                  {"device", renderer->description()},
                                  {"width", width},
                                  {"height", height},
                                  {"render_ms", ms},
                                  {"scene_device_bytes", renderer->scene_device_bytes()}}
                       .dump(2)
                << std::endl;
    } else {
      std::printf("%s: %ux%u in %.1f ms on %s\n", output.c_str(), width, height, ms, renderer->description().c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-render: error: %s\n", e.what());
    return 1;
  }
}
