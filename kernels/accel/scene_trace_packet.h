/* A packet of rays (kernels/accel/kdtree_packet.h) in a scene of either kind: an instanced scene's
 * lanes are traced one by one (each instance carries them into its own object space), a single-level
 * scene's as the packet they are. */
#ifndef TESSERA_KERNELS_ACCEL_SCENE_TRACE_PACKET_H
#define TESSERA_KERNELS_ACCEL_SCENE_TRACE_PACKET_H
#include "kernels/accel/kdtree_packet.h"
#include "kernels/accel/scene_trace.h"

#ifdef TS_KD_CPU
TS_FN void scene_trace_packet(const SceneView* scene, const KdPacket* rays, int any_hit, int* found, Hit* hits) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  if (scene_flags(scene) & TS_SCENE_INSTANCED) {
    uint l;
    for (l = 0u; l < TS_SIMD_LANES; ++l) {
      hits[l].tri = TS_KD_NO_TRIANGLE;
      hits[l].t = rays->tmax[l];
      hits[l].u = 0.0f;
      hits[l].v = 0.0f;
      found[l] = 0;
      if (!(rays->tmin[l] <= rays->tmax[l])) continue;
      found[l] = any_hit ? scene_intersect_any(scene, rays->org[l], rays->dir[l], rays->tmin[l], rays->tmax[l])
                         : scene_intersect_closest(scene, rays->org[l], rays->dir[l], rays->tmin[l], rays->tmax[l], &hits[l]);
    }
    return;
  }
#endif
  kd_traverse_packet(scene, rays, any_hit, found, hits);
}
#endif

#endif
