// Packed scenes with their checksums recomputed (fuzz/tpk_unsealed.h), so that mutated manifests
// and section contents reach the validation; a scene that passes is then used the way a worker
// uses it (fuzz/scene_use.h). Seeds are made with fuzz-tpk-unseal from packed scenes.
#include <cstddef>
#include <cstdint>
#include <google/protobuf/stubs/logging.h>

#include "common/base/error.h"
#include "common/scene/packed_scene.h"
#include "fuzz/scene_use.h"
#include "fuzz/tpk_unsealed.h"

// protobuf logs every manifest with a string that is not UTF-8; the refusal is what matters.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const auto file = fuzz::seal({data, size});
  if (!file) return 0;
  try {
    fuzz::use_scene(PackedScene::from_contents(parse_tpk(*file, "fuzz.tpk"), "fuzz.tpk"));
  } catch (const Error&) {
    // A clear refusal is the expected outcome; anything else (crash, other exception) is a finding.
  }
  return 0;
}
