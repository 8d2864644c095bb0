#include "common/cl/device_memory.h"

#include <algorithm>
#include <mutex>

#include "common/base/error.h"
#include "common/cl/cl_error.h"
#include "common/cl/device.h"
#include "common/cl/memory_size.h"

namespace tessera::cl {

namespace detail {

struct MemoryLedger {
  struct Entry {
    uint64_t id;
    std::string name;
    uint64_t bytes;
  };
  mutable std::mutex mutex;
  ContextHandle context;  // retained: buffers may outlive the budget and the Device object
  std::string device_name;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  std::optional<uint64_t> limit;
  uint64_t used = 0, peak = 0, next_id = 1;
  std::vector<Entry> live;

  void remove(uint64_t id) {
    std::lock_guard lock(mutex);
    const auto it = std::find_if(live.begin(), live.end(), [&](const Entry& e) { return e.id == id; });
    if (it == live.end()) return;
    used -= it->bytes;
    live.erase(it);
  }
};

}  // namespace detail

namespace {

// Smallest buffer we create: OpenCL rejects size 0, but kernels still need a valid argument for
// an empty section (a scene without textures).
constexpr uint64_t kPlaceholderBytes = 16;

}  // namespace

std::string describe_buffers(std::vector<BufferRequest> buffers) {
  constexpr size_t kShown = 8;
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](const BufferRequest& a, const BufferRequest& b) { return a.bytes > b.bytes; });
  std::string out;
  uint64_t rest_bytes = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i < kShown) {
      out += (i ? ", " : "") + buffers[i].name + " " + format_memory_size(buffers[i].bytes);
    } else {
      rest_bytes += buffers[i].bytes;
    }
  }
  if (buffers.size() > kShown)
    out += ", " + std::to_string(buffers.size() - kShown) + " more " + format_memory_size(rest_bytes);
  return out;
}

Buffer::~Buffer() { release(); }

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    mem_ = std::move(other.mem_);
    name_ = std::move(other.name_);
    size_ = std::exchange(other.size_, 0);
    allocated_ = std::exchange(other.allocated_, 0);
    id_ = std::exchange(other.id_, 0);
    ledger_ = std::move(other.ledger_);
  }
  return *this;
}

void Buffer::release() {
  if (ledger_) ledger_->remove(id_);
  ledger_.reset();
  mem_.reset();
  size_ = allocated_ = 0;
}

DeviceMemoryBudget::DeviceMemoryBudget(const Device& device, std::optional<uint64_t> limit_bytes)
    : ledger_(std::make_shared<detail::MemoryLedger>()) {
  check_cl(clRetainContext(device.context()), "clRetainContext");
  ledger_->context.reset(device.context());
  ledger_->device_name = device.info().name;
  ledger_->global_mem_bytes = device.info().global_mem_bytes;
  ledger_->max_alloc_bytes = device.info().max_alloc_bytes;
  ledger_->limit = limit_bytes;
}

DeviceMemoryBudget::~DeviceMemoryBudget() = default;

void DeviceMemoryBudget::check(const std::vector<BufferRequest>& buffers, std::string_view purpose) const {
  uint64_t needed = 0;
  for (const BufferRequest& b : buffers) needed += std::max(b.bytes, kPlaceholderBytes);

  std::lock_guard lock(ledger_->mutex);
  const detail::MemoryLedger& ledger = *ledger_;
  uint64_t cap = ledger.global_mem_bytes;
  std::string cap_text = ledger.device_name + " has " + format_memory_size(cap) + " of global memory";
  if (ledger.limit && *ledger.limit <= cap) {
    cap = *ledger.limit;
    cap_text = "--gpu-mem-limit is " + format_memory_size(cap);
  }
  if (needed > cap || ledger.used > cap - needed) {
    std::string message = std::string(purpose) + " needs " + format_memory_size(needed) + " of device memory";
    if (!(buffers.size() == 1 && buffers[0].name == purpose)) message += " (" + describe_buffers(buffers) + ")";
    message += " but " + cap_text;
    if (ledger.used > 0) {
      std::vector<BufferRequest> live;
      for (const auto& e : ledger.live) live.push_back({e.name, e.bytes});
      message += " and " + format_memory_size(ledger.used) + " is already in use (" + describe_buffers(live) + ")";
    }
    throw Error(message);
  }

  std::vector<BufferRequest> too_big;
  for (const BufferRequest& b : buffers)
    if (b.bytes > ledger.max_alloc_bytes) too_big.push_back(b);
  if (!too_big.empty()) {
    const bool own_name = buffers.size() == 1 && buffers[0].name == purpose;
    const std::string limit_text = ledger.device_name + " allows (" + format_memory_size(ledger.max_alloc_bytes) +
                                   ", CL_DEVICE_MAX_MEM_ALLOC_SIZE)";
    if (too_big.size() == 1) {
      std::string size = format_memory_size(too_big[0].bytes);
      if (size == format_memory_size(ledger.max_alloc_bytes))  // "2 GB is larger than 2 GB": show bytes
        size = std::to_string(too_big[0].bytes) + " bytes, limit " + std::to_string(ledger.max_alloc_bytes);
      throw Error((own_name ? std::string() : std::string(purpose) + " ") + "buffer " + too_big[0].name + " (" + size +
                  ") is larger than the largest single buffer " + limit_text);
    }
    throw Error(std::string(purpose) + " buffers " + describe_buffers(too_big) +
                " are each larger than the largest single buffer " + limit_text);
  }
}

void DeviceMemoryBudget::ensure(Buffer& buffer, std::string name, uint64_t bytes, BufferAccess access) {
  if (buffer && buffer.size() >= bytes) return;
  buffer.release();
  buffer = create(std::move(name), bytes, access);
}

Buffer DeviceMemoryBudget::create(std::string name, uint64_t bytes, BufferAccess access) {
  check({{name, bytes}}, name);
  const uint64_t allocated = std::max(bytes, kPlaceholderBytes);
  const cl_mem_flags flags = access == BufferAccess::read_only    ? CL_MEM_READ_ONLY
                             : access == BufferAccess::write_only ? CL_MEM_WRITE_ONLY
                                                                  : CL_MEM_READ_WRITE;
  cl_int status = CL_SUCCESS;
  MemHandle mem(clCreateBuffer(ledger_->context.get(), flags, allocated, nullptr, &status));
  TESSERA_CL_CHECK(status, "clCreateBuffer(" + name + ", " + format_memory_size(bytes) + ")");

  Buffer buffer;
  buffer.mem_ = std::move(mem);
  buffer.name_ = std::move(name);
  buffer.size_ = bytes;
  buffer.allocated_ = allocated;
  buffer.ledger_ = ledger_;
  std::lock_guard lock(ledger_->mutex);
  buffer.id_ = ledger_->next_id++;
  ledger_->live.push_back({buffer.id_, buffer.name_, allocated});
  ledger_->used += allocated;
  ledger_->peak = std::max(ledger_->peak, ledger_->used);
  return buffer;
}

uint64_t DeviceMemoryBudget::used_bytes() const {
  std::lock_guard lock(ledger_->mutex);
  return ledger_->used;
}

uint64_t DeviceMemoryBudget::peak_bytes() const {
  std::lock_guard lock(ledger_->mutex);
  return ledger_->peak;
}

std::optional<uint64_t> DeviceMemoryBudget::limit_bytes() const { return ledger_->limit; }

uint64_t DeviceMemoryBudget::max_alloc_bytes() const { return ledger_->max_alloc_bytes; }

std::vector<BufferRequest> DeviceMemoryBudget::live_buffers() const {
  std::lock_guard lock(ledger_->mutex);
  std::vector<BufferRequest> out;
  for (const auto& e : ledger_->live) out.push_back({e.name, e.bytes});
  return out;
}

}  // namespace tessera::cl
