#include "master/session/live_view.h"

namespace tessera::master {

void set_live_view(wire::FrameRequest& request, const PoseSample& pose, const RenderedEyes& eyes) {
  request.set_aa_sample(pose.aa_sample);
  if (!eyes.explicit_views) return;
  for (const EyeView& eye : eyes.views) {
    auto& v = *request.add_eye_views();
    v.mutable_position()->set_x(eye.pose.position[0]);
    v.mutable_position()->set_y(eye.pose.position[1]);
    v.mutable_position()->set_z(eye.pose.position[2]);
    v.mutable_orientation()->set_w(eye.pose.orientation[0]);
    v.mutable_orientation()->set_x(eye.pose.orientation[1]);
    v.mutable_orientation()->set_y(eye.pose.orientation[2]);
    v.mutable_orientation()->set_z(eye.pose.orientation[3]);
    v.mutable_frustum()->set_left(eye.frustum.left);
    v.mutable_frustum()->set_right(eye.frustum.right);
    v.mutable_frustum()->set_bottom(eye.frustum.bottom);
    v.mutable_frustum()->set_top(eye.frustum.top);
  }
}

}  // namespace tessera::master
