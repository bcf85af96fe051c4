#include "rdma/rdma_sysfs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>
#include <vector>

#include "core/kernel_file.h"
#include "lens/log.h"

namespace lens::rdma {
namespace {

// The trimmed value of `path`, or "" when the file does not exist (drivers
// leave out what they do not know: rxe has no board_id, siw no fw_ver).
StatusOr<std::string> ReadOptionalValue(const std::string& path) {
  StatusOr<std::string> value = ReadKernelValue(path);
  if (!value.ok() && value.status().code() == StatusCode::kNotFound) {
    return std::string();
  }
  return value;
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)); }

// Port directories are named by number; ListKernelDir sorts them as text.
StatusOr<std::vector<int>> PortNumbers(const std::string& ports_dir) {
  LENS_ASSIGN_OR_RETURN(std::vector<std::string> names,
                        ListKernelDir(ports_dir));
  std::vector<int> ports;
  for (const std::string& name : names) {
    int port = 0;
    auto [ptr, ec] =
        std::from_chars(name.data(), name.data() + name.size(), port);
    if (ec != std::errc() || ptr != name.data() + name.size()) {
      return InvalidArgumentError(ports_dir + "/" + name +
                                  ": port directory name is not a number");
    }
    ports.push_back(port);
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

// PCI facts reached through the `device` link: the function's address, its
// NUMA node and the netdevs it registered.
Status ReadPciFacts(const std::string& device_dir, RdmaDevice* device) {
  const std::string link = device_dir + "/device";
  StatusOr<std::string> target = ReadKernelLinkName(link);
  if (!target.ok()) {
    // Software devices (rxe, siw) may have no PCI parent.
    if (target.status().code() == StatusCode::kNotFound) return OkStatus();
    return target.status();
  }
  if (IsPciAddress(*target)) device->bdf = *target;

  LENS_ASSIGN_OR_RETURN(std::string numa,
                        ReadOptionalValue(link + "/numa_node"));
  if (!numa.empty()) {
    // A garbage numa_node costs only that field, never the device or the
    // others: the warning names the file.
    StatusOr<int64_t> node = ParseKernelInt64(numa, link + "/numa_node");
    if (!node.ok()) {
      LENS_LOG(WARN)
              .Field("file", link + "/numa_node")
              .Field("error", node.status())
          << "unreadable NUMA node left unset";
    } else if (*node >= 0) {
      device->numa_node = static_cast<int>(*node);  // -1: unknown
    }
  }

  StatusOr<std::vector<std::string>> netdevs = ListKernelDir(link + "/net");
  if (netdevs.ok()) {
    device->netdevs = *std::move(netdevs);
  } else if (netdevs.status().code() != StatusCode::kNotFound) {
    return netdevs.status();
  }
  return OkStatus();
}

// The port index (0-based) a netdev of the device's PCI function serves:
// dev_port, else dev_id (drivers that predate dev_port, Linux 3.15, kept
// using dev_id for it, printed "%#x"). nullopt when neither parses.
std::optional<int> NetdevPortIndex(const std::string& netdev_dir) {
  for (const char* name : {"/dev_port", "/dev_id"}) {
    StatusOr<std::string> text = ReadOptionalValue(netdev_dir + name);
    if (!text.ok() || text->empty()) continue;
    StatusOr<uint64_t> index = ParseKernelUint64(*text, netdev_dir + name);
    if (index.ok() && *index < 4096) return static_cast<int>(*index);
  }
  return std::nullopt;
}

// The netdevs a RoCE port's GID table names (gid_attrs/ndevs/<index>), in
// GID-index order, each once. Entries without a netdev (an InfiniBand GID,
// an unused slot) fail to read with EINVAL in the kernel: skipped.
std::vector<std::string> GidTableNetdevs(const std::string& port_dir) {
  const std::string dir = port_dir + "/gid_attrs/ndevs";
  StatusOr<std::vector<std::string>> names = ListKernelDir(dir);
  std::vector<std::string> out;
  if (!names.ok()) return out;
  std::vector<std::pair<uint64_t, const std::string*>> entries;
  for (const std::string& name : *names) {
    StatusOr<uint64_t> index = ParseKernelUint64(name, dir);
    if (index.ok()) entries.emplace_back(*index, &name);
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [index, name] : entries) {
    StatusOr<std::string> netdev = ReadKernelValue(dir + "/" + *name);
    if (!netdev.ok() || netdev->empty()) continue;
    if (std::find(out.begin(), out.end(), *netdev) == out.end()) {
      out.push_back(*std::move(netdev));
    }
  }
  return out;
}

// Fills each port's netdevs: the GID table's on Ethernet (RoCE) ports, else
// the device's netdevs whose port index is the port's.
void AssignPortNetdevs(const std::string& device_dir, RdmaDevice* device) {
  std::vector<std::pair<int, std::string>> by_port;  // (port index, netdev)
  for (const std::string& netdev : device->netdevs) {
    std::optional<int> index =
        NetdevPortIndex(device_dir + "/device/net/" + netdev);
    if (index) by_port.emplace_back(*index, netdev);
  }
  for (RdmaPort& port : device->ports) {
    if (port.link_layer == "Ethernet") {
      port.netdevs =
          GidTableNetdevs(device_dir + "/ports/" + std::to_string(port.port));
      if (!port.netdevs.empty()) continue;
    }
    for (const auto& [index, netdev] : by_port) {
      if (index == port.port - 1) port.netdevs.push_back(netdev);
    }
  }
}

}  // namespace

std::string_view StripEnumPrefix(std::string_view text) {
  text = TrimKernelValue(text);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  if (digits > 0 && text.substr(digits, 2) == ": ") {
    text.remove_prefix(digits + 2);
  }
  return text;
}

std::optional<double> ParseRateGbps(std::string_view rate) {
  rate = TrimKernelValue(rate);
  double value = 0;
  auto [ptr, ec] = std::from_chars(rate.data(), rate.data() + rate.size(),
                                   value, std::chars_format::fixed);
  if (ec != std::errc() || ptr == rate.data()) return std::nullopt;
  std::string_view rest(ptr,
                        static_cast<size_t>(rate.data() + rate.size() - ptr));
  if (rest.substr(0, 7) != " Gb/sec") return std::nullopt;
  return value;
}

bool IsPciAddress(std::string_view name) {
  // <domain>:<bus>:<device>.<function>, e.g. 0000:0d:00.0
  size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  std::string_view rest = name.substr(colon + 1);
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return false;
  for (size_t i = 0; i < colon; ++i) {
    if (!IsHex(name[i])) return false;
  }
  return IsHex(rest[0]) && IsHex(rest[1]) && IsHex(rest[3]) && IsHex(rest[4]) &&
         rest[6] >= '0' && rest[6] <= '7';
}

StatusOr<RdmaPort> ReadRdmaPort(const std::string& port_dir, int port) {
  RdmaPort out;
  out.port = port;
  LENS_ASSIGN_OR_RETURN(std::string state,
                        ReadOptionalValue(port_dir + "/state"));
  out.state = StripEnumPrefix(state);
  LENS_ASSIGN_OR_RETURN(std::string phys,
                        ReadOptionalValue(port_dir + "/phys_state"));
  out.phys_state = StripEnumPrefix(phys);
  LENS_ASSIGN_OR_RETURN(out.link_layer,
                        ReadOptionalValue(port_dir + "/link_layer"));
  LENS_ASSIGN_OR_RETURN(out.rate, ReadOptionalValue(port_dir + "/rate"));
  out.rate_gbps = ParseRateGbps(out.rate);
  LENS_ASSIGN_OR_RETURN(std::string lid, ReadOptionalValue(port_dir + "/lid"));
  if (!lid.empty()) {
    LENS_ASSIGN_OR_RETURN(uint64_t value,
                          ParseKernelUint64(lid, port_dir + "/lid"));
    if (value > 0xffff) {
      return InvalidArgumentError(port_dir + "/lid: " + lid +
                                  " is not a 16-bit LID");
    }
    out.lid = static_cast<uint32_t>(value);
  }
  return out;
}

StatusOr<RdmaDevice> ReadRdmaDevice(const std::string& device_dir,
                                    const std::string& name) {
  RdmaDevice device;
  device.name = name;
  LENS_ASSIGN_OR_RETURN(device.node_guid,
                        ReadOptionalValue(device_dir + "/node_guid"));
  LENS_ASSIGN_OR_RETURN(device.sys_image_guid,
                        ReadOptionalValue(device_dir + "/sys_image_guid"));
  LENS_ASSIGN_OR_RETURN(device.fw_version,
                        ReadOptionalValue(device_dir + "/fw_ver"));
  LENS_ASSIGN_OR_RETURN(device.board_id,
                        ReadOptionalValue(device_dir + "/board_id"));
  LENS_ASSIGN_OR_RETURN(device.hca_type,
                        ReadOptionalValue(device_dir + "/hca_type"));
  LENS_ASSIGN_OR_RETURN(std::string node_type,
                        ReadOptionalValue(device_dir + "/node_type"));
  device.node_type = StripEnumPrefix(node_type);
  LENS_RETURN_IF_ERROR(ReadPciFacts(device_dir, &device));

  const std::string ports_dir = device_dir + "/ports";
  LENS_ASSIGN_OR_RETURN(std::vector<int> ports, PortNumbers(ports_dir));
  for (int port : ports) {
    LENS_ASSIGN_OR_RETURN(
        RdmaPort value,
        ReadRdmaPort(ports_dir + "/" + std::to_string(port), port));
    device.ports.push_back(std::move(value));
  }
  AssignPortNetdevs(device_dir, &device);
  return device;
}

}  // namespace lens::rdma
