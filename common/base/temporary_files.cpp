#include "common/base/temporary_files.h"

#include <atomic>
#include <climits>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace tessera {
namespace {

// Fixed slots, so the signal handler reads them without locks or allocation: `state` is 0 free,
// 1 being written, 2 holding a path the handler may unlink.
struct Slot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
constexpr int kSlots = 16;
Slot slots[kSlots];

extern "C" void remove_and_reraise(int signal_number) {
  for (Slot& slot : slots)
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

TemporaryFileRecord::TemporaryFileRecord(const std::filesystem::path& path) : slot_(-1) {
  const std::string& text = path.native();
  if (text.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int free = 0;
    if (!slots[i].state.compare_exchange_strong(free, 1, std::memory_order_acq_rel)) continue;
    std::memcpy(slots[i].path, text.c_str(), text.size() + 1);
    slots[i].state.store(2, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TemporaryFileRecord::~TemporaryFileRecord() {
  if (slot_ >= 0) slots[slot_].state.store(0, std::memory_order_release);
}

void remove_temporary_files_on_signal() {
  struct sigaction action {};
  action.sa_handler = remove_and_reraise;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal_number, &action, nullptr);
}

}  // namespace tessera
