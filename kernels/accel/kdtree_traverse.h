/* Front-to-back traversal of the compact kd-tree (kernels/accel/kdtree_layout.h) with a fixed
 * private stack. Triangles referenced by an inner node are tested when the node is visited
 * (Choi et al. 2013); a hit found there may lie beyond the node's cell, which is fine because the
 * closest hit so far clips every later cell interval. The builder limits the depth to 60, so a
 * stack of 64 far children never overflows.
 *
 * Robustness: a computed plane distance (p - o) * (1 / d) is within 4.5 ulp of the exact one (2.5 ulp
 * for OpenCL's division), so every cell interval is widened by TS_KD_T_SLACK relative. A ray
 * through the exact edge or corner where cells meet (e.g. aimed at a mesh vertex lying on split
 * planes) then still visits every cell holding the triangle that the watertight test reports.
 *
 * The stack: by default a private array of TS_KD_STACK_SIZE entries (node, t0, t1), which NVIDIA
 * keeps in per-thread local memory, cached in L1 beside the node and triangle loads. GPU builds can
 * keep the top of the stack in __local memory, chosen with a build option (TESSERA_CL_OPTIONS):
 *   -D TS_KD_LOCAL_STACK=N  the top N (power of two, 1-32) entries in the work item's slice of a
 *                           __local array (-D TS_KD_LOCAL_STACK_THREADS=T work items a group, 64 by
 *                           default: N x 12 x T bytes; further work items keep the private stack)
 * Entries below the short stack spill to the private array in order and come back from it in
 * order, so the variant visits the nodes the plain stack visits, in the same order, at any depth:
 * the hits are bit-identical (tests/test_traversal_variants.cpp). (A short stack in registers lost
 * on the H100 at every depth from 1 to 4: the registers it holds live cost more rays in flight than
 * its loads saved, and phone GPUs have fewer registers still.) Entries keep t0: a far child's
 * t0 is its split's distance less the slack, which nothing else holds once it is pushed, and any
 * other t0 makes the ray visit other cells, which can change which of two equally near hits it
 * reports.
 *
 * Equally near hits: among triangles hit at the very same t the lowest triangle index wins
 * (kd_hit_wins_tie). The closest hit is then a function of the ray and the triangles alone, not of
 * the order a tree visits them in, so two trees over the same positions (the fast and the compact
 * profile, worker/render/scene_memory.h) report the same hit for every ray.
 *
 *   kd_intersect_closest(scene, origin, dir, tmin, tmax, &hit)  closest hit in (tmin, tmax)
 *   kd_intersect_any(scene, origin, dir, tmin, tmax)            any hit in (tmin, tmax), for shadows
 *
 * dir need not be normalized; t is in units of dir. Components of dir may be 0 (or -0). */
#ifndef TESSERA_KERNELS_ACCEL_KDTREE_TRAVERSE_H
#define TESSERA_KERNELS_ACCEL_KDTREE_TRAVERSE_H
#include "kernels/accel/kdtree_layout.h"
#include "kernels/geom/triangle.h"
#include "kernels/scene/scene_view.h"

/* CPUs test the triangles of a leaf TS_SIMD_LANES at a time with SIMD instructions; GPUs one at a
 * time, where one lane per ray already fills the SIMD width. The host build and OpenCL CPU devices
 * (built with -D TS_DEVICE_CPU, see common/cl/program.cpp) take the batched path. */
#if !defined(TS_DEVICE_OPENCL) || defined(TS_DEVICE_CPU)
#define TS_KD_CPU 1
#include "kernels/scene/scene_gather.h"
#endif

#ifndef TS_KD_STACK_SIZE /* a smaller one drops far children and loses hits: only for tests */
#define TS_KD_STACK_SIZE 64
#endif
#define TS_KD_T_SLACK 4.0e-7f /* about 7 ulp */
#define TS_KD_MAX_SLACK 3.0e38f /* beyond any finite |ts| * TS_KD_T_SLACK */

/* Any-hit rays visit the far child of a split first (from the end of the segment, a shadow ray's
 * light, backwards; -D TS_KD_SHADOW_FAR_FIRST=0 turns it off). Any order gives an any-hit ray the same
 * answer: with no hit the closest-hit bound never shrinks, so the same cells and triangles are tested
 * in any order. On the H100 it traced 15-17 % more shadow rays on Crytek Sponza and 4-5 % more on
 * Dabrovic Sponza, and the path tracer's kernels (their light samples) took 9-10 % less time. Once,
 * with a longer inner step, it had cost Dabrovic Sponza 4-5 %. */
#ifndef TS_KD_SHADOW_FAR_FIRST
#define TS_KD_SHADOW_FAR_FIRST 1
#endif

/* Adds n to a count of traversal events (node, inner, leaf, triangle, inner_refs, push, pop) for `tessera-bench
 * rays --stats`, which defines it before including this header in a host build; nothing elsewhere. */
#ifndef TS_KD_COUNT
#define TS_KD_COUNT(event, n) ((void)0)
#endif

typedef struct Hit {
  uint tri; /* TS_KD_NO_TRIANGLE when nothing was hit */
  float t;
  float u, v; /* barycentrics of vertices 1 and 2, see kernels/geom/triangle.h */
#ifdef TS_SCENE_INSTANCE_FIELDS
  uint inst; /* an instanced scene's hit: the instance's slot in the top level (kernels/accel/scene_trace.h) */
#endif
} Hit;

/* Clips [*t0, *t1] to one slab of a box; a ray parallel to the slab keeps its interval when its
 * origin lies inside the slab, boundary included (avoids 0 * inf = NaN). */
TS_FN int kd_clip_slab(float o, float d, float lo, float hi, float* t0, float* t1) {
  if (d == 0.0f) return o >= lo && o <= hi;
  float inv = 1.0f / d;
  float ta = (lo - o) * inv, tb = (hi - o) * inv;
  float tn = ts_fmin(ta, tb), tf = ts_fmax(ta, tb);
  *t0 = ts_fmax(*t0, tn - ts_fabs(tn) * TS_KD_T_SLACK);
  *t1 = ts_fmin(*t1, tf + ts_fabs(tf) * TS_KD_T_SLACK);
  return 1;
}

/* The ray's segment inside the scene bounds, intersected with [*t0, *t1]; 0 when empty. */
TS_FN int kd_clip_to_scene(const SceneView* scene, float3 org, float3 dir, float* t0, float* t1) {
  if (!kd_clip_slab(org.x, dir.x, scene->bounds_min_x, scene->bounds_max_x, t0, t1)) return 0;
  if (!kd_clip_slab(org.y, dir.y, scene->bounds_min_y, scene->bounds_max_y, t0, t1)) return 0;
  if (!kd_clip_slab(org.z, dir.z, scene->bounds_min_z, scene->bounds_max_z, t0, t1)) return 0;
  return *t0 <= *t1;
}

/* 1 / dir per component, +infinity where dir is 0 or -0: a ray parallel to a split plane then
 * meets it at +-infinity off the plane and at NaN (0 * inf) in it, which kd_descend reads as "one
 * side" and "both sides" with no branch of its own. */
TS_FN float3 kd_inverse_direction(float3 dir) {
  return make_float3(dir.x != 0.0f ? 1.0f / dir.x : TS_INFINITY, dir.y != 0.0f ? 1.0f / dir.y : TS_INFINITY,
                     dir.z != 0.0f ? 1.0f / dir.z : TS_INFINITY);
}

/* Whether triangle tri, hit at the same t as the closest hit so far, replaces it: the lower index
 * wins (no hit so far: t equals the segment's end, which is outside it). */
TS_FN int kd_hit_wins_tie(const Hit* hit, uint tri) { return hit->tri != TS_KD_NO_TRIANGLE && tri < hit->tri; }

/* Tests one triangle against the ray, shrinking *best on a hit. */
TS_FN int kd_test_triangle(const SceneView* scene, const TriangleRay* ray, uint tri, float tmin, float* best,
                           Hit* hit) {
  float3 p0, p1, p2;
  float t, u, v;
  TS_KD_COUNT(triangle, 1u);
  scene_triangle_vertices(scene, tri, &p0, &p1, &p2);
  if (!triangle_intersect_tie(ray, p0, p1, p2, tmin, *best, kd_hit_wins_tie(hit, tri), &t, &u, &v)) return 0;
  *best = t;
  hit->tri = tri;
  hit->t = t;
  hit->u = u;
  hit->v = v;
  return 1;
}

#ifdef TS_KD_CPU
/* Tests refs[0, n), 1 <= n <= TS_SIMD_LANES, at once; the closest hit wins and, among equal t, the
 * lowest triangle index: exactly what testing them one by one with kd_test_triangle gives. */
/* Tests triangles [start, start + n) of the list at refs (word0, first: kd_list_triangle's), 1 <= n <= TS_SIMD_LANES. */
TS_FN int kd_test_triangles_simd(const SceneView* scene, const TriangleRay* ray, TS_GLOBAL const uint* refs, uint word0,
                                 uint first, uint start, uint n, float tmin, float* best, Hit* hit) {
  TriangleBatch batch;
  uint tris[TS_SIMD_LANES];
  int ok[TS_SIMD_LANES];
  float t[TS_SIMD_LANES], u[TS_SIMD_LANES], v[TS_SIMD_LANES];
  ts_floatv tv, uv, vv;
  uint i;
  int found = 0;
  TS_KD_COUNT(triangle, n);
  /* lanes from n on repeat the first triangle so their arithmetic stays finite (ignored below) */
  for (i = 0u; i < TS_SIMD_LANES; ++i) tris[i] = kd_list_triangle(refs, word0, first, start + (i < n ? i : 0u));
  scene_gather_triangles(scene, tris, &batch);
  ts_simd_store_int(triangle_intersect_simd(ray, &batch, tmin, *best, &tv, &uv, &vv), ok);
  ts_simd_store(tv, t);
  ts_simd_store(uv, u);
  ts_simd_store(vv, v);
  for (i = 0u; i < n; ++i)
    if (ok[i] && (t[i] < *best || (t[i] == *best && kd_hit_wins_tie(hit, tris[i])))) {
      *best = t[i];
      hit->tri = tris[i];
      hit->t = t[i];
      hit->u = u[i];
      hit->v = v[i];
      found = 1;
    }
  return found;
}
#endif

/* The traversal stack of far children: node and cell interval, its top entries in __local memory
 * where TS_KD_LOCAL_STACK says so (see the top of this file). */
#ifndef TS_KD_LOCAL_STACK_ON
#undef TS_KD_LOCAL_STACK
#endif
#if defined(TS_KD_LOCAL_STACK) && \
    (TS_KD_LOCAL_STACK < 1 || TS_KD_LOCAL_STACK > 32 || (TS_KD_LOCAL_STACK & (TS_KD_LOCAL_STACK - 1)) != 0)
#error "TS_KD_LOCAL_STACK must be a power of two from 1 to 32"
#endif

typedef struct KdStack {
  uint node[TS_KD_STACK_SIZE];
  float t0[TS_KD_STACK_SIZE];
  float t1[TS_KD_STACK_SIZE];
#ifdef TS_KD_LOCAL_STACK
  uint spilled; /* entries [0, spilled) are in the private arrays, [spilled, sp) in the short stack */
  __local uint* slice; /* entry e, field f (node, t0, t1) at slice[(f * N + e) * TS_KD_LOCAL_STACK_THREADS] */
  uint capacity;       /* TS_KD_LOCAL_STACK, or 0 for a work item beyond the array's threads */
#endif
} KdStack;

TS_FN void kd_stack_init(KdStack* s, const SceneView* scene) {
#ifdef TS_KD_LOCAL_STACK
  s->spilled = 0u;
  s->slice = scene->kd_local_stack;
  s->capacity = scene->kd_local_stack ? TS_KD_LOCAL_STACK : 0u;
#else
  (void)scene;
#endif
}

TS_FN void kd_spill(KdStack* s, uint i, uint node, float t0, float t1) {
  s->node[i] = node;
  s->t0[i] = t0;
  s->t1[i] = t1;
}

#ifdef TS_KD_LOCAL_STACK
#define TS_KD_LOCAL_AT(s, field, entry) \
  (s)->slice[((field) * TS_KD_LOCAL_STACK + ((entry) & (TS_KD_LOCAL_STACK - 1u))) * TS_KD_LOCAL_STACK_THREADS]
#endif

TS_FN void kd_push(KdStack* s, uint* sp, uint node, float t0, float t1) {
  if (*sp >= TS_KD_STACK_SIZE) return;
  TS_KD_COUNT(push, 1u);
#ifdef TS_KD_LOCAL_STACK
  /* a ring of the top `capacity` entries: when full, the oldest (slot of entry `spilled`, the very
   * slot the new entry takes) moves to the private array */
  if (*sp - s->spilled == s->capacity) {
    if (s->capacity)
      kd_spill(s, s->spilled, TS_KD_LOCAL_AT(s, 0u, s->spilled), ts_as_float(TS_KD_LOCAL_AT(s, 1u, s->spilled)),
               ts_as_float(TS_KD_LOCAL_AT(s, 2u, s->spilled)));
    ++s->spilled;
  }
  if (s->spilled > *sp) {
    kd_spill(s, *sp, node, t0, t1); /* no slice: private only */
  } else {
    TS_KD_LOCAL_AT(s, 0u, *sp) = node;
    TS_KD_LOCAL_AT(s, 1u, *sp) = ts_as_uint(t0);
    TS_KD_LOCAL_AT(s, 2u, *sp) = ts_as_uint(t1);
  }
#else
  kd_spill(s, *sp, node, t0, t1);
#endif
  ++*sp;
}

/* Removes the top entry; *sp > 0. */
TS_FN void kd_take(KdStack* s, uint* sp, uint* node, float* t0, float* t1) {
  --*sp;
#ifdef TS_KD_LOCAL_STACK
  if (*sp < s->spilled) {
    s->spilled = *sp;
#endif
    *node = s->node[*sp];
    *t0 = s->t0[*sp];
    *t1 = s->t1[*sp];
#ifdef TS_KD_LOCAL_STACK
  } else {
    *node = TS_KD_LOCAL_AT(s, 0u, *sp);
    *t0 = ts_as_float(TS_KD_LOCAL_AT(s, 1u, *sp));
    *t1 = ts_as_float(TS_KD_LOCAL_AT(s, 2u, *sp));
  }
#endif
}

/* Takes the next far child off the stack. Far children come off roughly front to back (the slack
 * lets neighbours overlap a little), so one that starts beyond the closest hit is skipped rather
 * than ending the traversal. Returns 0 when the stack holds nothing left to visit. */
TS_FN int kd_pop(KdStack* s, uint* sp, float best, uint* node, float* t0, float* t1) {
  while (*sp > 0u) {
    kd_take(s, sp, node, t0, t1);
    TS_KD_COUNT(pop, 1u);
    *t1 = ts_fmin(*t1, best);
    if (*t0 <= *t1) return 1;
  }
  return 0;
}

/* One step down from inner node `node` (first word word0, split word1, its child below `below`)
 * whose cell interval [*t0, *t1] is not empty: sets *node to the near child, pushing the far one
 * when the ray reaches both, and clips the interval to the near child. A child left out (an empty leaf, TS_KD_NO_CHILD)
 * is neither pushed nor visited: when the near one is, the far one is visited at once with the
 * interval it would have come off the stack with (t1 <= the closest hit already, and its t0 <= t1).
 * far_first swaps the two (the far child visited, the near one pushed; TS_KD_SHADOW_FAR_FIRST).
 * Returns 0 when the ray reaches no child with anything in it; the caller pops. */
TS_FN int kd_descend(KdStack* stack, uint* sp, float3 org, float3 inv_dir, uint word0, uint word1, uint below,
                     int far_first, uint* node, float* t0, float* t1) {
  uint kind = kd_node_kind(word0);
  float split = ts_as_float(word1);
  /* 1/d stands in for d (kd_inverse_direction: d's sign, +inf where d is 0), so the loop keeps no
   * direction live (H100: 2-4 % more rays than reading d) */
  float o = v3_get(org, kind), d = v3_get(inv_dir, kind);
  uint above = kd_inner_above_child(word0);
  uint near_child, far_child = TS_KD_NO_CHILD;
  float far_t0 = *t0, near_t1 = *t1;
  /* Where the ray meets the plane. A ray parallel to it (d = +inf) meets it at +inf on the side
   * below and at -inf above, so it stays on its side; in the plane (or at a NaN split) ts is NaN,
   * every comparison below fails and it visits both, below first. The slack stays finite so that
   * +-inf keeps its sign through ts -+ slack. One formula for all rays: the H100 traced 2-4 % more
   * rays than with the parallel case on a branch of its own (and the same hits). */
  float ts = (split - o) * d;
  float slack = ts_fmin(ts_fabs(ts) * TS_KD_T_SLACK, TS_KD_MAX_SLACK);
  uint first = d > 0.0f ? below : above; /* side the ray is on before ts */
  uint second = d > 0.0f ? above : below;
  TS_KD_COUNT(inner, 1u);
  if (ts - slack > *t1) {
    near_child = first;
  } else if (ts + slack < *t0) {
    near_child = second;
  } else {
    near_child = first;
    far_child = second;
    far_t0 = ts_fmax(*t0, ts - slack);
    near_t1 = ts_fmin(*t1, ts + slack);
  }
  if (far_first && far_child != TS_KD_NO_CHILD) {
    if (near_child != TS_KD_NO_CHILD) kd_push(stack, sp, near_child, *t0, near_t1);
    *node = far_child;
    *t0 = far_t0;
    return 1;
  }
  if (near_child == TS_KD_NO_CHILD) {
    *node = far_child;
    *t0 = far_t0;
    return far_child != TS_KD_NO_CHILD;
  }
  if (far_child != TS_KD_NO_CHILD) kd_push(stack, sp, far_child, far_t0, *t1);
  *node = near_child;
  *t1 = near_t1;
  return 1;
}

/* Whether the traversal walks on past a node without testing triangles: an inner node holding
 * none, and in the blocked layouts an empty leaf too. The default layout has no empty leaves below
 * the root (an empty root passes through the triangle tests with nothing to test), and the shorter
 * test alone gave the H100 2 % more primary and 5 % more diffuse rays. */
TS_FN int kd_walks_past(uint kind, uint word0) {
#if TS_KD_LAYOUT_BLOCKED
  return kind != TS_KD_LEAF ? kd_inner_ref_count(word0) == 0u : kd_leaf_count(word0) == 0u;
#else
  return kind != TS_KD_LEAF && kd_inner_ref_count(word0) == 0u;
#endif
}

/* Shared traversal: any_hit = 1 returns at the first hit in (tmin, tmax). The triangles of a node
 * (a leaf's, or the one or two an inner node holds) are tested at one place in the loop, so the
 * decode and intersection code exists once in the compiled kernel. */
TS_FN int kd_traverse(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax, int any_hit,
                      Hit* hit) {
  KdStack stack;
  KdNodeCache node_cache;
  const int far_first = any_hit && TS_KD_SHADOW_FAR_FIRST;
  uint sp = 0u;
  TS_GLOBAL const uint* nodes = scene->kd_nodes;
  TS_GLOBAL const uint* leaf_refs = scene->kd_leaf_refs;
  TriangleRay ray;
  float3 inv_dir;
  float best = tmax; /* triangle hits count only in (tmin, best) */
  float t0 = tmin, t1 = tmax;
  uint node = 0u;
  int found = 0;
  hit->tri = TS_KD_NO_TRIANGLE;
  hit->t = tmax;
  hit->u = 0.0f;
  hit->v = 0.0f;
  if (!(tmin <= tmax) || !kd_clip_to_scene(scene, org, dir, &t0, &t1)) return 0;
  ray = triangle_ray_setup(org, dir);
  inv_dir = kd_inverse_direction(dir);
  kd_stack_init(&stack, scene);
  kd_node_cache_init(&node_cache);

  for (;;) {
    uint2 words = kd_load_node(&node_cache, nodes, node); /* one 8-byte load, or its block */
    TS_KD_COUNT(node, 1u);
    uint kind = kd_node_kind(words.x);
    /* Inner nodes without triangles first, until this ray reaches a node with some: the lanes of a
     * SIMD group then enter their triangle tests together instead of taking turns (Aila and Laine
     * 2009, "while-while"). */
    while (kd_walks_past(kind, words.x)) {
      /* no t0 <= t1 test here: every cell this loop reaches has a non-empty interval (the scene clip,
       * kd_pop and kd_descend only hand on such), and the test cost the H100 1-2.5 % of its rays */
      if (!(kind != TS_KD_LEAF &&
            kd_descend(&stack, &sp, org, inv_dir, words.x, words.y, kd_plain_below_child(node, words.x), far_first,
                       &node, &t0, &t1)) &&
          !kd_pop(&stack, &sp, best, &node, &t0, &t1))
        return found;
      words = kd_load_node(&node_cache, nodes, node);
      kind = kd_node_kind(words.x);
      TS_KD_COUNT(node, 1u);
    }
    {
      /* refs[0, count): a leaf's triangles (its one index is word1 itself), or the inner node's
       * slot that follows it */
      int leaf = kind == TS_KD_LEAF;
      uint count = !leaf ? kd_inner_ref_count(words.x)
                         : ((scene_flags(scene) & TS_SCENE_NARROW_LEAF_LISTS) ? kd_narrow_leaf_count(words.x)
                                                                              : kd_leaf_count(words.x));
      TS_GLOBAL const uint* refs = !leaf ? nodes + 2u * node + 2u : kd_leaf_triangles(nodes, leaf_refs, node, words.x, words.y);
      /* a leaf's word1 says whether its list is narrow; only scenes with narrow lists look (nested,
       * not &&: with the flags compiled in, a constant operand of && is a warning) */
      uint first = 0u;
      if (scene_flags(scene) & TS_SCENE_NARROW_LEAF_LISTS) {
        if (leaf) first = words.y;
      }
      uint i = 0u;
      if (leaf) TS_KD_COUNT(leaf, 1u); else TS_KD_COUNT(inner_refs, count);
#ifdef TS_KD_CPU
      if (leaf && count > 1u)
        for (; i < count; i += TS_SIMD_LANES) {
          uint n = count - i < TS_SIMD_LANES ? count - i : TS_SIMD_LANES;
          found |= kd_test_triangles_simd(scene, &ray, refs, words.x, first, i, n, tmin, &best, hit);
          if (any_hit && found) return 1;
        }
#endif
      /* read in order from i = 0 (the CPU's batches above take a leaf's triangles whole) */
      KdList list = kd_list_begin(refs, words.x, first);
      for (; i < count; ++i) {
        found |= kd_test_triangle(scene, &ray, kd_list_next(&list, i), tmin, &best, hit);
        if (any_hit && found) return 1;
      }
      if (leaf) {
        if (!kd_pop(&stack, &sp, best, &node, &t0, &t1)) break;
      } else {
        /* the node's own triangles may have shortened the ray; then its split as usual */
        t1 = ts_fmin(t1, best);
        if (!(t0 <= t1 && kd_descend(&stack, &sp, org, inv_dir, words.x, words.y, kd_inner_below_child(node, words.x),
                                     far_first, &node, &t0, &t1)) &&
            !kd_pop(&stack, &sp, best, &node, &t0, &t1))
          break;
      }
    }
  }
  return found;
}

TS_FN int kd_intersect_closest(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax, Hit* hit) {
  return kd_traverse(scene, org, dir, tmin, tmax, 0, hit);
}

TS_FN int kd_intersect_any(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax) {
  Hit hit;
  return kd_traverse(scene, org, dir, tmin, tmax, 1, &hit);
}

#endif
