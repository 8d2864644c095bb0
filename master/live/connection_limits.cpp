#include "master/live/connection_limits.h"

namespace tessera::master::live {

std::optional<uint64_t> ConnectionLimits::oldest_waiting(const std::string& address) const {
  for (const auto& [id, entry] : entries_)  // in id order: oldest first
    if (entry.waiting && entry.address == address) return id;
  return std::nullopt;
}

std::optional<uint64_t> ConnectionLimits::oldest_waiting_of_busiest_address() const {
  std::map<std::string, size_t> waiting;
  for (const auto& [id, entry] : entries_)
    if (entry.waiting) ++waiting[entry.address];
  const std::string* busiest = nullptr;
  size_t most = 0;
  for (const auto& [address, count] : waiting)
    if (count > most) busiest = &address, most = count;
  return busiest ? oldest_waiting(*busiest) : std::nullopt;
}

ConnectionLimits::Admission ConnectionLimits::admit(uint64_t id, const std::string& address) {
  size_t of_address = 0, waiting_of_address = 0;
  for (const auto& [other, entry] : entries_)
    if (entry.address == address) {
      ++of_address;
      if (entry.waiting) ++waiting_of_address;
    }
  Admission admission;
  if (waiting_of_address >= caps_.waiting_per_address || of_address >= caps_.per_address) {
    admission.evict = oldest_waiting(address);
    if (!admission.evict) return admission;  // all of this address's places hold pages
  } else if (entries_.size() >= caps_.total) {
    admission.evict = oldest_waiting_of_busiest_address();
    if (!admission.evict) return admission;
  }
  if (admission.evict) entries_.erase(*admission.evict);
  entries_[id] = {address, true};
  admission.admitted = true;
  return admission;
}

void ConnectionLimits::first_request(uint64_t id) {
  const auto it = entries_.find(id);
  if (it != entries_.end()) it->second.waiting = false;
}

void ConnectionLimits::closed(uint64_t id) { entries_.erase(id); }

}  // namespace tessera::master::live
