// KubeInformer: list (paginated) then watch from the list's
// resourceVersion; a watch the server ends is resumed from the last version
// seen (bookmarks included), a 410 Gone (HTTP or ERROR event) relists and
// reports objects missing from the new list as deleted, and every other
// failure backs off with jitter. The cache and the handler calls are kept
// in step: the handler sees each change once, in order, on this thread.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "kube/kube_json.h"
#include "lens/kube.h"
#include "lens/log.h"

namespace lens {
namespace {

std::string NameKey(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

using Clock = std::chrono::steady_clock;

// How a watch ended.
enum class WatchEnd { kClosed, kExpired, kFailed, kStopped };

}  // namespace

struct KubeInformer::Impl {
  KubeClient* client;
  KubeInformerOptions options;
  KubeEventHandler* handler;
  std::atomic<bool> stop{false};
  std::mt19937_64 rng{std::random_device{}()};

  mutable std::mutex mu;
  std::condition_variable wake;
  // Objects by uid (by namespace/name when the server sends no uid).
  std::unordered_map<std::string, KubeObject> objects;   // GUARDED_BY(mu)
  std::unordered_map<std::string, std::string> by_name;  // GUARDED_BY(mu)
  KubeInformerStats stats;                               // GUARDED_BY(mu)

  Impl(KubeClient* c, KubeInformerOptions o, KubeEventHandler* h)
      : client(c), options(std::move(o)), handler(h) {}

  static std::string KeyOf(const KubeObject& o) {
    return o.uid.empty() ? NameKey(o.namespace_name, o.name) : o.uid;
  }

  std::string Query(bool watch, const std::string& rv,
                    const std::string& continue_token) {
    std::string q = "?";
    auto add = [&](std::string_view key, std::string_view value) {
      if (q.size() > 1) q += '&';
      q += key;
      q += '=';
      q += KubeQueryEscape(value);
    };
    if (!options.label_selector.empty()) {
      add("labelSelector", options.label_selector);
    }
    if (!options.field_selector.empty()) {
      add("fieldSelector", options.field_selector);
    }
    if (watch) {
      add("watch", "true");
      add("allowWatchBookmarks", "true");
      add("resourceVersion", rv);
      const auto lo = options.min_watch_timeout.count();
      const auto hi = std::max(lo, options.max_watch_timeout.count());
      add("timeoutSeconds",
          std::to_string(std::uniform_int_distribution<int64_t>(lo, hi)(rng)));
    } else {
      add("limit", std::to_string(options.page_size));
      if (!continue_token.empty()) add("continue", continue_token);
    }
    return options.resource.Path(options.namespace_name) + q;
  }

  std::string Accept(bool list) const {
    if (!options.metadata_only) return "application/json";
    return list ? "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;"
                  "v=v1,application/json"
                : "application/json;as=PartialObjectMetadata;g=meta.k8s.io;"
                  "v=v1,application/json";
  }

  // Sleeps `delay` unless stopped meanwhile; false when stopped.
  bool Sleep(std::chrono::milliseconds delay) {
    std::unique_lock<std::mutex> lock(mu);
    return !wake.wait_for(lock, delay, [&] { return stop.load(); });
  }

  void RecordError(const Status& status) {
    std::lock_guard<std::mutex> lock(mu);
    ++stats.errors;
    stats.last_error = status.message();
  }

  // The next backoff: doubled, capped, with up to 50% jitter; at least the
  // server's Retry-After.
  std::chrono::milliseconds Backoff(std::chrono::milliseconds* current,
                                    int retry_after_seconds) {
    auto base = *current;
    *current = std::min(options.max_backoff, *current * 2);
    const double jitter = std::uniform_real_distribution<double>(0, 0.5)(rng);
    auto delay = std::chrono::milliseconds(
        static_cast<int64_t>(static_cast<double>(base.count()) * (1 + jitter)));
    return std::max(delay,
                    std::chrono::milliseconds(retry_after_seconds * 1000));
  }

  // Cache the object (json only where wanted) and tell the handler.
  void Upsert(KubeObject object) {
    KubeObject cached;
    cached.uid = object.uid;
    cached.namespace_name = object.namespace_name;
    cached.name = object.name;
    cached.resource_version = object.resource_version;
    // An object kept without its JSON costs its metadata only.
    if (!options.keep_json || options.keep_json(object.json)) {
      cached.json = object.json;
    }
    const std::string key = KeyOf(object);
    std::optional<KubeObject> old;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = objects.find(key);
      if (it != objects.end()) {
        old = std::move(it->second);
        it->second = std::move(cached);
      } else {
        by_name[NameKey(object.namespace_name, object.name)] = key;
        objects.emplace(key, std::move(cached));
      }
      stats.objects = objects.size();
    }
    if (old) {
      handler->OnUpdate(*old, object);
    } else {
      handler->OnAdd(object);
    }
  }

  void Remove(const KubeObject& object, bool seen_gone) {
    const std::string key = KeyOf(object);
    KubeObject last = object;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = objects.find(key);
      if (it != objects.end()) {
        // The watch's DELETED carries the final state; a relist only the
        // cached one.
        if (seen_gone) last = std::move(it->second);
        objects.erase(it);
      }
      // The name may belong to a newer object with another uid by now.
      auto name = by_name.find(NameKey(object.namespace_name, object.name));
      if (name != by_name.end() && name->second == key) by_name.erase(name);
      stats.objects = objects.size();
    }
    handler->OnDelete(last, seen_gone);
  }

  // One full list, page by page: each page's objects go to the cache and the
  // handler as they arrive (so a list of any size holds one page of JSON at
  // a time), then what the cache holds and the list did not is reported as
  // deleted while unobserved. A continue token that expired (410: the
  // snapshot was compacted) starts the list again from the first page.
  Status List(std::string* rv) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::unordered_set<std::string> present;
      std::string token;
      bool expired = false;
      do {
        if (stop) return CancelledError("stopped");
        const std::string path = Query(false, "", token);
        LENS_ASSIGN_OR_RETURN(KubeResponse r,
                              client->Request("GET", path, "", Accept(true)));
        if (r.status == 410 && !token.empty()) {
          expired = true;
          break;
        }
        if (r.status != 200) {
          last_retry_after = r.retry_after_seconds;
          return KubeError("GET", client->server(), path, r);
        }
        LENS_ASSIGN_OR_RETURN(KubeListPage page,
                              ParseKubeList(r.body, "list " + path));
        std::string().swap(r.body);
        if (token.empty()) *rv = page.resource_version;
        for (KubeObject& o : page.items) {
          present.insert(KeyOf(o));
          bool unchanged = false;
          {
            std::lock_guard<std::mutex> lock(mu);
            auto it = objects.find(KeyOf(o));
            unchanged = it != objects.end() &&
                        it->second.resource_version == o.resource_version;
          }
          if (!unchanged) Upsert(std::move(o));
        }
        token = page.continue_token;
      } while (!token.empty());
      if (expired) continue;
      std::vector<KubeObject> gone;
      {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& [key, o] : objects) {
          if (!present.count(key)) gone.push_back(o);
        }
      }
      for (const KubeObject& o : gone) Remove(o, /*seen_gone=*/true);
      {
        std::lock_guard<std::mutex> lock(mu);
        ++stats.lists;
        stats.synced = true;
        stats.resource_version = *rv;
      }
      handler->OnSynced();
      return OkStatus();
    }
    return UnavailableError("list " + options.resource.Path() +
                            ": the list expired three times while paging");
  }

  WatchEnd Watch(std::string* rv, Status* error) {
    const std::string path = Query(true, *rv, "");
    {
      std::lock_guard<std::mutex> lock(mu);
      ++stats.watches;
    }
    bool expired = false;
    Status event_error;
    auto on_line = [&](std::string_view line) {
      auto event = ParseKubeWatchEvent(line, "watch " + path);
      if (!event.ok()) {
        event_error = event.status();
        return false;
      }
      // Taken first: the object is moved into the cache below.
      const std::string version = event->object.resource_version;
      switch (event->type) {
        case KubeWatchType::kError:
          if (event->error.code == 410) {
            expired = true;
          } else {
            event_error = UnavailableError("watch " + path + ": ERROR " +
                                           std::to_string(event->error.code) +
                                           " " + event->error.reason + ": " +
                                           event->error.message);
          }
          return false;
        case KubeWatchType::kBookmark: {
          std::lock_guard<std::mutex> lock(mu);
          ++stats.bookmarks;
          break;
        }
        case KubeWatchType::kDeleted:
          Remove(event->object, /*seen_gone=*/false);
          break;
        case KubeWatchType::kAdded:
        case KubeWatchType::kModified:
          Upsert(std::move(event->object));
          break;
      }
      if (event->type != KubeWatchType::kBookmark) {
        std::lock_guard<std::mutex> lock(mu);
        ++stats.events;
      }
      if (!version.empty()) {
        *rv = version;
        std::lock_guard<std::mutex> lock(mu);
        stats.resource_version = *rv;
      }
      return true;
    };
    KubeResponse refused;
    Status st = client->Stream(path, Accept(false), on_line, &stop, &refused);
    if (stop) return WatchEnd::kStopped;
    if (expired || refused.status == 410) return WatchEnd::kExpired;
    if (!event_error.ok()) {
      *error = event_error;
      return WatchEnd::kFailed;
    }
    if (!st.ok()) {
      *error = st;
      return WatchEnd::kFailed;
    }
    if (refused.status != 0) {
      last_retry_after = refused.retry_after_seconds;
      *error = KubeError("GET", client->server(), path, refused);
      return WatchEnd::kFailed;
    }
    return WatchEnd::kClosed;
  }

  int last_retry_after = 0;  // the informer thread only
};

KubeInformer::KubeInformer(KubeClient* client, KubeInformerOptions options,
                           KubeEventHandler* handler)
    : impl_(std::make_unique<Impl>(client, std::move(options), handler)) {}

KubeInformer::~KubeInformer() { Stop(); }

Status KubeInformer::Run() {
  Impl& s = *impl_;
  if (s.options.page_size == 0) {
    return InvalidArgumentError("informer " + s.options.resource.Path() +
                                ": page_size must be positive");
  }
  if (s.options.resource.resource.empty() ||
      s.options.resource.version.empty()) {
    return InvalidArgumentError("informer: no resource to watch");
  }
  std::string rv;
  bool need_list = true;
  auto backoff = s.options.initial_backoff;
  while (!s.stop) {
    if (need_list) {
      s.last_retry_after = 0;
      Status st = s.List(&rv);
      if (s.stop) break;
      if (!st.ok()) {
        s.RecordError(st);
        LENS_LOG(WARN)
                .Field("resource", s.options.resource.Path())
                .Field("error", st.message())
            << "Kubernetes list failed; retrying";
        if (!s.Sleep(s.Backoff(&backoff, s.last_retry_after))) break;
        continue;
      }
      need_list = false;
      backoff = s.options.initial_backoff;
    }
    Status error;
    s.last_retry_after = 0;
    const auto watch_start = Clock::now();
    uint64_t events_before = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      events_before = s.stats.events + s.stats.bookmarks;
    }
    switch (s.Watch(&rv, &error)) {
      case WatchEnd::kStopped:
        break;
      case WatchEnd::kClosed: {
        bool quick = false;
        {
          std::lock_guard<std::mutex> lock(s.mu);
          ++s.stats.watch_restarts;
          // A watch the server ends at once, again and again (a proxy with a
          // short timeout), is not resumed in a tight loop.
          quick = s.stats.events + s.stats.bookmarks == events_before &&
                  Clock::now() - watch_start < std::chrono::seconds(1);
        }
        if (!quick) {
          backoff = s.options.initial_backoff;
        } else if (!s.Sleep(s.Backoff(&backoff, 0))) {
          break;
        }
        break;
      }
      case WatchEnd::kExpired: {
        std::lock_guard<std::mutex> lock(s.mu);
        ++s.stats.relists;
        need_list = true;
        break;
      }
      case WatchEnd::kFailed:
        s.RecordError(error);
        LENS_LOG(WARN)
                .Field("resource", s.options.resource.Path())
                .Field("error", error.message())
            << "Kubernetes watch failed; resuming";
        if (!s.Sleep(s.Backoff(&backoff, s.last_retry_after))) break;
        break;
    }
  }
  return OkStatus();
}

void KubeInformer::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->wake.notify_all();
}

StatusOr<KubeObject> KubeInformer::GetByUid(std::string_view uid) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->objects.find(std::string(uid));
  if (it == impl_->objects.end()) {
    return NotFoundError("no object with uid " + std::string(uid));
  }
  return it->second;
}

StatusOr<KubeObject> KubeInformer::Get(std::string_view namespace_name,
                                       std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto key = impl_->by_name.find(NameKey(namespace_name, name));
  if (key != impl_->by_name.end()) {
    auto it = impl_->objects.find(key->second);
    if (it != impl_->objects.end()) return it->second;
  }
  return NotFoundError("no object " + NameKey(namespace_name, name));
}

std::vector<KubeObject> KubeInformer::List() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<KubeObject> out;
  out.reserve(impl_->objects.size());
  for (const auto& [key, o] : impl_->objects) out.push_back(o);
  return out;
}

KubeInformerStats KubeInformer::Stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

}  // namespace lens
