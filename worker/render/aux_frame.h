#pragma once
// tessera-render's depth and coverage of a whole frame (--depth-out, --background transparent,
// --composite): the aux pass (TileRenderer::render_aux_batch) over every eye's image, and what the
// frame becomes with it.
#include <vector>

#include "common/image/image.h"
#include "common/render/aux_outputs.h"
#include "worker/render/depth_png.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

// The aux words of every pixel of the eyes' images side by side (left, right), rows of
// width * eyes.size() words, as the frame's pixels lie. The cameras are the pixel-centre ones.
std::vector<uint32_t> render_aux_frame(TileRenderer& renderer, const std::vector<CameraParams>& eyes,
                                       const RenderSettings& settings, const AuxSettings& aux, uint32_t tile_size);

// The frame with a transparent background (transparent_pixel on each pixel). Its pixels whose
// alpha is neither 0 nor 255 are black (the shadow catcher), so premultiplied and straight alpha
// are the same bytes: a PNG of it is right for readers of straight alpha.
void make_transparent(ImageRgba8& frame, std::span<const uint32_t> aux);

// The inverse depths of the aux words as an image of `width` x `height`.
DepthImage inverse_depth_image(std::span<const uint32_t> aux, uint32_t width, uint32_t height);

// The transparent frame over a photograph of the same size (else Error naming both sizes), in
// linear light: objects replace the photo, the shadow catcher darkens it by its alpha, and every
// pixel of alpha 0 is the photo's, byte for byte.
ImageRgba8 composite_over(const ImageRgba8& transparent, const ImageRgba8& photo);
// The Error composite_over throws for a photograph that is not `width` x `height`, before rendering.
void check_photo_size(const ImageRgba8& photo, int width, int height);

}  // namespace tessera
