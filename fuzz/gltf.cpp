// glTF 2.0 files (.gltf JSON and .glb) as tessera-pack reads them; the first byte picks how the
// rest is named, so both the JSON and the binary container paths are reached.
#include <cstddef>
#include <cstdint>

#include "common/base/error.h"
#include "common/scene/gltf_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* name = (data[0] & 1) ? "fuzz.glb" : "fuzz.gltf";
  tessera::MeshLoadOptions options;
  options.max_texture_size = 64;
  try {
    // External URIs resolve in a folder that does not exist: only embedded data is read.
    (void)tessera::parse_gltf({data + 1, size - 1}, name, "/nonexistent-fuzz-dir", options);
  } catch (const tessera::Error&) {
  }
  return 0;
}
