#pragma once
// The TESSERA_* variables that change how this machine renders: TESSERA_KD_LAYOUT (the device's
// kd-tree node layout), TESSERA_PERSISTENT_GROUPS and TESSERA_PT_WAVES (the path tracer's
// launches), TESSERA_PT_REGISTERS (its register cap on NVIDIA devices). Programs check them at start, so a bad value is one error line before any work
// rather than a failure at the first scene or the first pathtrace request.
namespace tessera {

// Throws Error naming the first variable with a bad value.
void check_render_environment();

}  // namespace tessera
