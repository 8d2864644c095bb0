// fuzz-tpk-unseal IN.tpk OUT: writes a packed scene in the input form of the tpk_validate
// harness (fuzz/tpk_unsealed.h), e.g. as a seed in fuzz/corpus/tpk_validate/.
#include <cstdio>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "fuzz/tpk_unsealed.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz-tpk-unseal IN.tpk OUT\n");
    return 2;
  }
  try {
    const auto bytes = tessera::fuzz::unseal(tessera::read_tpk(argv[1]));
    tessera::write_file_atomically(argv[2], bytes.data(), bytes.size());
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "fuzz-tpk-unseal: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
