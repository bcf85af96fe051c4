// lens-multicluster composed once: the home client, the clusters Secret's
// informer, the member clusters read every refresh, the output Secret
// written by the Lease's leader, and the HTTP routes.
#include "service/multicluster_service.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/cluster_directory.h"
#include "core/metric_writer.h"
#include "core/metrics.h"
#include "lens/log.h"
#include "multicluster/secret_data.h"
#include "service/service_host.h"

namespace lens {
namespace {

using Clock = std::chrono::steady_clock;

const KubeResource kSecrets{"", "v1", "secrets", "Secret", true};
constexpr char kDirectoryKey[] = "clusters.yaml";
constexpr char kManagedBy[] = "app.kubernetes.io/managed-by";
constexpr const char* kPublishResults[] = {"created", "updated", "unchanged",
                                           "error"};
// How often leadership is looked at between refreshes, so a new leader
// publishes without waiting for the next read.
constexpr std::chrono::milliseconds kTick{1000};

double UnixSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct MultiClusterService::Impl : KubeEventHandler {
  MultiClusterServiceOptions options;
  Registry metrics;  // the HTTP server's requests; outlives it
  std::unique_ptr<KubeClient> home;
  std::unique_ptr<KubeInformer> informer;
  std::unique_ptr<MemberClusters> members;

  mutable std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;         // GUARDED_BY(mu)
  bool synced = false;           // GUARDED_BY(mu): the first list is in
  bool members_changed = false;  // GUARDED_BY(mu)
  bool published_once = false;   // GUARDED_BY(mu)
  double last_publish_s = 0;     // GUARDED_BY(mu)
  std::map<std::string, uint64_t> publishes;  // GUARDED_BY(mu)

  // The loop thread's own: what the output Secret holds as far as this
  // replica knows ("" when it does not know: read it before writing).
  std::string published;
  std::string published_rv;
  std::map<std::string, std::string> logged_error;  // member -> last logged

  std::string Origin() const {
    return "Secret " + options.namespace_name + "/" + options.clusters_secret;
  }
  bool Leading() const { return host->Leading(); }

  // KubeEventHandler, on the informer's thread.
  void OnAdd(const KubeObject& object) override { Apply(object.json); }
  void OnUpdate(const KubeObject&, const KubeObject& object) override {
    Apply(object.json);
  }
  void OnDelete(const KubeObject&, bool) override {
    LENS_LOG(WARN).Field("secret", Origin())
        << "clusters Secret deleted: no member clusters";
    SetMembers({});
  }
  void OnSynced() override {
    std::lock_guard lock(mu);
    synced = true;
    members_changed = true;  // read them now
    wake.notify_all();
  }

  void Apply(const std::string& json);
  void SetMembers(const std::map<std::string, std::string>& kubeconfigs);
  void Loop();
  void ReadMembers();
  void MaybePublish();
  StatusOr<std::string> Publish(const std::string& content);
  std::string RenderMetrics() const;

  // Declared last: stops (its threads joined) before the rest goes.
  std::unique_ptr<service::ServiceHost> host;
};

void MultiClusterService::Impl::Apply(const std::string& json) {
  StatusOr<std::map<std::string, std::string>> data =
      SecretData(json, Origin());
  if (!data.ok()) {  // keep the members it listed before
    LENS_LOG(ERROR).Field("error", data.status().message())
        << "clusters Secret unreadable";
    return;
  }
  SetMembers(*data);
}

void MultiClusterService::Impl::SetMembers(
    const std::map<std::string, std::string>& kubeconfigs) {
  // Problems are logged by the read that follows at once, once each.
  (void)members->SetMembers(kubeconfigs, Origin());
  std::lock_guard lock(mu);
  members_changed = true;
  wake.notify_all();
}

void MultiClusterService::Impl::ReadMembers() {
  const std::vector<MemberStatus> before = members->Members();
  for (const MemberRead& r :
       members->Refresh(std::chrono::system_clock::now())) {
    std::string server;
    for (const MemberStatus& m : before) {
      if (m.name == r.name) server = m.server;
    }
    auto logged = logged_error.find(r.name);
    if (r.status.ok()) {
      if (!r.was_up) {
        LENS_LOG(INFO).Field("cluster", r.name).Field("server", server)
            << "member cluster read";
      }
      if (logged != logged_error.end()) logged_error.erase(logged);
      continue;
    }
    // Once per distinct error, not once per refresh.
    if (logged != logged_error.end() && logged->second == r.status.message())
      continue;
    logged_error[r.name] = r.status.message();
    LENS_LOG(WARN)
            .Field("cluster", r.name)
            .Field("server", server)
            .Field("error", r.status.message())
        << "member cluster unavailable; its last endpoints are kept, stale";
  }
  // Forget members no longer listed: one that comes back is logged anew.
  std::set<std::string> listed;
  for (const MemberStatus& m : members->Members()) listed.insert(m.name);
  std::erase_if(logged_error,
                [&](const auto& entry) { return !listed.count(entry.first); });
}

StatusOr<std::string> MultiClusterService::Impl::Publish(
    const std::string& content) {
  const std::string& ns = options.namespace_name;
  const std::string path = kSecrets.Path(ns, options.output_secret);
  const std::string where = "Secret " + ns + "/" + options.output_secret;
  const std::map<std::string, std::string> labels = {
      {kManagedBy, "lens-multicluster"}};
  const std::map<std::string, std::string> data = {{kDirectoryKey, content}};
  // A 409 (another writer, or the Secret edited behind our back) or a 404
  // (deleted) means what we knew is out of date: read it again and retry.
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool exists = !published_rv.empty();
    if (!exists) {
      LENS_ASSIGN_OR_RETURN(KubeResponse got, home->Request("GET", path));
      if (got.status == 200) {
        exists = true;
        published_rv = multicluster::ResourceVersionOf(got.body);
        StatusOr<std::map<std::string, std::string>> current =
            SecretData(got.body, where);
        if (current.ok() && current->count(kDirectoryKey) &&
            current->at(kDirectoryKey) == content) {
          published = content;
          return std::string("unchanged");
        }
      } else if (got.status != 404) {
        return KubeError("GET", home->server(), path, got);
      }
    }
    if (!Leading()) return AbortedError("no longer the leader");
    const std::string body = multicluster::SecretJson(
        ns, options.output_secret, labels, data, exists ? published_rv : "");
    const std::string method = exists ? "PUT" : "POST";
    const std::string target = exists ? path : kSecrets.Path(ns);
    LENS_ASSIGN_OR_RETURN(KubeResponse put,
                          home->Request(method, target, body));
    if (put.status == 200 || put.status == 201) {
      published = content;
      published_rv = multicluster::ResourceVersionOf(put.body);
      return std::string(exists ? "updated" : "created");
    }
    if (put.status != 409 && put.status != 404) {
      return KubeError(method, home->server(), target, put);
    }
    published.clear();
    published_rv.clear();
  }
  return AbortedError(where + ": still conflicting after 4 attempts");
}

void MultiClusterService::Impl::MaybePublish() {
  if (!Leading()) {
    // Another replica may write meanwhile: read before the next write.
    published.clear();
    published_rv.clear();
    return;
  }
  StatusOr<std::string> content = RenderClusterDirectory(members->Directory());
  if (content.ok() && *content == published) return;
  StatusOr<std::string> result =
      content.ok() ? Publish(*content) : content.status();
  std::lock_guard lock(mu);
  if (!result.ok()) {
    ++publishes["error"];
    published.clear();
    published_rv.clear();
    LENS_LOG(ERROR)
            .Field("secret",
                   options.namespace_name + "/" + options.output_secret)
            .Field("error", result.status().message())
        << "cannot publish the cluster directory";
    return;
  }
  ++publishes[*result];
  published_once = true;
  last_publish_s = UnixSeconds();
  const std::string secret =
      options.namespace_name + "/" + options.output_secret;
  const size_t clusters = members->Directory().size();
  // Every refresh that reads a member changes its `updated`: routine.
  if (*result == "updated") {
    LENS_LOG(DEBUG).Field("secret", secret).Field("clusters", clusters)
        << "cluster directory updated";
  } else {
    LENS_LOG(INFO)
            .Field("secret", secret)
            .Field("result", *result)
            .Field("clusters", clusters)
        << "cluster directory published";
  }
}

void MultiClusterService::Impl::Loop() {
  std::unique_lock lock(mu);
  Clock::time_point next_read = Clock::now();
  while (true) {
    // Until the first list the members are unknown: nothing to read.
    const Clock::time_point until =
        synced ? std::min(next_read, Clock::now() + kTick)
               : Clock::now() + kTick;
    wake.wait_until(lock, until,
                    [this] { return stopping || (synced && members_changed); });
    if (stopping) return;
    if (!synced) continue;
    const bool read = members_changed || Clock::now() >= next_read;
    members_changed = false;
    lock.unlock();
    if (read) {
      ReadMembers();
      next_read = Clock::now() + options.refresh;
    }
    MaybePublish();
    lock.lock();
  }
}

std::string MultiClusterService::Impl::RenderMetrics() const {
  std::string out;
  MetricWriter w(&out);
  const std::vector<MemberStatus> all = members->Members();
  w.Family("lens_multicluster_info",
           "The Secrets lens-multicluster reads and writes.", "gauge");
  w.Sample({{"namespace", options.namespace_name},
            {"clusters_secret", options.clusters_secret},
            {"output_secret", options.output_secret},
            {"storage_secret", options.members.storage_namespace + "/" +
                                   options.members.storage_secret}},
           1);
  w.Family("lens_multicluster_leader",
           "1 while this replica holds the Lease (and writes).", "gauge");
  w.Sample({}, Leading() ? 1 : 0);
  w.Family("lens_multicluster_clusters",
           "Member clusters listed in the clusters Secret.", "gauge");
  w.Sample({}, static_cast<double>(all.size()));
  w.Family("lens_multicluster_cluster_up",
           "1 when the last read of the member's storage Secret succeeded.",
           "gauge");
  for (const MemberStatus& m : all) w.Sample({{"cluster", m.name}}, m.up);
  w.Family("lens_multicluster_cluster_stale",
           "1 when the member's published endpoints are from an earlier "
           "read.",
           "gauge");
  for (const MemberStatus& m : all) {
    if (m.in_directory) w.Sample({{"cluster", m.name}}, m.stale);
  }
  w.Family("lens_multicluster_cluster_last_success_timestamp_seconds",
           "When the member's storage Secret was last read (Unix seconds).",
           "gauge");
  for (const MemberStatus& m : all) {
    if (m.in_directory) {
      w.Sample({{"cluster", m.name}}, static_cast<double>(m.last_success_unix));
    }
  }
  w.Family("lens_multicluster_reads_total",
           "Reads of members' storage Secrets by result (ok, error, "
           "invalid, bad_kubeconfig).",
           "counter");
  for (const MemberStatus& m : all) {
    for (const auto& [result, n] : m.reads) {
      w.Sample({{"cluster", m.name}, {"result", result}},
               static_cast<double>(n));
    }
  }
  std::lock_guard lock(mu);
  w.Family("lens_multicluster_publishes_total",
           "Writes of the output Secret by result (created, updated, "
           "unchanged: found current, error).",
           "counter");
  for (const char* result : kPublishResults) {
    auto it = publishes.find(result);
    w.Sample({{"result", result}},
             it == publishes.end() ? 0 : static_cast<double>(it->second));
  }
  w.Family("lens_multicluster_last_publish_timestamp_seconds",
           "When the output Secret was last written or found current.",
           "gauge");
  w.Sample({}, last_publish_s);
  return out;
}

MultiClusterService::MultiClusterService() : impl_(std::make_unique<Impl>()) {}
MultiClusterService::~MultiClusterService() { Stop(); }

StatusOr<std::unique_ptr<MultiClusterService>> MultiClusterService::Start(
    const MultiClusterServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<MultiClusterService> service(new MultiClusterService());
  Impl& s = *service->impl_;
  Impl* impl = &s;
  s.options = options;
  s.options.members.client = options.client;
  LENS_ASSIGN_OR_RETURN(s.home,
                        KubeClient::Create(options.home, options.client));
  s.members = std::make_unique<MemberClusters>(s.options.members);
  KubeInformerOptions watch;
  watch.resource = kSecrets;
  watch.namespace_name = options.namespace_name;
  // One object: with a name field selector, RBAC can be limited to it.
  watch.field_selector = "metadata.name=" + options.clusters_secret;
  s.informer = std::make_unique<KubeInformer>(s.home.get(), watch, impl);
  service::ServiceHost::Options host;
  host.http = options.http;
  host.http.metrics = &s.metrics;
  const bool elected = options.leader_election;
  host.ready = [impl, elected]() -> Status {
    std::lock_guard lock(impl->mu);
    // A follower stands by once it knows the members: failing its probe
    // would stall every rolling update behind the leader.
    if (impl->published_once || (impl->synced && elected && !impl->Leading())) {
      return OkStatus();
    }
    return UnavailableError("the cluster directory is not published yet");
  };
  host.metrics = [impl] {
    return impl->RenderMetrics() + impl->metrics.Render();
  };
  if (elected) {
    host.leader_client = s.home.get();
    host.leader = options.leader;
  }
  LENS_ASSIGN_OR_RETURN(s.host, service::ServiceHost::Create(std::move(host)));
  s.host->AddThread(
      "clusters Secret watch", [impl] { return impl->informer->Run(); },
      [impl] { impl->informer->Stop(); });
  s.host->AddThread(
      "cluster directory",
      [impl] {
        impl->Loop();
        return OkStatus();
      },
      [impl] {
        std::lock_guard lock(impl->mu);
        impl->stopping = true;
        impl->wake.notify_all();
      });
  LENS_RETURN_IF_ERROR(s.host->Start());
  return service;
}

void MultiClusterService::Stop() {
  if (impl_->host) impl_->host->Stop();
}

bool MultiClusterService::Published() const {
  std::lock_guard lock(impl_->mu);
  return impl_->published_once;
}
bool MultiClusterService::IsLeader() const { return impl_->Leading(); }
std::vector<MemberStatus> MultiClusterService::Members() const {
  return impl_->members->Members();
}
std::string MultiClusterService::http_url() const { return impl_->host->url(); }

}  // namespace lens
