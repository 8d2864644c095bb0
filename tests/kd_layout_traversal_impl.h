// Body of tests/kd_layout_traversal_*.cpp: define TS_KD_LAYOUT_BLOCKED, TS_KD_BLOCK_SLOTS,
// TS_KD_NODE_CACHE and KD_LAYOUT_TRAVERSAL (the LayoutTraversal's name) before including this.
#include "kernels/accel/kdtree_packet.h"
#include "tests/kd_layout_traversal.h"

namespace tessera::testing {
namespace {

int closest(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax, Hit* hit) {
  return kd_intersect_closest(scene, org, dir, tmin, tmax, hit);
}
int any(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax) {
  return kd_intersect_any(scene, org, dir, tmin, tmax);
}
void packet(const SceneView* scene, const float3* org, const float3* dir, const float* tmin, const float* tmax,
            int any_hit, int* found, Hit* hits) {
  static_assert(TS_SIMD_LANES == 4, "the host build traces packets of four rays");
  KdPacket p;
  for (int l = 0; l < 4; ++l) p.org[l] = org[l], p.dir[l] = dir[l], p.tmin[l] = tmin[l], p.tmax[l] = tmax[l];
  kd_traverse_packet(scene, &p, any_hit, found, hits);
}

}  // namespace

#define KD_LAYOUT_STRING2(x) #x
#define KD_LAYOUT_STRING(x) KD_LAYOUT_STRING2(x)
const LayoutTraversal KD_LAYOUT_TRAVERSAL = {KD_LAYOUT_STRING(KD_LAYOUT_TRAVERSAL), closest, any, packet};

}  // namespace tessera::testing
