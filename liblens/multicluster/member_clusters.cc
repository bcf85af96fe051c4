// MemberClusters: each member's client from its kubeconfig, its storage
// Secret read through it, and the last good endpoints kept (stale) while it
// does not answer. Reads run outside the lock, so SetMembers and the
// status calls never wait on a member that is down.
#include <mutex>
#include <thread>
#include <utility>

#include "core/cluster_directory.h"
#include "core/redact.h"
#include "multicluster/multicluster.h"

namespace lens {
namespace {

// `text` with every occurrence of `server` replaced by its redacted form:
// the client's messages name the server as configured, and a server URL
// may carry user information.
std::string WithoutUserinfo(std::string text, const std::string& server) {
  if (server.empty()) return text;
  const std::string redacted = RedactedUrl(server);
  if (redacted == server) return text;
  for (size_t at = text.find(server); at != std::string::npos;
       at = text.find(server, at + redacted.size())) {
    text.replace(at, server.size(), redacted);
  }
  return text;
}

struct ReadOutcome {
  StatusOr<ClusterEndpoints> endpoints = InternalError("not read");
  const char* result = "error";
};

// One GET of the member's storage Secret, decoded into its endpoints.
ReadOutcome ReadMember(KubeClient* client, const MemberReadOptions& options,
                       const std::string& name, int64_t now_unix) {
  static const KubeResource kSecrets{"", "v1", "secrets", "Secret", true};
  const std::string path =
      kSecrets.Path(options.storage_namespace, options.storage_secret);
  const std::string where =
      "Secret " + options.storage_namespace + "/" + options.storage_secret;
  ReadOutcome out;
  StatusOr<KubeResponse> response = client->Request("GET", path);
  if (!response.ok()) {
    out.endpoints =
        Status(response.status().code(),
               WithoutUserinfo(response.status().message(), client->server()));
    return out;
  }
  if (response->status != 200) {
    const Status error = KubeError("GET", client->server(), path, *response);
    out.endpoints = Status(error.code(),
                           WithoutUserinfo(error.message(), client->server()));
    return out;
  }
  out.result = "invalid";
  StatusOr<std::map<std::string, std::string>> data =
      SecretData(response->body, where);
  if (!data.ok()) {
    out.endpoints = data.status();
    return out;
  }
  ClusterEndpoints e;
  e.name = name;
  auto value = [&](const char* key) {
    auto it = data->find(key);
    return it == data->end() ? std::string() : it->second;
  };
  e.database_url = value("databaseUrl");
  e.prometheus_url = value("prometheusUrl");
  e.prometheus_token = value("prometheusToken");
  e.updated_unix = now_unix;
  if (e.database_url.empty()) {
    out.endpoints = InvalidArgumentError(where + ": databaseUrl: missing");
    return out;
  }
  // Validate's messages name the field, never a value.
  if (Status s = e.Validate(); !s.ok()) {
    out.endpoints = s.WithContext(where);
    return out;
  }
  out.result = "ok";
  out.endpoints = std::move(e);
  return out;
}

}  // namespace

struct MemberClusters::Impl {
  struct Member {
    std::string kubeconfig;  // as given, to see it change
    uint64_t generation = 0;
    std::shared_ptr<KubeClient> client;  // null: not configured
    MemberStatus status;
    std::optional<ClusterEndpoints> endpoints;
  };

  MemberReadOptions options;
  std::mutex refresh_mu;  // one Refresh at a time
  mutable std::mutex mu;
  std::map<std::string, Member> members;  // GUARDED_BY(mu)
  uint64_t next_generation = 1;           // GUARDED_BY(mu)
};

MemberClusters::MemberClusters(MemberReadOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

MemberClusters::~MemberClusters() = default;

std::vector<Status> MemberClusters::SetMembers(
    const std::map<std::string, std::string>& kubeconfigs,
    std::string_view origin) {
  std::vector<Status> problems;
  std::lock_guard lock(impl_->mu);
  std::map<std::string, Impl::Member> next;
  for (const auto& [name, text] : kubeconfigs) {
    auto old = impl_->members.find(name);
    if (old != impl_->members.end() && old->second.kubeconfig == text) {
      if (!old->second.status.configured) {
        problems.push_back(InvalidArgumentError(old->second.status.error));
      }
      next.emplace(name, std::move(old->second));
      continue;
    }
    Impl::Member m;
    if (old != impl_->members.end()) {  // a new kubeconfig, same cluster
      m.status = old->second.status;
      m.endpoints = old->second.endpoints;
    }
    m.kubeconfig = text;
    m.generation = impl_->next_generation++;
    m.status.name = name;
    m.status.configured = false;
    m.status.up = false;
    m.status.server.clear();
    const std::string where = std::string(origin) + " key " + name;
    Status problem;
    if (!IsClusterName(name)) {
      problem = InvalidArgumentError(
          where +
          ": the key is not a cluster name (a DNS label: a-z, 0-9, "
          "'-', at most 63)");
    } else if (StatusOr<KubeConnection> c = KubeconfigFromText(text, where);
               !c.ok()) {
      problem = c.status();
    } else if (StatusOr<std::unique_ptr<KubeClient>> client =
                   KubeClient::Create(*c, impl_->options.client);
               !client.ok()) {
      problem = client.status().WithContext(where);
    } else {
      m.client = std::move(*client);
      m.status.server = RedactedUrl(c->server);
      m.status.configured = true;
    }
    if (!problem.ok()) {
      m.status.error = problem.message();
      if (m.endpoints) m.endpoints->stale = true;
      problems.push_back(problem);
    } else {
      m.status.error.clear();
    }
    next.emplace(name, std::move(m));
  }
  impl_->members = std::move(next);
  return problems;
}

std::vector<MemberRead> MemberClusters::Refresh(
    std::chrono::system_clock::time_point now) {
  std::lock_guard refresh_lock(impl_->refresh_mu);
  const int64_t now_unix =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch())
          .count();
  struct Job {
    std::string name;
    uint64_t generation;
    std::shared_ptr<KubeClient> client;
    bool was_up;
    ReadOutcome outcome;
  };
  std::vector<Job> jobs;
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [name, m] : impl_->members) {
      jobs.push_back({name, m.generation, m.client, m.status.up, {}});
    }
  }
  // One thread per member: a member that does not answer costs one
  // request timeout, not one per member behind it.
  std::vector<std::thread> threads;
  for (Job& job : jobs) {
    if (!job.client) continue;
    threads.emplace_back([&job, this, now_unix] {
      job.outcome =
          ReadMember(job.client.get(), impl_->options, job.name, now_unix);
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<MemberRead> reads;
  std::lock_guard lock(impl_->mu);
  for (Job& job : jobs) {
    auto it = impl_->members.find(job.name);
    // Removed, or given a new kubeconfig, while this read ran.
    if (it == impl_->members.end() || it->second.generation != job.generation)
      continue;
    Impl::Member& m = it->second;
    if (!job.client) {
      ++m.status.reads["bad_kubeconfig"];
      reads.push_back({job.name, InvalidArgumentError(m.status.error), false});
      continue;
    }
    StatusOr<ClusterEndpoints>& e = job.outcome.endpoints;
    ++m.status.reads[job.outcome.result];
    if (e.ok()) {
      // Endpoints read again unchanged keep the time they were first read:
      // the published directory (a Secret every lens-api mounts) is then
      // written only when something in it changed, not at every refresh.
      if (m.endpoints && !m.endpoints->stale &&
          m.endpoints->database_url == e->database_url &&
          m.endpoints->prometheus_url == e->prometheus_url &&
          m.endpoints->prometheus_token == e->prometheus_token) {
        e->updated_unix = m.endpoints->updated_unix;
      }
      m.endpoints = std::move(*e);
      m.status.up = true;
      m.status.last_success_unix = now_unix;
      m.status.error.clear();
      reads.push_back({job.name, OkStatus(), job.was_up});
    } else {
      if (m.endpoints) m.endpoints->stale = true;
      m.status.up = false;
      m.status.error = e.status().message();
      reads.push_back({job.name, e.status(), job.was_up});
    }
  }
  return reads;
}

std::vector<ClusterEndpoints> MemberClusters::Directory() const {
  std::vector<ClusterEndpoints> out;
  std::lock_guard lock(impl_->mu);
  for (const auto& [name, m] : impl_->members) {
    if (m.endpoints) out.push_back(*m.endpoints);
  }
  return out;
}

std::vector<MemberStatus> MemberClusters::Members() const {
  std::vector<MemberStatus> out;
  std::lock_guard lock(impl_->mu);
  for (const auto& [name, m] : impl_->members) {
    MemberStatus s = m.status;
    s.in_directory = m.endpoints.has_value();
    s.stale = m.endpoints && m.endpoints->stale;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace lens
