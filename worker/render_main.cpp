// tessera-render: renders one frame of a packed scene on this machine, no network.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/base/frame_memory.h"
#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/temporary_files.h"
#include "common/base/progress.h"
#include "common/cl/device_selection.h"
#include "common/cl/memory_size.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/eye_view.h"
#include "common/render/shading_data.h"
#include "common/render/stereo.h"
#include "common/scene/scene_motion.h"
#include "worker/render/aa_frame.h"
#include "worker/render/aux_frame.h"
#include "worker/render/frame_render.h"
#include "worker/render/pathtrace_frame.h"
#include "worker/render/scene_decode_budget.h"
#include "worker/render/vct_frame.h"
#include "worker/render/render_environment.h"
#include "worker/render/scene_memory_choice.h"

namespace {

using namespace tessera;

constexpr uint32_t kMaxSide = 16384;

std::pair<uint32_t, uint32_t> parse_size(const std::string& text) {
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X'))
    throw UsageError("bad --size '" + text + "' (expected WIDTHxHEIGHT such as 1024x1024)");
  if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide)
    throw UsageError("bad --size '" + text + "': each side must be 1.." + std::to_string(kMaxSide));
  return {w, h};
}

// --mode pathtrace: both eyes (or one), written side by side; an instanced scene's instances as
// `placed` has them (none: as packed).
int render_pathtrace(const PackedScene& scene, const TopLevelBvh* placed, const PtView& view, RenderSettings settings,
                     const std::optional<SunOverride>& sun, bool depth_given,
                     bool light_samples_given, const PathTraceSettings& pt, const RendererOptions& device,
                     unsigned cpu_threads, unsigned tile_size, bool tile_given, const std::string& output, bool json) {
  const uint32_t width = view.eyes[0].width, height = view.eyes[0].height;
  const bool stereo = view.eye_count == 2;
  const RenderSettings defaults = default_pathtrace_settings(scene);
  if (!depth_given) settings.max_depth = defaults.max_depth;  // path vertices, not mirror bounces
  if (!light_samples_given) settings.light_samples = defaults.light_samples;
  settings.background_r = defaults.background_r;  // light comes from the scene's lights
  settings.background_g = defaults.background_g;
  settings.background_b = defaults.background_b;
  settings.ambient = defaults.ambient;
  PathTraceRenderer renderer(scene, {device, cpu_threads});
  renderer.set_sun(sun);
  if (placed) renderer.place_instances(*placed);
  ProgressBar bar("pathtrace");
  const PtFrameResult frame = render_pathtrace_frame(renderer, view, settings, pt, tile_given ? tile_size : 0, false,
                                                     [&](size_t done, size_t total) {
                                                       bar.update(double(done) / double(total),
                                                                  std::to_string(done) + "/" + std::to_string(total) + " tiles");
                                                     });
  bar.finish();
  const ImageRgba8 image = stereo ? side_by_side(frame.eyes[0], frame.eyes[1]) : frame.eyes[0];
  write_png(output, image);
  const PtTileStats& t = frame.totals;
  const double own = double(t.device_pixel_samples + t.helper_pixel_samples);
  if (json) {
    std::cout << nlohmann::json{{"output", output},
                                {"device", renderer.description()},
                                {"width", width},
                                {"height", height},
                                {"eyes", view.eye_count},
                                {"variant", to_string(pt.variant)},
                                {"spp", pt.spp},
                                {"indirect_clamp", pt.indirect_clamp},
                                {"render_ms", t.ms},
                                {"device_ms", t.device_ms},
                                {"merge_ms", t.merge_ms},
                                {"resolve_ms", t.resolve_ms},
                                {"pixel_samples", t.device_pixel_samples},
                                {"helper_pixel_samples", t.helper_pixel_samples},
                                {"reprojected_samples", t.reprojected},
                                {"reprojected_per_sample", own > 0 ? double(t.reprojected) / own : 0.0},
                                {"stopped_early", t.stopped},
                                {"median_pixels", t.median_pixels},
                                {"segments", t.segments},
                                {"scene_device_bytes", renderer.scene_device_bytes()}}
                         .dump(2)
              << std::endl;
  } else {
    std::printf("%s: %ux%u%s, %u spp (%s) in %.1f ms on %s; %.0f%% extra samples by reprojection\n", output.c_str(), width,
                height, stereo ? " x 2 eyes" : "", pt.spp, to_string(pt.variant), t.ms, renderer.description().c_str(),
                own > 0 ? 100.0 * double(t.reprojected) / own : 0.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::keep_frame_buffers_resident();
  CLI::App app{
      "tessera-render: render one frame of a packed scene (.tpk) on this machine, without the cluster.\n"
      "The camera is the scene's default unless --pose or --eye/--target/--up is given, or each eye is given\n"
      "exactly with --eye-view (once: mono; twice: stereo, left then right, side by side). A quaternion that\n"
      "is not unit length (norm off by more than 1 %) is refused rather than guessed.",
      "tessera-render"};
  std::string scene_path, output, mode = "raytrace", size = "1024x1024", pose_text, eye, target, up = "0,1,0";
  std::string device = "auto", mem_limit;
  float fov = 0.0f, exposure = 1.0f;
  std::string texture_filter = "cone";
  unsigned max_depth = 6, light_samples = 4, tile_size = 256;
  bool list_devices = false, json = false;
  app.add_option("scene", scene_path, "Packed scene (.tpk)");
  app.add_option("-o,--output", output, "Output PNG (written atomically)");
  app.add_option("--mode", mode, "Render mode: raytrace (Whitted) | pathtrace (stereo VR path tracer) | vct (voxel cone tracing)")
      ->capture_default_str()->check(CLI::IsMember({"raytrace", "pathtrace", "vct"}));
  app.add_option("--size", size, "Image size WIDTHxHEIGHT")->capture_default_str();
  app.add_option("--pose", pose_text, "Camera pose px,py,pz,qw,qx,qy,qz (camera looks down -z, +y up)");
  app.add_option("--eye", eye, "Camera position X,Y,Z (with --target)");
  app.add_option("--target", target, "Point to look at X,Y,Z");
  app.add_option("--up", up, "Up direction X,Y,Z for --eye/--target")->capture_default_str();
  app.add_option("--fov", fov, "Vertical field of view in degrees (default: the scene's)");
  std::vector<std::string> eye_view_texts;
  unsigned aa_samples = 1;
  app.add_option("--eye-view", eye_view_texts,
                 "An eye exactly: px,py,pz,qw,qx,qy,qz,left,right,bottom,top (pose in world space, off-axis frustum as "
                 "tangents at unit distance); once: mono, twice: stereo (left, right) side by side")
      ->allow_extra_args(false);
  app.add_option("--aa", aa_samples,
                 "raytrace, vct: anti-aliasing samples, jittered sub-pixel offsets averaged in linear light (1: pixel centres)")
      ->capture_default_str()->check(CLI::Range(1u, 4096u));
  app.add_option("--device", device, "auto | gpu | cpu | <index> (OpenCL) | host (kernels compiled for this CPU)")
      ->capture_default_str();
  app.add_option("--gpu-mem-limit", mem_limit, "Refuse scenes that need more device memory, e.g. 950M");
  std::string scene_memory = "auto";
  app.add_option("--scene-memory", scene_memory,
                 "How the scene lies in device memory: fast, compact or auto (fast where it fits --gpu-mem-limit, or 75 %\n"
                 "of the device's memory, else compact; docs/scene-memory.md). Every profile renders the same image.")
      ->capture_default_str()->check(CLI::IsMember({"auto", "fast", "compact"}));
  app.add_option("--max-depth", max_depth,
                 "raytrace, vct: mirror/glass bounces (default 6); pathtrace: path vertices (default 8)")
      ->check(CLI::Range(0u, 32u));
  app.add_option("--light-samples", light_samples,
                 "raytrace, vct: shadow rays toward emissive triangles per hit (default 4); pathtrace: emitter "
                 "samples per vertex (default 1)")
      ->check(CLI::Range(0u, 256u));
  app.add_option("--exposure", exposure, "Multiplier on radiance before sRGB encoding")->capture_default_str();
  app.add_option("--texture-filter", texture_filter,
                 "raytrace, vct: cone (mip level from each ray's cone, trilinear) | none (bilinear in level 0, e.g. for "
                 "supersampled references)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cone", "none"}));
  app.add_option("--tile", tile_size, "Tile size in pixels")->capture_default_str()->check(CLI::Range(8u, 4096u));
  app.add_flag("--list-devices", list_devices, "List OpenCL devices and exit");
  // pathtrace mode (Kim & Sung 2021): see worker/render/pathtrace_renderer.h
  bool stereo = false, no_reproject = false, no_gaze_stop = false, no_median = false, stop_compensate = false;
  bool visibility_ray = false;
  std::string gaze_text, pt_variant = "proposed";
  float ipd = -1.0f;
  PathTraceSettings pt;
  pt.spp = 16;
  unsigned cpu_threads = 0;
  app.add_flag("--stereo", stereo, "pathtrace: both eyes, written side by side (left, right)");
  app.add_option("--ipd", ipd, "pathtrace: interpupillary distance in scene units (default 0.064 x the scene's scale)");
  app.add_option("--gaze", gaze_text, "pathtrace: gaze point U,V in [0, 1] of each eye image (default 0.5,0.5)");
  app.add_option("--spp", pt.spp, "pathtrace: samples per pixel and eye")->capture_default_str()->check(CLI::Range(1u, 1u << 20));
  app.add_option("--pt-variant", pt_variant, "pathtrace: plain (Russian roulette) | proposed (reprojection, gaze stop, median)")
      ->capture_default_str();
  app.add_option("--depth-threshold", pt.depth_threshold, "pathtrace: T_d, the gaze stop applies at deeper vertices")
      ->capture_default_str()->check(CLI::Range(0u, 64u));
  app.add_option("--p-max", pt.p_max, "pathtrace: P_max of Eq. 7")->capture_default_str()->check(CLI::Range(0.0f, 0.99f));
  app.add_option("--rr-depth", pt.rr_depth, "pathtrace: Russian roulette from this vertex depth on")
      ->capture_default_str()->check(CLI::Range(0u, 64u));
  app.add_option("--median-max-spp", pt.median_max_samples, "pathtrace: median filter only pixels with at most this many samples")
      ->capture_default_str()->check(CLI::Range(1u, 1u << 20));
  app.add_option("--launch-samples", pt.launch_samples,
                 "pathtrace: samples per pixel of one device launch (0: half of --spp on an OpenCL device, 1 on the host)")
      ->capture_default_str()->check(CLI::Range(0u, 4096u));
  app.add_option("--cpu-threads", cpu_threads, "pathtrace: CPU helper threads tracing extra samples beside the device")
      ->capture_default_str()->check(CLI::Range(0u, 256u));
  pt.indirect_clamp = TS_PT_INTERACTIVE_CLAMP;
  app.add_option("--clamp", pt.indirect_clamp,
                 "pathtrace: clamp the radiance of contributions after the first diffuse bounce to X (fewer fireflies, "
                 "biased; 0: off, as in the paper's benchmarks)")
      ->capture_default_str()->check(CLI::Range(0.0f, 1e30f));
  app.add_flag("--no-reproject", no_reproject, "pathtrace proposed: leave out the reprojection to the other eye");
  app.add_flag("--no-gaze-stop", no_gaze_stop, "pathtrace proposed: leave out the gaze-based stop (Eq. 7)");
  app.add_flag("--no-median", no_median, "pathtrace proposed: leave out the median filter");
  app.add_flag("--stop-compensate", stop_compensate, "pathtrace proposed: weight surviving paths by 1 / (1 - P_d) (unbiased)");
  app.add_flag("--visibility-ray", visibility_ray,
               "pathtrace proposed: test reprojected points with a shadow ray to the other eye (exact, slower)");
  // vct mode (voxel cone tracing, papers/001): see worker/render/vct_renderer.h
  VctRenderRequest vct;
  unsigned vct_grid = 0;
  std::string vct_output = "color", move_light;
  app.add_option("--vct-grid", vct_grid, "vct: voxels per side, 64 | 128 | 256 | 512 (default: the scene's, else 256)");
  app.add_option("--vct-preset", vct.frame.preset,
                 "vct: 1 basic shading, 2 + hard shadows, 3 + AO, 4 + diffuse GI, 5 + cone-traced soft shadows")
      ->capture_default_str();
  app.add_option("--shadow-cone", vct.frame.shadow_cone_degrees, "vct: soft-shadow cone angle in degrees, 2.5..10")
      ->capture_default_str();
  app.add_flag("--vct-solid", vct.options.solid, "vct: filled voxelization of closed objects (fixes hollow-object AO)");
  app.add_option("--vct-output", vct_output, "vct: color | ao | indirect | ao-reference (AO by rays, linear grey)")
      ->capture_default_str();
  app.add_option("--vct-cone-offset", vct.frame.cone_offset_voxels, "vct: cones start this many voxels along the normal")
      ->capture_default_str();
  app.add_option("--move-light", move_light,
                 "vct: after voxelizing, move light 0 to X,Y,Z (a directional light: new direction) and relight");
  // Depth and coverage beside the colour (common/render/aux_outputs.h), raytrace mode.
  std::string background = "opaque", shadow_catcher_text, depth_out, composite_path;
  float depth_near = 0.0f;
  app.add_option("--background", background,
                 "raytrace: opaque | transparent (an RGBA PNG: alpha 255 where a pixel-centre ray hits the scene, 0 where "
                 "it misses, the shadow catcher's shadows black with partial alpha; those are the only partial alphas, "
                 "so the PNG's straight alpha equals the premultiplied colour the cluster sends)")
      ->capture_default_str()
      ->check(CLI::IsMember({"opaque", "transparent"}));
  app.add_option("--shadow-catcher", shadow_catcher_text,
                 "with --background transparent: an invisible ground y = H that shows the scene's shadows, H[,OPACITY] "
                 "(opacity of a full shadow, default: the scene's, else 0.6; default plane: the scene's, else none)");
  app.add_option("--depth-out", depth_out,
                 "raytrace: also write the 16-bit inverse depth q = round(65535 min(1, near / z)) of each pixel's "
                 "primary hit (z along the viewing axis; 0: nothing hit) as a 16-bit greyscale PNG");
  app.add_option("--depth-near", depth_near, "near distance of --depth-out's inverse depth (default 0.05 x the scene's scale)");
  app.add_option("--composite", composite_path,
                 "with --background transparent: write the render composited over this photograph (same size as the "
                 "output) instead of the RGBA image: the AR figure in one command");
  std::string sun_text;
  app.add_option("--sun", sun_text,
                 "Replace the scene's sun (its first directional light; one is added if it has none): DX,DY,DZ,R,G,B, "
                 "the direction the light travels and its irradiance in linear RGB (each 0..1e4)");
  double scene_time = 0.0;
  std::vector<std::string> instance_transform_texts;
  app.add_option("--time", scene_time,
                 "Scene time in seconds: an instanced scene's animations at that instant (looping; docs/animation.md)");
  app.add_option("--instance-transform", instance_transform_texts,
                 "Place instance I by a row-major 3x4 object-to-world matrix, I:m00,m01,m02,m03,m10,...,m23 "
                 "(repeatable; docs/instances.md)");
  app.add_flag("--json", json, "Print timings and device as JSON");
  if (const auto done = cli::parse(app, argc, argv)) return *done;
  tessera::remove_temporary_files_on_signal();
  try {
    if (list_devices) {
      std::cout << cl::format_device_list(cl::enumerate_devices());
      return 0;
    }
    if (scene_path.empty()) throw UsageError("no scene given (see --help)");
    check_render_environment();  // a bad TESSERA_* render switch is refused at start
    if (output.empty()) throw UsageError("no output given: -o OUT.png");
    if (mode != "raytrace" && mode != "pathtrace" && mode != "vct")
      throw UsageError("unknown --mode '" + mode + "' (expected raytrace, pathtrace or vct)");
    for (const char* option : {"--vct-grid", "--vct-preset", "--shadow-cone", "--vct-solid", "--vct-output", "--vct-cone-offset", "--move-light"})
      if (mode != "vct" && app.count(option) > 0) throw UsageError(std::string(option) + " needs --mode vct");
    if (mode == "vct") {
      if (app.count("--vct-grid") > 0) validate_vct_grid(vct_grid);
      validate_vct_preset(vct.frame.preset);
      validate_shadow_cone(vct.frame.shadow_cone_degrees);
      vct.frame.output = parse_vct_output(vct_output);
      if (!move_light.empty()) vct.move_light = parse_vec3(move_light, "--move-light");
      if (!(vct.frame.cone_offset_voxels >= 0.0f && vct.frame.cone_offset_voxels <= 8.0f))
        throw UsageError("--vct-cone-offset must be in 0..8 voxels");
    }
    const bool transparent = background == "transparent";
    const bool depth_wanted = !depth_out.empty();
    for (const char* option : {"--background", "--shadow-catcher", "--depth-out", "--depth-near", "--composite"})
      if (mode != "raytrace" && app.count(option) > 0) throw UsageError(std::string(option) + " needs --mode raytrace");
    for (const char* option : {"--shadow-catcher", "--composite"})
      if (!transparent && app.count(option) > 0) throw UsageError(std::string(option) + " needs --background transparent");
    if (app.count("--depth-near") > 0 && !depth_wanted) throw UsageError("--depth-near needs --depth-out");
    if (app.count("--depth-near") > 0 && !(std::isfinite(depth_near) && depth_near > 0.0f))
      throw UsageError("--depth-near must be a positive number");
    std::optional<SunOverride> sun;
    if (!sun_text.empty())
      sun = cli::option_value([&] {
        const auto v = parse_floats(sun_text, 6, "--sun");
        try {
          return checked_sun_override({v[0], v[1], v[2]}, {v[3], v[4], v[5]});
        } catch (const Error& e) {
          throw UsageError("bad --sun '" + sun_text + "': " + e.what());
        }
      });
    AuxRequest aux_request;
    aux_request.transparent = transparent;
    if (!shadow_catcher_text.empty()) {
      const bool with_opacity = shadow_catcher_text.find(',') != std::string::npos;
      const auto v = parse_floats(shadow_catcher_text, with_opacity ? 2 : 1, "--shadow-catcher");
      aux_request.catcher_height = v[0];
      if (with_opacity) {
        if (!(v[1] > 0.0f && v[1] <= 1.0f)) throw UsageError("bad --shadow-catcher '" + shadow_catcher_text + "': the opacity must lie in (0, 1]");
        aux_request.shadow_opacity = v[1];
      }
    }
    if (depth_wanted) {
      refuse_non_regular_output(depth_out);
      if (std::filesystem::path(depth_out) == std::filesystem::path(output))
        throw UsageError("--depth-out must name another file than -o");
    }
    const bool pathtrace = mode == "pathtrace";
    for (const char* option : {"--stereo", "--ipd", "--gaze", "--spp", "--pt-variant", "--depth-threshold", "--p-max", "--rr-depth",
                               "--median-max-spp", "--launch-samples", "--cpu-threads", "--clamp", "--no-reproject", "--no-gaze-stop",
                               "--no-median", "--stop-compensate", "--visibility-ray"})
      if (!pathtrace && app.count(option) > 0) throw UsageError(std::string(option) + " needs --mode pathtrace");
    if (app.count("--ipd") > 0 && !(ipd >= 0.0f)) throw UsageError("--ipd must not be negative");
    if (app.count("--ipd") > 0 && !stereo) throw UsageError("--ipd needs --stereo");
    if (pathtrace) {
      pt.variant = parse_pt_variant(pt_variant);
      pt.reproject = !no_reproject;
      pt.gaze_stop = !no_gaze_stop;
      pt.median = !no_median;
      pt.stop_compensate = stop_compensate;
      pt.visibility_ray = visibility_ray;
    }
    if (pathtrace && app.count("--aa") > 0) throw UsageError("--aa needs --mode raytrace or vct (pathtrace jitters its own samples)");
    if (eye_view_texts.size() > 2) throw UsageError("--eye-view given " + std::to_string(eye_view_texts.size()) + " times (once: mono, twice: stereo)");
    if (!eye_view_texts.empty()) {
      for (const char* option : {"--pose", "--eye", "--target", "--up", "--fov", "--ipd"})
        if (app.count(option) > 0) throw UsageError(std::string(option) + " does not apply with --eye-view (it gives each eye exactly)");
      if (stereo && eye_view_texts.size() != 2) throw UsageError("--stereo with --eye-view needs two of them (left, right)");
    }
    const std::array<float, 2> gaze = gaze_text.empty() ? std::array<float, 2>{0.5f, 0.5f} : parse_gaze(gaze_text);
    const auto [width, height] = parse_size(size);
    std::vector<EyeView> eye_views;
    for (const auto& text : eye_view_texts) eye_views.push_back(cli::option_value([&] { return parse_eye_view(text); }));
    if (!pose_text.empty() && !eye.empty()) throw UsageError("give either --pose or --eye/--target, not both");
    if (!eye.empty() && target.empty()) throw UsageError("--eye needs --target");
    RendererOptions renderer_options;
    renderer_options.device = device;
    if (!mem_limit.empty()) renderer_options.gpu_memory_limit = cl::parse_memory_size(mem_limit);
    if (!(exposure > 0.0f)) throw UsageError("--exposure must be positive");
    check_fov_option(fov);

    const PackedScene scene = PackedScene::from_contents(read_tpk(scene_path, scene_decode_budget(renderer_options)), scene_path);
    std::optional<SceneMotion> motion = SceneMotion::of_scene(scene, scene_path);
    if (!motion && (app.count("--time") > 0 || !instance_transform_texts.empty()))
      throw UsageError("--time and --instance-transform need an instanced scene (tessera-pack --instances)");
    if (!std::isfinite(scene_time)) throw UsageError("--time must be a finite number of seconds");
    if (motion) {  // where its instances are at that instant, grabbed ones where asked
      motion->set_time(scene_time);
      for (const std::string& text : instance_transform_texts) {
        const InstanceTransform placed = cli::option_value([&] { return parse_instance_transform(text); });
        motion->set_instance_transform(placed.index, placed.world);
      }
    }
    renderer_options.scene_memory = choose_scene_memory(scene, *parse_scene_memory_mode(scene_memory), renderer_options).memory;
    CameraSpec camera_spec;
    camera_spec.pose = pose_from_manifest(scene.manifest().camera());
    camera_spec.vertical_fov_degrees = fov > 0 ? fov : scene.manifest().camera().vertical_fov_degrees();
    if (!pose_text.empty()) camera_spec.pose = cli::option_value([&] { return parse_pose(pose_text); });
    if (!eye.empty())
      camera_spec.pose = look_at(parse_vec3(eye, "--eye"), parse_vec3(target, "--target"), parse_vec3(up, "--up"));
    // The whole-image camera of each eye: the explicit eye views, else the head (raytrace and vct are
    // mono then; pathtrace places its own stereo eyes).
    std::vector<CameraParams> eyes;
    for (const EyeView& view : eye_views) eyes.push_back(make_eye_camera(view, width, height));
    if (eyes.empty()) eyes.push_back(make_camera(camera_spec, width, height));
    RenderSettings settings = default_render_settings(scene);
    settings.max_depth = max_depth;
    settings.light_samples = light_samples;
    settings.exposure = exposure;
    settings.texture_lod = texture_filter == "cone";
    if (pathtrace) {
      PtView view;
      if (eye_views.empty()) {
        view = make_pt_view(camera_spec, stereo, ipd >= 0.0f ? ipd : default_ipd(scene.manifest()), width, height, gaze[0], gaze[1]);
      } else {
        for (size_t e = 0; e < eyes.size(); ++e) view.eyes[e] = eyes[e];
        view.eye_count = uint32_t(eyes.size());
        view.gaze_u = gaze[0];
        view.gaze_v = gaze[1];
      }
      return render_pathtrace(scene, motion ? &motion->top_level() : nullptr, view, settings, sun, app.count("--max-depth") > 0,
                              app.count("--light-samples") > 0, pt, renderer_options, cpu_threads, tile_size,
                              app.count("--tile") > 0, output, json);
    }

    if (mode == "vct") {
      vct.options.grid = vct_grid_for_scene(scene, app.count("--vct-grid") > 0 ? std::optional<uint32_t>(vct_grid) : std::nullopt);
      vct.tile_size = tile_size;
      vct.aa_samples = aa_samples;
      vct.sun = sun;
      if (motion) vct.top = &motion->top_level();  // where its instances are at --time
      return render_vct(scene, eyes, settings, renderer_options, vct, output, json);
    }

    if (depth_wanted) {
      aux_request.depth = true;
      aux_request.depth_near = app.count("--depth-near") > 0 ? depth_near : 0.05f * scene.manifest().scene_scale();
    }
    const AuxSettings aux_settings_used = aux_settings(aux_request, scene.manifest());
    std::optional<ImageRgba8> photo;
    if (!composite_path.empty()) {  // refused before the render, not after
      photo = read_image(composite_path);
      check_photo_size(*photo, int(width * eyes.size()), int(height));
    }

    auto renderer = make_tile_renderer(scene, renderer_options);
    renderer->set_sun(sun);
    if (motion) renderer->place_instances(motion->top_level());
    ProgressBar bar("render");
    const auto start = std::chrono::steady_clock::now();
    const size_t passes = eyes.size() * aa_samples;
    size_t pass = 0;
    const ImageRgba8 frame = render_aa_frame(eyes, aa_samples, [&](const CameraParams& camera) {
      ImageRgba8 image = render_frame(*renderer, camera, settings, tile_size, [&](size_t done, size_t total) {
        bar.update((double(pass) + double(done) / double(total)) / double(passes),
                   std::to_string(pass * total + done) + "/" + std::to_string(passes * total) + " tiles");
      });
      ++pass;
      return image;
    });
    bar.finish();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    double aux_ms = 0;
    std::optional<DepthImage> depth;
    ImageRgba8 written = frame;
    if (aux_request.any()) {
      const auto aux_start = std::chrono::steady_clock::now();
      const std::vector<uint32_t> aux = render_aux_frame(*renderer, eyes, settings, aux_settings_used, tile_size);
      aux_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - aux_start).count();
      if (transparent) make_transparent(written, aux);
      if (photo) written = composite_over(written, *photo);
      if (depth_wanted) depth = inverse_depth_image(aux, uint32_t(written.width()), uint32_t(written.height()));
    }
    // Both files encoded before either is written: a failure leaves neither half-made.
    const std::vector<uint8_t> png = encode_png(written);
    const std::vector<uint8_t> depth_png = depth ? encode_depth_png(*depth) : std::vector<uint8_t>{};
    write_file_atomically(output, png.data(), png.size());
    if (depth) write_file_atomically(depth_out, depth_png.data(), depth_png.size());
    if (json) {
      std::cout << nlohmann::json{{"output", output},
                                  {"device", renderer->description()},
                                  {"width", width},
                                  {"height", height},
                                  {"eyes", eyes.size()},
                                  {"aa_samples", aa_samples},
                                  {"render_ms", ms},
                                  {"aux_ms", aux_ms},
                                  {"scene_device_bytes", renderer->scene_device_bytes()},
                                  {"scene_memory", scene_memory_name(renderer_options.scene_memory)}}
                       .dump(2)
                << std::endl;
    } else {
      std::printf("%s: %ux%u%s%s in %.1f ms on %s%s\n", output.c_str(), width, height, eyes.size() == 2 ? " x 2 eyes" : "",
                  aa_samples > 1 ? (", " + std::to_string(aa_samples) + " AA samples").c_str() : "", ms,
                  renderer->description().c_str(),
                  aux_request.any() ? (", depth and coverage pass " + std::to_string(int(aux_ms + 0.5)) + " ms").c_str() : "");
    }
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
