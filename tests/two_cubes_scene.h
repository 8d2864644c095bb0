#pragma once
// A small instanced scene for the tests of things that move (test_scene_motion_frames.cpp,
// test_live_motion.cpp): two unit cubes, instance 0 still at the origin, instance 1 sliding from
// x = 3 to x = 5 and back over 2 s (LINEAR), packed with --instances.
#include <filesystem>

namespace tessera::testing {

std::filesystem::path pack_two_cubes(const std::filesystem::path& dir);

}  // namespace tessera::testing
