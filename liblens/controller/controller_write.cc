// The controller's writer: GPU pods with their events, snapshots and
// requests and the owner chains above them, into the store (the nodes:
// controller_nodes.cc). The
// writer thread only; every batch first checks that this replica leads.
#include <algorithm>
#include <chrono>

#include "controller/controller_impl.h"
#include "lens/log.h"
#include "lens/store.h"

namespace lens::controller {
namespace {

using SteadyClock = std::chrono::steady_clock;

bool Terminal(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed";
}

// Equal apart from updated_at: nothing to write.
bool SameRow(const PodRecord& a, const PodRecord& b) {
  return a.uid == b.uid && a.name == b.name &&
         a.namespace_name == b.namespace_name && a.node == b.node &&
         a.phase == b.phase && a.owner_uid == b.owner_uid && a.ip == b.ip &&
         a.gpu_allocated == b.gpu_allocated && a.running == b.running &&
         a.deleted == b.deleted && a.started_at == b.started_at &&
         a.ended_at == b.ended_at && a.restarts == b.restarts &&
         a.labels == b.labels && a.created_at == b.created_at;
}

}  // namespace

void Controller::Impl::RecordWriteError(const Status& status) {
  std::lock_guard<std::mutex> lock(mu);
  ++stats.write_errors;
  stats.last_error = status.message();
  LENS_LOG(WARN).Field("error", status.message())
      << "controller write failed; retrying";
}

StatusOr<KnownEvents*> Controller::Impl::Known(const std::string& pod_uid) {
  auto it = known.find(pod_uid);
  if (it != known.end()) return &it->second;
  LENS_ASSIGN_OR_RETURN(auto events, store->pods().ListPodEvents(pod_uid));
  KnownEvents k;
  for (const PodEventRecord& e : events) {
    k.types.insert(e.event_type);
    if (e.event_type == "Restarted") {
      k.max_restarts = std::max(k.max_restarts, e.restart_count);
    }
  }
  return &known.emplace(pod_uid, std::move(k)).first->second;
}

const CachedOwner* Controller::Impl::FetchOwner(
    const OwnerReference& ref, const std::string& pod_namespace, bool force) {
  const auto now = SteadyClock::now();
  auto it = owners.find(ref.uid);
  if (it != owners.end() && !force &&
      !(it->second.unreadable &&
        now - it->second.fetched >= options.owner_refresh)) {
    return &it->second;
  }
  if (it != owners.end() && it->second.gone) return &it->second;
  CachedOwner fresh;
  if (it != owners.end()) {
    fresh = it->second;
  } else {
    fresh.view.uid = ref.uid;
    fresh.view.api_version = ref.api_version;
    fresh.view.kind = ref.kind;
    fresh.view.name = ref.name;
    fresh.view.namespace_name = pod_namespace;
  }
  Status error;
  auto resource = discovery.ResourceFor(ref.api_version, ref.kind);
  if (!resource.ok()) {
    error = resource.status();
  } else {
    if (!resource->namespaced) fresh.view.namespace_name.clear();
    const std::string path = resource->Path(
        resource->namespaced ? pod_namespace : std::string_view(), ref.name);
    auto r = client->Request("GET", path);
    if (!r.ok()) {
      error = r.status();
    } else if (r->status == 404) {
      fresh.gone = true;
    } else if (r->status != 200) {
      error = KubeError("GET", client->server(), path, *r);
    } else if (auto view = DecodeOwner(r->body); !view.ok()) {
      error = view.status();
    } else if (view->uid != ref.uid) {
      fresh.gone = true;  // the name now belongs to a newer object
    } else {
      fresh.view = std::move(*view);
      fresh.unreadable = false;
    }
  }
  if (!error.ok()) {
    // A view read before stays; one never read is marked so.
    if (it == owners.end() || it->second.unreadable) fresh.unreadable = true;
    std::lock_guard<std::mutex> lock(mu);
    ++stats.owner_errors;
    stats.last_error = error.message();
    LENS_LOG(WARN)
            .Field("owner", ref.kind + " " + ref.name)
            .Field("error", error.message())
        << "cannot read a GPU pod's owner";
  }
  fresh.fetched = now;
  auto& slot = owners[ref.uid];
  slot = std::move(fresh);
  return &slot;
}

std::vector<const CachedOwner*> Controller::Impl::OwnerChain(
    const PodView& pod) {
  std::vector<const CachedOwner*> chain;
  std::set<std::string> seen;
  std::optional<OwnerReference> ref = pod.controller;
  while (ref && static_cast<int>(chain.size()) < options.owner_depth) {
    if (!seen.insert(ref->uid).second) {
      LENS_LOG(WARN)
              .Field("pod", pod.namespace_name + "/" + pod.name)
              .Field("owner", ref->kind + " " + ref->name)
          << "owner references form a cycle; stopping there";
      break;
    }
    const CachedOwner* owner = FetchOwner(*ref, pod.namespace_name, false);
    chain.push_back(owner);
    ref = owner->view.controller;
  }
  return chain;
}

Status Controller::Impl::WritePods(std::vector<PendingPod>& pods,
                                   std::set<std::string>* workloads) {
  const Timestamp now = Now();
  std::vector<PodRecord> rows;
  std::vector<PodResourcesRecord> resources;
  std::vector<PodEventRecord> events;
  std::vector<PodSnapshotRecord> snapshots;
  std::vector<std::pair<std::string, std::string>> links;
  std::vector<std::pair<std::string, KnownEvents>> next_known;
  std::vector<PodRecord> next_rows;
  for (PendingPod& p : pods) {
    const PodView& v = p.view;
    LENS_ASSIGN_OR_RETURN(KnownEvents * k, Known(v.uid));
    KnownEvents next = *k;
    std::vector<const CachedOwner*> chain;
    if (!p.seen_gone) chain = OwnerChain(v);
    PodRecord r;
    r.uid = v.uid;
    r.name = v.name;
    r.namespace_name = v.namespace_name;
    r.node = v.node;
    r.phase = v.phase;
    r.owner_uid = chain.empty() ? p.top_owner_uid : chain.back()->view.uid;
    r.ip = v.ip;
    r.gpu_allocated = v.requests.gpus;
    r.running = v.phase == "Running" && !p.gone;
    r.deleted = p.gone;
    r.started_at = v.started_at;
    r.ended_at = Terminal(v.phase) ? v.ended_at : std::nullopt;
    if (p.gone && !r.ended_at) r.ended_at = p.gone_at;
    if (Terminal(v.phase) && !r.ended_at) r.ended_at = now;
    r.restarts = v.restarts;
    r.labels = v.labels;
    r.created_at = v.created_at;
    r.updated_at = now;

    auto add = [&](const std::string& type, std::optional<Timestamp> at,
                   const std::string& phase) {
      if (!at || at->time_since_epoch().count() <= 0) return;
      if (!next.types.insert(type).second) return;
      events.push_back({v.uid, type, phase, v.restarts, *at});
    };
    add("Created", v.created_at, "Pending");
    add("Scheduled", v.scheduled_at, "Pending");
    if (v.phase != "Pending" && v.phase != "Unknown") {
      add("Running", v.started_at, "Running");
    }
    if (v.restarts > next.max_restarts) {
      events.push_back({v.uid, "Restarted", v.phase, v.restarts,
                        v.last_restart_at.value_or(now)});
      next.max_restarts = v.restarts;
      next.types.insert("Restarted");
    }
    if (Terminal(v.phase)) add(v.phase, r.ended_at, v.phase);
    if (p.gone) add("Deleted", p.gone_at, v.phase);

    if (!p.seen_gone) {
      snapshots.push_back({v.uid, v.resource_version, v.snapshot_json, now});
      PodResourcesRecord res;
      res.pod_uid = v.uid;
      res.gpu_vendor = v.requests.gpu_vendor;
      if (auto n = written_nodes.find(v.node); n != written_nodes.end()) {
        res.gpu_model = n->second.gpu_model;
      }
      res.gpu_allocated = v.requests.gpus;
      res.rdma_allocated = v.requests.rdma;
      res.cpu_millis = v.requests.cpu_millis;
      res.memory_bytes = v.requests.memory_bytes;
      res.updated_at = now;
      resources.push_back(std::move(res));
    }
    for (const CachedOwner* o : chain) {
      links.emplace_back(o->view.uid, v.uid);
      workloads->insert(o->view.uid);
    }
    if (p.seen_gone && !p.top_owner_uid.empty()) {
      workloads->insert(p.top_owner_uid);
    }
    auto written = written_pods.find(v.uid);
    if (written == written_pods.end() || !SameRow(written->second, r)) {
      rows.push_back(r);
    }
    next_known.emplace_back(v.uid, std::move(next));
    next_rows.push_back(std::move(r));
  }
  if (!Leading()) return AbortedError("no longer the leader");
  // Events first: a pod row marked deleted is never without its Deleted
  // event, whatever stops the controller between the two.
  LENS_RETURN_IF_ERROR(store->pods().AddPodEvents(events));
  // Stored: a retry after a later step fails must not write them again
  // (an event without an API time carries the time of this attempt).
  for (auto& [uid, next] : next_known) known[uid] = next;
  LENS_RETURN_IF_ERROR(store->pods().UpsertPods(rows));
  LENS_RETURN_IF_ERROR(store->pods().UpsertPodResources(resources));
  uint64_t snapshots_written = 0;
  for (const PodSnapshotRecord& s : snapshots) {
    LENS_ASSIGN_OR_RETURN(bool wrote, store->pods().PutPodSnapshot(s));
    snapshots_written += wrote ? 1 : 0;
  }
  LENS_RETURN_IF_ERROR(store->pods().LinkPods(links));
  for (size_t i = 0; i < pods.size(); ++i) {
    const std::string& uid = pods[i].view.uid;
    if (pods[i].gone) {
      known.erase(uid);
      written_pods.erase(uid);
    } else {
      known[uid] = std::move(next_known[i].second);
      written_pods[uid] = std::move(next_rows[i]);
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  stats.pods_written += rows.size();
  stats.pod_events_written += events.size();
  stats.snapshots_written += snapshots_written;
  stats.gpu_pods = written_pods.size();
  return OkStatus();
}

Status Controller::Impl::WriteWorkloads(const std::set<std::string>& uids) {
  const Timestamp now = Now();
  std::vector<WorkloadRecord> rows;
  for (const std::string& uid : uids) {
    // The row as stored, read only where it is needed.
    std::optional<WorkloadRecord> stored;
    bool stored_read = false;
    auto read_stored = [&]() -> const std::optional<WorkloadRecord>& {
      if (!stored_read) {
        stored_read = true;
        auto row = store->pods().GetWorkload(uid);
        if (row.ok()) stored = std::move(*row);
      }
      return stored;
    };
    auto it = owners.find(uid);
    if (it == owners.end()) {
      // An owner known only from the store (a pod closed after a restart, or
      // an owner forgotten since it ended): read it again from the API
      // server by what the store says it was.
      if (!read_stored()) continue;
      OwnerReference ref{stored->api_version, stored->kind, stored->name, uid,
                         true};
      FetchOwner(ref, stored->namespace_name, true);
      it = owners.find(uid);
    }
    const CachedOwner& o = it->second;
    LENS_ASSIGN_OR_RETURN(auto pods, store->pods().ListWorkloadPods(uid));
    std::vector<PodOutcome> outcomes;
    int32_t active = 0, active_pods = 0;
    std::optional<Timestamp> last_start;
    for (const PodRecord& p : pods) {
      outcomes.push_back({p.phase, p.ended_at, p.deleted});
      if (!p.deleted && !Terminal(p.phase)) {
        active += p.gpu_allocated;
        ++active_pods;
      }
      if (p.started_at && (!last_start || *p.started_at > *last_start))
        last_start = p.started_at;
    }
    // Once every pod ended: the pods that still ran when the last of them
    // started (a retried pod counts once, not once per attempt). From the
    // rows, so it does not depend on which states this process saw.
    int32_t ended_request = 0;
    for (const PodRecord& p : pods) {
      if (last_start && p.started_at && p.ended_at &&
          *p.started_at <= *last_start && *p.ended_at >= *last_start) {
        ended_request += p.gpu_allocated;
      }
    }
    WorkloadRecord w;
    w.uid = uid;
    w.api_version = o.view.api_version;
    w.kind = o.view.kind;
    w.name = o.view.name;
    w.namespace_name = o.view.namespace_name;
    if (o.view.controller) {
      if (owners.count(o.view.controller->uid)) {  // within the depth limit
        w.parent_uid = o.view.controller->uid;
      } else if (read_stored() &&
                 stored->parent_uid == o.view.controller->uid) {
        w.parent_uid = stored->parent_uid;  // the parent was forgotten
      }
    }
    w.status = o.view.status;
    w.ended_at = o.view.ended_at;
    if (w.status.empty())
      WorkloadStatusFromPods(outcomes, &w.status, &w.ended_at);
    w.labels = o.view.labels;
    w.created_at = o.view.created_at;
    if (o.gone && read_stored()) {
      // Gone from the API server: what it was is in the store, and an end
      // it reached there stands.
      if (w.labels.empty()) w.labels = stored->labels;
      if (w.created_at.time_since_epoch().count() <= 0) {
        w.created_at = stored->created_at;
      }
      if (w.parent_uid.empty()) w.parent_uid = stored->parent_uid;
      if (Terminal(stored->status)) {
        w.status = stored->status;
        w.ended_at = stored->ended_at;
      }
    }
    if (o.gone && !Terminal(w.status)) {
      w.status = "Deleted";
      if (!w.ended_at) w.ended_at = now;
    }
    // What its pods request now; once they ended, what they requested
    // together last (from their rows: a workload whose pods ended between
    // two flushes, or before this process first saw them, counts them all),
    // else what the store kept.
    int32_t& last = last_gpu_request[uid];
    if (active > 0) {
      last = active;
    } else if (ended_request > 0) {
      last = ended_request;
    } else if (last == 0 && read_stored()) {
      last = stored->gpu_request;
    }
    w.gpu_request = last;
    w.active_pods = active_pods;
    w.updated_at = now;
    rows.push_back(std::move(w));
  }
  if (rows.empty()) return OkStatus();
  if (!Leading()) return AbortedError("no longer the leader");
  LENS_RETURN_IF_ERROR(store->pods().UpsertWorkloads(rows));
  std::lock_guard<std::mutex> lock(mu);
  stats.workloads_written += rows.size();
  return OkStatus();
}

void Controller::Impl::RefreshOwners(const std::set<std::string>& uids) {
  constexpr int kMaxFetches = 32;
  const auto now = SteadyClock::now();
  std::vector<std::pair<OwnerReference, std::string>> stale;
  for (const std::string& uid : uids) {
    auto it = owners.find(uid);
    if (it == owners.end() || it->second.gone ||
        now - it->second.fetched < options.owner_refresh) {
      continue;
    }
    const OwnerView& v = it->second.view;
    stale.push_back(
        {{v.api_version, v.kind, v.name, uid, true}, v.namespace_name});
    if (static_cast<int>(stale.size()) == kMaxFetches) break;
  }
  for (const auto& [ref, ns] : stale) FetchOwner(ref, ns, true);
}

void Controller::Impl::ResyncWorkloads() {
  // Spread over time: each batch reads again at most 16 owners, the ones
  // read longest ago, of those not ended and older than workload_resync.
  // Owners that ended (or are gone) are forgotten after forget_ended_after:
  // their rows stay, and a late pod of theirs reads them again.
  constexpr size_t kPerBatch = 16;
  const auto now = SteadyClock::now();
  std::vector<std::pair<SteadyClock::time_point, std::string>> due;
  for (auto it = owners.begin(); it != owners.end();) {
    const CachedOwner& o = it->second;
    if (o.gone || o.unreadable || Terminal(o.view.status)) {
      if (now - o.fetched >= options.forget_ended_after) {
        last_gpu_request.erase(it->first);
        it = owners.erase(it);
      } else {
        ++it;
      }
      continue;
    }
    if (now - o.fetched >= options.workload_resync) {
      due.emplace_back(o.fetched, it->first);
    }
    ++it;
  }
  if (due.empty()) return;
  const size_t n = std::min(kPerBatch, due.size());
  std::partial_sort(due.begin(), due.begin() + n, due.end());
  std::set<std::string> uids;
  for (size_t i = 0; i < n; ++i) {
    const OwnerView& v = owners.at(due[i].second).view;
    const OwnerReference ref{v.api_version, v.kind, v.name, due[i].second,
                             true};
    const std::string ns = v.namespace_name;  // `v` is replaced by the fetch
    FetchOwner(ref, ns, true);
    uids.insert(due[i].second);
  }
  Status st = WriteWorkloads(uids);
  if (!st.ok()) RecordWriteError(st);
}

void Controller::Impl::Flush() {
  const auto now = SteadyClock::now();
  if (now < retry_after) return;
  std::vector<PendingPod> pods;
  std::vector<NodeRecord> nodes;
  {
    std::lock_guard<std::mutex> lock(mu);
    pods.reserve(pending_pods.size());
    for (auto& [uid, p] : pending_pods) pods.push_back(std::move(p));
    pending_pods.clear();
    for (auto& [name, n] : pending_nodes) nodes.push_back(std::move(n));
    pending_nodes.clear();
  }
  if (pods.empty() && nodes.empty()) return;
  // Nodes first: a pod's GPU model comes from its node. Owners are read
  // again only after the pods are written, a bounded number per batch, so
  // a slow API server delays workload status, never pod rows.
  std::set<std::string> workloads;
  Status st = WriteNodes(nodes);
  if (st.ok()) st = WritePods(pods, &workloads);
  if (st.ok()) {
    RefreshOwners(workloads);
    st = WriteWorkloads(workloads);
  }
  if (st.ok()) {
    write_backoff = std::chrono::milliseconds(0);
    return;
  }
  RecordWriteError(st);
  // Nothing is lost: what failed goes back unless a newer state came.
  {
    std::lock_guard<std::mutex> lock(mu);
    for (PendingPod& p : pods) {
      auto it = pending_pods.find(p.view.uid);
      if (it == pending_pods.end()) {
        pending_pods.emplace(p.view.uid, std::move(p));
      } else if (p.gone && !it->second.gone) {
        it->second = std::move(p);
      }
    }
    for (NodeRecord& n : nodes) pending_nodes.try_emplace(n.name, std::move(n));
  }
  write_backoff = std::min<std::chrono::milliseconds>(
      std::max<std::chrono::milliseconds>(write_backoff * 2,
                                          std::chrono::milliseconds(100)),
      std::chrono::milliseconds(5000));
  retry_after = now + write_backoff;
}

}  // namespace lens::controller
