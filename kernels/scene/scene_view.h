/* The packed scene as the kernels see it: one pointer per device buffer plus the quantization
 * parameters. Every attribute is either stored as floats or quantized as in Seo et al. 2022 §3.1:
 *   position  = 16-bit geometry-cell index + three 10-bit offsets inside the cell
 *   normal    = 16-bit index into a table of unit normals
 *   texcoord  = two 16-bit fixed-point values (1 integer bit and 15 fraction bits in the paper;
 *               the integer bits are chosen per material, see MaterialGpu.texcoord_scale)
 * 12 bytes a vertex when all three are quantized; 3 x 32-bit vertex indices a triangle. In memory a
 * quantized vertex is one 16-byte record (common/scene/vertex_records.h): offsets; cell i | j << 16;
 * cell k | normal << 16; texcoord u | v << 16. */
#ifndef TESSERA_KERNELS_SCENE_SCENE_VIEW_H
#define TESSERA_KERNELS_SCENE_SCENE_VIEW_H
#include "kernels/base/vec.h"

#define TS_SCENE_POSITIONS_QUANTIZED 1u
#define TS_SCENE_NORMALS_QUANTIZED 2u
#define TS_SCENE_TEXCOORDS_QUANTIZED 4u
#define TS_SCENE_HAS_NORMALS 8u
#define TS_SCENE_HAS_TEXCOORDS 16u

#define TS_POSITION_OFFSET_LEVELS 1023.0f /* offsets 0..1023 span a cell edge inclusive */

/* A GPU build with -D TS_KD_LOCAL_STACK=N keeps the top of each work item's traversal stack in
 * __local memory (kernels/accel/kdtree_traverse.h); the kernel declares the work-group's array
 * (TS_SCENE_VIEW in kernels/device/opencl/kernel_params.h) for the first TS_KD_LOCAL_STACK_THREADS
 * work items of a group. */
#if defined(TS_KD_LOCAL_STACK) && defined(TS_DEVICE_OPENCL) && !defined(TS_DEVICE_CPU)
#define TS_KD_LOCAL_STACK_ON 1
#ifndef TS_KD_LOCAL_STACK_THREADS
#define TS_KD_LOCAL_STACK_THREADS 64
#endif
#endif

typedef struct SceneView {
  uint flags;
  uint triangle_count;
  TS_GLOBAL const uint* triangles;        /* 3 vertex indices per triangle */
  TS_GLOBAL const float* positions;       /* xyz per vertex (positions not quantized) */
  TS_GLOBAL const uint* vertex_records; /* 4 words per vertex (positions quantized) */
  float anchor_x, anchor_y, anchor_z;     /* minimum corner of the cell grid */
  float cell_size;
  TS_GLOBAL const float* normals;         /* xyz per vertex (normals not quantized) */
  TS_GLOBAL const ushort* normal_table;   /* xyz per entry, IEEE half */
  TS_GLOBAL const float* texcoords;       /* uv per vertex (texcoords not quantized) */
  TS_GLOBAL const ushort* texcoords_q;    /* uv per vertex, fixed point (positions not quantized) */
  TS_GLOBAL const uint* kd_nodes;         /* two 32-bit words per node, see kernels/accel/kdtree_layout.h */
  TS_GLOBAL const uint* kd_leaf_refs;     /* triangle indices of leaves holding two or more */
  float bounds_min_x, bounds_min_y, bounds_min_z;
  float bounds_max_x, bounds_max_y, bounds_max_z;
#ifdef TS_KD_LOCAL_STACK_ON
  __local uint* kd_local_stack; /* this work item's slice of the group's stack array, or 0 */
#endif
} SceneView;

/* The scalar part of a SceneView, passed to kernels by value (the pointers are kernel arguments). */
typedef struct SceneConstants {
  uint flags;
  uint triangle_count;
  float anchor_x, anchor_y, anchor_z;
  float cell_size;
  float bounds_min_x, bounds_min_y, bounds_min_z;
  float bounds_max_x, bounds_max_y, bounds_max_z;
} SceneConstants;

TS_FN void scene_view_set_constants(SceneView* v, const SceneConstants* c) {
  v->flags = c->flags;
  v->triangle_count = c->triangle_count;
  v->anchor_x = c->anchor_x;
  v->anchor_y = c->anchor_y;
  v->anchor_z = c->anchor_z;
  v->cell_size = c->cell_size;
  v->bounds_min_x = c->bounds_min_x;
  v->bounds_min_y = c->bounds_min_y;
  v->bounds_min_z = c->bounds_min_z;
  v->bounds_max_x = c->bounds_max_x;
  v->bounds_max_y = c->bounds_max_y;
  v->bounds_max_z = c->bounds_max_z;
}

/* Decodes a quantized position; the packer builds the kd-tree over exactly these values. */
/* cell_ij = i | j << 16, cell_k = k: the geometry cell's integer coordinates. */
TS_FN float3 decode_quantized_position(uint offsets, uint cell_ij, uint cell_k, float anchor_x, float anchor_y,
                                       float anchor_z, float cell_size) {
  const float inv_levels = 1.0f / TS_POSITION_OFFSET_LEVELS;
  float fx = (float)(cell_ij & 0xFFFFu) + (float)(offsets & 1023u) * inv_levels;
  float fy = (float)(cell_ij >> 16) + (float)((offsets >> 10) & 1023u) * inv_levels;
  float fz = (float)cell_k + (float)((offsets >> 20) & 1023u) * inv_levels;
  return make_float3(anchor_x + fx * cell_size, anchor_y + fy * cell_size, anchor_z + fz * cell_size);
}

/* Two consecutive words as one 8-byte load on the device. */
TS_FN uint2 ts_load_uint2(TS_GLOBAL const uint* p, uint index) {
#ifdef TS_DEVICE_OPENCL
  return ((TS_GLOBAL const uint2*)p)[index];
#else
  uint2 v;
  v.x = p[2u * index];
  v.y = p[2u * index + 1u];
  return v;
#endif
}

/* Four consecutive words, 16-byte aligned, as one load on the device. */
TS_FN uint4 ts_load_uint4(TS_GLOBAL const uint* p, uint index) {
#ifdef TS_DEVICE_OPENCL
  return ((TS_GLOBAL const uint4*)p)[index];
#else
  uint4 v;
  v.x = p[4u * index];
  v.y = p[4u * index + 1u];
  v.z = p[4u * index + 2u];
  v.w = p[4u * index + 3u];
  return v;
#endif
}

TS_FN float3 scene_vertex_position(const SceneView* scene, uint vertex) {
  if (scene->flags & TS_SCENE_POSITIONS_QUANTIZED) {
    uint4 r = ts_load_uint4(scene->vertex_records, vertex);
    return decode_quantized_position(r.x, r.y, r.z & 0xFFFFu, scene->anchor_x, scene->anchor_y, scene->anchor_z,
                                     scene->cell_size);
  }
  return v3_load(scene->positions + 3u * vertex);
}

TS_FN void scene_triangle_vertices(const SceneView* scene, uint tri, float3* p0, float3* p1, float3* p2) {
  TS_GLOBAL const uint* t = scene->triangles + 3u * tri;
  *p0 = scene_vertex_position(scene, t[0]);
  *p1 = scene_vertex_position(scene, t[1]);
  *p2 = scene_vertex_position(scene, t[2]);
}

/* Unit shading normal of a vertex; only valid when TS_SCENE_HAS_NORMALS is set. */
TS_FN float3 scene_vertex_normal(const SceneView* scene, uint vertex) {
  if (scene->flags & TS_SCENE_NORMALS_QUANTIZED)
  {
    TS_GLOBAL const ushort* n = scene->normal_table + 3u * (scene->vertex_records[4u * vertex + 2u] >> 16);
    return make_float3(ts_half_to_float(n), ts_half_to_float(n + 1), ts_half_to_float(n + 2));
  }
  return v3_load(scene->normals + 3u * vertex);
}

/* Texture coordinate of a vertex; only valid when TS_SCENE_HAS_TEXCOORDS is set. quantized_scale
 * is 2^-(fraction bits) of the triangle's material. */
TS_FN float2 scene_vertex_texcoord(const SceneView* scene, uint vertex, float quantized_scale) {
  if (scene->flags & TS_SCENE_TEXCOORDS_QUANTIZED) {
    if (scene->flags & TS_SCENE_POSITIONS_QUANTIZED) {
      uint uv = scene->vertex_records[4u * vertex + 3u];
      return make_float2((float)(uv & 0xFFFFu) * quantized_scale, (float)(uv >> 16) * quantized_scale);
    }
    return make_float2((float)scene->texcoords_q[2u * vertex] * quantized_scale,
                       (float)scene->texcoords_q[2u * vertex + 1u] * quantized_scale);
  }
  return make_float2(scene->texcoords[2u * vertex], scene->texcoords[2u * vertex + 1u]);
}

#endif
