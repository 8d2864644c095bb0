#pragma once
// Reading glTF accessors with every bound checked here, whatever the loader checked before:
// accessor -> buffer view -> buffer indices, offsets, strides and element counts, in 64-bit
// arithmetic so no sum can wrap. Values come out as floats (normalized integers mapped to [0, 1] or
// [-1, 1]) or as 32-bit indices. Failures are tessera::Error naming the accessor.
#include <cstdint>
#include <string>
#include <vector>

namespace tinygltf {
class Model;
}

namespace tessera::gltf {

// `components` values per element (2: VEC2, 3: VEC3, ...). Float accessors always; unsigned byte
// and short ones only where `allow_normalized` (glTF allows them for texture coordinates), and
// then only when marked normalized. Non-finite values are an error. Sparse accessors come with their
// substitutions applied (to their buffer view's values, or to zeros without one).
std::vector<float> read_floats(const tinygltf::Model& model, int accessor, int components, bool allow_normalized,
                               const std::string& what);

// SCALAR unsigned byte, short or int indices.
std::vector<uint32_t> read_indices(const tinygltf::Model& model, int accessor, const std::string& what);

// The element count of an accessor (after checking its index).
size_t accessor_count(const tinygltf::Model& model, int accessor, const std::string& what);

}  // namespace tessera::gltf
