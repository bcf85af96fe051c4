// Docker's device facts in the OCI spec's terms. Docker itself turns
// HostConfig.Devices into linux.devices (stat of the host path, directories
// expanded) and DeviceCgroupRules into linux.resources.devices; the NVIDIA
// container runtime turns a GPU DeviceRequest into /dev/nvidia<minor>
// nodes. Doing the same here lets one resolver serve both runtimes.
#include "containers/docker/docker_devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/json.h"
#include "core/kernel_file.h"

namespace lens::containers::docker {
namespace {

// Bounds the walk of a `--device <directory>`.
constexpr size_t kMaxExpandedNodes = 1024;
constexpr int kNvidiaMajor = 195;

struct Node {
  std::string path;  // host path, "/dev/dri/renderD128"
  std::string type = "c";
  std::optional<int64_t> major, minor;
};

// "Key: \t value" lines of the NVIDIA information file.
std::string Field(const std::string& text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    if (line.starts_with(key) && line.size() > key.size() &&
        line[key.size()] == ':') {
      line.remove_prefix(key.size() + 1);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
        line.remove_prefix(1);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
        line.remove_suffix(1);
      return std::string(line);
    }
    at = end + 1;
  }
  return "";
}

// Where the agent sees `host_path`: /dev/... under roots.dev.
std::string Visible(const std::string& host_path, const HostRoots& roots) {
  if (host_path.rfind("/dev/", 0) == 0) return roots.dev + host_path.substr(4);
  return host_path;
}

void AddNode(const std::string& host_path, const HostRoots& roots,
             std::vector<Node>* out) {
  namespace fs = std::filesystem;
  struct stat st;
  const std::string seen = Visible(host_path, roots);
  if (::stat(seen.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::error_code ec;
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator it(seen, ec), end;
         !ec && it != end && found.size() < kMaxExpandedNodes;
         it.increment(ec)) {
      struct stat s;
      if (::stat(it->path().c_str(), &s) == 0 && S_ISCHR(s.st_mode))
        found.push_back(it->path().string().substr(seen.size()));
    }
    std::sort(found.begin(), found.end());
    for (const std::string& rel : found) AddNode(host_path + rel, roots, out);
    return;
  }
  Node n;
  n.path = host_path;
  if (::stat(seen.c_str(), &st) == 0 &&
      (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    n.type = S_ISCHR(st.st_mode) ? "c" : "b";
    n.major = ::major(st.st_rdev);
    n.minor = ::minor(st.st_rdev);
  }
  out->push_back(std::move(n));
}

bool IsGpuRequest(const DockerDeviceRequest& r) {
  if (r.driver == "nvidia") return true;
  for (const auto& set : r.capabilities) {
    if (std::find(set.begin(), set.end(), "gpu") != set.end()) return true;
  }
  return false;
}

void AddNvidiaNodes(const DockerDeviceRequest& r,
                    const std::vector<NvidiaProcGpu>& nvidia,
                    std::vector<Node>* out) {
  std::set<int> minors;
  if (!r.device_ids.empty()) {
    for (const std::string& id : r.device_ids) {
      char* end = nullptr;
      const long index = std::strtol(id.c_str(), &end, 10);
      const bool numeric = !id.empty() && end == id.c_str() + id.size();
      for (size_t i = 0; i < nvidia.size(); ++i) {
        if ((numeric && index >= 0 && static_cast<size_t>(index) == i) ||
            (!numeric && nvidia[i].uuid == id)) {
          minors.insert(nvidia[i].minor);
        }
      }
    }
  } else {
    const size_t n =
        r.count < 0 ? nvidia.size() : std::min<size_t>(r.count, nvidia.size());
    for (size_t i = 0; i < n; ++i) minors.insert(nvidia[i].minor);
  }
  for (int m : minors) {
    out->push_back({"/dev/nvidia" + std::to_string(m), "c", kNvidiaMajor, m});
  }
}

// "c 226:* rwm" -> {"allow":true,"type":"c","major":226,"access":"rwm"}.
void WriteRule(const std::string& rule, JsonWriter* w) {
  char type = 0;
  char major[16] = {0}, minor[16] = {0}, access[8] = {0};
  if (std::sscanf(rule.c_str(), " %c %15[0-9*]:%15[0-9*] %7[rwm]", &type, major,
                  minor, access) != 4 ||
      (type != 'a' && type != 'b' && type != 'c')) {
    return;  // Docker refuses such rules at create; nothing to add
  }
  w->StartObject();
  w->Member("allow", true);
  w->Member("type", std::string_view(&type, 1));
  // Digits only (the scan's set), at most 15: a number's exact text.
  if (major[0] != '*') {
    w->Key("major");
    w->RawValue(major);
  }
  if (minor[0] != '*') {
    w->Key("minor");
    w->RawValue(minor);
  }
  w->Member("access", static_cast<const char*>(access));
  w->EndObject();
}

}  // namespace

std::vector<NvidiaProcGpu> ReadNvidiaProcGpus(const std::string& procfs) {
  std::vector<NvidiaProcGpu> out;
  const std::string dir = procfs + "/driver/nvidia/gpus";
  auto names = ListKernelDir(dir);
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    auto text = ReadKernelFile(dir + "/" + name + "/information", 64 << 10);
    if (!text.ok()) continue;
    NvidiaProcGpu g;
    g.bdf = Field(*text, "Bus Location");
    if (g.bdf.empty()) g.bdf = name;
    g.uuid = Field(*text, "GPU UUID");
    const std::string minor = Field(*text, "Device Minor");
    char* end = nullptr;
    const long m = std::strtol(minor.c_str(), &end, 10);
    if (minor.empty() || end != minor.c_str() + minor.size() || m < 0) continue;
    g.minor = static_cast<int>(m);
    out.push_back(std::move(g));
  }
  // Lower-case hex BDFs sort in PCI order.
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  return out;
}

std::string DeviceSpecJson(const DockerContainer& c, const HostRoots& roots,
                           const std::vector<NvidiaProcGpu>& nvidia) {
  std::vector<Node> nodes;
  for (const DockerDevice& d : c.devices) {
    if (!d.path_on_host.empty()) AddNode(d.path_on_host, roots, &nodes);
  }
  for (const DockerDeviceRequest& r : c.device_requests) {
    if (IsGpuRequest(r)) AddNvidiaNodes(r, nvidia, &nodes);
  }
  // The part of an OCI runtime spec that device ownership reads.
  JsonWriter w;
  w.StartObject();
  w.Key("linux");
  w.StartObject();
  w.Key("devices");
  w.StartArray();
  for (const Node& n : nodes) {
    w.StartObject();
    w.Member("path", n.path);
    w.Member("type", n.type);
    if (n.major && n.minor) {
      w.Member("major", *n.major);
      w.Member("minor", *n.minor);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("resources");
  w.StartObject();
  w.Key("devices");
  w.StartArray();
  w.StartObject();
  w.Member("allow", c.privileged);
  w.Member("access", "rwm");
  w.EndObject();
  if (!c.privileged) {
    for (const std::string& rule : c.device_cgroup_rules) WriteRule(rule, &w);
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return w.Take();
}

RuntimeContainer ToRuntimeContainer(DockerContainer c, const HostRoots& roots,
                                    const std::vector<NvidiaProcGpu>& nvidia) {
  RuntimeContainer out;
  out.spec_json = DeviceSpecJson(c, roots, nvidia);
  out.id = std::move(c.id);
  out.image = std::move(c.image);
  out.labels = std::move(c.labels);
  out.created_at = c.created_at;
  out.updated_at = std::max({c.created_at, c.started_at.value_or(Timestamp{}),
                             c.finished_at.value_or(Timestamp{})});
  out.has_task = c.status != "created";
  if (c.status == "running" || c.status == "paused") {
    out.task_status = c.status;
    out.pid = c.pid;
  } else if (out.has_task) {
    out.task_status = "stopped";
    // A container stopped before it ever ran ("exited" with no FinishedAt)
    // still has Docker's exit code.
    out.exit_status = c.exit_code;
    out.exited_at = c.finished_at;
  }
  return out;
}

}  // namespace lens::containers::docker
