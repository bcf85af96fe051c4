// dev/dri/by-path: udev's persistent names for DRM nodes (60-drm.rules:
// "$env{ID_PATH}-card" and "$env{ID_PATH}-render"), where ID_PATH of a PCI
// device is "pci-<domain:bus:device.function>". A compute partition's nodes
// belong to a platform device ("platform-amdgpu_xcp_3-render"; amdgpu
// allocates seven per GPU at load, drivers/gpu/drm/amd/amdgpu/amdgpu_xcp.c,
// and uses them for partitions 1..n-1) that carries no PCI address: the KFD
// topology ties them to their GPU, since each partition's KFD node gives its
// render minor and the GPU's PCI address (MatchKfdNodes).
#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>

#include "core/kernel_file.h"
#include "gpu/amdgpu_sysfs.h"
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

std::string LowerHex(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<uint64_t> Hex(std::string_view text) {
  uint64_t v = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (ec != std::errc() || ptr != text.data() + text.size())
    return std::nullopt;
  return v;
}

// What MatchKfdNodes needs of a PCI GPU's mapping.
AmdKfdKey KeyOf(const DriMapping& m) {
  AmdKfdKey key;
  const size_t colon = m.bdf.find(':');
  const std::string_view rest = std::string_view(m.bdf).substr(colon + 1);
  key.pci_domain = Hex(std::string_view(m.bdf).substr(0, colon)).value_or(0);
  const uint64_t bus = Hex(rest.substr(0, 2)).value_or(0);
  const uint64_t device = Hex(rest.substr(3, 2)).value_or(0);
  const uint64_t function = Hex(rest.substr(6, 1)).value_or(0);
  key.pci_devid = static_cast<uint32_t>(bus << 8 | device << 3 | function);
  std::string_view render = m.render;
  uint64_t minor = 0;
  if (render.substr(0, 7) == "renderD" &&
      std::from_chars(render.data() + 7, render.data() + render.size(), minor)
              .ec == std::errc()) {
    key.render_minor = minor;
  }
  return key;
}

// Adds the nodes of each GPU's partitions 1.. to `out` (PCI mappings only
// on entry), from the amdgpu_xcp nodes in by-path (`xcp`: platform device
// name -> its nodes) and the KFD topology. Nothing when KFD is unreadable.
void AddPartitions(const HostRoots& roots,
                   const std::map<std::string, DriMapping>& xcp,
                   std::vector<DriMapping>* out) {
  StatusOr<KfdTopology> topology = ReadKfdTopology(roots.sysfs);
  if (!topology.ok()) return;
  std::vector<AmdKfdKey> keys;
  for (const DriMapping& m : *out) keys.push_back(KeyOf(m));
  const std::vector<std::vector<const KfdNode*>> nodes =
      MatchKfdNodes(keys, topology->nodes);
  const size_t gpus = out->size();
  for (size_t g = 0; g < gpus; ++g) {
    for (size_t k = 1; k < nodes[g].size(); ++k) {
      std::optional<uint64_t> minor = nodes[g][k]->Property("drm_render_minor");
      if (!minor) continue;
      const std::string render = "renderD" + std::to_string(*minor);
      for (const auto& [device, m] : xcp) {
        if (m.render != render) continue;
        out->push_back(
            DriMapping{(*out)[g].bdf, m.card, m.render, static_cast<int>(k)});
      }
    }
  }
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
  std::map<std::string, DriMapping> xcp;  // by platform device name
  for (const std::string& name : *names) {
    std::string_view entry = name;
    const bool is_pci = entry.substr(0, 4) == "pci-";
    const bool is_xcp = entry.substr(0, 20) == "platform-amdgpu_xcp_";
    if (!is_pci && !is_xcp) continue;
    entry.remove_prefix(is_pci ? 4 : 9);
    bool is_card =
        entry.size() > 5 && entry.substr(entry.size() - 5) == "-card";
    bool is_render =
        entry.size() > 7 && entry.substr(entry.size() - 7) == "-render";
    if (!is_card && !is_render) continue;
    if (is_xcp) {
      LENS_ASSIGN_OR_RETURN(std::string node,
                            ReadKernelLinkName(dir + "/" + name));
      DriMapping& m = xcp[std::string(entry.substr(0, entry.rfind('-')))];
      (is_card ? m.card : m.render) = std::move(node);
      continue;
    }
    std::string bdf = LowerHex(entry.substr(0, entry.rfind('-')));
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
  if (!xcp.empty() && !out.empty()) {
    AddPartitions(roots, xcp, &out);
    std::stable_sort(out.begin(), out.end(),
                     [](const DriMapping& a, const DriMapping& b) {
                       return std::tie(a.bdf, a.partition_id) <
                              std::tie(b.bdf, b.partition_id);
                     });
  }
  return out;
}

}  // namespace lens
