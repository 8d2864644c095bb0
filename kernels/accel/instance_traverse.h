/* Two-level traversal: a small BVH over instances (the top level, rebuilt on the host whenever a
 * transform changes, common/scene/top_level_bvh.h) whose leaves name instances; each instance is an
 * object (its own kd-tree in object space, kernels/accel/kdtree_traverse.h) and a world-to-object
 * transform. A ray is carried into object space per instance (an affine map keeps t: o + t d maps
 * to o' + t d'), so hits from different instances compare by t directly.
 *
 * Objects share the scene's vertex and triangle buffers: an object's kd-tree lies in kd_nodes
 * from its own base slot and its references are scene triangle indices, so a hit's triangle (and
 * its material) is the scene's. Among hits at equal t the lowest triangle index wins, as in the
 * single-level traversal: with identity transforms (taken without arithmetic) two-level traversal
 * returns the very hits of one kd-tree over the same triangles.
 *
 * Device layout, 32-bit words:
 *   top-level node  TS_TLAS_NODE_WORDS: box min xyz, max xyz (float bits), first, count. count 0:
 *                   inner, children at first and first + 1; else instances [first, first + count)
 *   instance        TS_INSTANCE_WORDS, in the order leaves name them: world-to-object 3x4, row
 *                   major (float bits), object, instance id (the scene's order), flags, 0
 *   object          TS_OBJECT_WORDS: first kd slot, first leaf reference, box min xyz, max xyz */
#ifndef TESSERA_KERNELS_ACCEL_INSTANCE_TRAVERSE_H
#define TESSERA_KERNELS_ACCEL_INSTANCE_TRAVERSE_H
#include "kernels/accel/kdtree_traverse.h"

#define TS_TLAS_NODE_WORDS 8u
#define TS_INSTANCE_WORDS 16u
#define TS_OBJECT_WORDS 8u
#define TS_INSTANCE_IDENTITY 1u /* flags: the transform is the identity (no arithmetic on the ray) */
#define TS_TLAS_STACK_SIZE 32   /* the host builds top levels at most this deep */
#define TS_NO_INSTANCE 0xFFFFFFFFu

typedef struct InstanceView {
  uint instance_count;
  TS_GLOBAL const uint* tlas_nodes;
  TS_GLOBAL const uint* instances;
  TS_GLOBAL const uint* objects;
} InstanceView;

TS_FN float ts_word_float(TS_GLOBAL const uint* p, uint i) { return ts_as_float(p[i]); }

/* Row `row` of an instance's world-to-object matrix applied to (x, y, z, w). */
TS_FN float instance_row(TS_GLOBAL const uint* rec, uint row, float x, float y, float z, float w) {
  return ts_word_float(rec, 4u * row) * x + ts_word_float(rec, 4u * row + 1u) * y + ts_word_float(rec, 4u * row + 2u) * z +
         ts_word_float(rec, 4u * row + 3u) * w;
}

/* The ray's segment through a top-level box, within [t0, t1]; 0 when it misses. */
TS_FN int instance_box_clip(TS_GLOBAL const uint* node, float3 org, float3 dir, float* t0, float* t1) {
  if (!kd_clip_slab(org.x, dir.x, ts_word_float(node, 0u), ts_word_float(node, 3u), t0, t1)) return 0;
  if (!kd_clip_slab(org.y, dir.y, ts_word_float(node, 1u), ts_word_float(node, 4u), t0, t1)) return 0;
  if (!kd_clip_slab(org.z, dir.z, ts_word_float(node, 2u), ts_word_float(node, 5u), t0, t1)) return 0;
  return *t0 <= *t1;
}

/* The next float above a positive finite t (t itself otherwise): an instance searched up to it
 * finds hits at exactly t, which win a tie by a lower triangle index. */
TS_FN float instance_next_up(float t) { return (t > 0.0f && t < TS_INFINITY) ? ts_as_float(ts_as_uint(t) + 1u) : t; }

/* Tests one instance (its slot in leaf order), merging its closest hit into *hit. */
TS_FN int instance_test(const SceneView* scene, const InstanceView* view, uint slot, float3 org, float3 dir, float tmin,
                        int any_hit, int found, Hit* hit, uint* hit_slot) {
  TS_GLOBAL const uint* rec = view->instances + TS_INSTANCE_WORDS * slot;
  TS_GLOBAL const uint* obj = view->objects + TS_OBJECT_WORDS * rec[12];
  SceneView object_view = *scene;
  Hit h;
  float3 o = org, d = dir;
  float limit = found ? instance_next_up(hit->t) : hit->t;
  if ((rec[14] & TS_INSTANCE_IDENTITY) == 0u) {
    o = make_float3(instance_row(rec, 0u, org.x, org.y, org.z, 1.0f), instance_row(rec, 1u, org.x, org.y, org.z, 1.0f),
                    instance_row(rec, 2u, org.x, org.y, org.z, 1.0f));
    d = make_float3(instance_row(rec, 0u, dir.x, dir.y, dir.z, 0.0f), instance_row(rec, 1u, dir.x, dir.y, dir.z, 0.0f),
                    instance_row(rec, 2u, dir.x, dir.y, dir.z, 0.0f));
  }
  object_view.kd_nodes = scene->kd_nodes + 2u * obj[0];
  object_view.kd_leaf_refs = scene->kd_leaf_refs + obj[1];
  object_view.bounds_min_x = ts_word_float(obj, 2u);
  object_view.bounds_min_y = ts_word_float(obj, 3u);
  object_view.bounds_min_z = ts_word_float(obj, 4u);
  object_view.bounds_max_x = ts_word_float(obj, 5u);
  object_view.bounds_max_y = ts_word_float(obj, 6u);
  object_view.bounds_max_z = ts_word_float(obj, 7u);
  if (!kd_traverse(&object_view, o, d, tmin, limit, any_hit, &h)) return 0;
  if (found && !(h.t < hit->t || (h.t == hit->t && h.tri < hit->tri))) return 0;
  *hit = h;
  *hit_slot = slot;
  return 1;
}

/* The closest hit in (tmin, tmax) over every instance (any_hit = 1: the first found); *hit_slot is
 * the instance's slot in leaf order (instance_id, instance_normal_to_world), TS_NO_INSTANCE when none. */
TS_FN int instance_traverse(const SceneView* scene, const InstanceView* view, float3 org, float3 dir, float tmin,
                            float tmax, int any_hit, Hit* hit, uint* hit_slot) {
  uint stack[TS_TLAS_STACK_SIZE];
  uint sp = 0u, node = 0u;
  int found = 0;
  hit->tri = TS_KD_NO_TRIANGLE;
  hit->t = tmax;
  hit->u = 0.0f;
  hit->v = 0.0f;
  *hit_slot = TS_NO_INSTANCE;
  if (!(tmin <= tmax) || view->instance_count == 0u) return 0;
  {
    float t0 = tmin, t1 = tmax;
    if (!instance_box_clip(view->tlas_nodes, org, dir, &t0, &t1)) return 0;
  }
  for (;;) {
    TS_GLOBAL const uint* n = view->tlas_nodes + TS_TLAS_NODE_WORDS * node;
    uint first = n[6], count = n[7];
    if (count == 0u) {
      /* both children: the nearer first, the other on the stack */
      TS_GLOBAL const uint* a = view->tlas_nodes + TS_TLAS_NODE_WORDS * first;
      float a0 = tmin, a1 = hit->t, b0 = tmin, b1 = hit->t;
      int hit_a = instance_box_clip(a, org, dir, &a0, &a1);
      int hit_b = instance_box_clip(a + TS_TLAS_NODE_WORDS, org, dir, &b0, &b1);
      if (hit_a && hit_b) {
        int b_first = b0 < a0;
        if (sp < (uint)TS_TLAS_STACK_SIZE) stack[sp++] = b_first ? first : first + 1u;
        node = b_first ? first + 1u : first;
        continue;
      }
      if (hit_a || hit_b) {
        node = hit_a ? first : first + 1u;
        continue;
      }
    } else {
      uint i;
      for (i = 0u; i < count; ++i) {
        found |= instance_test(scene, view, first + i, org, dir, tmin, any_hit, found, hit, hit_slot);
        if (any_hit && found) return 1;
      }
    }
    if (sp == 0u) break;
    node = stack[--sp];
  }
  return found;
}

TS_FN uint instance_id(const InstanceView* view, uint slot) { return view->instances[TS_INSTANCE_WORDS * slot + 13u]; }

/* An object-space normal in world space: the transpose of world-to-object's linear part keeps it
 * perpendicular to the transformed surface under any scale or shear (normalized here). */
TS_FN float3 instance_normal_to_world(const InstanceView* view, uint slot, float3 n) {
  TS_GLOBAL const uint* rec = view->instances + TS_INSTANCE_WORDS * slot;
  if (rec[14] & TS_INSTANCE_IDENTITY) return n;
  return v3_normalize(make_float3(
      ts_word_float(rec, 0u) * n.x + ts_word_float(rec, 4u) * n.y + ts_word_float(rec, 8u) * n.z,
      ts_word_float(rec, 1u) * n.x + ts_word_float(rec, 5u) * n.y + ts_word_float(rec, 9u) * n.z,
      ts_word_float(rec, 2u) * n.x + ts_word_float(rec, 6u) * n.y + ts_word_float(rec, 10u) * n.z));
}

/* An object-space point in world space: the inverse of the instance's world-to-object transform
 * (computed here: the record holds world to object alone). Shading takes a hit triangle's corners
 * to world space with it, so its area, texture footprint and geometric normal are the world's. */
TS_FN void instance_points_to_world(const InstanceView* view, uint slot, float3* points, uint count) {
  TS_GLOBAL const uint* rec = view->instances + TS_INSTANCE_WORDS * slot;
  if (rec[14] & TS_INSTANCE_IDENTITY) return;
  {
  float a = ts_word_float(rec, 0u), b = ts_word_float(rec, 1u), c = ts_word_float(rec, 2u);
  float d = ts_word_float(rec, 4u), e = ts_word_float(rec, 5u), f = ts_word_float(rec, 6u);
  float g = ts_word_float(rec, 8u), h = ts_word_float(rec, 9u), k = ts_word_float(rec, 10u);
  float tx = ts_word_float(rec, 3u), ty = ts_word_float(rec, 7u), tz = ts_word_float(rec, 11u);
  float c0 = e * k - f * h, c1 = c * h - b * k, c2 = b * f - c * e;
  float inv_det = 1.0f / (a * c0 + d * c1 + g * c2);
  float i00 = c0 * inv_det, i01 = c1 * inv_det, i02 = c2 * inv_det;
  float i10 = (f * g - d * k) * inv_det, i11 = (a * k - c * g) * inv_det, i12 = (c * d - a * f) * inv_det;
  float i20 = (d * h - e * g) * inv_det, i21 = (b * g - a * h) * inv_det, i22 = (a * e - b * d) * inv_det;
  uint i;
  for (i = 0u; i < count; ++i) { /* p_world = M^-1 (p_object - t) */
    float x = points[i].x - tx, y = points[i].y - ty, z = points[i].z - tz;
    points[i] = make_float3(i00 * x + i01 * y + i02 * z, i10 * x + i11 * y + i12 * z, i20 * x + i21 * y + i22 * z);
  }
  }
}

#ifdef TS_SCENE_INSTANCE_FIELDS
/* The top level an instanced SceneView carries. */
TS_FN InstanceView scene_instance_view(const SceneView* scene) {
  InstanceView view;
  view.instance_count = scene->instance_count;
  view.tlas_nodes = scene->tlas_nodes;
  view.instances = scene->instance_records;
  view.objects = scene->objects;
  return view;
}
#endif

#endif
