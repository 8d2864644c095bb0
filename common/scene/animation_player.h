#pragma once
// Evaluating a scene's animations (gltf_animation.h) at a scene time: each channel sampled as glTF
// 2.0 says (STEP holds a key's value; LINEAR interpolates, rotations by shortest-path slerp;
// CUBICSPLINE is the spec's Hermite spline, tangents scaled by the key interval; rotations come out
// normalized), then every node's world matrix, parents first. Before its first key a channel holds
// the first value, after its last key the last. Where two animations drive the same node property
// the later one in the file wins. Deterministic: the same scene and time give the same bits, and
// evaluating into a Pose that already has the scene's size allocates nothing.
#include <array>
#include <string_view>
#include <vector>

#include "common/scene/gltf_animation.h"

namespace tessera::anim {

// What a scene time past an animation's end shows. loop (the default): each animation repeats over
// its own duration (at exactly the duration it starts again; negative times wrap as well), so a
// scene clock can run on for ever. clamp: times before 0 show the first pose, after the duration the
// last one (for rendering one instant of a one-shot animation).
enum class Playback : uint8_t { loop, clamp };

// "loop" or "clamp"; false for anything else.
bool parse_playback(std::string_view text, Playback* out);

// Seconds into `animation` at scene time `seconds`: in [0, duration] (an animation of duration 0 is
// always at 0).
double animation_time(const Animation& animation, double seconds, Playback playback);

// A channel's value at `t` seconds into its animation: target_components() floats into `out`.
void sample_channel(const Channel& channel, double t, float* out);

// A transform as a column-major 4x4 matrix (glTF's layout): T * R * S.
std::array<float, 16> trs_matrix(const Trs& trs);

// a * b for column-major 4x4 matrices.
std::array<float, 16> multiply(const std::array<float, 16>& a, const std::array<float, 16>& b);

struct Pose {
  std::vector<Trs> local;  // each node's local transform (the rest pose where nothing drives it; identity for matrix nodes)
  std::vector<std::array<float, 16>> world;  // each node's world matrix, column-major
};

// The pose of every node at scene time `seconds`. Returns false where a world matrix is not finite
// (scales nested to overflow): the caller refuses that pose.
bool evaluate(const AnimatedScene& scene, double seconds, Playback playback, Pose& pose);

}  // namespace tessera::anim
