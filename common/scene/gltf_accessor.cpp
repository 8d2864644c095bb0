#include "common/scene/gltf_accessor.h"

#include <cmath>
#include <cstring>
#include <tiny_gltf.h>

#include "common/base/error.h"

namespace tessera::gltf {
namespace {

int type_components(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    default: return 0;  // matrices are never vertex data here
  }
}

uint64_t component_bytes(int component_type) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;
  }
}

// Where element i of an accessor starts, every byte of every element checked to lie inside its
// buffer view and the view inside its buffer. A missing buffer view means all zeros (glTF 2.0).
struct ElementSpan {
  const uint8_t* base = nullptr;  // nullptr: zeros
  uint64_t stride = 0;
  uint64_t count = 0;
};

const tinygltf::Accessor& checked_accessor(const tinygltf::Model& model, int index, const std::string& what) {
  if (index < 0 || size_t(index) >= model.accessors.size())
    throw Error(what + ": accessor " + std::to_string(index) + " does not exist (" +
                std::to_string(model.accessors.size()) + " accessors)");
  return model.accessors[size_t(index)];
}

// The bytes of `count` elements of `element_bytes`, `stride` apart, from `byte_offset` into buffer view
// `view_index`: every byte checked to lie inside the view and the view inside its buffer.
const uint8_t* view_elements(const tinygltf::Model& model, int view_index, uint64_t byte_offset, uint64_t count,
                             uint64_t* stride, uint64_t element_bytes, const std::string& name) {
  if (view_index < 0 || size_t(view_index) >= model.bufferViews.size())
    throw Error(name + " names buffer view " + std::to_string(view_index) + " of " + std::to_string(model.bufferViews.size()));
  const tinygltf::BufferView& view = model.bufferViews[size_t(view_index)];
  if (view.buffer < 0 || size_t(view.buffer) >= model.buffers.size())
    throw Error(name + ": its buffer view names buffer " + std::to_string(view.buffer) + " of " + std::to_string(model.buffers.size()));
  const uint64_t buffer_bytes = model.buffers[size_t(view.buffer)].data.size();
  if (view.byteOffset > buffer_bytes || view.byteLength > buffer_bytes - view.byteOffset)
    throw Error(name + ": buffer view " + std::to_string(view_index) + " (bytes " + std::to_string(view.byteOffset) + " + " +
                std::to_string(view.byteLength) + ") runs past its buffer of " + std::to_string(buffer_bytes) + " bytes");
  if (view.byteStride > 252) throw Error(name + ": byte stride " + std::to_string(view.byteStride) + " exceeds 252");
  *stride = view.byteStride ? view.byteStride : element_bytes;
  if (*stride < element_bytes)
    throw Error(name + ": byte stride " + std::to_string(*stride) + " is shorter than an element (" +
                std::to_string(element_bytes) + " bytes)");
  // The last element ends at offset + stride * (count - 1) + element size; count < 2^32 keeps it in 64 bits.
  if (count > 0xFFFFFFFFull) throw Error(name + " has too many elements");
  if (byte_offset > view.byteLength)
    throw Error(name + " starts at byte " + std::to_string(byte_offset) + ", past its buffer view of " +
                std::to_string(view.byteLength) + " bytes");
  const uint64_t end = byte_offset + *stride * (count - 1) + element_bytes;
  if (end > view.byteLength)
    throw Error(name + " (" + std::to_string(count) + " elements from byte " + std::to_string(byte_offset) +
                ") runs past its buffer view of " + std::to_string(view.byteLength) + " bytes");
  return model.buffers[size_t(view.buffer)].data.data() + view.byteOffset + byte_offset;
}

ElementSpan element_span(const tinygltf::Model& model, int index, const tinygltf::Accessor& a, uint64_t element_bytes,
                         const std::string& what) {
  const std::string name = what + ": accessor " + std::to_string(index);
  ElementSpan span;
  span.count = a.count;
  if (a.count == 0) throw Error(name + " has no elements");
  if (a.bufferView < 0) return span;
  span.base = view_elements(model, a.bufferView, a.byteOffset, a.count, &span.stride, element_bytes, name);
  return span;
}

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// A sparse accessor's substitutions (glTF 2.0 3.6.2.3): `count` strictly increasing element indices
// and the values that replace those elements, both tightly packed. Calls set(element, bytes) for each.
template <typename Set>
void for_each_sparse_value(const tinygltf::Model& model, int index, const tinygltf::Accessor& a, uint64_t element_bytes,
                           const std::string& what, Set&& set) {
  const std::string name = what + ": sparse accessor " + std::to_string(index);
  const auto& sparse = a.sparse;
  if (sparse.count < 1 || uint64_t(sparse.count) > a.count)
    throw Error(name + " replaces " + std::to_string(sparse.count) + " of its " + std::to_string(a.count) + " elements");
  const int index_type = sparse.indices.componentType;
  if (index_type != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE && index_type != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT &&
      index_type != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT)
    throw Error(name + ": its indices have component type " + std::to_string(index_type) + ", expected an unsigned integer type");
  if (sparse.indices.byteOffset < 0 || sparse.values.byteOffset < 0) throw Error(name + " has a negative byte offset");
  const uint64_t index_bytes = component_bytes(index_type);
  uint64_t index_stride = 0, value_stride = 0;
  const uint8_t* indices = view_elements(model, sparse.indices.bufferView, uint64_t(sparse.indices.byteOffset),
                                         uint64_t(sparse.count), &index_stride, index_bytes, name + " indices");
  const uint8_t* values = view_elements(model, sparse.values.bufferView, uint64_t(sparse.values.byteOffset),
                                        uint64_t(sparse.count), &value_stride, element_bytes, name + " values");
  // glTF: the sparse views are tightly packed whatever byteStride says
  index_stride = index_bytes;
  value_stride = element_bytes;
  uint64_t previous = 0;
  for (uint64_t k = 0; k < uint64_t(sparse.count); ++k) {
    const uint8_t* p = indices + k * index_stride;
    const uint64_t element = index_bytes == 1 ? *p : index_bytes == 2 ? load<uint16_t>(p) : load<uint32_t>(p);
    if (element >= a.count) throw Error(name + " replaces element " + std::to_string(element) + " of " + std::to_string(a.count));
    if (k > 0 && element <= previous) throw Error(name + ": its indices are not strictly increasing");
    previous = element;
    set(element, values + k * value_stride);
  }
}

}  // namespace

size_t accessor_count(const tinygltf::Model& model, int accessor, const std::string& what) {
  return checked_accessor(model, accessor, what).count;
}

std::vector<float> read_floats(const tinygltf::Model& model, int index, int components, bool allow_normalized,
                               const std::string& what) {
  const tinygltf::Accessor& a = checked_accessor(model, index, what);
  const std::string name = what + ": accessor " + std::to_string(index);
  if (type_components(a.type) != components)
    throw Error(name + " has " + std::to_string(type_components(a.type)) + " components per element, expected " +
                std::to_string(components));
  const bool is_float = a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT;
  const bool is_unorm = allow_normalized && a.normalized &&
                        (a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE ||
                         a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT);
  if (!is_float && !is_unorm)
    throw Error(name + " has component type " + std::to_string(a.componentType) +
                (allow_normalized ? ", expected float or normalized unsigned byte/short" : ", expected float"));
  const uint64_t bytes = component_bytes(a.componentType);
  const ElementSpan span = element_span(model, index, a, bytes * uint64_t(components), what);
  std::vector<float> out(span.count * size_t(components), 0.0f);
  const auto decode = [&](uint64_t i, const uint8_t* element) {
    for (int c = 0; c < components; ++c) {
      const uint8_t* p = element + uint64_t(c) * bytes;
      float v;
      if (is_float) v = load<float>(p);
      else if (bytes == 1) v = float(*p) / 255.0f;
      else v = float(load<uint16_t>(p)) / 65535.0f;
      if (!std::isfinite(v)) throw Error(name + " holds a non-finite value at element " + std::to_string(i));
      out[i * size_t(components) + size_t(c)] = v;
    }
  };
  if (span.base)
    for (uint64_t i = 0; i < span.count; ++i) decode(i, span.base + i * span.stride);
  if (a.sparse.isSparse) for_each_sparse_value(model, index, a, bytes * uint64_t(components), what, decode);
  return out;
}

std::vector<uint32_t> read_indices(const tinygltf::Model& model, int index, const std::string& what) {
  const tinygltf::Accessor& a = checked_accessor(model, index, what);
  const std::string name = what + ": index accessor " + std::to_string(index);
  if (a.type != TINYGLTF_TYPE_SCALAR) throw Error(name + " is not SCALAR");
  if (a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE && a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT &&
      a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT)
    throw Error(name + " has component type " + std::to_string(a.componentType) + ", expected an unsigned integer type");
  const uint64_t bytes = component_bytes(a.componentType);
  const ElementSpan span = element_span(model, index, a, bytes, what);
  std::vector<uint32_t> out(span.count, 0u);
  const auto decode = [&](uint64_t i, const uint8_t* p) {
    out[i] = bytes == 1 ? *p : bytes == 2 ? load<uint16_t>(p) : load<uint32_t>(p);
  };
  if (span.base)
    for (uint64_t i = 0; i < span.count; ++i) decode(i, span.base + i * span.stride);
  if (a.sparse.isSparse) for_each_sparse_value(model, index, a, bytes, what, decode);
  return out;
}

}  // namespace tessera::gltf
