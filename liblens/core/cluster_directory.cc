// The cluster directory's YAML (core/cluster_directory.h).
#include "core/cluster_directory.h"

#include <yaml-cpp/yaml.h>

#include <set>

namespace lens {
namespace {

constexpr size_t kMaxBytes = 1 << 20;
const std::set<std::string, std::less<>> kKeys = {
    "name",  "databaseUrl", "prometheusUrl", "prometheusToken",
    "stale", "updated"};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string Entry(size_t i, const std::string& name) {
  return "clusters[" + std::to_string(i) + "]" +
         (name.empty() ? "" : " (" + name + ")");
}

}  // namespace

bool IsClusterName(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') {
    return false;
  }
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return true;
}

Status ClusterEndpoints::Validate() const {
  if (!IsClusterName(name)) {
    return InvalidArgumentError(
        "name: want a DNS label (a-z, 0-9, '-', at most 63)");
  }
  if (!StartsWith(database_url, "postgresql://") &&
      !StartsWith(database_url, "postgres://") &&
      !StartsWith(database_url, "sqlite://")) {
    return InvalidArgumentError(
        "databaseUrl: want a postgresql:// or sqlite:// URL");
  }
  if (!prometheus_url.empty() && !StartsWith(prometheus_url, "http://") &&
      !StartsWith(prometheus_url, "https://")) {
    return InvalidArgumentError("prometheusUrl: want an http(s):// URL");
  }
  if (prometheus_token.find_first_of("\r\n") != std::string::npos) {
    return InvalidArgumentError("prometheusToken: must be one line");
  }
  return OkStatus();
}

StatusOr<std::string> RenderClusterDirectory(
    const std::vector<ClusterEndpoints>& clusters) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "clusters" << YAML::Value
      << YAML::BeginSeq;
  std::set<std::string> names;
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterEndpoints& c = clusters[i];
    LENS_RETURN_IF_ERROR(c.Validate().WithContext(Entry(i, "")));
    if (!names.insert(c.name).second) {
      return InvalidArgumentError(Entry(i, c.name) + ": name: duplicate");
    }
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << c.name;
    out << YAML::Key << "databaseUrl" << YAML::Value << YAML::DoubleQuoted
        << c.database_url;
    if (!c.prometheus_url.empty()) {
      out << YAML::Key << "prometheusUrl" << YAML::Value << YAML::DoubleQuoted
          << c.prometheus_url;
    }
    if (!c.prometheus_token.empty()) {
      out << YAML::Key << "prometheusToken" << YAML::Value << YAML::DoubleQuoted
          << c.prometheus_token;
    }
    out << YAML::Key << "stale" << YAML::Value << c.stale;
    out << YAML::Key << "updated" << YAML::Value << c.updated_unix;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  if (!out.good()) return InternalError(out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

StatusOr<std::vector<ClusterEndpoints>> ParseClusterDirectory(
    std::string_view text) {
  if (text.size() > kMaxBytes) {
    return ResourceExhaustedError("cluster directory: larger than 1 MiB");
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // The mark only: the message of a parse error may quote the text.
    return InvalidArgumentError("cluster directory: not YAML (line " +
                                std::to_string(e.mark.line + 1) + ")");
  }
  if (!root.IsMap() || !root["clusters"]) {
    return InvalidArgumentError("cluster directory: want a `clusters` list");
  }
  const YAML::Node list = root["clusters"];
  if (!list.IsSequence()) {
    return InvalidArgumentError("cluster directory: clusters: want a list");
  }
  std::vector<ClusterEndpoints> out;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node entry = list[i];
    if (!entry.IsMap()) {
      return InvalidArgumentError(Entry(i, "") + ": want a map");
    }
    ClusterEndpoints c;
    try {
      for (const auto& kv : entry) {
        const std::string key = kv.first.as<std::string>();
        if (!kKeys.count(key)) {
          return InvalidArgumentError(Entry(i, "") + ": " + key +
                                      ": unknown key");
        }
        if (!kv.second.IsScalar()) {
          return InvalidArgumentError(Entry(i, "") + ": " + key +
                                      ": want a scalar");
        }
        const std::string value = kv.second.as<std::string>();
        if (key == "name") c.name = value;
        if (key == "databaseUrl") c.database_url = value;
        if (key == "prometheusUrl") c.prometheus_url = value;
        if (key == "prometheusToken") c.prometheus_token = value;
        if (key == "stale") c.stale = kv.second.as<bool>();
        if (key == "updated") c.updated_unix = kv.second.as<int64_t>();
      }
    } catch (const YAML::Exception&) {
      return InvalidArgumentError(Entry(i, c.name) +
                                  ": stale wants true/false, updated an "
                                  "integer");
    }
    LENS_RETURN_IF_ERROR(c.Validate().WithContext(Entry(i, c.name)));
    if (!names.insert(c.name).second) {
      return InvalidArgumentError(Entry(i, c.name) + ": name: duplicate");
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace lens
