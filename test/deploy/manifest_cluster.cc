#include "manifest_cluster.h"

#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <regex>
#include <thread>

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using rapidjson::Value;

// The fixture host the node daemons see as the host's /sys, /proc, /dev.
const fs::path kHost = fs::path(LENS_FIXTURES_DIR) / "hosts/mi300x-8x-mlx5";
// The node's /proc/sys and /etc as lens-tuner finds them (copied: it writes).
const fs::path kTunerHost = fs::path(LENS_FIXTURES_DIR) / "tuner/root";

// The lens-tokens key that guards each daemon's HTTP routes.
const std::map<std::string, std::string> kTokenKey = {
    {"lens-node-agent", "node"},     {"lens-netflow", "node"},
    {"lens-jobs", "jobs"},           {"lens-controller", "controller"},
    {"lens-telemetry", "telemetry"}, {"lens-api", "api"},
    {"lens-tuner", "node"},          {"lens-multicluster", "multicluster"}};

// The Secrets whose items are the files scripts/make-node-certs.sh writes
// (docs/deploy.md, "TLS on the node ports").
const std::set<std::string> kCertSecrets = {"lens-node-tls", "lens-node-ca"};

// TLS and a bearer token, as a service account's connection has.
constexpr char kKubeconfig[] =
    "{apiVersion: v1, kind: Config, current-context: sa,\n"
    " clusters: [{name: sa, cluster: {server: '@SERVER@',"
    " certificate-authority: '@CA@'}}],\n"
    " users: [{name: sa, user: {token: '@TOKEN@'}}],\n"
    " contexts: [{name: sa, context: {cluster: sa, user: sa}}]}\n";

std::string RandomToken() {
  static std::mt19937_64 random(std::random_device{}());
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx",
                static_cast<unsigned long long>(random()),
                static_cast<unsigned long long>(random()));
  return text;
}

// Every occurrence of `from` that is a whole path or a path's prefix.
std::string ReplacePath(std::string text, const std::string& from,
                        const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at)) {
    const size_t end = at + from.size();
    const bool whole =
        end == text.size() || text[end] == '/' ||
        !(std::isalnum(static_cast<unsigned char>(text[end])) ||
          text[end] == '.' || text[end] == '-' || text[end] == '_');
    const bool starts =
        at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    if (whole && starts) {
      text.replace(at, from.size(), to);
      at += to.size();
    } else {
      at = end;
    }
  }
  return text;
}

}  // namespace

DeployedCluster::DeployedCluster(const Rendered& rendered,
                                 const std::string& dir,
                                 const std::set<std::string>& skip)
    : rendered_(rendered), dir_(dir), skip_(skip) {
  fs::create_directories(dir_);
  // The documented step that makes the node daemons' certificates.
  node_certs_ = (fs::path(dir_) / "node-certs").string();
  auto certs =
      RunCommand({LENS_SOURCE_DIR "/scripts/make-node-certs.sh", node_certs_});
  if (!certs.ok() || certs->wait_status != 0) {
    error_ += "scripts/make-node-certs.sh: " +
              (certs.ok() ? Describe(certs->wait_status) + ": " + certs->err
                          : certs.status().message()) +
              "\n";
  }
  // One loopback port per container port of the Lens daemons (they are
  // distinct across daemons, as a node's host-network ports must be).
  ForEachContainer(rendered_, [&](const Value&, const Value&, const Value& c) {
    if (!IsLens(c) || !c.HasMember("ports")) return;
    for (const auto& p : c["ports"].GetArray()) {
      service_ports_.emplace(p["containerPort"].GetInt(), FreeLoopbackPort());
    }
  });
  ForEachContainer(rendered_,
                   [&](const Value& w, const Value& spec, const Value& c) {
                     if (IsLens(c) && !skip_.count(Str(w, "/metadata/name"))) {
                       Prepare(w, spec, c);
                     }
                   });
}

DeployedCluster::~DeployedCluster() { Stop(); }

void DeployedCluster::Prepare(const Value& workload, const Value& spec,
                              const Value& container) {
  DeployedContainer c;
  c.workload = Str(workload, "/metadata/name");
  c.namespace_name = Str(workload, "/metadata/namespace");
  c.service_account = Str(spec, "/serviceAccountName");
  c.binary = fs::path(Str(container, "/command/0")).filename().string();
  const fs::path root = fs::path(dir_) / c.workload;
  fs::create_directories(root);
  c.log = (root / "log").string();

  // Volumes: where each mount path is on this machine, and what is there.
  std::vector<std::pair<std::string, std::string>> mounts;
  std::string config_dir;
  for (const auto& m : container["volumeMounts"].GetArray()) {
    const std::string name = Str(m, "/name");
    const Value* volume = nullptr;
    for (const auto& v : spec["volumes"].GetArray()) {
      if (Str(v, "/name") == name) volume = &v;
    }
    // A StatefulSet's claim: a directory of its own, like an emptyDir.
    const Value* claims =
        rapidjson::Pointer("/spec/volumeClaimTemplates").Get(workload);
    if (!volume && claims) {
      for (const auto& v : claims->GetArray()) {
        if (Str(v, "/metadata/name") == name) volume = &v;
      }
    }
    if (!volume) {
      error_ += c.workload + ": no volume " + name + "\n";
      return;
    }
    fs::path local = root / name;
    if (volume->HasMember("configMap")) {
      const Value* cm = Find(rendered_, "ConfigMap", c.namespace_name,
                             Str(*volume, "/configMap/name"));
      if (!cm) {
        error_ += c.workload + ": no ConfigMap for volume " + name + "\n";
        return;
      }
      fs::create_directories(local);
      for (const auto& file : (*cm)["data"].GetObject()) {
        (void)WriteFile((local / file.name.GetString()).string(),
                        file.value.GetString());
      }
      config_dir = local.string();
    } else if (volume->HasMember("secret")) {
      fs::create_directories(local);
      const std::string secret = Str(*volume, "/secret/secretName");
      const Value* items = rapidjson::Pointer("/secret/items").Get(*volume);
      if (!items) {
        error_ += c.workload + ": secret volume " + name + " lists no items\n";
        return;
      }
      for (const auto& item : items->GetArray()) {
        const std::string path = (local / Str(item, "/path")).string();
        c.secret_files[secret + "/" + Str(item, "/key")] = path;
        if (secret == "lens-clusters-config") {
          // What lens-multicluster publishes, before it has any member.
          (void)WriteFile(path, "clusters: []\n");
          continue;
        }
        if (kCertSecrets.count(secret)) {
          const fs::path file = fs::path(node_certs_) / Str(item, "/key");
          if (!fs::exists(file)) {
            error_ += c.workload + ": " + secret + " has no " +
                      Str(item, "/key") + "\n";
            return;
          }
          (void)WriteFile(path, ReadFile(file.string()));
          continue;
        }
        std::string& token = tokens_[Str(item, "/key")];
        if (token.empty()) token = RandomToken();
        (void)WriteFile(path, token);
      }
    } else if (volume->HasMember("hostPath")) {
      const std::string host = Str(*volume, "/hostPath/path");
      if (host == "/sys" || host == "/proc" || host == "/dev") {
        local = kHost / host.substr(1);
      } else if (host == "/sys/fs/cgroup") {
        local = host;  // lens-netflow resolves real cgroups of real sockets
      } else if (fs::exists(kTunerHost / host.substr(1))) {
        fs::create_directories(local);
        fs::copy(kTunerHost / host.substr(1), local,
                 fs::copy_options::recursive);
      } else {
        fs::create_directories(local);
        if (Str(*volume, "/hostPath/type") == "Socket") local /= "absent.sock";
      }
    } else {
      fs::create_directories(local);  // emptyDir
    }
    if (volume->HasMember("hostPath")) {
      c.host_paths[Str(*volume, "/hostPath/path")] = local.string();
    }
    mounts.emplace_back(Str(m, "/mountPath"), local.string());
  }
  // The container's file system as the daemon sees it: each mount path a
  // link to its stand-in under `fs`. A path in lens.yaml or the arguments
  // that starts with a mount's top directory is read under `fs`, so a parent
  // of a mount (tuner.procRoot /host/proc over /host/proc/sys) works as in
  // the pod, and a path the pod does not mount is missing as it is there.
  const fs::path rootfs = root / "fs";
  std::set<std::string> tops;
  for (const auto& [path, local] : mounts) {
    const fs::path link = rootfs / path.substr(1);
    fs::create_directories(link.parent_path());
    fs::create_symlink(fs::absolute(local), link);
    tops.insert(path.substr(0, path.find('/', 1)));
  }
  auto rewrite = [&](std::string text) {
    for (const std::string& top : tops) {
      text = ReplacePath(text, top, (rootfs / top.substr(1)).string());
    }
    for (const auto& [port, local] : service_ports_) {
      const std::string loopback = "127.0.0.1:" + std::to_string(local);
      text = std::regex_replace(
          text,
          std::regex("(0\\.0\\.0\\.0|[a-z0-9-]+\\.[a-z0-9-]+\\.svc):" +
                     std::to_string(port) + "\\b"),
          loopback);
      // lens-jobs reaches the agents at their pod IP and this port.
      text = std::regex_replace(
          text, std::regex("agentPort: " + std::to_string(port) + "\\b"),
          "agentPort: " + std::to_string(local));
    }
    return text;
  };

  // The API server, when lens.yaml has it connect from inside the cluster.
  if (!config_dir.empty()) {
    const fs::path file = fs::path(config_dir) / "lens.yaml";
    std::string config = rewrite(ReadFile(file.string()));
    if (c.binary == "lens-jobs" || c.binary == "lens-controller" ||
        c.binary == "lens-multicluster") {
      KubeApiServerOptions options;
      options.tls = true;
      options.token = "sa-" + c.workload;
      auto& server =
          servers_.emplace_back(std::make_unique<KubeApiServer>(options));
      server->AddResource(
          {"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false});
      server->AddResource(
          {"", "v1", "persistentvolumes", "PersistentVolume", false});
      server->AddResource({"", "v1", "secrets", "Secret", true});
      c.api = server.get();
      const std::string kubeconfig = (root / "kubeconfig").string();
      (void)WriteFile(kubeconfig,
                      Fill(kKubeconfig, {{"@SERVER@", server->url()},
                                         {"@CA@", KubeApiServer::CaFile()},
                                         {"@TOKEN@", options.token}}));
      config = std::regex_replace(config, std::regex("inCluster: true"),
                                  "kubeconfig: " + kubeconfig);
    }
    (void)WriteFile(file.string(), config);
    c.config = config;
  }

  const auto daemons = DaemonFiles();
  if (!daemons.count(c.binary)) {
    error_ += c.workload + ": this build has no " + c.binary + "\n";
    return;
  }
  c.argv.push_back(daemons.at(c.binary));
  if (container.HasMember("args")) {
    for (const auto& a : container["args"].GetArray()) {
      c.argv.push_back(rewrite(a.GetString()));
    }
  }
  if (container.HasMember("env")) {
    for (const auto& e : container["env"].GetArray()) {
      const std::string name = Str(e, "/name");
      std::string value = Str(e, "/value");
      const std::string field = Str(e, "/valueFrom/fieldRef/fieldPath");
      if (field == "spec.nodeName") value = "fixture-node";
      if (field == "metadata.name") value = c.workload + "-0";
      if (Str(e, "/valueFrom/secretKeyRef/key") == "url") {
        value = "sqlite://" + (root / "lens.db").string();
      }
      c.env.push_back(name + "=" + value);
    }
  }
  if (c.binary == "lens-jobs") {
    // Every job soon, so the RBAC check sees each request (not in the
    // manifests: the environment layer over lens.yaml).
    for (const char* job :
         {"STORAGE_SCAN", "POD_STATUS", "NODE_INFO", "DEVICE_INFO",
          "WORKLOAD_STATUS", "GPU_ALLOCATION", "GPU_CONSUMERS"}) {
      c.env.push_back(std::string("LENS_JOBS_") + job + "_INTERVAL=500ms");
    }
  }
  if (c.binary == "lens-multicluster") {
    c.env.push_back("LENS_MULTI_CLUSTER_REFRESH=1s");  // as for the jobs
  }
  if (container.HasMember("ports")) {
    for (const auto& p : container["ports"].GetArray()) {
      const int port = service_ports_.at(p["containerPort"].GetInt());
      c.ports[Str(p, "/name")] = port;
      c.port_numbers[p["containerPort"].GetInt()] = port;
    }
  }
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    if (container.HasMember(probe)) {
      const Value& p = container[probe];
      c.probes.push_back({Str(p, "/httpGet/path"), Str(p, "/httpGet/port"),
                          Str(p, "/httpGet/scheme") == "HTTPS"});
      c.http_port = c.probes.back().port;
      c.https = c.probes.back().https;
    }
  }
  if (auto key = kTokenKey.find(c.workload); key != kTokenKey.end()) {
    c.token = tokens_[key->second];
  }
  containers_.push_back(std::move(c));
}

void DeployedCluster::Start() {
  std::stable_sort(containers_.begin(), containers_.end(),
                   [](const auto& a, const auto& b) {
                     return a.binary == "lens-jobs" && b.binary != "lens-jobs";
                   });
  for (DeployedContainer& c : containers_) {
    c.pid = Spawn(c.argv, c.log, true, false, c.env);
  }
}

std::map<std::string, std::string> DeployedCluster::Stop() {
  std::map<std::string, std::string> out;
  for (DeployedContainer& c : containers_) {
    if (c.pid <= 0) continue;
    ::kill(c.pid, SIGTERM);
    auto status = WaitExit(c.pid, std::chrono::seconds(15));
    if (!status) {
      ::kill(c.pid, SIGKILL);
      status = WaitExit(c.pid, std::chrono::seconds(5));
    }
    std::string& result = out[c.workload];
    result = status ? Describe(*status) : "did not stop";
    if (result != "exit status 0") {  // the end of its log says why
      const std::string log = ReadFile(c.log);
      result += ": ..." + log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
    }
    c.pid = -1;
  }
  return out;
}

DeployedContainer* DeployedCluster::Get(const std::string& workload) {
  for (DeployedContainer& c : containers_) {
    if (c.workload == workload) return &c;
  }
  return nullptr;
}

bool DeployedCluster::Running(DeployedContainer& c, std::string* why) {
  int status = 0;
  if (c.pid > 0 && ::waitpid(c.pid, &status, WNOHANG) == c.pid) {
    c.pid = -1;
    *why = Describe(status) + ": " + ReadFile(c.log);
    return false;
  }
  return c.pid > 0;
}

int HttpGet(int port, const std::string& path, const std::string& token,
            std::string* body, bool https) {
  auto get = [&](auto& client) {
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(std::chrono::seconds(5));
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto result = client.Get(path, headers);
    if (!result) return 0;
    if (body) *body = result->body;
    return result->status;
  };
  if (https) {
    httplib::SSLClient client("127.0.0.1", port);
    client.enable_server_certificate_verification(false);
    return get(client);
  }
  httplib::Client client("127.0.0.1", port);
  return get(client);
}

}  // namespace lens::test
