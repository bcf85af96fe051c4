#include "containers/device_ids.h"

#include <algorithm>
#include <charconv>

#include "core/kernel_file.h"

namespace lens::containers {
namespace {

// "cpx_nps1", "spx_nps4", ...: the AMD device plugin's resource per
// partition mode (compute "_" memory partition, lower case).
bool IsAmdPartitionResource(std::string_view item) {
  return item.size() == 8 &&
         std::string_view("sdtqc").find(item[0]) != std::string_view::npos &&
         item.substr(1, 3) == "px_" && item.substr(4, 3) == "nps" &&
         item[7] >= '1' && item[7] <= '8';
}

// Decimal digits only, fitting 32 bits.
std::optional<uint32_t> Uint32(std::string_view text) {
  uint32_t v = 0;
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<int> NumberAfter(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  if (name.empty() || name[0] < '0' || name[0] > '9') return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || end != name.data() + name.size()) {
    return std::nullopt;
  }
  return n;
}

std::optional<std::string_view> FieldValue(std::string_view text,
                                           std::string_view key,
                                           char separator) {
  while (!text.empty()) {
    const size_t eol = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(std::min(eol + 1, text.size()));
    const size_t sep = line.find(separator);
    if (sep != std::string_view::npos &&
        TrimKernelValue(line.substr(0, sep)) == key) {
      return TrimKernelValue(line.substr(sep + 1));
    }
  }
  return std::nullopt;
}

std::string NormalizeBdf(std::string_view text) {
  std::string s = Lower(text);
  if (s.size() == 7 && s[2] == ':' && s[5] == '.') return "0000:" + s;
  size_t colon = s.find(':');
  while (colon != std::string::npos && colon > 4 && s[0] == '0') {
    s.erase(0, 1);
    --colon;
  }
  return s;
}

ResourceKind ClassifyResource(std::string_view resource_name) {
  const std::string name = Lower(resource_name);
  const size_t slash = name.find('/');
  const std::string domain =
      slash == std::string::npos ? "" : name.substr(0, slash);
  const std::string item =
      name.substr(slash == std::string::npos ? 0 : slash + 1);
  auto has = [&item](const char* part) {
    return item.find(part) != std::string::npos;
  };
  if ((domain == "amd.com" && (has("gpu") || IsAmdPartitionResource(item))) ||
      (domain == "nvidia.com" &&
       (item.starts_with("gpu") || item.starts_with("mig-")))) {
    return ResourceKind::kGpu;
  }
  if (domain == "rdma" || has("rdma") || has("hca")) return ResourceKind::kRdma;
  return ResourceKind::kOther;
}

std::optional<MigId> ParseMigId(std::string_view id) {
  if (!id.starts_with("MIG-")) return std::nullopt;
  MigId mig;
  if (!id.starts_with("MIG-GPU-")) {
    if (id.size() <= 4 || id.find('/') != std::string_view::npos) {
      return std::nullopt;
    }
    mig.uuid = std::string(id);
    return mig;
  }
  // MIG-GPU-<uuid>/<gi>/<ci>; the instance ids are kept when both parse.
  std::string_view rest = id.substr(4);
  const size_t s1 = std::min(rest.find('/'), rest.size());
  mig.parent_uuid = std::string(rest.substr(0, s1));
  if (s1 < rest.size()) {
    std::string_view ids = rest.substr(s1 + 1);
    const size_t s2 = std::min(ids.find('/'), ids.size());
    mig.gpu_instance_id = Uint32(ids.substr(0, s2));
    mig.compute_instance_id =
        s2 < ids.size() ? Uint32(ids.substr(s2 + 1)) : std::nullopt;
    if (!mig.gpu_instance_id || !mig.compute_instance_id) {
      mig.gpu_instance_id = mig.compute_instance_id = std::nullopt;
    }
  }
  return mig;
}

}  // namespace lens::containers
