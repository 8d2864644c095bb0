#pragma once
// The kd-tree traversal compiled for other node layouts than the depth-first one the rest of the
// host build uses (kernels/accel/kdtree_layout.h picks the layout at compile time): one unit each,
// tests/kd_layout_traversal_*.cpp. Each takes a SceneView whose kd_nodes hold that layout.
#include "kernels/accel/kdtree_traverse.h"

namespace tessera::testing {

struct LayoutTraversal {
  const char* name;
  int (*closest)(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax, Hit* hit);
  int (*any)(const SceneView* scene, float3 org, float3 dir, float tmin, float tmax);
  // Four rays as one packet (kernels/accel/kdtree_packet.h): found[4], hits[4].
  void (*packet)(const SceneView* scene, const float3* org, const float3* dir, const float* tmin, const float* tmax,
                 int any_hit, int* found, Hit* hits);
};

extern const LayoutTraversal kBlocked4Traversal;  // blocked, 32-byte blocks, block cache
extern const LayoutTraversal kBlocked8Traversal;  // blocked, 64-byte blocks, block cache
extern const LayoutTraversal kDfsCachedTraversal;  // depth-first with the block cache (padded nodes)

}  // namespace tessera::testing
