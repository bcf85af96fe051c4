// The logs path of the telemetry processor: training logs that fluent-bit
// ships from the pods (its `http` output, json or json_lines; see
// log_decode.h) become the training records Lens stores.
//
// Each container's log (key: pod uid + container name) is one stream with
// its own streaming TrainingLogParser, kept across requests, so runs,
// restarts and checkpoints are recognised however fluent-bit cut the log
// into requests. Every record is fed to it as the CRI line the kubelet wrote
// ("<time> <stream> <P|F> <text>": the record's own `time`, else its date),
// so a stream gives the rows `lens parse-log --store` gives for the
// container's log file. What the parser completes is written through one
// TrainingWriter per stream (workload, source "namespace/pod/container").
//
//   LogIngest logs({}, store, MakeStoreWorkloadResolver(store));
//   Status st = logs.Ingest(body, LogFormat::kJson, Now());  // /v1/logs
//   logs.Flush();                                            // every second
//   logs.RenderMetrics(&out);                                // /metrics
#ifndef LENS_TELEMETRY_LOGS_H_
#define LENS_TELEMETRY_LOGS_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/model.h"
#include "lens/status.h"
#include "lens/store.h"
#include "lens/training.h"
#include "telemetry/log_decode.h"
#include "telemetry/log_metrics.h"

namespace lens::telemetry {

// The workload a pod's logs belong to.
struct LogOwner {
  std::string workload_uid;  // empty: not known
  std::string workload_name;
  std::string workload_kind;
  std::string namespace_name;  // the workload's
};

// Finds the top-level workload of a pod (`pod_uid` may be empty when
// fluent-bit's kubernetes filter could not reach the API server). Called when
// a container's stream starts (its first record, or its first after it was
// evicted), under LogIngest's lock: it must be quick (an in-memory index, or
// one store read per new container) and must not call LogIngest. An empty
// workload_uid means the pod is its own workload, as BuildOwnershipIndex treats
// a pod without an owner: uid = the pod uid, name = the pod name, kind "Pod";
// without a pod uid either, the records are skipped (reason "no_workload").
using LogOwnerResolver = std::function<LogOwner(std::string_view pod_uid,
                                                std::string_view namespace_name,
                                                std::string_view pod_name)>;

// The resolver of the processor: the pod's row (gpu_pods, by uid) and its
// top-level workload (gpu_workloads), as the controller stores them. A pod
// not stored, or without a stored owner, resolves to nothing (its own
// workload); so do store errors. `store` must outlive the resolver.
LogOwnerResolver MakeStoreWorkloadResolver(Store* store);

// The workload of a followed log file (`lens up --logs`), so the API and the
// dashboard list it: uid the file's real path (as the tailer and `lens
// parse-log --store` name it), kind "LogFile", namespace "local", name its
// file name, status
// Running. Written once: an existing row is left as it is.
Status RegisterLogFileWorkload(Store* store, const std::string& path,
                               Timestamp now);

// A stream that does not come from fluent-bit: a log file (log_tail.h), or
// where records without Kubernetes metadata go.
struct LogStreamId {
  std::string key;     // unique among streams, e.g. "file:/abs/path"
  std::string source;  // the TrainingWriter source (at most 1 KiB)
  LogOwner owner;      // workload_uid required
};

struct LogIngestOptions {
  LogDecodeLimits limits;
  TrainingParserOptions parser;  // max_line_bytes raised to fit a message
  size_t max_streams = 4096;     // live parsers; the least recently used goes
  // A stream without a line for this long is finished and dropped.
  std::chrono::seconds idle_timeout{1800};
  // A stream's rows are written once this many wait (else at Flush).
  size_t batch_rows = 1000;
  // Rows one stream may hold while its writes fail; the oldest go beyond.
  size_t max_queued_rows = 100000;
  // A workload's lens_training_* series end this long after its last record.
  std::chrono::seconds gauge_ttl{900};
  size_t max_nodes = 10000;  // latency histogram series
  // The processor's own pods, never parsed: pod names starting with one of
  // the prefixes, in `self_namespace` ("" for any).
  std::string self_namespace;
  std::vector<std::string> self_pod_prefixes = {"lens-telemetry"};
  // Records without Kubernetes metadata (no `kubernetes` map, pod or
  // container name): parsed into this stream when set, else skipped and
  // counted (reason "no_kubernetes").
  std::optional<LogStreamId> unattributed;
};

// Thread-safe. Decoding runs outside the lock; feeding the parsers under
// it; store writes outside it, one writer at a time per stream, in parser
// order.
class LogIngest {
 public:
  // `store` may be null (nothing stored: gauges and counters only); it must
  // outlive this object. `resolver` may be empty (every pod its own
  // workload).
  LogIngest(LogIngestOptions options, Store* store, LogOwnerResolver resolver);
  ~LogIngest();  // Stop()s
  LogIngest(const LogIngest&) = delete;
  LogIngest& operator=(const LogIngest&) = delete;

  // Decodes one fluent-bit request and feeds its records, in order, to their
  // containers' parsers; writes the streams whose batch is full. Errors: the
  // decoder's (kInvalidArgument with the byte offset, kResourceExhausted),
  // and nothing of that request is used; kFailedPrecondition after Stop().
  // OK means accepted: a failed store write is counted and retried at the
  // next Flush, never reported here (fluent-bit would send the records
  // again, and the parsers would see them twice).
  Status Ingest(std::string_view body, LogFormat format, Timestamp received_at);

  // Feeds raw log text (chunks split anywhere) to the stream `id`, created on
  // first use with `id.owner`. Errors: kInvalidArgument without a key or a
  // workload uid; kFailedPrecondition after Stop().
  Status IngestText(const LogStreamId& id, std::string_view text,
                    Timestamp received_at);

  // Completes the open record of every stream that got lines since the last
  // Flush, writes what waits, finishes and drops streams idle for
  // idle_timeout, ends the series of workloads silent for gauge_ttl, and
  // retries failed writes. Call every second or so. Returns the first store
  // error (the rows stay queued within max_queued_rows). Flush() is
  // Flush(the system clock's now).
  Status Flush(Timestamp now);
  Status Flush();

  // Finishes every stream (a last unterminated line, a partial CRI record)
  // and writes everything; later Ingest calls fail. Returns the first store
  // error.
  Status Stop();

  // The workload ended: writes what its streams hold and ends its
  // lens_training_* series now; records of it arriving later (fluent-bit
  // retries) are still stored, but bring no series back for gauge_ttl. Its
  // streams go when idle.
  void ForgetWorkload(std::string_view workload_uid);

  // Appends the logs path's metrics (log_metrics.h) in the text format.
  void RenderMetrics(std::string* out) const;
  const LogMetrics& metrics() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_LOGS_H_
