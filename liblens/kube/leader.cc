// KubeLeaderElector: the Lease protocol client-go's leaderelection uses.
// Whether another holder's lease has expired is judged by when this replica
// last saw the record change (its own monotonic clock), not by the renewTime
// written by another machine's clock, so clock skew between nodes cannot
// make two leaders. Every write carries the resourceVersion read, so of two
// replicas racing for a free lease exactly one succeeds (the other gets 409).
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

#include "core/json.h"
#include "core/json_reader.h"
#include "lens/kube.h"
#include "lens/log.h"

namespace lens {
namespace {

using Clock = std::chrono::steady_clock;

const KubeResource kLeases{"coordination.k8s.io", "v1", "leases", "Lease",
                           true};

// metav1.MicroTime: RFC 3339 in UTC with microseconds.
std::string MicroTime(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      t.time_since_epoch())
                      .count();
  const time_t secs = static_cast<time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

// What a Lease says.
struct LeaseRecord {
  std::string resource_version;
  std::string holder;
  std::string acquire_time;
  std::string renew_time;
  int64_t duration_seconds = 0;
  int64_t transitions = 0;
};

// A Lease as the API server returned it. An answer that is not a Lease
// object with a resourceVersion is an error: writing after it would have to
// write without one, overwriting whatever another replica holds.
StatusOr<LeaseRecord> ParseLease(const std::string& body) {
  LeaseRecord r;
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (!doc.IsObject()) {
    return UnavailableError(
        "lease: the API server's answer is not a JSON object");
  }
  auto text = [](const rapidjson::Value* v) {
    return v && v->IsString() ? std::string(v->GetString()) : std::string();
  };
  if (const rapidjson::Value* meta = JsonMember(doc, "metadata")) {
    if (meta->IsObject()) {
      r.resource_version = text(JsonMember(*meta, "resourceVersion"));
    }
  }
  if (r.resource_version.empty()) {
    return UnavailableError(
        "lease: the API server's answer has no "
        "metadata.resourceVersion");
  }
  const rapidjson::Value* spec = JsonMember(doc, "spec");
  if (!spec || !spec->IsObject()) return r;
  r.holder = text(JsonMember(*spec, "holderIdentity"));
  r.acquire_time = text(JsonMember(*spec, "acquireTime"));
  r.renew_time = text(JsonMember(*spec, "renewTime"));
  if (const rapidjson::Value* d = JsonMember(*spec, "leaseDurationSeconds");
      d && d->IsInt64()) {
    r.duration_seconds = d->GetInt64();
  }
  if (const rapidjson::Value* t = JsonMember(*spec, "leaseTransitions");
      t && t->IsInt64()) {
    r.transitions = t->GetInt64();
  }
  return r;
}

std::string LeaseJson(const KubeLeaderOptions& o, const LeaseRecord& r) {
  JsonWriter w;
  w.StartObject();
  w.Key("apiVersion");
  w.String("coordination.k8s.io/v1");
  w.Key("kind");
  w.String("Lease");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(o.lease_name.c_str());
  w.Key("namespace");
  w.String(o.namespace_name.c_str());
  if (!r.resource_version.empty()) {
    w.Key("resourceVersion");
    w.String(r.resource_version.c_str());
  }
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("holderIdentity");
  w.String(r.holder.c_str());
  w.Key("leaseDurationSeconds");
  w.Int64(r.duration_seconds);
  w.Key("acquireTime");
  w.String(r.acquire_time.c_str());
  w.Key("renewTime");
  w.String(r.renew_time.c_str());
  w.Key("leaseTransitions");
  w.Int64(r.transitions);
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace

struct KubeLeaderElector::Impl {
  KubeClient* client;
  KubeLeaderOptions options;
  mutable std::mutex mu;
  std::condition_variable wake;
  bool stop = false;            // GUARDED_BY(mu)
  bool leading = false;         // GUARDED_BY(mu)
  Clock::time_point renewed{};  // GUARDED_BY(mu)
  uint64_t transitions = 0;     // GUARDED_BY(mu)
  // The record last read and when this replica first saw it (the election
  // thread only).
  LeaseRecord observed;
  Clock::time_point observed_at{};

  std::string Path() const {
    return kLeases.Path(options.namespace_name, options.lease_name);
  }

  // One attempt; OK(true) when this replica holds the lease now.
  StatusOr<bool> TryAcquireOrRenew() {
    const auto now = std::chrono::system_clock::now();
    const int64_t duration_s =
        std::chrono::duration_cast<std::chrono::seconds>(options.lease_duration)
            .count();
    LENS_ASSIGN_OR_RETURN(KubeResponse got, client->Request("GET", Path()));
    LeaseRecord next;
    next.holder = options.identity;
    next.duration_seconds = std::max<int64_t>(1, duration_s);
    next.renew_time = MicroTime(now);
    if (got.status == 404) {
      next.acquire_time = next.renew_time;
      const std::string collection = kLeases.Path(options.namespace_name);
      LENS_ASSIGN_OR_RETURN(
          KubeResponse made,
          client->Request("POST", collection, LeaseJson(options, next)));
      if (made.status == 409) return false;  // another replica created it
      if (made.status != 201 && made.status != 200) {
        return KubeError("POST", client->server(), collection, made);
      }
      LENS_ASSIGN_OR_RETURN(observed, ParseLease(made.body));
      observed_at = Clock::now();
      return true;
    }
    if (got.status != 200)
      return KubeError("GET", client->server(), Path(), got);
    LENS_ASSIGN_OR_RETURN(LeaseRecord current, ParseLease(got.body));
    if (current.holder != observed.holder ||
        current.renew_time != observed.renew_time ||
        current.resource_version != observed.resource_version) {
      observed = current;
      observed_at = Clock::now();
    }
    const bool mine = current.holder == options.identity;
    const auto held_for =
        std::chrono::seconds(std::max<int64_t>(current.duration_seconds, 1));
    if (!mine && !current.holder.empty() &&
        Clock::now() < observed_at + held_for) {
      return false;  // another replica holds a lease that has not expired
    }
    next.resource_version = current.resource_version;
    if (mine) {
      next.acquire_time = current.acquire_time;
      next.transitions = current.transitions;
    } else {
      next.acquire_time = next.renew_time;
      next.transitions = current.transitions + 1;
    }
    LENS_ASSIGN_OR_RETURN(
        KubeResponse put,
        client->Request("PUT", Path(), LeaseJson(options, next)));
    if (put.status == 409) return false;  // someone wrote first
    if (put.status != 200)
      return KubeError("PUT", client->server(), Path(), put);
    auto written = ParseLease(put.body);
    if (!written.ok()) {
      // Written, but what was written is unknown: the next round reads it
      // again before any other write.
      observed = LeaseRecord();
      return written.status();
    }
    observed = std::move(*written);
    observed_at = Clock::now();
    return true;
  }

  // Gives the lease up on the way out, so another replica need not wait
  // for it to expire.
  void Release() {
    LeaseRecord next = observed;
    if (next.holder != options.identity || next.resource_version.empty())
      return;
    next.holder.clear();
    next.duration_seconds = 1;
    next.renew_time = MicroTime(std::chrono::system_clock::now());
    auto put = client->Request("PUT", Path(), LeaseJson(options, next));
    if (!put.ok() || put->status != 200) {
      LENS_LOG(WARN).Field("lease", Path())
          << "could not release the leader lease; it expires on its own";
    }
  }
};

KubeLeaderElector::KubeLeaderElector(KubeClient* client,
                                     KubeLeaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->client = client;
  impl_->options = std::move(options);
}

KubeLeaderElector::~KubeLeaderElector() { Stop(); }

Status KubeLeaderElector::Run() {
  Impl& s = *impl_;
  const KubeLeaderOptions& o = s.options;
  if (o.identity.empty()) {
    return InvalidArgumentError("leader election: identity is empty");
  }
  if (o.renew_deadline >= o.lease_duration ||
      o.retry_period >= o.renew_deadline || o.retry_period.count() <= 0) {
    return InvalidArgumentError(
        "leader election: need 0 < retry period < renew deadline < lease "
        "duration, got " +
        std::to_string(o.retry_period.count()) + " ms, " +
        std::to_string(o.renew_deadline.count()) + " ms, " +
        std::to_string(o.lease_duration.count()) + " ms");
  }
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.stop) {
    lock.unlock();
    // A renewal counts from when it was asked for, not answered: a slow
    // answer must not stretch this replica's leadership past the time the
    // others judge the lease by.
    const auto attempt = Clock::now();
    StatusOr<bool> held = s.TryAcquireOrRenew();
    lock.lock();
    const auto now = Clock::now();
    if (s.leading && now - s.renewed >= o.renew_deadline) {
      // IsLeader() has said false since the deadline passed: that was a
      // loss, even when this attempt renews.
      s.leading = false;
      ++s.transitions;
      LENS_LOG(WARN).Field("lease", s.Path()) << "lost leadership";
    }
    if (held.ok() && *held) {
      if (!s.leading) {
        ++s.transitions;
        LENS_LOG(INFO).Field("lease", s.Path()).Field("identity", o.identity)
            << "became leader";
      }
      s.leading = true;
      s.renewed = attempt;
    } else {
      if (!held.ok()) {
        LENS_LOG(WARN)
                .Field("lease", s.Path())
                .Field("error", held.status().message())
            << "leader lease request failed";
      }
      if (s.leading && held.ok()) {
        s.leading = false;
        ++s.transitions;
        LENS_LOG(WARN).Field("lease", s.Path()) << "lost leadership";
      }
    }
    s.wake.wait_for(lock, o.retry_period, [&] { return s.stop; });
  }
  const bool was_leading = s.leading;
  s.leading = false;
  lock.unlock();
  if (was_leading) s.Release();
  return OkStatus();
}

void KubeLeaderElector::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->wake.notify_all();
}

bool KubeLeaderElector::IsLeader() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->leading &&
         Clock::now() - impl_->renewed < impl_->options.renew_deadline;
}

uint64_t KubeLeaderElector::transitions() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->transitions;
}

std::string DefaultLeaderIdentity(std::string_view fallback) {
  std::string name;
  if (const char* pod = std::getenv("POD_NAME"); pod && *pod) {
    name = pod;
  } else {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    name = host[0] ? host : std::string(fallback);
  }
  return name + "_" + std::to_string(::getpid());
}

}  // namespace lens
