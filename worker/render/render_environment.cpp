#include "worker/render/render_environment.h"

#include "common/scene/kd_blocked_layout.h"
#include "worker/render/pathtrace_registers.h"
#include "worker/render/pathtrace_tile_batch.h"
#include "worker/render/persistent_launch.h"

namespace tessera {

void check_render_environment() {
  kd_node_layout_from_environment();
  persistent_groups_from_environment();
  pathtrace_waves_from_environment();
  pathtrace_registers_from_environment();
}

}  // namespace tessera
