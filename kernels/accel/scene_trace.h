/* The closest and any hit of a ray in a scene, whichever its kind: an instanced scene
 * (TS_SCENE_INSTANCED) through its top level and the objects' kd-trees
 * (kernels/accel/instance_traverse.h), a single-level scene through its one kd-tree. Integrators
 * call these; on GPUs the scene's flags are constants, so a single-level program holds no trace of
 * the instanced branch. A hit of an instanced scene names the scene triangle (object space) and, in
 * Hit.inst, the instance's slot: scene_hit_to_world and scene_normal_to_world carry what shading
 * reads from the triangle into world space. */
#ifndef TESSERA_KERNELS_ACCEL_SCENE_TRACE_H
#define TESSERA_KERNELS_ACCEL_SCENE_TRACE_H
#include "kernels/accel/instance_traverse.h"

TS_FN int scene_intersect_closest(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax, Hit* hit) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  if (scene_flags(scene) & TS_SCENE_INSTANCED) {
    InstanceView view = scene_instance_view(scene);
    uint slot;
    int found = instance_traverse(scene, &view, org, dir, tmin, tmax, 0, hit, &slot);
    hit->inst = slot;
    return found;
  }
#endif
  return kd_intersect_closest(scene, org, dir, tmin, tmax, hit);
}

TS_FN int scene_intersect_any(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  if (scene_flags(scene) & TS_SCENE_INSTANCED) {
    InstanceView view = scene_instance_view(scene);
    Hit hit;
    uint slot;
    return instance_traverse(scene, &view, org, dir, tmin, tmax, 1, &hit, &slot);
  }
#endif
  return kd_intersect_any(scene, org, dir, tmin, tmax);
}

/* Corners of a triangle of the instance in top-level slot `slot` (object space in an instanced
 * scene) in world space; a single-level scene's stay as they are. */
TS_FN void scene_instance_to_world(const SceneView* scene, uint slot, float3* p0, float3* p1, float3* p2) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  if (scene_flags(scene) & TS_SCENE_INSTANCED) {
    InstanceView view = scene_instance_view(scene);
    float3 p[3];
    p[0] = *p0;
    p[1] = *p1;
    p[2] = *p2;
    instance_points_to_world(&view, slot, p, 3u);
    *p0 = p[0];
    *p1 = p[1];
    *p2 = p[2];
  }
#endif
}

/* A hit triangle's corners (object space in an instanced scene) in world space. */
TS_FN void scene_hit_to_world(const SceneView* scene, const Hit* hit, float3* p0, float3* p1, float3* p2) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  scene_instance_to_world(scene, hit->inst, p0, p1, p2);
#endif
}

/* An object-space normal of the instance in top-level slot `slot` in world space (unit where
 * transformed); a single-level scene's as it is. */
TS_FN float3 scene_instance_normal_to_world(const SceneView* scene, uint slot, float3 n) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  if (scene_flags(scene) & TS_SCENE_INSTANCED) {
    InstanceView view = scene_instance_view(scene);
    return instance_normal_to_world(&view, slot, n);
  }
#endif
  return n;
}

/* A hit's object-space shading normal in world space (unit). */
TS_FN float3 scene_normal_to_world(const SceneView* scene, const Hit* hit, float3 n) {
#ifdef TS_SCENE_INSTANCE_FIELDS
  return scene_instance_normal_to_world(scene, hit->inst, n);
#else
  return n;
#endif
}

#endif
