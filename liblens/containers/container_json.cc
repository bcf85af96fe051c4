// ContainerJson / ContainersJson / ContainersText: a container record as the
// node REST API (/pods) and `lens containers` show it (the JSON is
// core/record_json.h's, the one shape every surface writes).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/record_json.h"
#include "core/text.h"
#include "lens/containers.h"

namespace lens {
namespace {

// Records normally hold valid UTF-8 (the store sanitises what it writes),
// but a record straight from containerd may not; the table is made of it.
std::string Utf8(std::string_view s) { return ValidUtf8(s); }

// ---- the terminal table ----------------------------------------------------

// A table cell: valid UTF-8 with control characters shown as '?', so a name
// can neither break the layout nor send escape sequences to the terminal.
std::string Cell(std::string_view s) {
  std::string out = Utf8(s);
  for (char& ch : out) {
    const auto b = static_cast<unsigned char>(ch);
    if (b < 0x20 || b == 0x7f) ch = '?';
  }
  return out.empty() ? "-" : out;
}

// Columns on screen: one per code point (wide CJK characters aside).
size_t Width(std::string_view s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

void AddOnce(std::vector<std::string>* list, const std::string& value) {
  if (std::find(list->begin(), list->end(), value) == list->end()) {
    list->push_back(value);
  }
}

// "gpu:SERIAL1,SERIAL2 rdma:mlx5_0 (pod-resources)": keys grouped by kind in
// record order; the source once when all devices share it, else per group.
std::string DevicesCell(const std::vector<ContainerDeviceRecord>& devices) {
  struct Group {
    DeviceKind kind;
    std::vector<std::string> keys;
    std::vector<std::string> sources;
  };
  std::vector<Group> groups;
  std::vector<std::string> all_sources;
  for (const ContainerDeviceRecord& d : devices) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const Group& x) { return x.kind == d.kind; });
    if (g == groups.end()) {
      g = groups.insert(groups.end(), Group{d.kind, {}, {}});
    }
    g->keys.push_back(d.device_key.empty() ? d.bdf : d.device_key);
    AddOnce(&g->sources, d.source);
    AddOnce(&all_sources, d.source);
  }
  std::vector<std::string> parts;
  for (const Group& g : groups) {
    parts.push_back(std::string(ToString(g.kind)) + ":" + Join(g.keys, ","));
    if (all_sources.size() > 1) {
      parts.back() += " (" + Join(g.sources, "+") + ")";
    }
  }
  if (all_sources.size() == 1) parts.push_back("(" + all_sources.front() + ")");
  return Cell(Join(parts, " "));
}

std::vector<std::string> Row(const ContainerRecord& c) {
  const std::string pod = c.pod_namespace.empty() && c.pod_name.empty()
                              ? ""
                              : c.pod_namespace + "/" + c.pod_name;
  return {Cell(c.container_id.substr(0, 12)), Cell(pod), Cell(c.container_name),
          // An unknown state shows as "-", like any field not known.
          c.state == ContainerState::kUnknown ? "-" : Cell(ToString(c.state)),
          c.privileged ? "yes" : "no", DevicesCell(c.devices)};
}

}  // namespace

std::string ContainerJson(const ContainerRecord& container) {
  JsonWriter w;
  WriteContainerJson(w, container);
  return w.Take();
}

std::string ContainersJson(const std::vector<ContainerRecord>& containers) {
  JsonWriter w;
  w.StartObject();
  w.Key("containers");
  w.StartArray();
  for (const ContainerRecord& c : containers) WriteContainerJson(w, c);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string ContainersText(const std::vector<ContainerRecord>& containers) {
  if (containers.empty()) return "no containers\n";
  std::vector<std::vector<std::string>> rows = {
      {"CONTAINER", "POD", "CONTAINER NAME", "STATE", "PRIV", "DEVICES"}};
  for (const ContainerRecord& c : containers) rows.push_back(Row(c));
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const std::vector<std::string>& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], Width(row[i]));
    }
  }
  std::string out;
  for (const std::vector<std::string>& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out.append(widths[i] - Width(row[i]) + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

}  // namespace lens
