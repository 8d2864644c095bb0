#pragma once
// tessera-master's render-mode options, named as tessera-render names them: --stereo and --gaze,
// the pathtrace options (--spp, --pt-variant, --depth-threshold, ...) and the vct options
// (--vct-grid, --vct-preset, --shadow-cone, ...), turned into the FrameRequest's mode parameters.
#include <CLI/CLI.hpp>
#include <string>

#include "kernels/integrators/pathtrace_params.h"
#include "master/session/session_options.h"

namespace tessera::master {

struct ModeCli {
  bool stereo = false;
  std::string gaze;
  // pathtrace
  unsigned spp = 16, depth_threshold = 1, rr_depth = 3, median_max_spp = 16, launch_samples = 0;  // 0: automatic
  float clamp = TS_PT_INTERACTIVE_CLAMP;  // pathtrace: indirect radiance clamp, on for live viewing (0: off)
  float p_max = 0.9f;
  std::string pt_variant = "proposed";
  bool no_reproject = false, no_gaze_stop = false, no_median = false, stop_compensate = false, visibility_ray = false;
  // vct
  unsigned vct_grid = 0;
  int vct_preset = 5;
  float shadow_cone = 5.0f, cone_offset = 2.0f;
  bool vct_solid = false;
  std::string vct_output = "color", move_light;
};

// Declares the options on `app` (besides --mode, --ipd, --max-depth, --light-samples and --exposure,
// which tessera-master declares itself).
void add_mode_options(CLI::App& app, ModeCli& cli);

// Checks `mode` and the options given with it (a pathtrace option needs --mode pathtrace, ..., except
// with --serve, where the page switches modes) and
// fills options.mode, stereo, gaze and the parameters of every mode (the options given, else their
// defaults), so that a live session can switch modes with what the command line set. options.raytrace must already hold
// --max-depth, --light-samples and --exposure. Throws Error with one clear line.
void apply_mode_options(const CLI::App& app, const std::string& mode, const ModeCli& cli, SessionOptions& options);

// Makes `mode` the one rendered, with what goes with it (pathtrace keeps tiles on their worker).
void select_mode(SessionOptions& options, const std::string& mode);

}  // namespace tessera::master
