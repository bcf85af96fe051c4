// dev/dri/by-path: udev's persistent names for DRM nodes (60-drm.rules:
// "$env{ID_PATH}-card" and "$env{ID_PATH}-render"), where ID_PATH of a PCI
// device is "pci-<domain:bus:device.function>". Other entries (a partition's
// platform device, "platform-amdgpu_xcp_3-render") carry no PCI address and
// are not part of the mapping.
#include <algorithm>
#include <map>

#include "core/kernel_file.h"
#include "lens/gpu.h"

namespace lens {
namespace {

bool IsHex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// "0000:0c:00.0" (a VMD domain has 5 hex digits: "10000:e1:00.0").
bool IsBdf(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  std::string_view rest = text.substr(colon + 1);
  return IsHex(text.substr(0, colon)) && rest.size() == 7 && rest[2] == ':' &&
         rest[5] == '.' && IsHex(rest.substr(0, 2)) &&
         IsHex(rest.substr(3, 2)) && rest[6] >= '0' && rest[6] <= '7';
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

StatusOr<std::vector<DriMapping>> ReadDriMapping(const HostRoots& roots) {
  const std::string dir = roots.dev + "/dri/by-path";
  StatusOr<std::vector<std::string>> names = ListKernelDir(dir);
  if (!names.ok()) {
    if (names.status().code() == StatusCode::kNotFound) {
      return NotFoundError(dir + " does not exist: no DRM devices");
    }
    return names.status();
  }
  std::map<std::string, DriMapping> by_bdf;
  for (const std::string& name : *names) {
    std::string_view entry = name;
    if (entry.substr(0, 4) != "pci-") continue;
    entry.remove_prefix(4);
    bool is_card =
        entry.size() > 5 && entry.substr(entry.size() - 5) == "-card";
    bool is_render =
        entry.size() > 7 && entry.substr(entry.size() - 7) == "-render";
    if (!is_card && !is_render) continue;
    std::string bdf = Lower(entry.substr(0, entry.rfind('-')));
    if (!IsBdf(bdf)) continue;
    LENS_ASSIGN_OR_RETURN(std::string node,
                          ReadKernelLinkName(dir + "/" + name));
    DriMapping& mapping = by_bdf[bdf];
    mapping.bdf = bdf;
    (is_card ? mapping.card : mapping.render) = std::move(node);
  }
  std::vector<DriMapping> out;
  out.reserve(by_bdf.size());
  for (auto& [bdf, mapping] : by_bdf) out.push_back(std::move(mapping));
  return out;
}

}  // namespace lens
