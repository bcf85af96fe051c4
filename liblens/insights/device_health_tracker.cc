// The streaming device health tracker: node samples find their devices
// through per-node slots (GPU index, HCA and port), identity checks keep a
// swapped device apart, and each device's state machine does the rest.
#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "insights/device_health_device.h"
#include "lens/insights_health.h"

namespace lens {

using health_internal::HealthChange;
using health_internal::HealthDevice;
using health_internal::HealthHot;

namespace {

constexpr uint32_t kHealthNoDevice = std::numeric_limits<uint32_t>::max();

struct HealthPortSlot {
  std::string device;
  int port = 0;
};

// A node's slots: GPU indexes and (HCA, port) pairs in the order its
// samples list them, and the device in each (parallel vectors, so the
// common observation reads only the device numbers).
struct HealthNode {
  std::string name;
  int64_t last_us = std::numeric_limits<int64_t>::min();
  std::vector<int> gpu_slots;
  std::vector<uint32_t> gpu_devices;
  std::vector<HealthPortSlot> port_slots;
  std::vector<uint32_t> port_devices;
};

int64_t HealthMicros(Timestamp t) { return t.time_since_epoch().count(); }
Timestamp HealthTime(int64_t us) {
  return Timestamp(std::chrono::microseconds(us));
}

std::string HealthGpuKey(const std::string& node,
                         const GpuHealthObservation& o) {
  if (!o.serial.empty()) return o.serial;
  if (!o.unique_id.empty()) return "uuid:" + o.unique_id;
  if (!o.bdf.empty()) return "bdf:" + node + "/" + o.bdf;
  return "index:" + node + "/" + std::to_string(o.index);
}

std::string HealthPortKey(const std::string& node,
                          const PortHealthObservation& o) {
  if (!o.node_guid.empty()) return o.node_guid + "/" + std::to_string(o.port);
  return node + "/" + o.device + "/" + std::to_string(o.port);
}

}  // namespace

struct DeviceHealthTracker::Impl {
  DeviceHealthOptions options;
  std::unordered_map<std::string, uint32_t> node_ids;
  std::vector<HealthNode> nodes;
  // Devices by first sighting (the order samples visit them), indexed by
  // the slots: what every observation touches, and the rest.
  std::vector<HealthHot> hot;
  std::vector<HealthDevice> cold;
  std::unordered_map<std::string, uint32_t> gpu_ids;
  std::unordered_map<std::string, uint32_t> port_ids;
  std::deque<HealthTransition> transitions;
  uint64_t sequence = 0;
  uint64_t observations = 0;
  uint32_t next_node = 0;             // the likely next sample's node
  std::vector<HealthChange> changes;  // scratch, reused

  // The device now in a slot: `*slot_device` when its identity matches,
  // else the device the key names (a new one, or one seen elsewhere before).
  template <typename Key>
  uint32_t Bind(uint32_t* slot_device, uint32_t node_id, uint32_t pos,
                HealthDeviceKind kind, std::string_view identity, Key key) {
    if (*slot_device != kHealthNoDevice) {
      const HealthHot& h = hot[*slot_device];
      if (h.slot_node == node_id && h.slot_pos == pos &&
          h.SameIdentity(identity, cold[*slot_device].identity)) {
        return *slot_device;
      }
    }
    auto& ids = kind == HealthDeviceKind::kGpu ? gpu_ids : port_ids;
    auto [it, added] =
        ids.try_emplace(key(), static_cast<uint32_t>(hot.size()));
    if (added) {
      hot.emplace_back();
      cold.emplace_back();
      cold.back().ref.kind = kind;
      cold.back().ref.id = it->first;
    }
    if (*slot_device != kHealthNoDevice && *slot_device != it->second) {
      HealthHot& old = hot[*slot_device];
      if (old.slot_node == node_id && old.slot_pos == pos) old.present = false;
    }
    const uint32_t d = it->second;
    *slot_device = d;
    hot[d].slot_node = node_id;
    hot[d].slot_pos = pos;
    hot[d].present = true;
    hot[d].slot_rebound = true;
    hot[d].SetIdentity(identity);
    cold[d].identity = std::string(identity);
    cold[d].ref.node = nodes[node_id].name;
    return d;
  }

  void Emit(const HealthDevice& dev) {
    for (const HealthChange& c : changes) {
      HealthTransition t;
      t.sequence = ++sequence;
      t.time = HealthTime(c.at_us);
      t.device = dev.ref;
      t.from = c.from;
      t.to = c.to;
      t.cleared = c.cleared;
      t.cause =
          health_internal::MakeHealthEvidence(dev, c.signal, c.held, options);
      transitions.push_back(std::move(t));
      if (transitions.size() > options.max_transitions) {
        transitions.pop_front();
      }
    }
    changes.clear();
  }

  // The device at position `i` of a node's slots when it is the one the
  // observation names (same slot number and identity): the common case,
  // decided from HealthHot alone.
  uint32_t Known(const std::vector<uint32_t>& devices, uint32_t node_id,
                 size_t i, int number, std::string_view identity) const {
    if (i >= devices.size()) return kHealthNoDevice;
    const uint32_t d = devices[i];
    const HealthHot& h = hot[d];
    if (h.slot_node != node_id || h.slot_pos != i || h.number != number ||
        h.identity_len == 0 || !h.SameIdentity(identity, cold[d].identity)) {
      return kHealthNoDevice;
    }
    return d;
  }

  void ObserveGpu(uint32_t node_id, size_t i, const GpuHealthObservation& obs,
                  int64_t t_us) {
    const std::string_view identity = health_internal::HealthGpuIdentity(obs);
    HealthNode& node = nodes[node_id];
    uint32_t d = Known(node.gpu_devices, node_id, i, obs.index, identity);
    if (d == kHealthNoDevice) {
      size_t pos = i;
      if (pos >= node.gpu_slots.size() || node.gpu_slots[pos] != obs.index) {
        pos = 0;
        while (pos < node.gpu_slots.size() &&
               node.gpu_slots[pos] != obs.index) {
          ++pos;
        }
        if (pos == node.gpu_slots.size()) {
          node.gpu_slots.push_back(obs.index);
          node.gpu_devices.push_back(kHealthNoDevice);
        }
      }
      d = Bind(&node.gpu_devices[pos], node_id, static_cast<uint32_t>(pos),
               HealthDeviceKind::kGpu, identity,
               [&] { return HealthGpuKey(node.name, obs); });
      hot[d].number = obs.index;
    }
    HealthHot& h = hot[d];
    if (t_us < h.last_seen_us) return;  // moved here from a node ahead
    if (h.slot_rebound) {
      h.slot_rebound = false;
      cold[d].gpu_index = obs.index;
      cold[d].ref.device = std::to_string(obs.index);
    }
    health_internal::HealthObserveGpu(obs, t_us, options, &h, &cold[d],
                                      &changes);
    ++observations;
    if (!changes.empty()) Emit(cold[d]);
  }

  void ObservePort(uint32_t node_id, size_t i, const PortHealthObservation& obs,
                   int64_t t_us) {
    HealthNode& node = nodes[node_id];
    uint32_t d = Known(node.port_devices, node_id, i, obs.port, obs.node_guid);
    if (d == kHealthNoDevice) {
      auto at = [&](size_t p) {
        return node.port_slots[p].port == obs.port &&
               node.port_slots[p].device == obs.device;
      };
      size_t pos = i;
      if (pos >= node.port_slots.size() || !at(pos)) {
        pos = 0;
        while (pos < node.port_slots.size() && !at(pos)) ++pos;
        if (pos == node.port_slots.size()) {
          node.port_slots.push_back({obs.device, obs.port});
          node.port_devices.push_back(kHealthNoDevice);
        }
      }
      d = Bind(&node.port_devices[pos], node_id, static_cast<uint32_t>(pos),
               HealthDeviceKind::kRdmaPort, obs.node_guid,
               [&] { return HealthPortKey(node.name, obs); });
      hot[d].number = obs.port;
    }
    HealthHot& h = hot[d];
    if (t_us < h.last_seen_us) return;
    if (h.slot_rebound) {
      h.slot_rebound = false;
      cold[d].ref.device = obs.device;
      cold[d].ref.port = obs.port;
    }
    health_internal::HealthObservePort(obs, t_us, options, &h, &cold[d],
                                       &changes);
    ++observations;
    if (!changes.empty()) Emit(cold[d]);
  }

  DeviceHealthStatus StatusOf(uint32_t d) const {
    const HealthHot& h = hot[d];
    const HealthDevice& dev = cold[d];
    DeviceHealthStatus s;
    s.device = dev.ref;
    s.state = h.state;
    s.since = HealthTime(dev.since_us);
    if (auto signal = health_internal::HealthHoldingSignal(h, dev)) {
      s.cause = health_internal::MakeHealthEvidence(
          dev, *signal, dev.held[static_cast<size_t>(*signal)], options);
      s.clears_at =
          HealthTime(health_internal::HealthClearsAtUs(h, dev, options));
    }
    s.first_seen = HealthTime(dev.first_seen_us);
    s.last_seen = HealthTime(h.last_seen_us);
    s.present = h.present;
    s.transitions = dev.transitions;
    s.counter_resets = h.counter_resets;
    s.link_seen_active = h.link_seen_active;
    return s;
  }
};

DeviceHealthTracker::DeviceHealthTracker(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
DeviceHealthTracker::~DeviceHealthTracker() = default;

StatusOr<std::unique_ptr<DeviceHealthTracker>> DeviceHealthTracker::Create(
    const DeviceHealthOptions& options) {
  if (Status st = options.Validate(); !st.ok()) {
    return st.WithContext("device health options");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  return std::unique_ptr<DeviceHealthTracker>(
      new DeviceHealthTracker(std::move(impl)));
}

Status DeviceHealthTracker::Observe(const HealthSample& sample) {
  if (sample.node.empty()) {
    return InvalidArgumentError("health sample without a node name");
  }
  if (sample.time == Timestamp{}) {
    return InvalidArgumentError("health sample of node " + sample.node +
                                " without a time");
  }
  Impl& m = *impl_;
  // Agents' samples tend to arrive in the same node order round after
  // round: try the node after the last one before hashing the name.
  uint32_t node_id = m.next_node;
  if (node_id >= m.nodes.size() || m.nodes[node_id].name != sample.node) {
    auto [it, added] = m.node_ids.try_emplace(sample.node, m.nodes.size());
    if (added) {
      m.nodes.emplace_back();
      m.nodes.back().name = sample.node;
    }
    node_id = it->second;
  }
  m.next_node = node_id + 1;
  const int64_t t_us = HealthMicros(sample.time);
  if (t_us < m.nodes[node_id].last_us) {
    return InvalidArgumentError(
        "health sample of node " + sample.node + " at " + std::to_string(t_us) +
        " us is older than its previous one at " +
        std::to_string(m.nodes[node_id].last_us) + " us");
  }
  m.nodes[node_id].last_us = t_us;
  for (size_t i = 0; i < sample.gpus.size(); ++i) {
    m.ObserveGpu(node_id, i, sample.gpus[i], t_us);
  }
  for (size_t i = 0; i < sample.ports.size(); ++i) {
    m.ObservePort(node_id, i, sample.ports[i], t_us);
  }
  return OkStatus();
}

std::vector<DeviceHealthStatus> DeviceHealthTracker::States() const {
  const Impl& m = *impl_;
  std::vector<uint32_t> order(m.hot.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (m.hot[a].state != m.hot[b].state) {
      return m.hot[a].state > m.hot[b].state;
    }
    const HealthDevice& x = m.cold[a];
    const HealthDevice& y = m.cold[b];
    if (x.ref.node != y.ref.node) return x.ref.node < y.ref.node;
    if (x.ref.kind != y.ref.kind) return x.ref.kind < y.ref.kind;
    if (x.gpu_index != y.gpu_index) return x.gpu_index < y.gpu_index;
    if (x.ref.device != y.ref.device) return x.ref.device < y.ref.device;
    if (x.ref.port != y.ref.port) return x.ref.port < y.ref.port;
    return x.ref.id < y.ref.id;
  });
  std::vector<DeviceHealthStatus> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back(m.StatusOf(i));
  return out;
}

StatusOr<DeviceHealthStatus> DeviceHealthTracker::State(
    HealthDeviceKind kind, std::string_view id) const {
  const auto& ids =
      kind == HealthDeviceKind::kGpu ? impl_->gpu_ids : impl_->port_ids;
  auto it = ids.find(std::string(id));
  if (it == ids.end()) {
    return NotFoundError(std::string(HealthDeviceKindName(kind)) + " " +
                         std::string(id) + " was never observed");
  }
  return impl_->StatusOf(it->second);
}

std::vector<HealthTransition> DeviceHealthTracker::TransitionsSince(
    Timestamp since) const {
  std::vector<HealthTransition> out;
  for (const HealthTransition& t : impl_->transitions) {
    if (t.time >= since) out.push_back(t);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const HealthTransition& a, const HealthTransition& b) {
                     return a.time < b.time;
                   });
  return out;
}

std::vector<HealthTransition> DeviceHealthTracker::TransitionsAfter(
    uint64_t sequence) const {
  const auto& kept = impl_->transitions;
  if (kept.empty() || sequence >= kept.back().sequence) return {};
  const uint64_t first = kept.front().sequence;
  const size_t start = sequence < first ? 0 : sequence - first + 1;
  return std::vector<HealthTransition>(
      kept.begin() + static_cast<ptrdiff_t>(start), kept.end());
}

uint64_t DeviceHealthTracker::observations() const {
  return impl_->observations;
}
uint64_t DeviceHealthTracker::last_sequence() const { return impl_->sequence; }

StatusOr<DeviceHealthReport> ComputeDeviceHealth(
    std::span<const HealthSample> samples, const DeviceHealthOptions& options) {
  DeviceHealthOptions all = options;
  all.max_transitions = std::numeric_limits<size_t>::max();
  auto tracker = DeviceHealthTracker::Create(all);
  if (!tracker.ok()) return tracker.status();
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return samples[a].time < samples[b].time;
  });
  for (size_t i : order) {
    if (Status st = (*tracker)->Observe(samples[i]); !st.ok()) {
      return st.WithContext("samples[" + std::to_string(i) + "]");
    }
  }
  DeviceHealthReport report;
  report.devices = (*tracker)->States();
  report.transitions = (*tracker)->TransitionsSince(Timestamp::min());
  return report;
}

}  // namespace lens
