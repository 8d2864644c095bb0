#include "scene-packer/kdtree_clip.h"

#include <cmath>
#include <limits>

namespace tessera::pack::kd {
namespace {

using Point = std::array<double, 3>;
constexpr int kMaxVertices = 9;  // a triangle clipped by 6 planes

// Sutherland-Hodgman against one plane; keep_below selects the side x[axis] <= plane. Points on
// the plane are inside, and new points are snapped onto it so the bounds never leave the box.
int clip_polygon(const Point* in, int n, int axis, double plane, bool keep_below, Point* out) {
  auto inside = [&](const Point& p) { return keep_below ? p[axis] <= plane : p[axis] >= plane; };
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const Point& a = in[i];
    const Point& b = in[(i + 1) % n];
    const bool ia = inside(a), ib = inside(b);
    if (ia) out[m++] = a;
    if (ia != ib) {
      const double s = (plane - a[axis]) / (b[axis] - a[axis]);
      Point p;
      for (int k = 0; k < 3; ++k) p[k] = a[k] + (b[k] - a[k]) * s;
      p[axis] = plane;
      out[m++] = p;
    }
  }
  return m;
}

float round_down(double x) {
  float f = static_cast<float>(x);
  return double(f) > x ? std::nextafter(f, -std::numeric_limits<float>::infinity()) : f;
}
float round_up(double x) {
  float f = static_cast<float>(x);
  return double(f) < x ? std::nextafter(f, std::numeric_limits<float>::infinity()) : f;
}

}  // namespace

bool clip_triangle_bounds(const std::array<std::array<float, 3>, 3>& triangle, const Box& box, Box* out) {
  Point buf[2][kMaxVertices + 1];
  int n = 3;
  for (int v = 0; v < 3; ++v)
    for (int k = 0; k < 3; ++k) buf[0][v][k] = triangle[v][k];
  int cur = 0;
  for (int axis = 0; axis < 3 && n > 0; ++axis) {
    n = clip_polygon(buf[cur], n, axis, box.min[axis], false, buf[cur ^ 1]);
    cur ^= 1;
    if (n == 0) break;
    n = clip_polygon(buf[cur], n, axis, box.max[axis], true, buf[cur ^ 1]);
    cur ^= 1;
  }
  if (n == 0) return false;
  for (int k = 0; k < 3; ++k) {
    double lo = buf[cur][0][k], hi = lo;
    for (int i = 1; i < n; ++i) {
      lo = std::min(lo, buf[cur][i][k]);
      hi = std::max(hi, buf[cur][i][k]);
    }
    out->min[k] = std::clamp(round_down(lo), box.min[k], box.max[k]);
    out->max[k] = std::clamp(round_up(hi), box.min[k], box.max[k]);
  }
  return true;
}

}  // namespace tessera::pack::kd
