// The text of the model's enums: one table each, used by the store, the wire
// conversion, the REST writers and the Python module.
#include "lens/model.h"

#include <rapidjson/document.h>

#include <array>
#include <utility>

#include "core/json.h"
#include "core/labels.h"

namespace lens {
namespace {

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& t,
                        E value, std::string_view fallback) {
  for (const auto& [e, name] : t)
    if (e == value) return name;
  return fallback;
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, std::string_view>, N>& t,
                         std::string_view text) {
  for (const auto& [e, name] : t)
    if (name == text) return e;
  return std::nullopt;
}

using S = ContainerState;
constexpr std::array<std::pair<S, std::string_view>, 6> kStates = {{
    {S::kUnknown, "unknown"},
    {S::kCreated, "created"},
    {S::kRunning, "running"},
    {S::kPaused, "paused"},
    {S::kExited, "exited"},
    {S::kDeleted, "deleted"},
}};

using T = ContainerEventType;
constexpr std::array<std::pair<T, std::string_view>, 11> kEventTypes = {{
    {T::kUnknown, "unknown"},
    {T::kCreate, "create"},
    {T::kUpdate, "update"},
    {T::kTaskCreate, "task-create"},
    {T::kStart, "start"},
    {T::kPause, "pause"},
    {T::kResume, "resume"},
    {T::kOom, "oom"},
    {T::kExit, "exit"},
    {T::kTaskDelete, "task-delete"},
    {T::kDelete, "delete"},
}};

constexpr std::array<std::pair<DeviceKind, std::string_view>, 3> kKinds = {{
    {DeviceKind::kGpu, "gpu"},
    {DeviceKind::kRdma, "rdma"},
    {DeviceKind::kOther, "device"},
}};

}  // namespace

std::string LabelsToJson(const Labels& labels) {
  JsonWriter w;
  w.StartObject();
  for (const auto& [key, value] : labels) w.Member(key, value);
  w.EndObject();
  return w.Take();
}

std::optional<Labels> LabelsFromJson(std::string_view json) {
  if (json.empty()) return Labels();
  // rapidjson reads an embedded NUL as the end of the text.
  if (json.find('\0') != std::string_view::npos) return std::nullopt;
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  Labels out;
  for (const auto& m : doc.GetObject()) {
    if (!m.value.IsString()) continue;
    out.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                std::string(m.value.GetString(), m.value.GetStringLength()));
  }
  return out;
}

std::string_view ToString(ContainerState state) {
  return NameOf(kStates, state, "unknown");
}
ContainerState ParseContainerState(std::string_view text) {
  return ValueOf(kStates, text).value_or(S::kUnknown);
}
std::string_view ToString(ContainerEventType type) {
  return NameOf(kEventTypes, type, "unknown");
}
ContainerEventType ParseContainerEventType(std::string_view text) {
  return ValueOf(kEventTypes, text).value_or(T::kUnknown);
}
std::string_view ToString(DeviceKind kind) {
  return NameOf(kKinds, kind, "device");
}
DeviceKind ParseDeviceKind(std::string_view text) {
  return ValueOf(kKinds, text).value_or(DeviceKind::kOther);
}

}  // namespace lens
