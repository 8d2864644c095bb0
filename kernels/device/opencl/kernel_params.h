/* The kernel-argument lists every OpenCL entry point starts with, and their unpacking into the
 * SceneView / ShadingContext the shared code takes. The host sets these arguments in the same
 * order (worker/render/device_scene.cpp). */
#ifndef TESSERA_KERNELS_DEVICE_OPENCL_KERNEL_PARAMS_H
#define TESSERA_KERNELS_DEVICE_OPENCL_KERNEL_PARAMS_H
#include "kernels/scene/scene_view.h"
#include "kernels/shading/shading_context.h"

typedef struct ShadingCounts {
  uint material_run_count;
  uint light_count;
  uint emitter_count;
  uint pad;
} ShadingCounts;

/* An instanced scene's programs (-D TS_SCENE_INSTANCED_BUILD, worker/render/device_scene.h) take
 * its top level after the scene's buffers: 4 arguments more. */
#ifdef TS_SCENE_INSTANCED_BUILD
#define TS_SCENE_INSTANCE_PARAMS                                                                     \
  , const uint scene_instance_count, __global const uint *restrict scene_tlas_nodes,                \
      __global const uint *restrict scene_instance_records, __global const uint *restrict scene_objects
#define TS_SCENE_INSTANCE_VIEW(view)              \
  view.instance_count = scene_instance_count;     \
  view.tlas_nodes = scene_tlas_nodes;             \
  view.instance_records = scene_instance_records; \
  view.objects = scene_objects
#else
#define TS_SCENE_INSTANCE_PARAMS
#define TS_SCENE_INSTANCE_VIEW(view) (void)0
#endif

/* 14 arguments (18 for an instanced scene). The scene and shading buffers are read-only and never written through another
 * argument, so they are declared restrict: that lets GPUs load them through the read-only cache. */
#define TS_SCENE_PARAMS                                                                               \
  const SceneConstants scene_constants, __global const uint *restrict triangles,                     \
      __global const float *restrict positions, __global const uint *restrict vertex_records,        \
      __global const float *restrict normals, __global const ushort *restrict normal_indices,         \
      __global const ushort *restrict normal_table, __global const float *restrict texcoords,        \
      __global const ushort *restrict texcoords_q, __global const uint *restrict kd_nodes,           \
      __global const uint *restrict kd_leaf_refs, __global const uint *restrict quantized_vertices,  \
      __global const uint *restrict cells, __global const uint *restrict triangle_bases TS_SCENE_INSTANCE_PARAMS

/* 9 arguments */
#define TS_SHADING_PARAMS                                                                             \
  const ShadingCounts shading_counts, __global const MaterialGpu *restrict materials,                \
      __global const uint *restrict material_runs, __global const TextureGpu *restrict textures,     \
      __global const uint *restrict texels, __global const LightGpu *restrict lights,                \
      __global const EmitterGpu *restrict emitters, __global const float *restrict srgb_to_linear,   \
      __global const float *restrict linear_to_srgb_threshold

#ifdef TS_KD_LOCAL_STACK_ON
/* The work-group's short traversal stacks (kernels/accel/kdtree_traverse.h), entry-major so that
 * neighbouring work items use neighbouring banks; work items past TS_KD_LOCAL_STACK_THREADS get none. */
#define TS_KD_LOCAL_STACK_DECLARE(view)                                                                       \
  __local uint view##_kd_stacks[3 * TS_KD_LOCAL_STACK * TS_KD_LOCAL_STACK_THREADS];                       \
  {                                                                                                         \
    uint lid_ = (uint)(get_local_id(2) * get_local_size(1) + get_local_id(1)) * (uint)get_local_size(0) + \
                (uint)get_local_id(0);                                                                      \
    view.kd_local_stack = lid_ < TS_KD_LOCAL_STACK_THREADS ? view##_kd_stacks + lid_ : 0;                  \
  }
#else
#define TS_KD_LOCAL_STACK_DECLARE(view)
#endif

#define TS_SCENE_VIEW(view)                          \
  SceneView view;                                    \
  TS_KD_LOCAL_STACK_DECLARE(view);                   \
  scene_view_set_constants(&view, &scene_constants); \
  view.triangles = triangles;                        \
  view.positions = positions;                        \
  view.vertex_records = vertex_records;              \
  view.normals = normals;                            \
  view.normal_indices = normal_indices;              \
  view.normal_table = normal_table;                  \
  view.texcoords = texcoords;                        \
  view.texcoords_q = texcoords_q;                    \
  view.kd_nodes = kd_nodes;                          \
  view.kd_leaf_refs = kd_leaf_refs;                  \
  view.quantized_vertices = quantized_vertices;      \
  view.cells = cells;                                \
  view.triangle_bases = triangle_bases;              \
  TS_SCENE_INSTANCE_VIEW(view)

#define TS_SHADING_CONTEXT(ctx)                                       \
  ShadingContext ctx;                                                 \
  ctx.materials = materials;                                          \
  ctx.material_runs = material_runs;                                  \
  ctx.material_run_count = shading_counts.material_run_count;         \
  ctx.textures = textures;                                            \
  ctx.texels = texels;                                                \
  ctx.lights = lights;                                                \
  ctx.light_count = shading_counts.light_count;                       \
  ctx.emitters = emitters;                                            \
  ctx.emitter_count = shading_counts.emitter_count;                   \
  ctx.color.srgb_to_linear = srgb_to_linear;                          \
  ctx.color.linear_to_srgb_threshold = linear_to_srgb_threshold

#endif
