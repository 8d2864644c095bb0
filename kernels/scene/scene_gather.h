/* Vertex positions of up to TS_SIMD_LANES triangles at once, for the CPU's batched triangle test. All
 * loads of one level (triangle -> vertex indices -> vertices) are issued before any is used, so a
 * core waits for the memory once per level rather than once per triangle. Bit-identical to
 * scene_vertex_position. */
#ifndef TESSERA_KERNELS_SCENE_SCENE_GATHER_H
#define TESSERA_KERNELS_SCENE_SCENE_GATHER_H
#include "kernels/geom/triangle_batch.h"
#include "kernels/scene/scene_view.h"

/* Fills batch with the triangles tris[0, TS_SIMD_LANES). */
TS_FN void scene_gather_triangles(const SceneView* scene, const uint* tris, TriangleBatch* batch) {
  uint vertex[3][TS_SIMD_LANES];
  uint i, k;
  for (i = 0u; i < TS_SIMD_LANES; ++i) {
    uint4 t = scene_triangle_indices(scene, tris[i]);
    vertex[0][i] = t.x;
    vertex[1][i] = t.y;
    vertex[2][i] = t.z;
  }
  if ((scene_flags(scene) & (TS_SCENE_CELL_VERTICES | TS_SCENE_WIDE_CELLS | TS_SCENE_LINEAR_POSITIONS)) ==
      (TS_SCENE_CELL_VERTICES | TS_SCENE_LINEAR_POSITIONS)) { /* absolute q = cell * 1023 + offset: one fma an axis */
    uint q[3][3][TS_SIMD_LANES];
    for (k = 0u; k < 3u; ++k)
      for (i = 0u; i < TS_SIMD_LANES; ++i) {
        uint4 a = scene_unpack_21_21_22(ts_load_uint2(scene->quantized_vertices, vertex[k][i]));
        q[k][0][i] = a.x;
        q[k][1][i] = a.y;
        q[k][2][i] = a.z;
      }
    for (k = 0u; k < 3u; ++k) {
      ts_floatv step = ts_simd_splat(scene->position_step);
      ts_simd_store(ts_simd_fma(ts_simd_from_uint(ts_simd_load_uint(q[k][0])), step, ts_simd_splat(scene->anchor_x)),
                    batch->p[k][0]);
      ts_simd_store(ts_simd_fma(ts_simd_from_uint(ts_simd_load_uint(q[k][1])), step, ts_simd_splat(scene->anchor_y)),
                    batch->p[k][1]);
      ts_simd_store(ts_simd_fma(ts_simd_from_uint(ts_simd_load_uint(q[k][2])), step, ts_simd_splat(scene->anchor_z)),
                    batch->p[k][2]);
    }
  } else if (scene_flags(scene) & TS_SCENE_CELL_VERTICES) { /* vertex words, (wide) cells, then the decode lane-parallel */
    uint offsets[3][TS_SIMD_LANES], cell_ij[3][TS_SIMD_LANES], cell_k[3][TS_SIMD_LANES];
    const float inv_levels = 1.0f / TS_POSITION_OFFSET_LEVELS;
    for (k = 0u; k < 3u; ++k)
      for (i = 0u; i < TS_SIMD_LANES; ++i) {
        uint2 w = ts_load_uint2(scene->quantized_vertices, vertex[k][i]);
        if (scene_flags(scene) & TS_SCENE_WIDE_CELLS) {
          offsets[k][i] = w.x;
          cell_k[k][i] = w.y & 0xFFFFu; /* the cell index, for now */
        } else { /* absolute coordinates, cell * 1024 + offset (scene_decode_cell_vertex) */
          uint4 a = scene_unpack_21_21_22(w);
          uint x = a.x, y = a.y, z = a.z;
          offsets[k][i] = (x & 1023u) | ((y & 1023u) << 10) | ((z & 1023u) << 20);
          cell_ij[k][i] = (x >> 10) | ((y >> 10) << 16);
          cell_k[k][i] = z >> 10;
        }
      }
    if (scene_flags(scene) & TS_SCENE_WIDE_CELLS)
      for (k = 0u; k < 3u; ++k)
        for (i = 0u; i < TS_SIMD_LANES; ++i) {
          uint2 c = ts_load_uint2(scene->cells, cell_k[k][i]);
          cell_ij[k][i] = c.x;
          cell_k[k][i] = c.y & 0xFFFFu;
        }
    for (k = 0u; k < 3u; ++k) { /* decode_quantized_position, lane by lane the same arithmetic */
      ts_uintv o = ts_simd_load_uint(offsets[k]), ij = ts_simd_load_uint(cell_ij[k]), ck = ts_simd_load_uint(cell_k[k]);
      if (scene_flags(scene) & TS_SCENE_LINEAR_POSITIONS) { /* q = cell * 1023 + offset, one fma an axis */
        ts_floatv step = ts_simd_splat(scene->position_step);
        ts_simd_store(ts_simd_fma(ts_simd_from_uint((ij & 0xFFFFu) * 1023u + (o & 1023u)), step,
                                  ts_simd_splat(scene->anchor_x)), batch->p[k][0]);
        ts_simd_store(ts_simd_fma(ts_simd_from_uint((ij >> 16) * 1023u + ((o >> 10) & 1023u)), step,
                                  ts_simd_splat(scene->anchor_y)), batch->p[k][1]);
        ts_simd_store(ts_simd_fma(ts_simd_from_uint(ck * 1023u + ((o >> 20) & 1023u)), step,
                                  ts_simd_splat(scene->anchor_z)), batch->p[k][2]);
      } else {
        ts_floatv fx = ts_simd_from_uint(ij & 0xFFFFu) + ts_simd_from_uint(o & 1023u) * ts_simd_splat(inv_levels);
        ts_floatv fy = ts_simd_from_uint(ij >> 16) + ts_simd_from_uint((o >> 10) & 1023u) * ts_simd_splat(inv_levels);
        ts_floatv fz = ts_simd_from_uint(ck) + ts_simd_from_uint((o >> 20) & 1023u) * ts_simd_splat(inv_levels);
        ts_simd_store(ts_simd_splat(scene->anchor_x) + fx * ts_simd_splat(scene->cell_size), batch->p[k][0]);
        ts_simd_store(ts_simd_splat(scene->anchor_y) + fy * ts_simd_splat(scene->cell_size), batch->p[k][1]);
        ts_simd_store(ts_simd_splat(scene->anchor_z) + fz * ts_simd_splat(scene->cell_size), batch->p[k][2]);
      }
    }
  } else if (scene_flags(scene) & TS_SCENE_POSITIONS_QUANTIZED) { /* records: the decoded position in x, y, z */
    for (k = 0u; k < 3u; ++k)
      for (i = 0u; i < TS_SIMD_LANES; ++i) {
        uint4 r = ts_load_uint4(scene->vertex_records, vertex[k][i]);
        batch->p[k][0][i] = ts_as_float(r.x);
        batch->p[k][1][i] = ts_as_float(r.y);
        batch->p[k][2][i] = ts_as_float(r.z);
      }
  } else {
    for (k = 0u; k < 3u; ++k)
      for (i = 0u; i < TS_SIMD_LANES; ++i) {
        TS_GLOBAL const float* p = scene->positions + 3u * vertex[k][i];
        batch->p[k][0][i] = p[0];
        batch->p[k][1][i] = p[1];
        batch->p[k][2][i] = p[2];
      }
  }
}

#endif
