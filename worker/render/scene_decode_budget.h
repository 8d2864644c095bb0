#pragma once
// What a scene may take once decoded on a worker's backend (tpk_decode_budget.h): the host's
// memory, and beside it the device's memory and largest buffer (OpenCL), or --gpu-mem-limit (which
// bounds the host backend's scene too). Checked before a scene is decompressed, so a small file
// that decodes to gigabytes is one clear error instead of an allocation failure.
#include "common/scene/tpk_decode_budget.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

DecodeBudget scene_decode_budget(const RendererOptions& options);

}  // namespace tessera
