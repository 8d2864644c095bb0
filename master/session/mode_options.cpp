#include "master/session/mode_options.h"

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/render/camera_setup.h"
#include "common/render/stereo.h"
#include "common/render/vct_options.h"

namespace tessera::master {

void add_mode_options(CLI::App& app, ModeCli& c) {
  app.add_flag("--stereo", c.stereo, "Both eyes, side by side (left | right); the IPD is --ipd or 0.064 x the scene's scale");
  app.add_option("--gaze", c.gaze, "Gaze point U,V in [0, 1] of each eye image for poses that bring none (default 0.5,0.5)");
  app.add_option("--spp", c.spp, "pathtrace: samples per pixel and eye each frame adds to a tile's accumulation")
      ->capture_default_str()->check(CLI::Range(1u, 1u << 20));
  app.add_option("--pt-variant", c.pt_variant, "pathtrace: plain (Russian roulette) | proposed (reprojection, gaze stop, median)")
      ->capture_default_str();
  app.add_option("--depth-threshold", c.depth_threshold, "pathtrace: T_d, the gaze stop applies at deeper vertices")
      ->capture_default_str()->check(CLI::Range(0u, 64u));
  app.add_option("--p-max", c.p_max, "pathtrace: P_max of Eq. 7")->capture_default_str()->check(CLI::Range(0.0f, 0.99f));
  app.add_option("--rr-depth", c.rr_depth, "pathtrace: Russian roulette from this vertex depth on")
      ->capture_default_str()->check(CLI::Range(0u, 64u));
  app.add_option("--median-max-spp", c.median_max_spp, "pathtrace: median filter only pixels with at most this many samples")
      ->capture_default_str()->check(CLI::Range(1u, 1u << 20));
  app.add_option("--launch-samples", c.launch_samples,
                 "pathtrace: samples per pixel of one device launch (0: the worker's automatic choice, as tessera-render)")
      ->capture_default_str()->check(CLI::Range(0u, 4096u));
  app.add_option("--clamp", c.clamp,
                 "pathtrace: clamp the radiance of contributions after the first diffuse bounce to X (fewer fireflies, "
                 "biased; 0: off, as in the paper's benchmarks)")
      ->capture_default_str()->check(CLI::Range(0.0f, 1e30f));
  app.add_flag("--no-reproject", c.no_reproject, "pathtrace proposed: leave out the reprojection to the other eye");
  app.add_flag("--no-gaze-stop", c.no_gaze_stop, "pathtrace proposed: leave out the gaze-based stop (Eq. 7)");
  app.add_flag("--no-median", c.no_median, "pathtrace proposed: leave out the median filter");
  app.add_flag("--stop-compensate", c.stop_compensate, "pathtrace proposed: weight surviving paths by 1 / (1 - P_d)");
  app.add_flag("--visibility-ray", c.visibility_ray, "pathtrace proposed: test reprojected points with a shadow ray");
  app.add_option("--vct-grid", c.vct_grid, "vct: voxels per side, 64 | 128 | 256 | 512 (default: the scene's, else 256)");
  app.add_option("--vct-preset", c.vct_preset, "vct: 1 basic shading, 2 + hard shadows, 3 + AO, 4 + diffuse GI, 5 + soft shadows")
      ->capture_default_str();
  app.add_option("--shadow-cone", c.shadow_cone, "vct: soft-shadow cone angle in degrees, 2.5..10")->capture_default_str();
  app.add_flag("--vct-solid", c.vct_solid, "vct: filled voxelization of closed objects");
  app.add_option("--vct-output", c.vct_output, "vct: color | ao | indirect | ao-reference")->capture_default_str();
  app.add_option("--vct-cone-offset", c.cone_offset, "vct: cones start this many voxels along the normal")->capture_default_str();
  app.add_option("--move-light", c.move_light, "vct: move light 0 to X,Y,Z (a directional light: new direction); workers relight");
}

void apply_mode_options(const CLI::App& app, const std::string& mode, const ModeCli& c, SessionOptions& options) {
  if (mode != "raytrace" && mode != "pathtrace" && mode != "vct")
    throw UsageError("unknown --mode '" + mode + "' (expected raytrace, pathtrace or vct)");
  const bool live = app.get_option_no_throw("--serve") && app.count("--serve") > 0;  // the page may switch to any mode
  for (const char* option : {"--spp", "--pt-variant", "--depth-threshold", "--p-max", "--rr-depth", "--median-max-spp",
                             "--launch-samples", "--clamp", "--no-reproject", "--no-gaze-stop", "--no-median", "--stop-compensate",
                             "--visibility-ray"})
    if (mode != "pathtrace" && !live && app.count(option) > 0) throw UsageError(std::string(option) + " needs --mode pathtrace");
  for (const char* option : {"--vct-grid", "--vct-preset", "--shadow-cone", "--vct-solid", "--vct-output", "--vct-cone-offset",
                             "--move-light"})
    if (mode != "vct" && !live && app.count(option) > 0) throw UsageError(std::string(option) + " needs --mode vct");
  select_mode(options, mode);
  options.stereo = c.stereo || options.ipd > 0;
  if (c.stereo && app.count("--ipd") == 0) options.ipd = -1.0f;  // the scene's default, once it is loaded
  if (!c.gaze.empty()) options.gaze = parse_gaze(c.gaze);

  // Every mode's parameters are filled, not only --mode's: a live session switches modes and gets
  // each one's as this command line sets them.
  {
    wire::PathtraceParams& p = options.pathtrace;
    if (c.pt_variant != "plain" && c.pt_variant != "proposed")
      throw UsageError("unknown --pt-variant '" + c.pt_variant + "' (expected plain or proposed)");
    p.set_variant(c.pt_variant == "plain" ? wire::PathtraceParams::PLAIN : wire::PathtraceParams::PROPOSED);
    p.set_spp(c.spp);
    // As tessera-render: path vertices and emitter samples keep the mode's defaults (8, 1) unless given.
    if (app.count("--max-depth") > 0) p.set_max_depth(options.raytrace.max_depth());
    if (app.count("--light-samples") > 0) p.set_light_samples(options.raytrace.light_samples());
    p.set_rr_depth(c.rr_depth);
    p.set_depth_threshold(c.depth_threshold);
    p.set_p_max(c.p_max);
    p.set_median_max_spp(c.median_max_spp);
    p.set_launch_samples(c.launch_samples);
    p.set_no_reproject(c.no_reproject);
    p.set_no_gaze_stop(c.no_gaze_stop);
    p.set_no_median(c.no_median);
    p.set_stop_compensate(c.stop_compensate);
    p.set_visibility_ray(c.visibility_ray);
    p.set_indirect_clamp(c.clamp);
    p.set_exposure(options.raytrace.exposure());
    p.set_seed(options.raytrace.seed());
  }
  {
    wire::VctParams& v = options.vct;
    if (app.count("--vct-grid") > 0) {
      validate_vct_grid(c.vct_grid);
      v.set_grid(c.vct_grid);
    }
    validate_vct_preset(c.vct_preset);
    validate_shadow_cone(c.shadow_cone);
    v.set_preset(uint32_t(c.vct_preset));
    v.set_shadow_cone_degrees(c.shadow_cone);
    v.set_solid(c.vct_solid);
    switch (parse_vct_output(c.vct_output)) {
      case VctOutput::color: v.set_output(wire::VctParams::COLOR); break;
      case VctOutput::ao: v.set_output(wire::VctParams::AO); break;
      case VctOutput::indirect: v.set_output(wire::VctParams::INDIRECT); break;
      case VctOutput::ao_reference: v.set_output(wire::VctParams::AO_REFERENCE); break;
    }
    if (!(c.cone_offset >= 0.0f && c.cone_offset <= 8.0f)) throw UsageError("--vct-cone-offset must be in 0..8 voxels");
    v.set_cone_offset_voxels(c.cone_offset);
    if (!c.move_light.empty()) {
      const auto to = parse_vec3(c.move_light, "--move-light");
      v.mutable_move_light()->set_x(to[0]);
      v.mutable_move_light()->set_y(to[1]);
      v.mutable_move_light()->set_z(to[2]);
      v.set_move_light_index(0);
    }
    v.set_exposure(options.raytrace.exposure());
  }
}

void select_mode(SessionOptions& options, const std::string& mode) {
  options.mode = mode;
  options.policy.tile_affinity = mode == "pathtrace";  // tiles stay on the worker that accumulates them
}

}  // namespace tessera::master
