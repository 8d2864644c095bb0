/* OpenCL entry points of two-level traversal (kernels/accel/instance_traverse.h): closest and any
 * hits of stored rays over an instanced scene. The scene's buffers as every entry point takes them,
 * then the top level, the instances and the objects (common/scene/top_level_bvh.h). */
#include "kernels/accel/instance_traverse.h"
#include "kernels/device/opencl/kernel_params.h"

#define TS_INSTANCE_PARAMS                                                                      \
  const uint instance_count, __global const uint *restrict tlas_nodes,                          \
      __global const uint *restrict instance_records, __global const uint *restrict objects

#define TS_INSTANCE_VIEW(iv)           \
  InstanceView iv;                     \
  iv.instance_count = instance_count;  \
  iv.tlas_nodes = tlas_nodes;          \
  iv.instances = instance_records;     \
  iv.objects = objects

/* rays: two float4 a ray (origin and tmax, direction and tmin); hits: tri, t, u, v (as bits) and
 * the instance's id (TS_NO_INSTANCE for a miss); any_hit = 1 traces shadow rays (tri: 1 hit, 0 none). */
__kernel void instance_trace_stored(TS_SCENE_PARAMS, TS_INSTANCE_PARAMS, const uint ray_count, const uint any_hit,
                                    __global const float4* rays, __global uint* hits) {
  uint i = get_global_id(0);
  float4 o, d;
  Hit hit;
  uint slot;
  int found;
  if (i >= ray_count) return;
  TS_SCENE_VIEW(view);
  TS_INSTANCE_VIEW(iv);
  o = rays[2u * i];
  d = rays[2u * i + 1u];
  found = instance_traverse(&view, &iv, o.xyz, d.xyz, d.w, o.w, (int)any_hit, &hit, &slot);
  hits[5u * i] = any_hit ? (uint)found : (found ? hit.tri : TS_KD_NO_TRIANGLE);
  hits[5u * i + 1u] = as_uint(hit.t);
  hits[5u * i + 2u] = as_uint(hit.u);
  hits[5u * i + 3u] = as_uint(hit.v);
  hits[5u * i + 4u] = found ? instance_id(&iv, slot) : TS_NO_INSTANCE;
}
