// A .tpk file as raw bytes, loaded the way a worker loads a pushed or stored scene. Corrupting
// mutations mostly stop at the checksums (fuzz/tpk_validate.cpp goes past them); this harness
// covers the header, the manifest and the section table.
#include <cstddef>
#include <cstdint>
#include <google/protobuf/stubs/logging.h>

#include "common/base/error.h"
#include "common/scene/packed_scene.h"
#include "fuzz/scene_use.h"

// protobuf logs every manifest with a string that is not UTF-8; the refusal is what matters.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  try {
    fuzz::use_scene(PackedScene::from_contents(parse_tpk({data, size}, "fuzz.tpk"), "fuzz.tpk"));
  } catch (const Error&) {
    // A clear refusal is the expected outcome; anything else (crash, other exception) is a finding.
  }
  return 0;
}
