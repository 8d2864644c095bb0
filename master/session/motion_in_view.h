#pragma once
// Whether a held view saw anything move: a live session goes on refining a held pose (the samples of
// its next frames join the mean) while the scene clock plays or an object is grabbed elsewhere, as long
// as no instance whose world box changed meets the rendered eyes' view, with its box from before or
// after (docs/live-session.md "Things that move"). The test is conservative: a box counts as in view
// unless it lies wholly outside one plane of an eye's view pyramid. What it cannot see: an object out
// of view still bounces light into view and casts shadows there, so moving it changes the view's
// indirect light and shadows a little; the refinement keeps them as they were at its first frame.
#include <span>

#include "common/render/eye_view.h"
#include "common/scene/aabb.h"

namespace tessera::master {

// Whether `box` (world) may show in `eye`: it meets the eye's view pyramid (apex at the eye, the
// frustum's four sides, nothing behind the eye, no far end). An empty box shows nowhere.
bool box_in_view(const Aabb& box, const EyeView& eye);

// Whether any instance whose world box differs between `before` and `after` (the same instances in
// the same order) meets one of `eyes`, with either box. Lists of different lengths count as moved.
bool moved_in_view(std::span<const Aabb> before, std::span<const Aabb> after, std::span<const EyeView> eyes);

}  // namespace tessera::master
