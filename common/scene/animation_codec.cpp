#include "common/scene/animation_codec.h"

#include <cstring>
#include <string>

#include "common/base/error.h"

namespace tessera::anim {
namespace {

constexpr char kMagic[4] = {'T', 'A', 'N', 'M'};

class Writer {
 public:
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(uint8_t(v >> (8 * i)));
  }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void floats(const float* v, size_t count) {
    for (size_t i = 0; i < count; ++i) f32(v[i]);
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  size_t left() const { return bytes_.size() - at_; }
  const uint8_t* take(size_t size, const char* what) {
    if (size > left())
      throw Error("animation data ends inside " + std::string(what) + " (" + std::to_string(size) + " bytes needed, " +
                  std::to_string(left()) + " left)");
    const uint8_t* p = bytes_.data() + at_;
    at_ += size;
    return p;
  }
  uint8_t u8(const char* what) { return *take(1, what); }
  uint32_t u32(const char* what) {
    const uint8_t* p = take(4, what);
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  float f32(const char* what) {
    const uint32_t bits = u32(what);
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  // `count` floats; the bytes are checked to be there before anything is allocated.
  std::vector<float> floats(uint64_t count, const char* what) {
    if (count > left() / 4)
      throw Error("animation data ends inside " + std::string(what) + " (" + std::to_string(count) + " numbers, " +
                  std::to_string(left()) + " bytes left)");
    std::vector<float> out(static_cast<size_t>(count));
    for (float& v : out) v = f32(what);
    return out;
  }
  // A count that must not exceed `limit`, nor need more than `left() / min_bytes_each` items.
  uint32_t count(const char* what, uint64_t limit, size_t min_bytes_each) {
    const uint32_t n = u32(what);
    if (n > limit) throw Error("animation data: " + std::to_string(n) + " " + what + " (at most " + std::to_string(limit) + ")");
    if (uint64_t(n) * min_bytes_each > left())
      throw Error("animation data: " + std::to_string(n) + " " + what + " cannot fit in the " + std::to_string(left()) +
                  " bytes left");
    return n;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

constexpr size_t kNodeBytesAtLeast = 4 + 1 + 10 * 4;
constexpr size_t kAnimationBytesAtLeast = 4 + 4;
constexpr size_t kChannelBytesAtLeast = 4 + 1 + 1 + 4 + 2 * 4;

}  // namespace

std::vector<uint8_t> encode_animations(const AnimatedScene& scene) {
  Writer w;
  w.bytes(kMagic, 4);
  w.u32(kAnimationEncodingVersion);
  w.u32(uint32_t(scene.nodes.size()));
  for (const Node& node : scene.nodes) {
    w.u32(uint32_t(node.parent));
    w.u8(node.has_matrix ? 1 : 0);
    if (node.has_matrix) {
      w.floats(node.matrix.data(), 16);
    } else {
      w.floats(node.rest.translation.data(), 3);
      w.floats(node.rest.rotation.data(), 4);
      w.floats(node.rest.scale.data(), 3);
    }
  }
  w.u32(uint32_t(scene.animations.size()));
  for (const Animation& animation : scene.animations) {
    w.u32(uint32_t(animation.name.size()));
    w.bytes(animation.name.data(), animation.name.size());
    w.u32(uint32_t(animation.channels.size()));
    for (const Channel& channel : animation.channels) {
      w.u32(channel.node);
      w.u8(uint8_t(channel.target));
      w.u8(uint8_t(channel.interpolation));
      w.u32(uint32_t(channel.times.size()));
      w.floats(channel.times.data(), channel.times.size());
      w.floats(channel.values.data(), channel.values.size());
    }
  }
  return w.take();
}

AnimatedScene decode_animations(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  if (std::memcmp(r.take(4, "the magic"), kMagic, 4) != 0) throw Error("animation data: not Tessera animation data (no TANM magic)");
  const uint32_t version = r.u32("the version");
  if (version != kAnimationEncodingVersion)
    throw Error("animation data: version " + std::to_string(version) + " (this build reads version " +
                std::to_string(kAnimationEncodingVersion) + ")");
  AnimatedScene scene;
  scene.nodes.resize(r.count("nodes", kMaxNodes, kNodeBytesAtLeast));
  for (size_t n = 0; n < scene.nodes.size(); ++n) {
    Node& node = scene.nodes[n];
    node.parent = int32_t(r.u32("a node"));
    const uint8_t kind = r.u8("a node");
    if (kind > 1) throw Error("animation data: node " + std::to_string(n) + " has kind " + std::to_string(kind));
    node.has_matrix = kind == 1;
    if (node.has_matrix) {
      for (float& v : node.matrix) v = r.f32("a node matrix");
    } else {
      for (float& v : node.rest.translation) v = r.f32("a node transform");
      for (float& v : node.rest.rotation) v = r.f32("a node transform");
      for (float& v : node.rest.scale) v = r.f32("a node transform");
    }
  }
  scene.animations.resize(r.count("animations", kMaxAnimations, kAnimationBytesAtLeast));
  uint64_t channels_left = kMaxChannels;
  for (Animation& animation : scene.animations) {
    const uint32_t name_bytes = r.count("name bytes", kMaxNameBytes, 1);
    const uint8_t* name = r.take(name_bytes, "an animation name");
    animation.name.assign(reinterpret_cast<const char*>(name), name_bytes);
    animation.channels.resize(r.count("channels", channels_left, kChannelBytesAtLeast));
    channels_left -= animation.channels.size();
    for (Channel& channel : animation.channels) {
      channel.node = r.u32("a channel");
      const uint8_t target = r.u8("a channel"), interpolation = r.u8("a channel");
      if (target > 2 || interpolation > 2)
        throw Error("animation data: a channel has target " + std::to_string(target) + " and interpolation " +
                    std::to_string(interpolation) + " (each 0 to 2)");
      channel.target = Target(target);
      channel.interpolation = Interpolation(interpolation);
      const uint32_t keys = r.count("keys", kMaxKeysPerChannel, 4);
      channel.times = r.floats(keys, "key times");
      const uint64_t per_key = uint64_t(target_components(channel.target)) * (channel.interpolation == Interpolation::cubic_spline ? 3 : 1);
      channel.values = r.floats(uint64_t(keys) * per_key, "key values");
    }
  }
  if (r.left() != 0) throw Error("animation data: " + std::to_string(r.left()) + " bytes after the last animation");
  validate_animations(scene);
  return scene;
}

}  // namespace tessera::anim
