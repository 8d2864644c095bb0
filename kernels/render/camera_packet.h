/* Camera rays of a pixel block (kernels/render/packet_block.h) as one ray packet, for CPU devices
 * (kernels/accel/kdtree_packet.h). Lane l is pixel (x0 + l % TS_PACKET_BLOCK_W,
 * y0 + l / TS_PACKET_BLOCK_W); lanes at or beyond (x_end, y_end) trace nothing. */
#ifndef TESSERA_KERNELS_RENDER_CAMERA_PACKET_H
#define TESSERA_KERNELS_RENDER_CAMERA_PACKET_H
#include "kernels/accel/scene_trace_packet.h"
#include "kernels/render/camera.h"
#include "kernels/render/packet_block.h"

#ifdef TS_KD_CPU
TS_FN uint camera_block_x(uint x0, uint lane) { return x0 + lane % TS_PACKET_BLOCK_W; }
TS_FN uint camera_block_y(uint y0, uint lane) { return y0 + lane / TS_PACKET_BLOCK_W; }
TS_FN int camera_block_inside(uint x0, uint y0, uint lane, uint x_end, uint y_end) {
  return camera_block_x(x0, lane) < x_end && camera_block_y(y0, lane) < y_end;
}

TS_FN void camera_block_packet(const CameraParams* cam, uint x0, uint y0, uint x_end, uint y_end, KdPacket* rays) {
  uint l;
  for (l = 0u; l < TS_SIMD_LANES; ++l) {
    rays->org[l] = camera_origin(cam);
    rays->dir[l] = camera_direction(cam, (float)camera_block_x(x0, l) + 0.5f, (float)camera_block_y(y0, l) + 0.5f);
    rays->tmin[l] = 0.0f;
    rays->tmax[l] = camera_block_inside(x0, y0, l, x_end, y_end) ? TS_INFINITY : -1.0f;
  }
}

/* The block's camera rays and their closest hits (hits[l].tri is TS_KD_NO_TRIANGLE where none). */
TS_FN void camera_block_hits(const SceneView* scene, const CameraParams* cam, uint x0, uint y0, uint x_end, uint y_end,
                             KdPacket* rays, Hit* hits) {
  int found[TS_SIMD_LANES];
  camera_block_packet(cam, x0, y0, x_end, y_end, rays);
  scene_trace_packet(scene, rays, 0, found, hits);
}
#endif

#endif
