// The Lens store: one data model (docs/storage.md) on two backends, SQLite
// (the embedded default) and PostgreSQL.
//
//   auto store = lens::Store::Open("sqlite:///var/lib/lens/lens.db");
//   auto store = lens::Store::Open("postgresql://lens:pw@db:5432/lens");
//
// Every table has its natural key as a unique constraint and every write is
// an idempotent upsert, so writing the same data twice leaves one row, and a
// failed batch can simply be written again. Batches are one transaction each.
// Transient failures (PostgreSQL restarting, SQLite busy) are retried with
// backoff on a fresh connection until StoreOptions::retry_deadline.
//
// Thread safety: a Store and its repositories are thread-safe; the store
// keeps a small connection pool. A TrainingWriter is for one thread at a time.
//
// Errors: kInvalidArgument for bad input (oversized or malformed values, an
// unknown sort key, a page size over 1000), with the table and field named;
// kNotFound for Get* of a missing key; kUnavailable when the database stayed
// unreachable past the retry deadline; kFailedPrecondition when the database
// schema is newer than this build. Messages name the backend and host and
// never contain a password or SQL text.
#ifndef LENS_STORE_H_
#define LENS_STORE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/export.h"
#include "lens/model.h"
#include "lens/sample_history.h"
#include "lens/status.h"
#include "lens/training.h"

namespace lens {

namespace store {
class Database;  // internal
}

struct StoreOptions {
  size_t max_connections = 4;  // pool size
  // How long a write keeps retrying while the database is unreachable.
  std::chrono::milliseconds retry_deadline{30000};
  bool migrate = true;  // apply pending migrations on open
  // SQLite: create the database file when it does not exist (otherwise
  // Open fails with kNotFound). PostgreSQL databases are never created.
  bool create_if_missing = true;
};

struct MigrationInfo {
  int32_t version = 0;
  std::string name;
  bool applied = false;
  std::optional<Timestamp> applied_at;
};

struct SchemaStatus {
  std::string backend;  // "sqlite" or "postgresql"
  std::string target;   // "sqlite /path" or "postgresql host:port/db"
  int32_t current_version = 0;
  int32_t latest_version = 0;  // the newest this build knows
  std::vector<MigrationInfo> migrations;
};

// The change feed, for readers that keep an index of pods, workloads,
// containers and GPUs current without full scans (lens-telemetry). Every
// write of a row of gpu_pods, gpu_workloads, node_containers or gpu_devices
// (their upserts, UpdateWorkloadStatus, MarkMissingDeleted, the device
// syncs) stamps it with the writer's wall clock, read when its transaction
// began (microseconds; one time per transaction). The *WrittenSince reads
// return the rows stamped at `since` or later, in stamp order and then by
// key, and `through`, the latest stamp among them. A row is reported when
// written, changed or not (a device sync rewrites a node's whole inventory);
// a deleted row is not (a GPU a sync removed: see ListDeviceChanges). Rows
// last written before migration 5 carry their updated_at, or the
// migration's time when that is earlier.
//
// Pages: a page holds every row stamped in [since, through], that is all
// rows stamped exactly `since`, then at least `limit` rows (when there are)
// up to the end of a stamp: a page never splits one transaction's rows, so
// it may exceed `limit` by two transactions' rows. While a page holds
// `limit` or more items and `through` > `since`, read on from `through`
// (inclusive: its rows come again; apply rows idempotently). A limit of 0
// is kInvalidArgument.
//
// Watermarks: the stamp is the writer's clock. Writers' clocks differ, and
// on PostgreSQL transactions commit in any order, so a row can become
// visible after rows stamped later than it. Keep the largest `through` seen
// as a watermark and read from it minus a margin longer than the clock skew
// between writers plus the longest write transaction (seconds, not
// milliseconds). On SQLite a writer stamps after taking the write lock, so
// one host's stamps follow commit order.

class LENS_EXPORT NodeRepository {
 public:
  // Upserts a node; created_at is kept from the first write.
  Status UpsertNode(const NodeRecord& node);
  // Upserts the columns `columns` owns of each node, in one transaction;
  // a node not stored yet gets the other columns' defaults.
  Status UpsertNodes(std::span<const NodeRecord> nodes, NodeColumns columns);
  StatusOr<NodeRecord> GetNode(std::string_view name);
  StatusOr<Page<NodeRecord>> ListNodes(const NodeQuery& query);

  // Makes the stored GPU inventory of `node` equal to `devices` in one
  // transaction and records each difference in the change log: a new index
  // is CREATE, a vanished one DELETE, a different serial at an index
  // REPLACE. The node row must exist (kFailedPrecondition otherwise).
  StatusOr<DeviceSyncResult> SyncGpuDevices(
      std::string_view node, std::span<const GpuDeviceRecord> devices,
      Timestamp now);
  // The same for RDMA devices (keyed by name; REPLACE when the GUID changes).
  StatusOr<DeviceSyncResult> SyncRdmaDevices(
      std::string_view node, std::span<const RdmaDeviceRecord> devices,
      Timestamp now);
  // Both syncs for several nodes in one transaction (the counts summed).
  StatusOr<DeviceSyncResult> SyncNodeDevices(
      std::span<const NodeInventory> nodes, Timestamp now);
  StatusOr<std::vector<GpuDeviceRecord>> ListGpuDevices(std::string_view node);
  // Every node's GPUs, by node and index, in one read.
  StatusOr<std::vector<GpuDeviceRecord>> ListAllGpuDevices();
  StatusOr<GpuDeviceRecord> GetGpuDevice(std::string_view node, int32_t index);
  // The change feed of gpu_devices (above), ordered by node and index
  // within one stamp; a sync stamps all of a node's GPUs together.
  StatusOr<Changes<GpuDeviceRecord>> ListGpuDevicesWrittenSince(
      Timestamp since, size_t limit = 100000);
  StatusOr<std::vector<RdmaDeviceRecord>> ListRdmaDevices(
      std::string_view node);
  // Appends points to the allocation history and, in the same transaction,
  // deletes the points older than `keep_after` (the history stays bounded).
  Status AddGpuAllocation(std::span<const GpuAllocationRecord> points,
                          Timestamp keep_after);
  // The history of one node ("" for the cluster), oldest first, at most
  // `limit` points (the newest ones when there are more; 1..100000).
  StatusOr<std::vector<GpuAllocationRecord>> ListGpuAllocation(
      std::string_view node, TimeRange range, int32_t limit = 10000);
  // Change log of one node ("" for all), newest first.
  StatusOr<Page<DeviceChangeRecord>> ListDeviceChanges(std::string_view node,
                                                       TimeRange range,
                                                       PageRequest page);

 private:
  friend class Store;
  explicit NodeRepository(store::Database* db) : db_(db) {}
  store::Database* db_;
};

class LENS_EXPORT PodRepository {
 public:
  // Batch upserts, one transaction per call.
  Status UpsertPods(std::span<const PodRecord> pods);
  StatusOr<PodRecord> GetPod(std::string_view uid);
  StatusOr<Page<PodRecord>> ListPods(const PodQuery& query);

  Status AddPodEvents(std::span<const PodEventRecord> events);
  StatusOr<std::vector<PodEventRecord>> ListPodEvents(std::string_view pod_uid);

  // Stores the snapshot only when it differs from the pod's latest one;
  // returns whether a row was written.
  StatusOr<bool> PutPodSnapshot(const PodSnapshotRecord& snapshot);
  StatusOr<std::vector<PodSnapshotRecord>> ListPodSnapshots(
      std::string_view pod_uid);

  Status UpsertPodResources(std::span<const PodResourcesRecord> resources);
  StatusOr<PodResourcesRecord> GetPodResources(std::string_view pod_uid);

  Status UpsertWorkloads(std::span<const WorkloadRecord> workloads);
  // Writes only status, gpu_request, active_pods, ended_at and updated_at
  // of stored workloads (lens-jobs' reconciliation; the rest is the
  // controller's). A uid not stored is kNotFound, nothing written.
  Status UpdateWorkloadStatus(std::span<const WorkloadRecord> workloads);
  StatusOr<WorkloadRecord> GetWorkload(std::string_view uid);
  StatusOr<Page<WorkloadRecord>> ListWorkloads(const WorkloadQuery& query);

  // (workload uid, pod uid) references; idempotent.
  Status LinkPods(
      std::span<const std::pair<std::string, std::string>> workload_pod);
  StatusOr<std::vector<PodRecord>> ListWorkloadPods(
      std::string_view workload_uid);
  // Every pod neither deleted nor ended, by uid, in one read (no pages: a
  // cluster's live pods); with `ended_since`, also those that ended or were
  // deleted at or after it.
  StatusOr<std::vector<PodRecord>> ListLivePods(
      std::optional<Timestamp> ended_since = std::nullopt);
  // The pods of every workload not ended, as (workload uid, pod), in one
  // read.
  StatusOr<std::vector<std::pair<std::string, PodRecord>>>
  ListOpenWorkloadPods();

  // The change feeds of gpu_pods and gpu_workloads (above), by uid within
  // one stamp.
  StatusOr<Changes<PodRecord>> ListPodsWrittenSince(Timestamp since,
                                                    size_t limit = 100000);
  StatusOr<Changes<WorkloadRecord>> ListWorkloadsWrittenSince(
      Timestamp since, size_t limit = 100000);

 private:
  friend class Store;
  explicit PodRepository(store::Database* db) : db_(db) {}
  store::Database* db_;
};

class LENS_EXPORT ContainerRepository {
 public:
  // Upserts containers with their full current state; each container's
  // device rows become exactly `devices`.
  Status UpsertContainers(std::span<const ContainerRecord> containers);
  StatusOr<ContainerRecord> GetContainer(std::string_view container_id);
  StatusOr<Page<ContainerRecord>> ListContainers(const ContainerQuery& query);
  // Every container created, running or paused, by container_id, in one
  // read (no pages: a cluster's live containers), with their devices when
  // asked; with `ended_since`, also those that finished (or were last seen
  // exited or deleted) at or after it.
  StatusOr<std::vector<ContainerRecord>> ListLiveContainers(
      bool with_devices, std::optional<Timestamp> ended_since = std::nullopt);
  // Marks every container of `node` not in `live_ids` and not yet deleted as
  // state "deleted" (after a full resync); returns how many changed.
  StatusOr<int64_t> MarkMissingDeleted(std::string_view node,
                                       std::span<const std::string> live_ids,
                                       Timestamp now);
  Status AddContainerEvents(std::span<const ContainerEventRecord> events);
  StatusOr<Page<ContainerEventRecord>> ListContainerEvents(
      std::string_view container_id, TimeRange range, PageRequest page);
  // Containers not deleted that hold device (kind, key).
  StatusOr<std::vector<ContainerRecord>> FindDeviceHolders(
      DeviceKind kind, std::string_view device_key);
  // The change feed of node_containers (above), by container_id within one
  // stamp; with their current devices when asked (writing a container's
  // devices stamps the container).
  StatusOr<Changes<ContainerRecord>> ListContainersWrittenSince(
      Timestamp since, bool with_devices, size_t limit = 100000);

 private:
  friend class Store;
  explicit ContainerRepository(store::Database* db) : db_(db) {}
  store::Database* db_;
};

// One batch of a parser's output (spans over the caller's vectors).
struct TrainingBatch {
  std::span<const IterationRecord> records;
  std::span<const TrainingEvent> events;
  std::span<const ValidationRecord> validations;
  std::span<const MemoryReport> memory_reports;
};

// Writes one log source's parsed training data for one workload. The
// parser's run numbers are local to the source; the writer maps each to the
// workload's stored run number: a run already stored from this source (same
// source, same local run, same first line) keeps its number, a new one gets
// the workload's highest run + 1. So storing a log again rewrites the same
// rows, and a restarted workload's new log continues the numbering.
class LENS_EXPORT TrainingWriter {
 public:
  TrainingWriter(TrainingWriter&&) noexcept;
  TrainingWriter& operator=(TrainingWriter&&) noexcept;
  ~TrainingWriter();

  // Stores records and events in one transaction (idempotent per
  // (workload, run, iteration) and per event). Records and events must come
  // from one parser, in the order it produced them.
  Status Write(std::span<const IterationRecord> records,
               std::span<const TrainingEvent> events);
  // The same with validations (idempotent per (workload, run, iteration,
  // split, end of training)) and memory reports (per (workload, run, rank,
  // context)).
  Status Write(const TrainingBatch& batch);
  // Stored run number for the parser's local run, or 0 if not yet seen.
  int32_t StoredRun(int32_t local_run) const;

 private:
  friend class TrainingRepository;
  TrainingWriter(store::Database* db, std::string workload_uid,
                 std::string source);
  struct State;  // the database, workload, source and run map (training.cc)
  std::unique_ptr<State> state_;
};

// A workload's iterations sampled for charts
// (TrainingRepository::SampleIterations).
struct IterationSampleQuery {
  std::string workload_uid;    // required
  std::optional<int32_t> run;  // all runs when unset
  int32_t max_points = 400;    // records per run at most, 2..10000
};

class LENS_EXPORT TrainingRepository {
 public:
  // `source` identifies the log (a file path, "pod/container"); at most 1 KiB.
  StatusOr<TrainingWriter> OpenWriter(std::string_view workload_uid,
                                      std::string_view source);
  StatusOr<std::vector<TrainingRunRecord>> ListRuns(
      std::string_view workload_uid);
  // Records carry their stored run number; non-finite values (a NaN loss)
  // come back as NaN/Inf.
  StatusOr<Page<IterationRecord>> ListIterations(const IterationQuery& query);
  // At most q.max_points records of each run of q.workload_uid (or of
  // q.run), spread evenly over the run's iteration range for a chart: the
  // run's first and last record and, between them, the last record at or
  // before each of the iterations first + k * step, the step being the
  // range over max_points - 1, rounded up. Each sample is an index lookup
  // in the database, so a run of a million iterations costs what one of a
  // thousand does. Ordered by run and iteration; records carry their stored
  // run. One read transaction, one query per run. kInvalidArgument for an
  // empty workload_uid or max_points out of 2..10000.
  StatusOr<std::vector<IterationRecord>> SampleIterations(
      const IterationSampleQuery& q);
  // The record with the highest (run, iteration) of the workload.
  StatusOr<IterationRecord> LatestIteration(std::string_view workload_uid);
  StatusOr<std::vector<TrainingEvent>> ListEvents(
      std::string_view workload_uid);
  // Ordered by run and line; records carry their stored run number.
  StatusOr<std::vector<ValidationRecord>> ListValidations(
      std::string_view workload_uid);
  // Ordered by run, line and rank.
  StatusOr<Page<MemoryReport>> ListMemoryReports(std::string_view workload_uid,
                                                 PageRequest page);

 private:
  friend class Store;
  explicit TrainingRepository(store::Database* db) : db_(db) {}
  store::Database* db_;
};

class LENS_EXPORT StorageRepository {
 public:
  Status UpsertStorage(const StorageRecord& storage);
  StatusOr<StorageRecord> GetStorage(std::string_view name);
  StatusOr<std::vector<StorageRecord>> ListStorage();

 private:
  friend class Store;
  explicit StorageRepository(store::Database* db) : db_(db) {}
  store::Database* db_;
};

struct StoreStats {
  uint64_t retries = 0;     // transactions run again after a lost connection
  uint64_t reconnects = 0;  // connections dropped as broken
};

class LENS_EXPORT Store {
 public:
  // Opens "sqlite:///abs/path.db", "sqlite://relative/path.db" or
  // "postgresql://user:pass@host:port/db?sslmode=..." and, unless
  // options.migrate is false, applies pending migrations (under a lock, so
  // concurrent openers migrate once).
  static StatusOr<std::unique_ptr<Store>> Open(std::string_view url,
                                               StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Applies pending migrations; returns the resulting status.
  StatusOr<SchemaStatus> Migrate();
  StatusOr<SchemaStatus> GetSchemaStatus();

  NodeRepository& nodes() { return nodes_; }
  PodRepository& pods() { return pods_; }
  ContainerRepository& containers() { return containers_; }
  TrainingRepository& training() { return training_; }
  StorageRepository& storage() { return storage_; }
  // The bounded sample history of embedded mode (lens/sample_history.h).
  SampleRepository& samples() { return samples_; }

  std::string_view backend() const;   // "sqlite" or "postgresql"
  const std::string& target() const;  // never contains a password
  StoreStats stats() const;

 private:
  explicit Store(std::unique_ptr<store::Database> db);
  std::unique_ptr<store::Database> db_;
  NodeRepository nodes_;
  PodRepository pods_;
  ContainerRepository containers_;
  TrainingRepository training_;
  StorageRepository storage_;
  SampleRepository samples_;
};

}  // namespace lens

#endif  // LENS_STORE_H_
