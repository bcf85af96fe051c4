#include "gpu/kfd_topology.h"

#include <algorithm>
#include <charconv>

#include "core/kernel_file.h"

namespace lens {
namespace {

// Node directories are decimal numbers; anything else is skipped.
std::optional<int> NodeNumber(std::string_view name) {
  int value = 0;
  auto [ptr, ec] =
      std::from_chars(name.data(), name.data() + name.size(), value);
  if (name.empty() || ec != std::errc() || ptr != name.data() + name.size()) {
    return std::nullopt;
  }
  return value;
}

// True for the errors that mean "this node is not readable by us", which
// leave the node out instead of failing the whole read.
bool IsUnreadable(const Status& status) {
  return status.code() == StatusCode::kNotFound ||
         status.code() == StatusCode::kPermissionDenied;
}

// Reads one node directory; nullopt when it cannot be read.
StatusOr<std::optional<KfdNode>> ReadNode(const std::string& dir, int number) {
  StatusOr<std::string> properties = ReadKernelFile(dir + "/properties");
  if (!properties.ok()) {
    if (IsUnreadable(properties.status())) return std::optional<KfdNode>();
    return properties.status();
  }
  StatusOr<std::string> gpu_id = ReadKernelValue(dir + "/gpu_id");
  if (!gpu_id.ok()) {
    if (IsUnreadable(gpu_id.status())) return std::optional<KfdNode>();
    return gpu_id.status();
  }
  KfdNode node;
  node.node = number;
  LENS_ASSIGN_OR_RETURN(uint64_t id,
                        ParseKernelUint64(*gpu_id, dir + "/gpu_id"));
  if (id > UINT32_MAX) {
    return InvalidArgumentError(dir + "/gpu_id: " + *gpu_id +
                                " does not fit 32 bits");
  }
  node.gpu_id = static_cast<uint32_t>(id);
  LENS_ASSIGN_OR_RETURN(node.properties,
                        ParseKfdProperties(*properties, dir + "/properties"));
  StatusOr<std::string> name = ReadKernelValue(dir + "/name");
  if (name.ok()) node.name = std::move(*name);
  return std::optional<KfdNode>(std::move(node));
}

}  // namespace

std::optional<uint64_t> KfdNode::Property(std::string_view key) const {
  auto it = properties.find(key);
  if (it == properties.end()) return std::nullopt;
  return it->second;
}

StatusOr<std::map<std::string, uint64_t, std::less<>>> ParseKfdProperties(
    std::string_view text, std::string_view where) {
  std::map<std::string, uint64_t, std::less<>> out;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    ++line_number;
    line = TrimKernelValue(line);
    if (line.empty()) continue;
    size_t space = line.find_first_of(" \t");
    std::string context =
        std::string(where) + " line " + std::to_string(line_number);
    if (space == std::string_view::npos) {
      return InvalidArgumentError(context + ": expected \"<key> <value>\"");
    }
    LENS_ASSIGN_OR_RETURN(uint64_t value,
                          ParseKernelUint64(line.substr(space + 1), context));
    out.insert_or_assign(std::string(line.substr(0, space)), value);
  }
  return out;
}

StatusOr<KfdTopology> ReadKfdTopology(const std::string& sysfs_root) {
  const std::string topology = sysfs_root + "/class/kfd/kfd/topology";
  LENS_ASSIGN_OR_RETURN(std::vector<std::string> names,
                        ListKernelDir(topology + "/nodes"));
  KfdTopology out;
  StatusOr<std::string> generation =
      ReadKernelValue(topology + "/generation_id");
  if (generation.ok()) {
    StatusOr<uint64_t> value =
        ParseKernelUint64(*generation, topology + "/generation_id");
    if (value.ok()) out.generation_id = *value;
  }
  for (const std::string& name : names) {
    std::optional<int> number = NodeNumber(name);
    if (!number) continue;
    LENS_ASSIGN_OR_RETURN(std::optional<KfdNode> node,
                          ReadNode(topology + "/nodes/" + name, *number));
    if (node) out.nodes.push_back(std::move(*node));
  }
  std::sort(out.nodes.begin(), out.nodes.end(),
            [](const KfdNode& a, const KfdNode& b) { return a.node < b.node; });
  return out;
}

}  // namespace lens
