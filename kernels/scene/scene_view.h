/* The packed scene as the kernels see it: one pointer per device buffer plus a few constants. Every
 * attribute is either stored as floats or quantized as in Seo et al. 2022 §3.1:
 *   position  = 16-bit geometry-cell index + three 10-bit offsets inside the cell
 *   normal    = 16-bit index into a table of unit normals
 *   texcoord  = two 16-bit fixed-point values (1 integer bit and 15 fraction bits in the paper;
 *               the integer bits are chosen per material, see MaterialGpu.texcoord_scale)
 * That is the .tpk's form (12 bytes a vertex). In memory a vertex of a quantized scene is one
 * 16-byte record (common/scene/vertex_records.h): its position decoded once at load time
 * (decode_quantized_position, the very floats the packer built the kd-tree over) and its quantized
 * texture coordinate; its normal index lies apart (normal_indices, 2 bytes). The record once held
 * the offsets, the cell's coordinates and the normal index instead: a vertex now takes 18 bytes of
 * device memory instead of 16, and a triangle test decodes nothing (decoding in the test cost the
 * H100 14-16 % of its rays). 3 x 32-bit vertex indices a triangle (or 8 bytes, packed, below).
 *
 * The compact scene-memory profile (TS_SCENE_CELL_VERTICES, worker/render/scene_memory.h) keeps a
 * quantized vertex in 8 bytes instead (quantized_vertices), its texture coordinate in texcoords_q and
 * its normal index in normal_indices: the absolute quantized coordinate on each axis (21, 21 and 22
 * bits, scene_pack_absolute_vertex; scene_absolute_coordinate: cell * 1023 + offset in files of the
 * linear decode, the very integer the decode converts, else cell * 1024 + offset), derived at load from
 * the .tpk's offsets and cell table, so the triangle test decodes with no load beyond the vertex's
 * own. Grids too large for that (TS_SCENE_WIDE_CELLS) keep the .tpk's 8-byte vertex (offsets; cell index | normal index << 16)
 * and its two-word cell table (cells). Either way the triangle test decodes with
 * decode_quantized_position, the very function the load-time decode runs, so both profiles see
 * bit-identical positions. */
#ifndef TESSERA_KERNELS_SCENE_SCENE_VIEW_H
#define TESSERA_KERNELS_SCENE_SCENE_VIEW_H
#include "kernels/base/vec.h"

#define TS_SCENE_POSITIONS_QUANTIZED 1u
#define TS_SCENE_NORMALS_QUANTIZED 2u
#define TS_SCENE_TEXCOORDS_QUANTIZED 4u
#define TS_SCENE_HAS_NORMALS 8u
#define TS_SCENE_HAS_TEXCOORDS 16u
/* The triangle buffer holds 8 bytes a triangle, three 21-bit vertex indices (scene_pack_triangle),
 * instead of three 32-bit ones: devices store it so when the scene has at most
 * TS_PACKED_TRIANGLE_MAX_VERTICES vertices (a third less memory and one load instead of three). */
#define TS_SCENE_PACKED_TRIANGLES 32u
#define TS_PACKED_TRIANGLE_MAX_VERTICES (1u << 21)
/* Positions decoded in the triangle test from quantized_vertices and cells (the compact profile). */
#define TS_SCENE_CELL_VERTICES 64u
/* The compact profile's vertices are the .tpk's (offsets; cell | normal << 16) with its two-word cell
 * table (i | j << 16, k), where a cell coordinate lies beyond the absolute vertex's bits. */
#define TS_SCENE_WIDE_CELLS 128u
#define TS_ABSOLUTE_MAX_CELL_IJ 2047u /* absolute vertices: i and j below 2^11, k below 2^12 */
#define TS_ABSOLUTE_MAX_CELL_K 4095u
/* The kd-tree's leaf lists hold 8-, 16- or 32-bit differences from their lowest triangle ("narrow
 * lists", kernels/accel/kdtree_layout.h): the compact profile's tree in the default node layout. */
#define TS_SCENE_NARROW_LEAF_LISTS 512u
/* An instanced scene (docs/instances.md): rays go through the top level over the instances
 * (kernels/accel/scene_trace.h) and the kd-tree of each object they reach. The host carries the top
 * level's pointers in every SceneView; OpenCL programs carry them only when built for an instanced
 * scene (-D TS_SCENE_INSTANCED_BUILD), so the kernels of single-level scenes stay as they were. */
#define TS_SCENE_INSTANCED 1024u
/* Quantized positions decode linearly (the .tpk's Quantization.position_decode LINEAR, format version
 * 6): per axis q = cell * 1023 + offset, position = fma((float)q, position_step, anchor), one
 * multiply-add instead of the cell and the offset converted apart, scaled and summed (older files:
 * decode_quantized_position's other branch). position_step is cell_size / 1023, computed once on the
 * host (position_decoding, common/scene/vertex_records.h) and passed in the SceneView, so every
 * backend multiplies by the very same float. */
#define TS_SCENE_LINEAR_POSITIONS 2048u
/* The compact profile's 6-byte triangles: each block of TS_TRIANGLE_BLOCK triangles spans fewer than
 * 2^16 vertices from its base (triangle_bases, the block's lowest index), so a triangle is three
 * 16-bit offsets: the first two in one word of the triangle buffer, the third in the ushort array
 * that follows the triangle_count words (two loads, both aligned). The packer numbers vertices in
 * the order triangles first use them, and triangles along a Morton curve, so a block's vertices lie
 * close: Crytek Sponza's blocks span at most 17,813 vertices. */
#define TS_SCENE_SHORT_TRIANGLES 4096u
#define TS_SHORT_TRIANGLE_MAX_SPAN 0xFFFFu
#if !defined(TS_DEVICE_OPENCL) || defined(TS_SCENE_INSTANCED_BUILD)
#define TS_SCENE_INSTANCE_FIELDS 1
#endif
#define TS_TRIANGLE_BLOCK_SHIFT 6u
#define TS_TRIANGLE_BLOCK (1u << TS_TRIANGLE_BLOCK_SHIFT)

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

/* The scene's flags as kernels test them. GPU programs are built for the flags of the scene they
 * render (-D TS_SCENE_FLAGS=..., DeviceScene::build_options in worker/render/device_scene.h): a
 * branch on a flag inside the traversal's loops then costs nothing (read at run time it cost the
 * H100 6-9 % of its rays a second). CPU devices and the host read them at run time. */
#ifdef TS_SCENE_FLAGS
#define scene_flags(scene) ((uint)(TS_SCENE_FLAGS))
#else
#define scene_flags(scene) ((scene)->flags)
#endif

typedef struct SceneView {
  uint flags;
  uint triangle_count;
  TS_GLOBAL const uint* triangles;        /* 3 vertex indices per triangle (or packed in 2 words, see above) */
  TS_GLOBAL const float* positions;       /* xyz per vertex (positions not quantized) */
  TS_GLOBAL const uint* vertex_records; /* 4 words per vertex (positions quantized) */
  TS_GLOBAL const float* normals;         /* xyz per vertex (normals not quantized) */
  TS_GLOBAL const ushort* normal_indices; /* normal-table index per vertex (normals quantized) */
  TS_GLOBAL const ushort* normal_table;   /* xyz per entry, IEEE half */
  TS_GLOBAL const float* texcoords;       /* uv per vertex (texcoords not quantized) */
  TS_GLOBAL const ushort* texcoords_q;    /* uv per vertex, fixed point (positions not quantized, or TS_SCENE_CELL_VERTICES) */
  TS_GLOBAL const uint* kd_nodes;         /* two 32-bit words per node, see kernels/accel/kdtree_layout.h */
  TS_GLOBAL const uint* kd_leaf_refs;     /* triangle indices of leaves holding two or more */
  TS_GLOBAL const uint* quantized_vertices; /* 2 words per vertex (TS_SCENE_CELL_VERTICES) */
  TS_GLOBAL const uint* cells;            /* 2 words per cell (TS_SCENE_WIDE_CELLS) */
  TS_GLOBAL const uint* triangle_bases;   /* base vertex per block of triangles (TS_SCENE_SHORT_TRIANGLES) */
  float anchor_x, anchor_y, anchor_z, cell_size; /* decode_quantized_position's (TS_SCENE_CELL_VERTICES) */
  float position_step;                           /* cell_size / 1023 (TS_SCENE_LINEAR_POSITIONS) */
  float bounds_min_x, bounds_min_y, bounds_min_z;
  float bounds_max_x, bounds_max_y, bounds_max_z;
#ifdef TS_KD_LOCAL_STACK_ON
  __local uint* kd_local_stack; /* this work item's slice of the group's stack array, or 0 */
#endif
#ifdef TS_SCENE_INSTANCE_FIELDS
  uint instance_count; /* the top level (TS_SCENE_INSTANCED, kernels/accel/instance_traverse.h) */
  TS_GLOBAL const uint* tlas_nodes;
  TS_GLOBAL const uint* instance_records;
  TS_GLOBAL const uint* objects;
#endif
} SceneView;

/* The scalar part of a SceneView, passed to kernels by value (the pointers are kernel arguments). */
typedef struct SceneConstants {
  uint flags;
  uint triangle_count;
  float bounds_min_x, bounds_min_y, bounds_min_z;
  float bounds_max_x, bounds_max_y, bounds_max_z;
  float anchor_x, anchor_y, anchor_z, cell_size;
  float position_step;
} SceneConstants;

TS_FN void scene_view_set_constants(SceneView* v, const SceneConstants* c) {
  v->flags = c->flags;
  v->triangle_count = c->triangle_count;
  v->bounds_min_x = c->bounds_min_x;
  v->bounds_min_y = c->bounds_min_y;
  v->bounds_min_z = c->bounds_min_z;
  v->bounds_max_x = c->bounds_max_x;
  v->bounds_max_y = c->bounds_max_y;
  v->bounds_max_z = c->bounds_max_z;
  v->anchor_x = c->anchor_x;
  v->anchor_y = c->anchor_y;
  v->anchor_z = c->anchor_z;
  v->cell_size = c->cell_size;
  v->position_step = c->position_step;
}

/* One axis of a linearly decoded position (TS_SCENE_LINEAR_POSITIONS): q = cell * 1023 + offset. fma
 * rounds once (correctly, in OpenCL and in C alike), so every backend gets the same float. */
TS_FN float decode_linear_axis(uint q, float anchor, float step) { return ts_fma((float)q, step, anchor); }

/* Decodes a quantized position (the .tpk's cell and offsets; at load time, into the vertex records);
 * the packer builds the kd-tree over exactly these values. cell_ij = i | j << 16, cell_k = k: the
 * geometry cell's integer coordinates; anchor, cell_size and the decode from the .tpk's Quantization
 * (linear: TS_SCENE_LINEAR_POSITIONS, with step = position_step). */
TS_FN float3 decode_quantized_position(uint offsets, uint cell_ij, uint cell_k, float anchor_x, float anchor_y,
                                       float anchor_z, float cell_size, float step, uint linear) {
  const uint ox = offsets & 1023u, oy = (offsets >> 10) & 1023u, oz = (offsets >> 20) & 1023u;
  const float inv_levels = 1.0f / TS_POSITION_OFFSET_LEVELS;
  float fx, fy, fz;
  if (linear)
    return make_float3(decode_linear_axis((cell_ij & 0xFFFFu) * 1023u + ox, anchor_x, step),
                       decode_linear_axis((cell_ij >> 16) * 1023u + oy, anchor_y, step),
                       decode_linear_axis(cell_k * 1023u + oz, anchor_z, step));
  fx = (float)(cell_ij & 0xFFFFu) + (float)ox * inv_levels;
  fy = (float)(cell_ij >> 16) + (float)oy * inv_levels;
  fz = (float)cell_k + (float)oz * inv_levels;
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

/* Two words holding three vertex indices below TS_PACKED_TRIANGLE_MAX_VERTICES. */
TS_FN uint2 scene_pack_triangle(uint v0, uint v1, uint v2) {
  uint2 w;
  w.x = v0 | (v1 << 21);
  w.y = (v1 >> 11) | (v2 << 10);
  return w;
}

/* The three fields of two words packed as scene_pack_triangle and scene_pack_absolute_vertex pack
 * them (21, 21 and 22 bits) in x, y, z (w is 0). */
TS_FN uint4 scene_unpack_21_21_22(uint2 w) {
  uint4 v;
  v.x = w.x & 0x1FFFFFu;
  v.y = (w.x >> 21) | ((w.y & 0x3FFu) << 11);
  v.z = w.y >> 10;
  v.w = 0u;
  return v;
}

/* The vertex indices of triangle tri in x, y, z (w is 0). */
TS_FN uint4 scene_triangle_indices(const SceneView* scene, uint tri) {
  uint4 v;
  if (scene_flags(scene) & TS_SCENE_SHORT_TRIANGLES) {
    uint pair = scene->triangles[tri];
    uint third = ((TS_GLOBAL const ushort*)(scene->triangles + scene->triangle_count))[tri];
    uint base = scene->triangle_bases[tri >> TS_TRIANGLE_BLOCK_SHIFT];
    v.x = base + (pair & 0xFFFFu);
    v.y = base + (pair >> 16);
    v.z = base + third;
  } else if (scene_flags(scene) & TS_SCENE_PACKED_TRIANGLES) {
    v = scene_unpack_21_21_22(ts_load_uint2(scene->triangles, tri));
  } else {
    TS_GLOBAL const uint* t = scene->triangles + 3u * tri;
    v.x = t[0];
    v.y = t[1];
    v.z = t[2];
  }
  v.w = 0u;
  return v;
}

/* One axis of a compact-profile vertex: linear decode (TS_SCENE_LINEAR_POSITIONS), q = cell * 1023 +
 * offset, what decode_linear_axis converts; else cell * 1024 + offset (cell and offset apart). At most
 * 2^21 - 1 (x, y) or 2^22 - 1 (z) for cells within TS_ABSOLUTE_MAX_CELL_*. */
TS_FN uint scene_absolute_coordinate(uint cell, uint offset, uint linear) {
  return linear ? cell * 1023u + offset : (cell << 10) | offset;
}

/* A compact-profile vertex from its absolute quantized coordinates (scene_absolute_coordinate): x in
 * bits 0-20, y in 21-41, z in 42-63. */
TS_FN uint2 scene_pack_absolute_vertex(uint x, uint y, uint z) {
  uint2 w;
  w.x = x | (y << 21);
  w.y = (y >> 11) | (z << 10);
  return w;
}

/* A vertex of the compact profile decoded from its words: the absolute coordinates, or (wide cells)
 * the .tpk's offsets and cell | normal << 16 with the cell table. Linear decode: the coordinate is q =
 * cell * 1023 + offset, the integer decode_quantized_position forms from the cell and the offset, so
 * the same float, with no integer arithmetic before the conversion. */
TS_FN float3 scene_decode_cell_vertex(const SceneView* scene, uint2 words) {
  uint offsets, cell_ij, cell_k;
  if (scene_flags(scene) & TS_SCENE_WIDE_CELLS) {
    uint2 c = ts_load_uint2(scene->cells, words.y & 0xFFFFu);
    offsets = words.x;
    cell_ij = c.x;
    cell_k = c.y & 0xFFFFu;
  } else {
    uint4 a = scene_unpack_21_21_22(words);
    uint x = a.x, y = a.y, z = a.z;
    if (scene_flags(scene) & TS_SCENE_LINEAR_POSITIONS)
      return make_float3(decode_linear_axis(x, scene->anchor_x, scene->position_step),
                         decode_linear_axis(y, scene->anchor_y, scene->position_step),
                         decode_linear_axis(z, scene->anchor_z, scene->position_step));
    offsets = (x & 1023u) | ((y & 1023u) << 10) | ((z & 1023u) << 20);
    cell_ij = (x >> 10) | ((y >> 10) << 16);
    cell_k = z >> 10;
  }
  return decode_quantized_position(offsets, cell_ij, cell_k, scene->anchor_x, scene->anchor_y, scene->anchor_z,
                                   scene->cell_size, scene->position_step,
                                   scene_flags(scene) & TS_SCENE_LINEAR_POSITIONS);
}

TS_FN float3 scene_vertex_position(const SceneView* scene, uint vertex) {
  if (scene_flags(scene) & TS_SCENE_CELL_VERTICES)
    return scene_decode_cell_vertex(scene, ts_load_uint2(scene->quantized_vertices, vertex));
  if (scene_flags(scene) & TS_SCENE_POSITIONS_QUANTIZED) {
    uint4 r = ts_load_uint4(scene->vertex_records, vertex); /* one 16-byte load; w: the texcoord */
    return make_float3(ts_as_float(r.x), ts_as_float(r.y), ts_as_float(r.z));
  }
  return v3_load(scene->positions + 3u * vertex);
}

TS_FN void scene_triangle_vertices(const SceneView* scene, uint tri, float3* p0, float3* p1, float3* p2) {
  uint4 t = scene_triangle_indices(scene, tri);
  if (scene_flags(scene) & TS_SCENE_CELL_VERTICES) { /* the three vertex loads first */
    uint2 w0 = ts_load_uint2(scene->quantized_vertices, t.x), w1 = ts_load_uint2(scene->quantized_vertices, t.y);
    uint2 w2 = ts_load_uint2(scene->quantized_vertices, t.z);
    *p0 = scene_decode_cell_vertex(scene, w0);
    *p1 = scene_decode_cell_vertex(scene, w1);
    *p2 = scene_decode_cell_vertex(scene, w2);
    return;
  }
  *p0 = scene_vertex_position(scene, t.x);
  *p1 = scene_vertex_position(scene, t.y);
  *p2 = scene_vertex_position(scene, t.z);
}

/* Unit shading normal of a vertex; only valid when TS_SCENE_HAS_NORMALS is set. */
TS_FN float3 scene_vertex_normal(const SceneView* scene, uint vertex) {
  if (scene_flags(scene) & TS_SCENE_NORMALS_QUANTIZED)
  {
    uint index = (scene_flags(scene) & TS_SCENE_WIDE_CELLS) ? scene->quantized_vertices[2u * vertex + 1u] >> 16
                                                             : (uint)scene->normal_indices[vertex];
    TS_GLOBAL const ushort* n = scene->normal_table + 3u * index;
    return make_float3(ts_half_to_float(n), ts_half_to_float(n + 1), ts_half_to_float(n + 2));
  }
  return v3_load(scene->normals + 3u * vertex);
}

/* Texture coordinate of a vertex; only valid when TS_SCENE_HAS_TEXCOORDS is set. quantized_scale
 * is 2^-(fraction bits) of the triangle's material. */
TS_FN float2 scene_vertex_texcoord(const SceneView* scene, uint vertex, float quantized_scale) {
  if (scene_flags(scene) & TS_SCENE_TEXCOORDS_QUANTIZED) {
    /* Nested, not &&: with the flags compiled in, a constant operand of && is a warning. */
    if (scene_flags(scene) & TS_SCENE_POSITIONS_QUANTIZED) {
      if ((scene_flags(scene) & TS_SCENE_CELL_VERTICES) == 0u) {
        uint uv = scene->vertex_records[4u * vertex + 3u];
        return make_float2((float)(uv & 0xFFFFu) * quantized_scale, (float)(uv >> 16) * quantized_scale);
      }
    }
    return make_float2((float)scene->texcoords_q[2u * vertex] * quantized_scale,
                       (float)scene->texcoords_q[2u * vertex + 1u] * quantized_scale);
  }
  return make_float2(scene->texcoords[2u * vertex], scene->texcoords[2u * vertex + 1u]);
}

#endif
