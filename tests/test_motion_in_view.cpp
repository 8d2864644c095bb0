// Whether a held view saw anything move (master/session/motion_in_view.h): a box in an eye's view
// pyramid, out of it, behind the eye; instances that moved into view, out of it, or only elsewhere;
// an object grabbed in view or out of it, with the boxes the master's picker gives at a scene time.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "master/cluster/scene_file.h"
#include "master/session/motion_in_view.h"
#include "master/session/scene_picker.h"
#include "test_helpers.h"
#include "two_cubes_scene.h"

namespace tessera::testing {
namespace {

using master::box_in_view;
using master::moved_in_view;

Aabb cube_at(float x, float y, float z, float half = 0.5f) { return Aabb{{x - half, y - half, z - half}, {x + half, y + half, z + half}}; }

// An eye at `position` looking down -z turned `yaw_degrees` to the left, its frustum +-tangent wide.
EyeView eye_at(std::array<float, 3> position, float tangent = 0.5f, float yaw_degrees = 0) {
  const float half = yaw_degrees * float(M_PI) / 360.0f;
  EyeView eye;
  eye.pose.position = position;
  eye.pose.orientation = {std::cos(half), 0, std::sin(half), 0};
  eye.frustum = {-tangent, tangent, -tangent, tangent};
  return eye;
}

TEST(MotionInView, ABoxIsInViewOnlyInsideTheEyesPyramid) {
  const EyeView eye = eye_at({0, 0, 0});
  EXPECT_TRUE(box_in_view(cube_at(0, 0, -5), eye));
  EXPECT_TRUE(box_in_view(cube_at(2.9f, 0, -5), eye));     // its far left edge (x 2.4 at depth 5.5, the frustum's edge 2.75) is in
  EXPECT_FALSE(box_in_view(cube_at(4, 0, -5), eye));       // right of the frustum
  EXPECT_FALSE(box_in_view(cube_at(0, -4, -5), eye));      // below it
  EXPECT_FALSE(box_in_view(cube_at(0, 0, 5), eye));        // behind the eye
  EXPECT_FALSE(box_in_view(cube_at(0, 0, 3, 2.5f), eye));  // behind, wider than the frustum, up to half a unit from the eye
  EXPECT_TRUE(box_in_view(cube_at(0, 0, 0), eye));         // around the eye
  EXPECT_FALSE(box_in_view(Aabb{}, eye));                  // empty
  // Turned 90 degrees to the left, the eye looks down -x.
  const EyeView left = eye_at({0, 0, 0}, 0.5f, 90);
  EXPECT_TRUE(box_in_view(cube_at(-5, 0, 0), left));
  EXPECT_FALSE(box_in_view(cube_at(0, 0, -5), left));
  // An off-axis frustum: only to the right of the view axis.
  EyeView off = eye_at({0, 0, 0});
  off.frustum = {0.2f, 0.6f, -0.3f, 0.3f};
  EXPECT_FALSE(box_in_view(cube_at(0, 0, -10), off));
  EXPECT_TRUE(box_in_view(cube_at(4, 0, -10), off));
}

TEST(MotionInView, OnlyABoxThatChangedAndMeetsAnEyeBeforeOrAfterCounts) {
  const std::vector<EyeView> stereo{eye_at({-0.05f, 0, 0}, 0.3f), eye_at({0.05f, 0, 0}, 0.3f)};
  const std::vector<Aabb> before{cube_at(0, 0, -5), cube_at(0, 0, 5), cube_at(20, 0, -5)};
  EXPECT_FALSE(moved_in_view(before, before, stereo));  // nothing moved (one in view, two out)
  std::vector<Aabb> after = before;
  after[1] = cube_at(0, 1, 6);  // moved behind the eyes
  EXPECT_FALSE(moved_in_view(before, after, stereo));
  after[2] = cube_at(0, 0, -6);  // moved into view
  EXPECT_TRUE(moved_in_view(before, after, stereo));
  after = before;
  after[0] = cube_at(20, 0, -5);  // moved out of view: where it was shows something else now
  EXPECT_TRUE(moved_in_view(before, after, stereo));
  // Seen by one eye alone (x 1.50 .. 1.56): at depth 5.03 the right eye's frustum reaches x 1.559, the left one's 1.459.
  const std::vector<Aabb> edge_before{cube_at(1.53f, 0, -5, 0.03f)}, edge_after{cube_at(1.53f, 0.01f, -5, 0.03f)};
  EXPECT_FALSE(box_in_view(edge_before[0], stereo[0]));
  EXPECT_TRUE(box_in_view(edge_before[0], stereo[1]));
  EXPECT_TRUE(moved_in_view(edge_before, edge_after, stereo));
  EXPECT_TRUE(moved_in_view(before, std::vector<Aabb>(2), stereo));  // not the same instances
}

TEST(MotionInView, TheTwoCubesSlidingOrGrabbedInViewAndOutOfIt) {
  TempDir dir("motion_in_view");
  const auto file = master::SceneFile::load(pack_two_cubes(dir.path()));
  master::ScenePicker picker(*file);
  // The still cube at the origin, the sliding one at x = 3 (0 s) and x = 5 (1 s).
  const auto at0 = picker.instance_boxes(0.0, {}), at1 = picker.instance_boxes(1.0, {});
  ASSERT_EQ(at0.size(), 2u);
  EXPECT_NEAR(at0[1].min[0], 2.5f, 1e-5f);
  EXPECT_NEAR(at1[1].min[0], 4.5f, 1e-5f);
  EXPECT_EQ(at0[0].min, at1[0].min);
  const std::vector<EyeView> on_still{eye_at({0, 0, 10}, 0.1f)};  // sees x within +-1 at the cubes
  const std::vector<EyeView> on_sliding{eye_at({4, 0, 10}, 0.1f)};
  EXPECT_FALSE(moved_in_view(at0, at1, on_still));   // the clock plays: the slide happens out of view
  EXPECT_TRUE(moved_in_view(at0, at1, on_sliding));
  // Grabbed: the sliding cube put in front of the still one is seen; the still one lifted out of view
  // leaves where it was; the sliding one lifted where nobody looks is not seen.
  Transform3x4 in_front, lifted;
  in_front.m = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2};
  lifted.m = {1, 0, 0, 3, 0, 1, 0, 6, 0, 0, 1, 0};
  EXPECT_TRUE(moved_in_view(at0, picker.instance_boxes(0.0, {{1, in_front}}), on_still));
  Transform3x4 still_lifted;
  still_lifted.m = {1, 0, 0, 0, 0, 1, 0, 6, 0, 0, 1, 0};
  EXPECT_TRUE(moved_in_view(at0, picker.instance_boxes(0.0, {{0, still_lifted}}), on_still));
  EXPECT_FALSE(moved_in_view(at0, picker.instance_boxes(0.0, {{1, lifted}}), on_still));
  // The picker's own picks are unchanged by asking for boxes.
  const auto hit = picker.pick({3, 10, 0}, {0, -1, 0}, 0.0, {});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->instance, 1u);
}

}  // namespace
}  // namespace tessera::testing
