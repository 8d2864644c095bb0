/* A packet of TS_SIMD_LANES coherent rays (neighbouring camera rays, or shadow rays from
 * neighbouring points toward one light) traced together on a CPU, one ray per SIMD lane (Wald et al.
 * 2001, "Interactive Rendering with Coherent Ray Tracing"). The packet walks the tree once: every
 * lane keeps its own [t0, t1] through the cells, exactly as kd_traverse computes it, and a cell is
 * visited when any lane's interval in it is non-empty. Each triangle is fetched and decoded once for
 * the whole packet and tested against the lanes active in that cell, so a lane makes the same
 * triangle tests as the ray alone would and finds the same hit.
 *
 * The near/far order of a split is shared, so it needs every lane's direction to have the same sign
 * per axis; a packet whose signs differ (diffuse bounces, mostly) is traced ray by ray instead. */
#ifndef TESSERA_KERNELS_ACCEL_KDTREE_PACKET_H
#define TESSERA_KERNELS_ACCEL_KDTREE_PACKET_H
#include "kernels/accel/kdtree_traverse.h"

#ifdef TS_KD_CPU
#include "kernels/geom/triangle_packet.h"

/* The rays; a lane whose tmax is not >= tmin traces nothing and reports no hit. */
typedef struct KdPacket {
  float3 org[TS_SIMD_LANES], dir[TS_SIMD_LANES];
  float tmin[TS_SIMD_LANES], tmax[TS_SIMD_LANES];
} KdPacket;

/* Per-lane state the leaf and node-reference tests share. */
typedef struct KdPacketHits {
  TrianglePacket rays;
  ts_floatv tmin, best;
  ts_intv alive; /* lanes still looking: all traced ones, minus, for any-hit, those that found one */
} KdPacketHits;

/* Tests one triangle against the lanes in mask; records each lane's new closest hit. */
TS_FN void kd_packet_test(const SceneView* scene, KdPacketHits* s, uint tri, ts_intv mask, int* found, Hit* hits) {
  float3 p0, p1, p2;
  ts_floatv t, u, v;
  ts_intv ok;
  int ties[TS_SIMD_LANES];
  uint l;
  for (l = 0u; l < TS_SIMD_LANES; ++l) ties[l] = kd_hit_wins_tie(&hits[l], tri) ? -1 : 0;
  scene_triangle_vertices(scene, tri, &p0, &p1, &p2);
  ok = triangle_intersect_packet(&s->rays, p0, p1, p2, s->tmin, s->best, ts_simd_load_int(ties), &t, &u, &v) & mask;
  if (ts_simd_any(ok)) {
    int oks[TS_SIMD_LANES];
    s->best = ts_simd_select(s->best, t, ok);
    ts_simd_store_int(ok, oks);
    for (l = 0u; l < TS_SIMD_LANES; ++l)
      if (oks[l]) {
        found[l] = 1;
        hits[l].tri = tri;
        hits[l].t = ts_simd_lane(t, l);
        hits[l].u = ts_simd_lane(u, l);
        hits[l].v = ts_simd_lane(v, l);
      }
  }
}

/* After tests with any_hit: drops the lanes that found one; 0 when none is left. */
TS_FN int kd_packet_still_looking(KdPacketHits* s, const int* found) {
  int f[TS_SIMD_LANES];
  uint l;
  for (l = 0u; l < TS_SIMD_LANES; ++l) f[l] = found[l] ? 0 : -1;
  s->alive = s->alive & ts_simd_load_int(f);
  return ts_simd_any(s->alive);
}

/* Takes the next far child that some lane still reaches (see kd_pop); 0 when none is left. */
TS_FN int kd_packet_pop(const uint* stack_node, const ts_floatv* stack_t0, const ts_floatv* stack_t1, uint* sp,
                        const KdPacketHits* s, uint* node, ts_floatv* t0, ts_floatv* t1) {
  while (*sp > 0u) {
    --*sp;
    *node = stack_node[*sp];
    *t0 = stack_t0[*sp];
    *t1 = ts_simd_min(stack_t1[*sp], s->best);
    if (ts_simd_any((*t0 <= *t1) & s->alive)) return 1;
  }
  return 0;
}

TS_FN void kd_traverse_packet(const SceneView* scene, const KdPacket* rays, int any_hit, int* found, Hit* hits) {
  const ts_floatv pos_inf = ts_simd_splat(TS_INFINITY), neg_inf = ts_simd_splat(-TS_INFINITY);
  TriangleRay tri_rays[TS_SIMD_LANES];
  float t0a[TS_SIMD_LANES], t1a[TS_SIMD_LANES], tmina[TS_SIMD_LANES], besta[TS_SIMD_LANES];
  float ox[TS_SIMD_LANES], oy[TS_SIMD_LANES], oz[TS_SIMD_LANES];
  float dx[TS_SIMD_LANES], dy[TS_SIMD_LANES], dz[TS_SIMD_LANES];
  float ix[TS_SIMD_LANES], iy[TS_SIMD_LANES], iz[TS_SIMD_LANES];
  int live[TS_SIMD_LANES];
  int positive[3] = {0, 0, 0}, negative[3] = {0, 0, 0};
  uint stack_node[TS_KD_STACK_SIZE];
  ts_floatv stack_t0[TS_KD_STACK_SIZE], stack_t1[TS_KD_STACK_SIZE];
  ts_floatv o[3], d[3], inv[3], t0, t1;
  KdPacketHits s;
  uint l, node = 0u, sp = 0u, any_live = 0u;

  for (l = 0u; l < TS_SIMD_LANES; ++l) {
    float3 org = rays->org[l], dir = rays->dir[l], id;
    float tmin = rays->tmin[l], tmax = rays->tmax[l];
    found[l] = 0;
    hits[l].tri = TS_KD_NO_TRIANGLE;
    hits[l].t = tmax;
    hits[l].u = 0.0f;
    hits[l].v = 0.0f;
    t0a[l] = tmin;
    t1a[l] = tmax;
    live[l] = tmin <= tmax && kd_clip_to_scene(scene, org, dir, &t0a[l], &t1a[l]);
    if (!live[l]) { /* an empty interval keeps the lane out of every cell */
      org = make_float3(0.0f, 0.0f, 0.0f);
      dir = make_float3(0.0f, 0.0f, 1.0f);
      t0a[l] = TS_INFINITY;
      t1a[l] = -TS_INFINITY;
    }
    any_live |= (uint)live[l];
    tri_rays[l] = triangle_ray_setup(org, dir);
    id = kd_inverse_direction(dir);
    ox[l] = org.x, oy[l] = org.y, oz[l] = org.z;
    dx[l] = dir.x, dy[l] = dir.y, dz[l] = dir.z;
    ix[l] = id.x, iy[l] = id.y, iz[l] = id.z;
    tmina[l] = tmin;
    besta[l] = tmax;
    if (live[l]) {
      positive[0] |= dir.x > 0.0f, positive[1] |= dir.y > 0.0f, positive[2] |= dir.z > 0.0f;
      negative[0] |= dir.x < 0.0f, negative[1] |= dir.y < 0.0f, negative[2] |= dir.z < 0.0f;
    }
  }
  if (!any_live) return;
  if ((positive[0] && negative[0]) || (positive[1] && negative[1]) || (positive[2] && negative[2])) {
    for (l = 0u; l < TS_SIMD_LANES; ++l)
      if (live[l]) found[l] = kd_traverse(scene, rays->org[l], rays->dir[l], rays->tmin[l], rays->tmax[l], any_hit, &hits[l]);
    return;
  }
  {
    int alive[TS_SIMD_LANES];
    for (l = 0u; l < TS_SIMD_LANES; ++l) alive[l] = live[l] ? -1 : 0;
    s.alive = ts_simd_load_int(alive);
  }
  s.rays = triangle_packet_setup(tri_rays);
  s.tmin = ts_simd_load(tmina);
  s.best = ts_simd_load(besta);
  o[0] = ts_simd_load(ox), o[1] = ts_simd_load(oy), o[2] = ts_simd_load(oz);
  d[0] = ts_simd_load(dx), d[1] = ts_simd_load(dy), d[2] = ts_simd_load(dz);
  inv[0] = ts_simd_load(ix), inv[1] = ts_simd_load(iy), inv[2] = ts_simd_load(iz);
  t0 = ts_simd_load(t0a);
  t1 = ts_simd_load(t1a);

  for (;;) {
    uint2 words = ts_load_uint2(scene->kd_nodes, node);
    uint kind = kd_node_kind(words.x);
    while (kind != TS_KD_LEAF) {
      uint refs = kd_inner_ref_count(words.x);
      ts_intv active;
      int descended;
      if (refs != 0u) {
        uint2 slot = ts_load_uint2(scene->kd_nodes, node + 1u);
        ts_intv mask = (t0 <= t1) & s.alive;
        kd_packet_test(scene, &s, slot.x, mask, found, hits);
        if (refs == 2u) kd_packet_test(scene, &s, slot.y, mask, found, hits);
        if (any_hit && !kd_packet_still_looking(&s, found)) return;
        t1 = ts_simd_min(t1, s.best);
      }
      active = (t0 <= t1) & s.alive;
      descended = 0;
      if (ts_simd_any(active)) {
        /* kd_descend per lane; near/far is the packet's common order */
        const ts_floatv split = ts_simd_splat(ts_as_float(words.y));
        const ts_floatv zero = ts_simd_splat(0.0f);
        ts_floatv oa = o[kind], da = d[kind];
        uint below = kd_inner_below_child(node, words.x), above = kd_inner_above_child(words.x);
        int near_is_below = !negative[kind]; /* rays along the plane go below first, as kd_descend */
        uint near = near_is_below ? below : above, far = near_is_below ? above : below;
        /* kd_descend's formula: a lane whose 1/d overflowed meets the plane at +-inf, or at NaN in
         * it, and then needs both children (the negated comparisons); the slack stays finite */
        ts_floatv ts = (split - oa) * inv[kind];
        ts_floatv slack = ts_simd_min(ts_simd_splat(TS_KD_MAX_SLACK), ts_simd_max(ts, -ts) * ts_simd_splat(TS_KD_T_SLACK));
        /* lanes parallel to the plane: one side, or both in it (the packet's order need not be theirs) */
        ts_intv parallel = da == zero;
        ts_intv need_below = oa <= split, need_above = oa >= split;
        ts_intv need_near = ts_simd_select(~(ts + slack < t0), near_is_below ? need_below : need_above, parallel) & active;
        ts_intv need_far = ts_simd_select(~(ts - slack > t1), near_is_below ? need_above : need_below, parallel) & active;
        ts_floatv t1_near = ts_simd_select(ts_simd_min(t1, ts + slack), t1, parallel);
        ts_floatv t0_far = ts_simd_select(ts_simd_max(t0, ts - slack), t0, parallel);
        /* a child left out (an empty leaf) is neither visited nor pushed, as in kd_descend */
        int has_near = near != TS_KD_NO_CHILD && ts_simd_any(need_near);
        int has_far = far != TS_KD_NO_CHILD && ts_simd_any(need_far);
        descended = has_near || has_far;
        if (!has_far) {
          node = near;
          t1 = ts_simd_select(neg_inf, t1_near, need_near);
        } else if (!has_near) {
          node = far;
          t0 = ts_simd_select(pos_inf, t0_far, need_far);
          t1 = ts_simd_select(neg_inf, t1, need_far);
        } else {
          if (sp < TS_KD_STACK_SIZE) {
            stack_node[sp] = far;
            stack_t0[sp] = ts_simd_select(pos_inf, t0_far, need_far);
            stack_t1[sp] = ts_simd_select(neg_inf, t1, need_far);
            ++sp;
          }
          node = near;
          t1 = ts_simd_select(neg_inf, t1_near, need_near);
        }
      }
      if (!descended && !kd_packet_pop(stack_node, stack_t0, stack_t1, &sp, &s, &node, &t0, &t1)) return;
      words = ts_load_uint2(scene->kd_nodes, node);
      kind = kd_node_kind(words.x);
    }
    {
      uint count = (scene_flags(scene) & TS_SCENE_NARROW_LEAF_LISTS) ? kd_narrow_leaf_count(words.x)
                                                                     : kd_leaf_count(words.x), i;
      TS_GLOBAL const uint* tris = kd_leaf_triangles(scene->kd_nodes, scene->kd_leaf_refs, node, words.x, words.y);
      uint first = (scene_flags(scene) & TS_SCENE_NARROW_LEAF_LISTS) ? words.y : 0u;
      ts_intv mask = (t0 <= t1) & s.alive;
      if (ts_simd_any(mask)) {
        for (i = 0u; i < count; ++i)
          kd_packet_test(scene, &s, kd_list_triangle(tris, words.x, first, i), mask, found, hits);
        if (any_hit && !kd_packet_still_looking(&s, found)) return;
      }
    }
    if (!kd_packet_pop(stack_node, stack_t0, stack_t1, &sp, &s, &node, &t0, &t1)) return;
  }
}
#endif

#endif
