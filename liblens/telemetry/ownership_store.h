// The ownership index from the store: pods (gpu_pods with their top-level
// workloads) and the devices their containers held (node_containers and
// their device rows, with every identity gpu_devices knows each GPU by),
// over a window of history, so that late samples still find the owner of
// their time.
//
// An OwnershipFeed loads the live rows once, then follows the store's
// change feed (rows written since its watermark, store.h): each refresh
// reads only what changed, updates its own tables and publishes a new
// sealed index by an atomic pointer swap, so readers never lock and never
// see a half-built index.
#ifndef LENS_TELEMETRY_OWNERSHIP_STORE_H_
#define LENS_TELEMETRY_OWNERSHIP_STORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lens/store.h"
#include "telemetry/ownership.h"

namespace lens::telemetry {

struct OwnershipFeedStats {
  uint64_t refreshes = 0;
  uint64_t failures = 0;
  uint64_t rows_read = 0;  // changed rows read, all refreshes
  size_t pods = 0;         // in the index now
  size_t containers = 0;
  size_t workloads = 0;
  double last_refresh_seconds = 0;
  std::optional<Timestamp> last_success;
};

class OwnershipFeed {
 public:
  // `history`: how long ended pods and containers stay in the index.
  // `margin`: how far before its watermark each refresh reads again (the
  // change feed is stamped with the writers' clocks, and transactions
  // commit out of order).
  OwnershipFeed(Store* store, std::chrono::milliseconds history,
                std::chrono::milliseconds margin = std::chrono::seconds(60));

  // The first call loads every live row (and those ended within history);
  // later ones read the changes since the last. Publishes a new index when
  // anything changed. Errors: the store's (the previous index stays).
  // Not concurrent with itself (one refreshing thread).
  Status Refresh(Timestamp now);

  // The index now (never null: empty before the first refresh).
  std::shared_ptr<const OwnershipIndex> Current() const {
    return index_.load(std::memory_order_acquire);
  }
  OwnershipFeedStats stats() const;
  // The workloads the feed saw end since the last call (each once).
  std::vector<std::string> TakeEndedWorkloads();

 private:
  struct Pod {
    std::string name, namespace_name, owner_uid;
    int64_t from_ms = 0, to_ms = kOpenEnd;
  };
  struct Container {
    std::string node, pod_uid;
    int64_t from_ms = 0, to_ms = kOpenEnd;
    // (kind, key, bdf) of each device row.
    std::vector<ContainerDeviceRecord> devices;
  };
  struct Gpu {
    std::string serial, bdf, uuid;
  };

  Status Load(Timestamp now);
  Status ReadChanges(Timestamp now);
  void Apply(const PodRecord& p);
  void Apply(const ContainerRecord& c);
  void Apply(const WorkloadRecord& w);
  void Apply(const GpuDeviceRecord& g);
  Status FetchMissingWorkloads();
  void Prune(Timestamp now);
  std::shared_ptr<const OwnershipIndex> Build() const;

  Store* store_;
  std::chrono::milliseconds history_;
  std::chrono::milliseconds margin_;
  bool loaded_ = false;
  Timestamp now_{};  // of the refresh in progress
  // Per table, the change feed's watermark (writers' clock).
  Timestamp pods_mark_{}, containers_mark_{}, workloads_mark_{}, gpus_mark_{};
  std::map<std::string, Pod> pods_;              // by uid
  std::map<std::string, Container> containers_;  // by container id
  std::map<std::string, Owner> workloads_;       // by uid
  std::set<std::string> missing_workloads_;      // named, never stored
  // Ended workloads reported, and when: each once, though the feed reads
  // its rows again within the margin; forgotten after a while.
  std::map<std::string, Timestamp> ended_reported_;
  std::vector<std::string> ended_;  // GUARDED_BY(stats_mu_)
  // By (node, index). A GPU removed from its node keeps its row here
  // (the feed carries no deletions): it only adds identities nobody uses.
  std::map<std::pair<std::string, int32_t>, Gpu> gpus_;
  std::atomic<std::shared_ptr<const OwnershipIndex>> index_;
  mutable std::mutex stats_mu_;
  OwnershipFeedStats stats_;  // GUARDED_BY(stats_mu_)
};

// The index of the store at `now`, in one read (a feed refreshed once).
// Errors: the store's.
StatusOr<std::shared_ptr<const OwnershipIndex>> BuildOwnershipIndex(
    Store& store, Timestamp now, std::chrono::milliseconds history);

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_OWNERSHIP_STORE_H_
