// OBJ text as tessera-pack reads it (after an .obj.zst is decompressed). Material libraries are
// looked up in a folder that does not exist, so an mtllib line is a clear error too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/base/error.h"
#include "common/scene/mesh_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tessera::parse_obj(std::string(reinterpret_cast<const char*>(data), size), "fuzz.obj",
                             "/nonexistent-tessera-fuzz-dir");
  } catch (const tessera::Error&) {
  }
  return 0;
}
