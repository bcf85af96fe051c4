// Who held what, when: for each pod (namespace, name) and each device
// (node, identity) the intervals during which an owner held it, so that a
// sample is attributed to the owner valid at its own timestamp, not to
// whoever holds the device now. Built once, then read-only: the processor
// swaps whole snapshots (std::atomic<std::shared_ptr<const
// OwnershipIndex>>), so readers never lock.
#ifndef LENS_TELEMETRY_OWNERSHIP_H_
#define LENS_TELEMETRY_OWNERSHIP_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lens::telemetry {

// The labels a sample gains.
struct Owner {
  std::string pod_uid;
  std::string workload_uid;
  std::string workload_name;
  std::string workload_kind;
  std::string workload_namespace;
};

inline constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();

// [from_ms, to_ms): Unix milliseconds, to_ms kOpenEnd while it lasts.
struct Holding {
  int64_t from_ms = 0;
  int64_t to_ms = kOpenEnd;
  std::shared_ptr<const Owner> owner;
};

class OwnershipIndex {
 public:
  // Pods by namespace and name (a name reused by a later pod is another
  // interval); devices by node and any identity the device is known by
  // (serial, BDF, UUID, "index:<n>": the caller adds each alias).
  void AddPod(std::string_view namespace_name, std::string_view pod,
              Holding holding);
  void AddDevice(std::string_view node, std::string_view identity,
                 Holding holding);
  // Sorts the intervals; call once after the last Add.
  void Seal();

  // The owner at `ts_ms`, or null. Overlapping intervals (a device shared
  // by a privileged container is never added) resolve to the one that
  // started last.
  const Owner* PodAt(std::string_view namespace_name, std::string_view pod,
                     int64_t ts_ms) const;
  const Owner* DeviceAt(std::string_view node, std::string_view identity,
                        int64_t ts_ms) const;

  // The intervals of one pod or device (null: none), to look up many
  // samples of one series with one key lookup; OwnerAt as above.
  const std::vector<Holding>* FindPod(std::string_view namespace_name,
                                      std::string_view pod) const;
  const std::vector<Holding>* FindDevice(std::string_view node,
                                         std::string_view identity) const;
  static const Owner* OwnerAt(const std::vector<Holding>& holdings,
                              int64_t ts_ms);

  // Visits each pod or device key with its intervals, in no order, until
  // `visit` returns false.
  template <typename F>
  void ForEachPod(F visit) const {
    ForEach(pods_, visit);
  }
  template <typename F>
  void ForEachDevice(F visit) const {
    ForEach(devices_, visit);
  }

  size_t pods() const { return pods_.size(); }
  size_t devices() const { return devices_.size(); }

 private:
  static std::string Key(std::string_view a, std::string_view b);
  template <typename Map, typename F>
  static void ForEach(const Map& map, F& visit) {
    for (const auto& [key, holdings] : map) {
      const size_t nul = key.find('\0');
      const std::string_view k(key);
      if (!visit(k.substr(0, nul), k.substr(nul + 1), holdings)) return;
    }
  }

  std::unordered_map<std::string, std::vector<Holding>> pods_;
  std::unordered_map<std::string, std::vector<Holding>> devices_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_OWNERSHIP_H_
