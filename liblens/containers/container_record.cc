#include "containers/container_record.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "containers/device_resolver.h"
#include "core/json.h"
#include "core/kernel_file.h"

namespace lens::containers {
namespace {

constexpr size_t kMaxLabels = 64;
constexpr size_t kMaxLabelBytes = 4096;
// All kept labels as the store's JSON column, with room to spare under the
// store's 64 KiB limit (a container whose labels the store refused would be
// lost whole).
constexpr size_t kMaxLabelsJsonBytes = 48 * 1024;

std::string LabelOr(const std::map<std::string, std::string>& labels,
                    const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

}  // namespace

namespace {

// Seconds since the epoch at boot (<procfs>/stat btime), read once per
// procfs root: it does not change, and /proc/stat is large on big machines.
int64_t BootTime(const HostRoots& roots) {
  static std::mutex mu;
  static std::map<std::string, int64_t> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(roots.procfs);
  if (it != cache.end()) return it->second;
  int64_t btime = 0;
  auto boot = ReadKernelFile(roots.procfs + "/stat");
  if (boot.ok()) {
    const size_t at = boot->find("\nbtime ");
    if (at != std::string::npos) {
      btime = std::strtoll(boot->c_str() + at + 7, nullptr, 10);
    }
  }
  if (btime > 0) cache[roots.procfs] = btime;
  return btime;
}

}  // namespace

std::optional<Timestamp> ProcessStartTime(const HostRoots& roots, int64_t pid) {
  if (pid <= 0) return std::nullopt;
  // The process may be gone by now: any read error means "not known".
  auto stat =
      ReadKernelFile(roots.procfs + "/" + std::to_string(pid) + "/stat", 4096);
  if (!stat.ok()) return std::nullopt;
  // Fields after the command name (which may hold spaces and parentheses):
  // state is field 3, starttime field 22.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(close + 1));
  std::string field;
  uint64_t start_ticks = 0;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) start_ticks = std::strtoull(field.c_str(), nullptr, 10);
  }
  const int64_t btime = BootTime(roots);
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  if (start_ticks == 0 || btime <= 0 || ticks_per_s <= 0) return std::nullopt;
  return Timestamp(std::chrono::microseconds(
      btime * 1000000 +
      static_cast<int64_t>(start_ticks * 1000000 /
                           static_cast<uint64_t>(ticks_per_s))));
}

PodAllocations IndexAllocations(
    const std::vector<PodResourcesContainer>& containers) {
  PodAllocations out;
  for (const PodResourcesContainer& c : containers) {
    auto& devices =
        out[std::make_tuple(c.pod_namespace, c.pod_name, c.container_name)];
    devices.insert(devices.end(), c.devices.begin(), c.devices.end());
  }
  return out;
}

ContainerState StateOf(const RuntimeContainer& c) {
  if (!c.has_task) return ContainerState::kCreated;
  if (c.task_status == "stopped") return ContainerState::kExited;
  if (c.task_status == "pausing") return ContainerState::kPaused;
  return ParseContainerState(c.task_status);
}

Labels LimitLabels(const std::map<std::string, std::string>& labels) {
  Labels out;
  size_t json_bytes = 2;  // {}
  std::string escaped;
  for (const auto& [key, value] : labels) {
    if (out.size() == kMaxLabels) break;
    if (key.size() + value.size() > kMaxLabelBytes) continue;
    escaped.clear();
    AppendJsonString(key, &escaped);
    AppendJsonString(value, &escaped);
    if (json_bytes + escaped.size() + 2 > kMaxLabelsJsonBytes) continue;
    json_bytes += escaped.size() + 2;  // ':' and ','
    out.emplace(key, value);
  }
  return out;
}

std::vector<ContainerDeviceRecord> ResolveDevices(const ContainerRecord& record,
                                                  const OciSpecFacts& spec,
                                                  const RecordContext& ctx) {
  std::vector<ContainerDeviceRecord> from_pod_resources;
  if (ctx.allocations != nullptr && !record.pod_name.empty()) {
    auto it = ctx.allocations->find(std::make_tuple(
        record.pod_namespace, record.pod_name, record.container_name));
    if (it != ctx.allocations->end()) {
      from_pod_resources = DevicesFromPodResources(it->second, *ctx.inventory,
                                                   ctx.options->roots);
    }
  }
  return MergeDevices(
      std::move(from_pod_resources),
      DevicesFromOciSpec(spec, *ctx.inventory, ctx.options->roots));
}

ContainerRecord BuildRecord(const RuntimeContainer& c, const OciSpecFacts& spec,
                            const RecordContext& ctx, Timestamp now) {
  ContainerRecord r;
  r.container_id = c.id;
  r.node = ctx.options->node;
  r.runtime_namespace = ctx.options->containerd_namespace;
  r.pod_uid = LabelOr(c.labels, kPodUidLabel);
  r.pod_name = LabelOr(c.labels, kPodNameLabel);
  r.pod_namespace = LabelOr(c.labels, kPodNamespaceLabel);
  r.container_name = LabelOr(c.labels, kContainerNameLabel);
  r.image = c.image;
  r.state = StateOf(c);
  r.privileged = spec.privileged;
  r.pid = r.state == ContainerState::kExited ? 0 : c.pid;
  r.exit_code = c.exit_status;
  r.labels = LimitLabels(c.labels);
  r.created_at = c.created_at;
  r.finished_at = c.exited_at;
  if (r.state == ContainerState::kRunning ||
      r.state == ContainerState::kPaused) {
    r.started_at = ProcessStartTime(ctx.options->roots, c.pid);
  }
  r.updated_at = now;
  r.devices = ResolveDevices(r, spec, ctx);
  return r;
}

std::optional<ContainerEventType> DiffEventType(const ContainerRecord& before,
                                                const ContainerRecord& after) {
  using S = ContainerState;
  using T = ContainerEventType;
  if (before.state != after.state) {
    if (after.state == S::kRunning)
      return before.state == S::kPaused ? T::kResume : T::kStart;
    if (after.state == S::kExited) return T::kExit;
    if (after.state == S::kPaused) return T::kPause;
    return T::kUpdate;
  }
  bool same = before.devices.size() == after.devices.size();
  for (size_t i = 0; same && i < before.devices.size(); ++i) {
    const auto& a = before.devices[i];
    const auto& b = after.devices[i];
    same = a.kind == b.kind && a.device_key == b.device_key && a.bdf == b.bdf &&
           a.source == b.source;
  }
  if (!same || before.labels != after.labels || before.image != after.image ||
      before.pid != after.pid || before.privileged != after.privileged ||
      before.exit_code != after.exit_code) {
    return T::kUpdate;
  }
  return std::nullopt;
}

}  // namespace lens::containers
