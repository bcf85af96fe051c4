// The versioned schema, written once for both backends. Type tokens are
// replaced per dialect (schema.h): {ID} {TS} {JSON} {BOOL} {REAL}.
// Never edit a released migration: add a new one.
#include "store/schema.h"

#include <string>

namespace lens::store {
namespace {

// Version 1: the data model of docs/storage.md.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  address TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT '',
  gpu_vendor TEXT NOT NULL DEFAULT '',
  gpu_model TEXT NOT NULL DEFAULT '',
  gpu_count INTEGER NOT NULL DEFAULT 0,
  cpu_model TEXT NOT NULL DEFAULT '',
  cpu_count INTEGER NOT NULL DEFAULT 0,
  memory_bytes BIGINT NOT NULL DEFAULT 0,
  kernel_version TEXT NOT NULL DEFAULT '',
  os_image TEXT NOT NULL DEFAULT '',
  driver_version TEXT NOT NULL DEFAULT '',
  labels {JSON} NOT NULL,
  created_at {TS} NOT NULL,
  updated_at {TS} NOT NULL);
CREATE INDEX nodes_updated_at ON nodes (updated_at);

CREATE TABLE gpu_devices (
  node TEXT NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  gpu_index INTEGER NOT NULL,
  vendor TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  serial TEXT NOT NULL DEFAULT '',
  uuid TEXT NOT NULL DEFAULT '',
  bdf TEXT NOT NULL DEFAULT '',
  vram_bytes BIGINT NOT NULL DEFAULT 0,
  numa_node INTEGER NOT NULL DEFAULT -1,
  updated_at {TS} NOT NULL,
  PRIMARY KEY (node, gpu_index));
CREATE INDEX gpu_devices_serial ON gpu_devices (serial);
CREATE INDEX gpu_devices_bdf ON gpu_devices (bdf);

CREATE TABLE rdma_devices (
  node TEXT NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  node_guid TEXT NOT NULL DEFAULT '',
  fw_version TEXT NOT NULL DEFAULT '',
  board_id TEXT NOT NULL DEFAULT '',
  bdf TEXT NOT NULL DEFAULT '',
  netdev TEXT NOT NULL DEFAULT '',
  numa_node INTEGER NOT NULL DEFAULT -1,
  updated_at {TS} NOT NULL,
  PRIMARY KEY (node, name));

CREATE TABLE node_device_changelog (
  id {ID},
  node TEXT NOT NULL,
  kind TEXT NOT NULL,
  device_key TEXT NOT NULL,
  op TEXT NOT NULL,
  old_serial TEXT NOT NULL DEFAULT '',
  new_serial TEXT NOT NULL DEFAULT '',
  at {TS} NOT NULL,
  UNIQUE (node, kind, device_key, op, at));
CREATE INDEX node_device_changelog_at ON node_device_changelog (at);

CREATE TABLE gpu_pods (
  uid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  namespace TEXT NOT NULL,
  node TEXT NOT NULL DEFAULT '',
  phase TEXT NOT NULL DEFAULT '',
  owner_uid TEXT NOT NULL DEFAULT '',
  ip TEXT NOT NULL DEFAULT '',
  gpu_allocated INTEGER NOT NULL DEFAULT 0,
  running {BOOL} NOT NULL,
  deleted {BOOL} NOT NULL,
  labels {JSON} NOT NULL,
  created_at {TS} NOT NULL,
  updated_at {TS} NOT NULL);
CREATE INDEX gpu_pods_namespace_name ON gpu_pods (namespace, name);
CREATE INDEX gpu_pods_node ON gpu_pods (node);
CREATE INDEX gpu_pods_owner ON gpu_pods (owner_uid);
CREATE INDEX gpu_pods_created_at ON gpu_pods (created_at);

CREATE TABLE gpu_pods_events (
  id {ID},
  pod_uid TEXT NOT NULL,
  event_type TEXT NOT NULL,
  phase TEXT NOT NULL DEFAULT '',
  restart_count INTEGER NOT NULL DEFAULT 0,
  at {TS} NOT NULL,
  UNIQUE (pod_uid, event_type, at));

CREATE TABLE pod_snapshots (
  id {ID},
  pod_uid TEXT NOT NULL,
  resource_version TEXT NOT NULL,
  digest TEXT NOT NULL,
  snapshot {JSON} NOT NULL,
  at {TS} NOT NULL,
  UNIQUE (pod_uid, resource_version));
CREATE INDEX pod_snapshots_pod_at ON pod_snapshots (pod_uid, at);

CREATE TABLE pod_resources (
  pod_uid TEXT PRIMARY KEY,
  gpu_vendor TEXT NOT NULL DEFAULT '',
  gpu_model TEXT NOT NULL DEFAULT '',
  gpu_allocated INTEGER NOT NULL DEFAULT 0,
  rdma_allocated INTEGER NOT NULL DEFAULT 0,
  cpu_millis BIGINT NOT NULL DEFAULT 0,
  memory_bytes BIGINT NOT NULL DEFAULT 0,
  updated_at {TS} NOT NULL);

CREATE TABLE gpu_workloads (
  uid TEXT PRIMARY KEY,
  api_version TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  namespace TEXT NOT NULL,
  parent_uid TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT '',
  gpu_request INTEGER NOT NULL DEFAULT 0,
  labels {JSON} NOT NULL,
  created_at {TS} NOT NULL,
  ended_at {TS},
  updated_at {TS} NOT NULL);
CREATE INDEX gpu_workloads_namespace_name ON gpu_workloads (namespace, name);
CREATE INDEX gpu_workloads_parent ON gpu_workloads (parent_uid);
CREATE INDEX gpu_workloads_created_at ON gpu_workloads (created_at);

CREATE TABLE workload_pod_references (
  workload_uid TEXT NOT NULL,
  pod_uid TEXT NOT NULL,
  created_at {TS} NOT NULL,
  PRIMARY KEY (workload_uid, pod_uid));
CREATE INDEX workload_pod_references_pod ON workload_pod_references (pod_uid);

CREATE TABLE training_runs (
  workload_uid TEXT NOT NULL,
  run INTEGER NOT NULL,
  fingerprint TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT '',
  created_at {TS} NOT NULL,
  PRIMARY KEY (workload_uid, run),
  UNIQUE (workload_uid, fingerprint));

CREATE TABLE workload_events (
  id {ID},
  workload_uid TEXT NOT NULL,
  run INTEGER NOT NULL,
  event_type TEXT NOT NULL,
  event_key TEXT NOT NULL,
  iteration BIGINT,
  at {TS},
  duration_s {REAL},
  path TEXT NOT NULL DEFAULT '',
  format TEXT NOT NULL DEFAULT '',
  line BIGINT NOT NULL DEFAULT 0,
  UNIQUE (workload_uid, run, event_type, event_key));

CREATE TABLE training_performance (
  workload_uid TEXT NOT NULL,
  run INTEGER NOT NULL,
  iteration BIGINT NOT NULL,
  ts {TS},
  format TEXT NOT NULL DEFAULT '',
  rank INTEGER,
  world_size INTEGER,
  line BIGINT NOT NULL DEFAULT 0,
  loss {REAL},
  tflops_per_gpu {REAL},
  tokens_per_s_per_gpu {REAL},
  elapsed_ms {REAL},
  fields {JSON} NOT NULL,
  PRIMARY KEY (workload_uid, run, iteration));
CREATE INDEX training_performance_ts ON training_performance (workload_uid, ts);

CREATE TABLE node_containers (
  container_id TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  runtime_namespace TEXT NOT NULL DEFAULT '',
  pod_uid TEXT NOT NULL DEFAULT '',
  pod_name TEXT NOT NULL DEFAULT '',
  pod_namespace TEXT NOT NULL DEFAULT '',
  container_name TEXT NOT NULL DEFAULT '',
  image TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT '',
  privileged {BOOL} NOT NULL,
  pid BIGINT NOT NULL DEFAULT 0,
  exit_code INTEGER,
  labels {JSON} NOT NULL,
  created_at {TS} NOT NULL,
  started_at {TS},
  finished_at {TS},
  updated_at {TS} NOT NULL);
CREATE INDEX node_containers_node ON node_containers (node, state);
CREATE INDEX node_containers_pod ON node_containers (pod_uid);

CREATE TABLE node_container_devices (
  container_id TEXT NOT NULL
    REFERENCES node_containers (container_id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  device_key TEXT NOT NULL,
  bdf TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (container_id, kind, device_key));
CREATE INDEX node_container_devices_device
  ON node_container_devices (kind, device_key);

CREATE TABLE node_container_events (
  id {ID},
  container_id TEXT NOT NULL,
  node TEXT NOT NULL,
  event_type TEXT NOT NULL,
  sequence BIGINT NOT NULL DEFAULT 0,
  detail {JSON} NOT NULL,
  at {TS} NOT NULL,
  UNIQUE (container_id, event_type, at));
CREATE INDEX node_container_events_node_at ON node_container_events (node, at);

CREATE TABLE storage (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT '',
  config {JSON} NOT NULL,
  updated_at {TS} NOT NULL);
)sql";

// Validation results and memory reports of training logs.
constexpr std::string_view kV2 = R"sql(
CREATE TABLE training_validations (
  workload_uid TEXT NOT NULL,
  run INTEGER NOT NULL,
  iteration BIGINT NOT NULL,
  split TEXT NOT NULL,
  end_of_training {BOOL} NOT NULL,
  ts {TS},
  format TEXT NOT NULL DEFAULT '',
  line BIGINT NOT NULL DEFAULT 0,
  loss {REAL},
  perplexity {REAL},
  extra {JSON} NOT NULL,
  PRIMARY KEY (workload_uid, run, iteration, split, end_of_training));

CREATE TABLE training_memory_reports (
  workload_uid TEXT NOT NULL,
  run INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  context TEXT NOT NULL,
  iteration BIGINT,
  ts {TS},
  format TEXT NOT NULL DEFAULT '',
  line BIGINT NOT NULL DEFAULT 0,
  allocated_mb {REAL},
  max_allocated_mb {REAL},
  reserved_mb {REAL},
  max_reserved_mb {REAL},
  PRIMARY KEY (workload_uid, run, rank, context));
)sql";

// What the controller reads from the API server: a pod's start, end and
// restarts; a node's allocatable GPUs, kubelet and runtime versions.
constexpr std::string_view kV3 = R"sql(
ALTER TABLE gpu_pods ADD COLUMN started_at {TS};
ALTER TABLE gpu_pods ADD COLUMN ended_at {TS};
ALTER TABLE gpu_pods ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN gpu_allocatable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN kubelet_version TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN container_runtime TEXT NOT NULL DEFAULT '';
)sql";

// What lens-jobs derives: per node the GPUs its pods hold, their mean
// utilisation and whether its agent answers; per workload its active pods;
// the allocation history the dashboard draws (node '' is the cluster).
constexpr std::string_view kV4 = R"sql(
ALTER TABLE nodes ADD COLUMN gpu_allocated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN gpu_utilization {REAL};
ALTER TABLE nodes ADD COLUMN agent_state TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN agent_seen_at {TS};
ALTER TABLE gpu_workloads ADD COLUMN active_pods INTEGER NOT NULL DEFAULT 0;
CREATE TABLE gpu_allocation_history (
  node TEXT NOT NULL,
  at {TS} NOT NULL,
  gpus_allocated INTEGER NOT NULL,
  gpus_allocatable INTEGER NOT NULL,
  PRIMARY KEY (node, at));
CREATE INDEX gpu_allocation_history_at ON gpu_allocation_history (at);
)sql";

// For the telemetry processor: a change feed (when each row of the tables it
// indexes was last written, by the writer's clock, in microseconds; rows
// written before this migration get their updated_at, at most now) and the
// bounded sample history of embedded mode. Samples have no foreign key (a
// per-row check); sample_history_state's one row orders appends and prunes.
constexpr std::string_view kV5 = R"sql(
ALTER TABLE gpu_pods ADD COLUMN written_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE gpu_workloads ADD COLUMN written_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE node_containers ADD COLUMN written_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE gpu_devices ADD COLUMN written_us BIGINT NOT NULL DEFAULT 0;
UPDATE gpu_pods SET written_us = CASE WHEN lens_us(updated_at) < {NOW_US}
  THEN lens_us(updated_at) ELSE {NOW_US} END;
UPDATE gpu_workloads SET written_us = CASE WHEN lens_us(updated_at) < {NOW_US}
  THEN lens_us(updated_at) ELSE {NOW_US} END;
UPDATE node_containers SET written_us = CASE
  WHEN lens_us(updated_at) < {NOW_US} THEN lens_us(updated_at)
  ELSE {NOW_US} END;
UPDATE gpu_devices SET written_us = CASE WHEN lens_us(updated_at) < {NOW_US}
  THEN lens_us(updated_at) ELSE {NOW_US} END;
CREATE INDEX gpu_pods_written ON gpu_pods (written_us);
CREATE INDEX gpu_workloads_written ON gpu_workloads (written_us);
CREATE INDEX node_containers_written ON node_containers (written_us);
CREATE INDEX gpu_devices_written ON gpu_devices (written_us);

CREATE TABLE sample_series (
  id {ID},
  metric TEXT NOT NULL,
  labels TEXT NOT NULL,
  UNIQUE (metric, labels));
CREATE TABLE samples (
  series_id BIGINT NOT NULL,
  ts_ms BIGINT NOT NULL,
  value {REAL},
  PRIMARY KEY (series_id, ts_ms)){WITHOUT_ROWID};
CREATE INDEX samples_ts ON samples (ts_ms);
CREATE TABLE sample_history_state (generation BIGINT NOT NULL);
INSERT INTO sample_history_state (generation) VALUES (0);
)sql";

// Iteration fields as json, not jsonb, on PostgreSQL: the store only writes
// and reads them back whole (filters and sorts use the typed columns), and
// building jsonb (numeric conversion of every value, sorted keys) was a
// sixth of the server's time in a bulk upsert. SQLite keeps its text.
constexpr std::string_view kV6Postgres =
    "ALTER TABLE training_performance ALTER COLUMN fields TYPE json "
    "USING fields::json;";

// PostgreSQL only: the timestamp conversion functions of db.h, exact to the
// microsecond (SQLite registers identities instead).
constexpr std::string_view kPgTimeFunctions = R"sql(
CREATE OR REPLACE FUNCTION lens_ts(bigint) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT 'epoch'::timestamptz + $1 * interval '1 microsecond' $$;
CREATE OR REPLACE FUNCTION lens_us(timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT (extract(epoch FROM $1) * 1000000)::bigint $$;
)sql";

struct Token {
  std::string_view token, sqlite, postgres;
};
constexpr Token kTokens[] = {
    {"{ID}", "INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"},
    {"{TS}", "INTEGER", "TIMESTAMPTZ"},
    {"{JSON}", "TEXT", "JSONB"},
    {"{BOOL}", "INTEGER", "BOOLEAN"},
    {"{REAL}", "REAL", "DOUBLE PRECISION"},
    {"{NOW_US}",
     "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)",
     "lens_us(now())"},
    {"{WITHOUT_ROWID}", " WITHOUT ROWID", ""},
};

std::string Render(std::string_view sql, Dialect d) {
  std::string out(sql);
  for (const Token& t : kTokens) {
    const std::string_view with = d == Dialect::kSqlite ? t.sqlite : t.postgres;
    for (size_t at = out.find(t.token); at != std::string::npos;
         at = out.find(t.token, at + with.size())) {
      out.replace(at, t.token.size(), with);
    }
  }
  return out;
}

}  // namespace

std::vector<Migration> Migrations(Dialect dialect) {
  std::vector<Migration> out;
  std::string v1 = Render(kV1, dialect);
  if (dialect == Dialect::kPostgres) v1 = std::string(kPgTimeFunctions) + v1;
  out.push_back({1, "data model", std::move(v1)});
  out.push_back(
      {2, "training validations and memory reports", Render(kV2, dialect)});
  out.push_back({3, "pod start, end and restarts; node kubelet facts",
                 Render(kV3, dialect)});
  out.push_back(
      {4, "GPU allocation, utilisation and agent state", Render(kV4, dialect)});
  out.push_back({5, "change feed and sample history", Render(kV5, dialect)});
  out.push_back(
      {6, "iteration fields as json",
       std::string(dialect == Dialect::kPostgres ? kV6Postgres : "SELECT 1;")});
  return out;
}

}  // namespace lens::store
