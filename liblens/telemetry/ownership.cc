#include "telemetry/ownership.h"

#include <algorithm>

namespace lens::telemetry {

std::string OwnershipIndex::Key(std::string_view a, std::string_view b) {
  std::string key;
  key.reserve(a.size() + b.size() + 1);
  key.append(a);
  key.push_back('\0');  // neither a namespace, a node nor a name holds NUL
  key.append(b);
  return key;
}

void OwnershipIndex::AddPod(std::string_view namespace_name,
                            std::string_view pod, Holding holding) {
  pods_[Key(namespace_name, pod)].push_back(std::move(holding));
}

void OwnershipIndex::AddDevice(std::string_view node, std::string_view identity,
                               Holding holding) {
  devices_[Key(node, identity)].push_back(std::move(holding));
}

void OwnershipIndex::Seal() {
  for (auto* map : {&pods_, &devices_}) {
    for (auto& [key, holdings] : *map) {
      std::sort(holdings.begin(), holdings.end(),
                [](const Holding& a, const Holding& b) {
                  return a.from_ms < b.from_ms;
                });
    }
  }
}

const Owner* OwnershipIndex::OwnerAt(const std::vector<Holding>& holdings,
                                     int64_t ts) {
  // The last interval starting at or before ts; earlier ones if it ended
  // (intervals rarely overlap, so the walk back is short).
  auto it = std::upper_bound(
      holdings.begin(), holdings.end(), ts,
      [](int64_t t, const Holding& h) { return t < h.from_ms; });
  while (it != holdings.begin()) {
    --it;
    if (ts < it->to_ms) return it->owner.get();
  }
  return nullptr;
}

const std::vector<Holding>* OwnershipIndex::FindPod(
    std::string_view namespace_name, std::string_view pod) const {
  auto it = pods_.find(Key(namespace_name, pod));
  return it == pods_.end() ? nullptr : &it->second;
}

const std::vector<Holding>* OwnershipIndex::FindDevice(
    std::string_view node, std::string_view identity) const {
  auto it = devices_.find(Key(node, identity));
  return it == devices_.end() ? nullptr : &it->second;
}

const Owner* OwnershipIndex::PodAt(std::string_view namespace_name,
                                   std::string_view pod, int64_t ts_ms) const {
  const auto* h = FindPod(namespace_name, pod);
  return h ? OwnerAt(*h, ts_ms) : nullptr;
}

const Owner* OwnershipIndex::DeviceAt(std::string_view node,
                                      std::string_view identity,
                                      int64_t ts_ms) const {
  const auto* h = FindDevice(node, identity);
  return h ? OwnerAt(*h, ts_ms) : nullptr;
}

}  // namespace lens::telemetry
