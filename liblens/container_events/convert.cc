// ContainerRecord <-> lens.v1.ContainerState and friends.
#include "container_events/convert.h"

#include <chrono>
#include <limits>
#include <optional>

#include "core/json.h"
#include "core/text.h"

namespace lens::container_events {
namespace {

int64_t OptionalMicros(const std::optional<Timestamp>& t) {
  return t ? ToUnixMicros(*t) : 0;
}

std::optional<Timestamp> OptionalTime(int64_t us) {
  if (us == 0) return std::nullopt;
  return FromUnixMicros(us);
}

std::string EventDetailJson(const lens::v1::ContainerState& state) {
  JsonWriter w;
  w.StartObject();
  if (state.has_exit_code()) w.Member("exit_code", int64_t{state.exit_code()});
  if (state.oom_killed()) w.Member("oom_killed", true);
  w.EndObject();
  return w.Take();
}

}  // namespace

int64_t ToUnixMicros(Timestamp t) { return t.time_since_epoch().count(); }

Timestamp FromUnixMicros(int64_t us) {
  return Timestamp(std::chrono::microseconds(us));
}

void ToProto(const ContainerDeviceRecord& device,
             lens::v1::ContainerDevice* out) {
  out->set_kind(std::string(ToString(device.kind)));
  out->set_key(device.device_key);
  out->set_bdf(device.bdf);
  out->set_source(device.source);
}

ContainerDeviceRecord FromProto(const lens::v1::ContainerDevice& device) {
  return {ParseDeviceKind(device.kind()), device.key(), device.bdf(),
          device.source()};
}

void ToProto(const ContainerRecord& c, lens::v1::ContainerState* out) {
  out->set_container_id(c.container_id);
  out->set_runtime_namespace(c.runtime_namespace);
  out->set_pod_uid(c.pod_uid);
  out->set_pod_name(c.pod_name);
  out->set_pod_namespace(c.pod_namespace);
  out->set_container_name(c.container_name);
  out->set_image(c.image);
  out->set_state(std::string(ToString(c.state)));
  out->set_privileged(c.privileged);
  out->set_pid(c.pid);
  out->set_has_exit_code(c.exit_code.has_value());
  out->set_exit_code(c.exit_code.value_or(0));
  auto& labels = *out->mutable_labels();
  labels.clear();
  for (const auto& [key, value] : c.labels) {
    labels[ValidUtf8(key)] = ValidUtf8(value);
  }
  out->set_created_at_us(ToUnixMicros(c.created_at));
  out->set_started_at_us(OptionalMicros(c.started_at));
  out->set_finished_at_us(OptionalMicros(c.finished_at));
  out->set_updated_at_us(ToUnixMicros(c.updated_at));
  out->clear_devices();
  for (const ContainerDeviceRecord& d : c.devices) {
    ToProto(d, out->add_devices());
  }
}

ContainerRecord FromProto(const lens::v1::ContainerState& s,
                          std::string_view node) {
  ContainerRecord c;
  c.container_id = s.container_id();
  c.node = std::string(node);
  c.runtime_namespace = s.runtime_namespace();
  c.pod_uid = s.pod_uid();
  c.pod_name = s.pod_name();
  c.pod_namespace = s.pod_namespace();
  c.container_name = s.container_name();
  c.image = s.image();
  c.state = ParseContainerState(s.state());
  c.privileged = s.privileged();
  c.pid = s.pid();
  if (s.has_exit_code()) c.exit_code = s.exit_code();
  c.labels = Labels(s.labels().begin(), s.labels().end());
  c.created_at = FromUnixMicros(s.created_at_us());
  c.started_at = OptionalTime(s.started_at_us());
  c.finished_at = OptionalTime(s.finished_at_us());
  c.updated_at = FromUnixMicros(s.updated_at_us());
  c.devices.reserve(s.devices_size());
  for (const lens::v1::ContainerDevice& d : s.devices()) {
    c.devices.push_back(FromProto(d));
  }
  return c;
}

void ToProto(const ContainerChange& change, lens::v1::ContainerEvent* out) {
  out->set_event_type(std::string(ToString(change.event.event_type)));
  out->set_at_us(ToUnixMicros(change.event.at));
  ToProto(change.container, out->mutable_container());
  out->mutable_container()->set_oom_killed(change.event.event_type ==
                                           ContainerEventType::kOom);
}

ContainerChange FromProto(const lens::v1::ContainerEvent& event,
                          std::string_view node, uint64_t sequence) {
  ContainerChange change;
  change.container = FromProto(event.container(), node);
  ContainerEventRecord& e = change.event;
  e.container_id = event.container().container_id();
  e.node = std::string(node);
  e.event_type = ParseContainerEventType(event.event_type());
  // The store keeps a signed 64-bit column; no agent gets near the limit.
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  e.sequence = static_cast<int64_t>(sequence > kMax ? kMax : sequence);
  e.detail_json = EventDetailJson(event.container());
  e.at = FromUnixMicros(event.at_us());
  return change;
}

}  // namespace lens::container_events
