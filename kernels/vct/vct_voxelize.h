/* Voxelization of the scene's triangles into the level-0 grid (papers/001 §4.4), as work items the
 * OpenCL kernels and the host backend both run.
 *
 * Each triangle is projected along the dominant axis of its normal (as the thesis's geometry shader
 * does); a work item of (triangle, lane) visits every `lanes`-th column of the projected bounding box,
 * and each voxel of the column that the triangle's plane can reach is tested with the conservative
 * triangle/box overlap test of Schwarz & Seidel 2010 (plane + three projected edge tests), so thin and
 * sliver triangles leave no holes. Texels whose alpha is below 1/2 (cut-out foliage) make no voxel.
 *
 * Two passes run the very same fragments: TS_VCT_PASS_MARK sets bits in the dense per-brick masks
 * (the grid's structure), TS_VCT_PASS_ACCUMULATE adds each fragment's albedo, normal and plane offset
 * into integer accumulators of its voxel with atomics -- integer sums, so the result does not depend
 * on the order the fragments arrive in.
 *
 * An instanced scene (docs/instances.md) is voxelized in world space: each work item is a triangle of an
 * instance (a span names an instance's slot in the top level and its object's triangles), carried to the
 * world by the instance's transform. A region (a box of level-0 voxels) limits a pass to the voxels
 * inside it: every voxel there gets the very fragments a pass over the whole grid gives it, so an update
 * of a region (kernels/device/cpu/vct_update_cpu.cpp) equals voxelizing everything again.
 *
 * Filled (solid) voxelization: for each axis, rays along voxel-centre lines of the grid walk the kd-tree
 * hit by hit; the stretch before a hit on a triangle's back face (the ray leaving an object) is inside.
 * A voxel is interior when at least two of the three axes say so. Needs consistently wound (outward
 * facing) closed objects; a floor may close an object from below, as in the Cornell box. */
#ifndef TESSERA_KERNELS_VCT_VCT_VOXELIZE_H
#define TESSERA_KERNELS_VCT_VCT_VOXELIZE_H
#include "kernels/accel/scene_trace.h"
#include "kernels/shading/surface.h"
#include "kernels/vct/vct_common.h"

#define TS_VCT_PASS_MARK 0u
#define TS_VCT_PASS_ACCUMULATE 1u
#define TS_VCT_ACCUM_WORDS 9u /* count, albedo rgb, normal xyz, plane offset, emissive kind */
#define TS_VCT_ALBEDO_SCALE 1023.0f
#define TS_VCT_NORMAL_SCALE 1023.0f
#define TS_VCT_OFFSET_SCALE 1000.0f

TS_FN float3 vct_to_grid(const VctGridParams* p, float3 w) {
  return make_float3((w.x - p->origin_x) * p->inv_voxel_size, (w.y - p->origin_y) * p->inv_voxel_size,
                     (w.z - p->origin_z) * p->inv_voxel_size);
}

TS_FN int vct_clampi(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* A box of level-0 voxels, [lo, hi) on each axis; the whole grid for a full pass. */
typedef struct VctRegion {
  int lo_x, lo_y, lo_z, hi_x, hi_y, hi_z;
} VctRegion;

TS_FN VctRegion vct_whole_grid(const VctGridParams* p) {
  VctRegion r;
  r.lo_x = r.lo_y = r.lo_z = 0;
  r.hi_x = r.hi_y = r.hi_z = (int)p->resolution;
  return r;
}
TS_FN int vct_region_lo(const VctRegion* r, uint axis) { return axis == 0u ? r->lo_x : (axis == 1u ? r->lo_y : r->lo_z); }
TS_FN int vct_region_hi(const VctRegion* r, uint axis) { return axis == 0u ? r->hi_x : (axis == 1u ? r->hi_y : r->hi_z); }

/* An instanced scene's voxelization work: span (slot, first triangle, triangles, first work item) covers
 * the triangles of the object that the instance at top-level slot `slot` places. */
#define TS_VCT_SINGLE_LEVEL 0xFFFFFFFFu /* the slot of a single-level scene's triangles: no transform */

/* The triangle and instance slot of work item `item`: spans sorted by first work item (binary search);
 * without spans, triangle `item` of a single-level scene. */
TS_FN uint vct_work_triangle(TS_GLOBAL const uint4* spans, uint span_count, uint item, uint* slot) {
  uint lo = 0u, hi = span_count;
  uint4 s;
  if (span_count == 0u) {
    *slot = TS_VCT_SINGLE_LEVEL;
    return item;
  }
  while (hi - lo > 1u) {
    uint mid = (lo + hi) >> 1;
    if (spans[mid].w <= item) lo = mid;
    else hi = mid;
  }
  s = spans[lo];
  *slot = s.x;
  return s.y + (item - s.w);
}

/* A triangle's corners in world space: an instance's carried there by its transform. */
TS_FN void vct_world_triangle(const SceneView* scene, uint tri, uint slot, float3* w0, float3* w1, float3* w2) {
  scene_triangle_vertices(scene, tri, w0, w1, w2);
  if (slot != TS_VCT_SINGLE_LEVEL) scene_instance_to_world(scene, slot, w0, w1, w2);
}

/* Conservative triangle / unit-box test (Schwarz & Seidel 2010, "Fast parallel surface and solid
 * voxelization on GPUs", §3.1), for the box [b, b + 1]^3 in grid units. */
typedef struct VctTriTest {
  float3 v0, v1, v2, n;
  float d1, d2;
  float exy[6], dxy[3]; /* edge normals (2 floats each) and offsets, xy projection */
  float eyz[6], dyz[3];
  float ezx[6], dzx[3];
} VctTriTest;

TS_FN void vct_edge_setup(float ea, float eb, float va, float vb, float sgn, float* en, float* d) {
  float na = -eb * sgn, nb = ea * sgn;
  en[0] = na;
  en[1] = nb;
  *d = -(na * va + nb * vb) + ts_fmax(0.0f, na) + ts_fmax(0.0f, nb);
}

TS_FN VctTriTest vct_tri_test_setup(float3 v0, float3 v1, float3 v2) {
  VctTriTest t;
  float3 e0 = v3_sub(v1, v0), e1 = v3_sub(v2, v1), e2 = v3_sub(v0, v2);
  float3 c;
  float sz, sx, sy;
  t.v0 = v0;
  t.v1 = v1;
  t.v2 = v2;
  t.n = v3_cross(e0, v3_sub(v2, v0));
  c = make_float3(t.n.x > 0.0f ? 1.0f : 0.0f, t.n.y > 0.0f ? 1.0f : 0.0f, t.n.z > 0.0f ? 1.0f : 0.0f);
  t.d1 = v3_dot(t.n, v3_sub(c, v0));
  t.d2 = v3_dot(t.n, v3_sub(v3_sub(make_float3(1.0f, 1.0f, 1.0f), c), v0));
  sz = t.n.z < 0.0f ? -1.0f : 1.0f;
  sx = t.n.x < 0.0f ? -1.0f : 1.0f;
  sy = t.n.y < 0.0f ? -1.0f : 1.0f;
  vct_edge_setup(e0.x, e0.y, v0.x, v0.y, sz, t.exy + 0, t.dxy + 0);
  vct_edge_setup(e1.x, e1.y, v1.x, v1.y, sz, t.exy + 2, t.dxy + 1);
  vct_edge_setup(e2.x, e2.y, v2.x, v2.y, sz, t.exy + 4, t.dxy + 2);
  vct_edge_setup(e0.y, e0.z, v0.y, v0.z, sx, t.eyz + 0, t.dyz + 0);
  vct_edge_setup(e1.y, e1.z, v1.y, v1.z, sx, t.eyz + 2, t.dyz + 1);
  vct_edge_setup(e2.y, e2.z, v2.y, v2.z, sx, t.eyz + 4, t.dyz + 2);
  vct_edge_setup(e0.z, e0.x, v0.z, v0.x, sy, t.ezx + 0, t.dzx + 0);
  vct_edge_setup(e1.z, e1.x, v1.z, v1.x, sy, t.ezx + 2, t.dzx + 1);
  vct_edge_setup(e2.z, e2.x, v2.z, v2.x, sy, t.ezx + 4, t.dzx + 2);
  return t;
}

TS_FN int vct_tri_box_overlap(const VctTriTest* t, float bx, float by, float bz) {
  float np = t->n.x * bx + t->n.y * by + t->n.z * bz;
  int i;
  if ((np + t->d1) * (np + t->d2) > 0.0f) return 0;
  for (i = 0; i < 3; ++i) {
    if (t->exy[2 * i] * bx + t->exy[2 * i + 1] * by + t->dxy[i] < 0.0f) return 0;
    if (t->eyz[2 * i] * by + t->eyz[2 * i + 1] * bz + t->dyz[i] < 0.0f) return 0;
    if (t->ezx[2 * i] * bz + t->ezx[2 * i + 1] * bx + t->dzx[i] < 0.0f) return 0;
  }
  return 1;
}

/* Albedo (rgb, linear) and alpha of a triangle at the point of its plane nearest to grid point c. */
TS_FN float4 vct_fragment_albedo(const SceneView* scene, const ShadingContext* ctx, uint tri, uint material,
                                 const VctTriTest* t, float3 c) {
  Surface s;
  float nn = v3_dot(t->n, t->n);
  float3 p = v3_sub(c, v3_scale(t->n, v3_dot(t->n, v3_sub(c, t->v0)) / nn));
  float3 ab = v3_sub(t->v1, t->v0), ac = v3_sub(t->v2, t->v0), ap = v3_sub(p, t->v0);
  float bu = ts_fmax(0.0f, v3_dot(t->n, v3_cross(ap, ac)) / nn);
  float bv = ts_fmax(0.0f, v3_dot(t->n, v3_cross(ab, ap)) / nn);
  if (bu + bv > 1.0f) {
    float k = 1.0f / (bu + bv);
    bu *= k;
    bv *= k;
  }
  s.p = p;
  s.ng = t->n;
  s.ns = t->n;
  s.front = 1;
  s.material = material;
  s.uv = make_float2(0.0f, 0.0f);
  s.uv_per_area = 0.0f;
  s.uv_along = make_float2(0.0f, 0.0f);
  s.cos_view = 1.0f;
  if (scene_flags(scene) & TS_SCENE_HAS_TEXCOORDS) {
    uint4 idx = scene_triangle_indices(scene, tri);
    float q = ctx->materials[material].texcoord_scale;
    float2 a = scene_vertex_texcoord(scene, idx.x, q), b = scene_vertex_texcoord(scene, idx.y, q);
    float2 d = scene_vertex_texcoord(scene, idx.z, q);
    float w = 1.0f - bu - bv;
    s.uv = make_float2(a.x * w + b.x * bu + d.x * bv, a.y * w + b.y * bu + d.y * bv);
  }
  return surface_albedo(ctx, &s);
}

/* One (triangle, lane) work item of a voxelization pass over the voxels of `region`; slot: the instance
 * placing the triangle (TS_VCT_SINGLE_LEVEL: none). */
TS_FN void vct_voxelize_lane(const SceneView* scene, const ShadingContext* ctx, const VctGridParams* p,
                             const VctRegion* region, uint tri, uint slot, uint lane, uint lanes, uint pass,
                             TS_GLOBAL uint* dense_masks, TS_GLOBAL const uint* map, TS_GLOBAL const uint4* bricks,
                             TS_GLOBAL uint* accum) {
  float3 w0, w1, w2, v0, v1, v2, lo, hi, an;
  VctTriTest t;
  uint material, kind, axis, ua, va, nu, nv, k, cols, check_alpha;
  int n = (int)p->resolution, u0, v0i, u_end, v_end, w_lo, w_hi, r_lo, r_hi;
  float nw, nu_c, nv_c, plane_d;
  MaterialGpu m;
  if (tri >= scene->triangle_count) return;
  vct_world_triangle(scene, tri, slot, &w0, &w1, &w2);
  v0 = vct_to_grid(p, w0);
  v1 = vct_to_grid(p, w1);
  v2 = vct_to_grid(p, w2);
  t = vct_tri_test_setup(v0, v1, v2);
  an = make_float3(ts_fabs(t.n.x), ts_fabs(t.n.y), ts_fabs(t.n.z));
  if (!(an.x + an.y + an.z > 0.0f)) return; /* degenerate */
  axis = (an.x >= an.y && an.x >= an.z) ? 0u : (an.y >= an.z ? 1u : 2u);
  ua = axis == 0u ? 1u : 0u;
  va = axis == 2u ? 1u : 2u;
  lo = v3_min(v3_min(v0, v1), v2);
  hi = v3_max(v3_max(v0, v1), v2);
  if (hi.x < 0.0f || hi.y < 0.0f || hi.z < 0.0f || lo.x > (float)n || lo.y > (float)n || lo.z > (float)n) return;
  /* the columns and depths of the whole grid's pass, then those inside the region */
  u0 = vct_clampi((int)ts_floor(v3_get(lo, ua)), 0, n - 1);
  v0i = vct_clampi((int)ts_floor(v3_get(lo, va)), 0, n - 1);
  u_end = vct_clampi((int)ts_floor(v3_get(hi, ua)), 0, n - 1);
  v_end = vct_clampi((int)ts_floor(v3_get(hi, va)), 0, n - 1);
  w_lo = vct_clampi((int)ts_floor(v3_get(lo, axis)), 0, n - 1);
  w_hi = vct_clampi((int)ts_floor(v3_get(hi, axis)), 0, n - 1);
  u0 = u0 > vct_region_lo(region, ua) ? u0 : vct_region_lo(region, ua);
  v0i = v0i > vct_region_lo(region, va) ? v0i : vct_region_lo(region, va);
  u_end = u_end < vct_region_hi(region, ua) - 1 ? u_end : vct_region_hi(region, ua) - 1;
  v_end = v_end < vct_region_hi(region, va) - 1 ? v_end : vct_region_hi(region, va) - 1;
  r_lo = vct_region_lo(region, axis);
  r_hi = vct_region_hi(region, axis) - 1;
  if (u_end < u0 || v_end < v0i || r_hi < r_lo) return;
  nu = (uint)(u_end - u0 + 1);
  nv = (uint)(v_end - v0i + 1);
  cols = nu * nv;
  if (lane >= cols) return;
  material = material_of_triangle(ctx->material_runs, ctx->material_run_count, tri);
  m = ctx->materials[material];
  kind = m.type == TS_MATERIAL_EMISSIVE ? (material + 1u < TS_VCT_KIND_MAX_EMISSIVE ? material + 1u : TS_VCT_KIND_MAX_EMISSIVE)
                                        : TS_VCT_KIND_SURFACE;
  check_alpha = m.texture >= 0 && (ctx->textures[m.texture].flags & TS_TEXTURE_HAS_ALPHA) ? 1u : 0u;
  nw = v3_get(t.n, axis);
  nu_c = v3_get(t.n, ua);
  nv_c = v3_get(t.n, va);
  plane_d = v3_dot(t.n, v0);
  for (k = lane; k < cols; k += lanes) {
    int cu = u0 + (int)(k % nu), cv = v0i + (int)(k / nu), cw, wa, wb;
    /* the plane's reach over the column's square, from its four corners */
    float fa = (plane_d - nu_c * (float)cu - nv_c * (float)cv) / nw;
    float fb = (plane_d - nu_c * (float)(cu + 1) - nv_c * (float)cv) / nw;
    float fc = (plane_d - nu_c * (float)cu - nv_c * (float)(cv + 1)) / nw;
    float fd = (plane_d - nu_c * (float)(cu + 1) - nv_c * (float)(cv + 1)) / nw;
    float fmin_ = ts_fmin(ts_fmin(fa, fb), ts_fmin(fc, fd)), fmax_ = ts_fmax(ts_fmax(fa, fb), ts_fmax(fc, fd));
    wa = vct_clampi((int)ts_floor(fmin_), w_lo, w_hi);
    wb = vct_clampi((int)ts_floor(fmax_), w_lo, w_hi);
    wa = wa > r_lo ? wa : r_lo;
    wb = wb < r_hi ? wb : r_hi;
    for (cw = wa; cw <= wb; ++cw) {
      uint x = (uint)(axis == 0u ? cw : cu);
      uint y = (uint)(axis == 0u ? cu : (axis == 1u ? cw : cv));
      uint z = (uint)(axis == 2u ? cw : cv);
      if (!vct_tri_box_overlap(&t, (float)x, (float)y, (float)z)) continue;
      {
        float3 c = make_float3((float)x + 0.5f, (float)y + 0.5f, (float)z + 0.5f);
        float4 albedo = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
        uint bit = vct_brick_bit(x, y, z);
        if (check_alpha || pass == TS_VCT_PASS_ACCUMULATE) {
          albedo = vct_fragment_albedo(scene, ctx, tri, material, &t, c);
          if (check_alpha && albedo.w < 0.5f) continue;
        }
        if (pass == TS_VCT_PASS_MARK) {
          uint cell = p->map_offset[0] + vct_brick_cell(p, 0u, x, y, z);
          ts_atomic_or(dense_masks + 2u * cell + (bit >> 5), 1u << (bit & 31u));
        } else {
          uint b = map[p->map_offset[0] + vct_brick_cell(p, 0u, x, y, z)];
          uint4 rec;
          uint i;
          TS_GLOBAL uint* a;
          float3 nrm = v3_normalize(t.n);
          float big = ts_fabs(nrm.x) >= ts_fabs(nrm.y) && ts_fabs(nrm.x) >= ts_fabs(nrm.z)
                          ? nrm.x
                          : (ts_fabs(nrm.y) >= ts_fabs(nrm.z) ? nrm.y : nrm.z);
          float off;
          if (b == 0u) continue;
          rec = bricks[b - 1u];
          i = vct_brick_voxel(rec.x, rec.y, rec.z, bit);
          if (i == TS_VCT_NONE) continue;
          if (big < 0.0f) nrm = v3_neg(nrm); /* both faces of a thin wall add up instead of cancelling */
          off = v3_dot(nrm, v3_sub(c, v0)); /* voxel centre above the plane, in voxels */
          a = accum + TS_VCT_ACCUM_WORDS * i;
          ts_atomic_add(a + 0, 1u);
          ts_atomic_add(a + 1, (uint)(ts_fmin(ts_fmax(albedo.x, 0.0f), 1.0f) * TS_VCT_ALBEDO_SCALE + 0.5f));
          ts_atomic_add(a + 2, (uint)(ts_fmin(ts_fmax(albedo.y, 0.0f), 1.0f) * TS_VCT_ALBEDO_SCALE + 0.5f));
          ts_atomic_add(a + 3, (uint)(ts_fmin(ts_fmax(albedo.z, 0.0f), 1.0f) * TS_VCT_ALBEDO_SCALE + 0.5f));
          ts_atomic_add(a + 4, (uint)(int)ts_floor(nrm.x * TS_VCT_NORMAL_SCALE + 0.5f));
          ts_atomic_add(a + 5, (uint)(int)ts_floor(nrm.y * TS_VCT_NORMAL_SCALE + 0.5f));
          ts_atomic_add(a + 6, (uint)(int)ts_floor(nrm.z * TS_VCT_NORMAL_SCALE + 0.5f));
          ts_atomic_add(a + 7, (uint)(int)ts_floor(ts_fmax(-1.0f, ts_fmin(1.0f, off)) * TS_VCT_OFFSET_SCALE + 0.5f));
          if (kind != TS_VCT_KIND_SURFACE) ts_atomic_max(a + 8, kind);
        }
      }
    }
  }
}

/* Solid voxelization, one column: the ray along `axis` through the centres of voxels (i, j) of the
 * other two axes (in the order axis + 1, axis + 2). Sets bits of `votes` (one bit a voxel, x fastest). */
TS_FN void vct_interior_column(const SceneView* scene, const VctGridParams* p, uint axis, uint i, uint j,
                               TS_GLOBAL uint* votes) {
  uint n = p->resolution, b = (axis + 1u) % 3u, c = (axis + 2u) % 3u, iter;
  float v = p->voxel_size, o3[3], d3[3], tmin = 0.0f, prev = 0.0f, tmax = ((float)n + 2.0f) * v;
  float3 org, dir;
  o3[0] = p->origin_x;
  o3[1] = p->origin_y;
  o3[2] = p->origin_z;
  o3[axis] -= v; /* start one voxel outside the grid */
  o3[b] += ((float)i + 0.5f) * v;
  o3[c] += ((float)j + 0.5f) * v;
  d3[0] = d3[1] = d3[2] = 0.0f;
  d3[axis] = 1.0f;
  org = make_float3(o3[0], o3[1], o3[2]);
  dir = make_float3(d3[0], d3[1], d3[2]);
  for (iter = 0u; iter < 4096u; ++iter) {
    Hit hit;
    float3 p0, p1, p2;
    if (!scene_intersect_closest(scene, org, dir, tmin, tmax, &hit)) break;
    scene_triangle_vertices(scene, hit.tri, &p0, &p1, &p2);
    scene_hit_to_world(scene, &hit, &p0, &p1, &p2);
    if (v3_get(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)), axis) > 0.0f) {
      /* back face: the ray leaves an object, so [prev, hit] was inside; voxel k's centre is at (k + 1.5) v */
      int k0 = (int)ts_floor(prev / v - 1.5f), k1 = (int)ts_floor(hit.t / v - 1.5f), k;
      if ((float)k0 + 1.5f < prev / v) ++k0;
      k0 = vct_clampi(k0, 0, (int)n - 1);
      k1 = vct_clampi(k1, -1, (int)n - 1);
      for (k = k0; k <= k1; ++k) {
        uint q[3], idx;
        q[axis] = (uint)k;
        q[b] = i;
        q[c] = j;
        idx = (q[2] * n + q[1]) * n + q[0];
        ts_atomic_or(votes + (idx >> 5), 1u << (idx & 31u));
      }
    }
    prev = hit.t;
    tmin = hit.t;
  }
}

/* Interior voxels (two of three axis votes) of one 32-bit word of the vote planes, into the level-0 masks. */
TS_FN void vct_interior_mark_word(const VctGridParams* p, uint word, TS_GLOBAL const uint* votes, uint words_per_axis,
                                  TS_GLOBAL uint* dense_masks) {
  uint a = votes[word], b = votes[words_per_axis + word], c = votes[2u * words_per_axis + word];
  uint m = (a & b) | (a & c) | (b & c), k, n = p->resolution;
  for (k = 0u; k < 32u && m != 0u; ++k) {
    if ((m >> k) & 1u) {
      uint idx = word * 32u + k, x = idx % n, y = (idx / n) % n, z = idx / (n * n);
      uint bit = vct_brick_bit(x, y, z), cell = p->map_offset[0] + vct_brick_cell(p, 0u, x, y, z);
      ts_atomic_or(dense_masks + 2u * cell + (bit >> 5), 1u << (bit & 31u));
    }
  }
}

#endif
