// The clusters of lens-multicluster's directory file (api/api.h,
// NewClusterDirectoryFile): looked at again when its mtime or size changes
// (a Secret volume swaps a symlink, which changes both), each member's store
// and time series opened on its first request and reopened when its
// endpoints change.
#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "api/api.h"
#include "core/cluster_directory.h"
#include "core/redact.h"
#include "lens/log.h"

namespace lens {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class DirectoryFile : public ApiClusters {
 public:
  explicit DirectoryFile(ClusterDirectoryOptions options)
      : options_(std::move(options)), opener_([this] { OpenLoop(); }) {}
  ~DirectoryFile() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    opener_.join();
  }

  StatusOr<Handle> Find(std::string_view name) override {
    std::unique_lock lock(mu_);
    Reload();
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      return NotFoundError("unknown cluster \"" + std::string(name) + "\"");
    }
    const std::string key(name);
    auto ready = [&]() -> const Entry* {
      auto e = entries_.find(key);
      if (e == entries_.end()) return nullptr;
      return e->second.open.store || !e->second.error.ok() || !e->second.opening
                 ? &e->second
                 : nullptr;
    };
    Entry& e = it->second;
    if (!e.open.store && !e.opening &&
        (e.error.ok() || Clock::now() >= e.retry_at)) {
      e.opening = true;
      e.error = OkStatus();
      queue_.push_back(key);
      wake_.notify_all();
    }
    wake_.wait_for(lock, options_.open_wait,
                   [&] { return ready() != nullptr; });
    const Entry* done = ready();
    if (done == nullptr) {
      return UnavailableError("cluster \"" + key +
                              "\": its store is being opened; retry shortly");
    }
    if (!done->open.store) {
      if (!done->error.ok()) return done->error;
      return UnavailableError("cluster \"" + key + "\": not opened yet");
    }
    Handle h = done->open;
    h.stale = done->endpoints.stale;
    return h;
  }

 private:
  struct Entry {
    ClusterEndpoints endpoints;
    Handle open;  // empty until opened
    bool opening = false;
    Status error;  // the last failed open, until retry_at
    Clock::time_point retry_at;
    std::chrono::milliseconds backoff{0};
  };

  // Opens what Find() queued, one at a time, outside the lock.
  void OpenLoop() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      const std::string name = queue_.front();
      queue_.erase(queue_.begin());
      auto it = entries_.find(name);
      if (it == entries_.end()) continue;
      const ClusterEndpoints endpoints = it->second.endpoints;
      lock.unlock();
      StatusOr<Handle> opened = Open(endpoints);
      lock.lock();
      it = entries_.find(name);
      if (it != entries_.end() && SameTarget(it->second.endpoints, endpoints)) {
        Entry& e = it->second;
        e.opening = false;
        if (opened.ok()) {
          e.open = std::move(*opened);
          e.backoff = std::chrono::milliseconds(0);
        } else {
          e.backoff =
              std::clamp(e.backoff * 2, options_.retry_min, options_.retry_max);
          e.retry_at = Clock::now() + e.backoff;
          e.error = UnavailableError(
              std::string(opened.status().message()) + " (next try in " +
              std::to_string(e.backoff.count() / 1000) + "s)");
          LENS_LOG(WARN).Field("cluster", name).Field("error", opened.status())
              << "member cluster not reachable";
        }
      }
      wake_.notify_all();
    }
  }

  StatusOr<Handle> Open(const ClusterEndpoints& c) {
    // A member's own daemons migrate its store; a hub of another version
    // must not change it.
    StoreOptions store_options;
    store_options.migrate = false;
    auto store = Store::Open(c.database_url, store_options);
    if (!store.ok()) {
      return UnavailableError("cluster \"" + c.name + "\": store " +
                              RedactedUrl(c.database_url) + ": " +
                              std::string(store.status().message()));
    }
    Handle h;
    h.store = std::shared_ptr<Store>(std::move(*store));
    if (c.prometheus_url.empty()) {
      h.series = NewSampleHistorySource(h.store.get());
    } else {
      PromQlSourceOptions p;
      p.url = c.prometheus_url;
      p.bearer_token = c.prometheus_token;
      p.timeout = options_.prometheus_timeout;
      auto series = NewPromQlSource(p);
      if (!series.ok()) {
        return InvalidArgumentError("cluster \"" + c.name + "\": " +
                                    std::string(series.status().message()));
      }
      h.series = std::move(*series);
    }
    return h;
  }

  // Under mu_. Re-reads the file when it changed since the last read; keeps
  // the last good directory when it is missing or bad.
  void Reload() {
    const auto now = Clock::now();
    if (checked_ && now - last_check_ < options_.recheck) return;
    checked_ = true;
    last_check_ = now;
    std::error_code ec;
    const auto mtime = fs::last_write_time(options_.path, ec);
    const auto size = ec ? 0 : fs::file_size(options_.path, ec);
    const std::string stamp =
        ec ? "missing: " + ec.message()
           : std::to_string(mtime.time_since_epoch().count()) + "/" +
                 std::to_string(size);
    if (stamp == stamp_) return;
    stamp_ = stamp;
    if (ec) {
      LENS_LOG(WARN).Field("file", options_.path).Field("error", ec.message())
          << "cluster directory unreadable; keeping the last one";
      return;
    }
    auto text = ReadWholeFile();
    auto parsed = text.ok()
                      ? ParseClusterDirectory(*text)
                      : StatusOr<std::vector<ClusterEndpoints>>(text.status());
    if (!parsed.ok()) {
      LENS_LOG(WARN)
              .Field("file", options_.path)
              .Field("error", parsed.status().message())
          << "cluster directory refused; keeping the last one";
      return;
    }
    std::map<std::string, Entry, std::less<>> next;
    for (ClusterEndpoints& c : *parsed) {
      Entry e;
      auto old = entries_.find(c.name);
      if (old != entries_.end() && SameTarget(old->second.endpoints, c)) {
        // Unchanged: keep the open store (or the failure and its backoff).
        e = old->second;
      }
      e.endpoints = std::move(c);
      next.emplace(e.endpoints.name, std::move(e));
    }
    entries_ = std::move(next);
    LENS_LOG(INFO)
            .Field("file", options_.path)
            .Field("clusters", static_cast<int64_t>(entries_.size()))
        << "cluster directory loaded";
  }

  static bool SameTarget(const ClusterEndpoints& a, const ClusterEndpoints& b) {
    return a.database_url == b.database_url &&
           a.prometheus_url == b.prometheus_url &&
           a.prometheus_token == b.prometheus_token;
  }

  StatusOr<std::string> ReadWholeFile() const {
    FILE* f = std::fopen(options_.path.c_str(), "rb");
    if (!f) return NotFoundError("cannot open " + options_.path);
    std::string out;
    char buffer[65536];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
      out.append(buffer, n);
      if (out.size() > (2u << 20)) break;  // the parser refuses > 1 MiB
    }
    std::fclose(f);
    return out;
  }

  const ClusterDirectoryOptions options_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::string> queue_;  // GUARDED_BY(mu_): members to open
  bool stopping_ = false;           // GUARDED_BY(mu_)
  bool checked_ = false;
  Clock::time_point last_check_;
  std::string stamp_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::thread opener_;  // last: started once the rest is built
};

}  // namespace

std::unique_ptr<ApiClusters> NewClusterDirectoryFile(
    const ClusterDirectoryOptions& options) {
  return std::make_unique<DirectoryFile>(options);
}

}  // namespace lens
