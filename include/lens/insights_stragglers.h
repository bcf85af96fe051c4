// Stragglers (docs/insights.md, "Stragglers"): in a multi-node job, the
// ranks, GPUs and nodes that are slower than the rest over an interval, each
// with the evidence Lens holds for that interval (GPU throttling, heat,
// power, ECC/RAS errors, RDMA port errors and congestion, TCP retransmits).
//
// Outliers are found with robust statistics: per entity (a rank's median
// step time, a GPU's mean utilisation, a node's median of those), the
// modified z-score against the job's median and median absolute deviation
// (Iglewicz and Hoaglin): z = 0.6745 (x - median) / MAD. When MAD is 0
// (more than half the entities identical) the mean absolute deviation
// stands in: z = (x - median) / (1.253314 MeanAD); when that is 0 too,
// every entity is alike and none is out.
//
// The computation is pure, over plain time-stamped series. A caller
// gathers the measures (ReadGpuUtilization for the job's GPUs,
// AppendStragglerSteps per pod's log), asks FindStragglerSuspectNodes
// which nodes to read evidence for (ReadStragglerEvidence), then calls
// FindStragglers with both.
#ifndef LENS_INSIGHTS_STRAGGLERS_H_
#define LENS_INSIGHTS_STRAGGLERS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/insights.h"
#include "lens/model.h"
#include "lens/sample_history.h"
#include "lens/status.h"
#include "lens/training.h"

namespace lens {

class Store;             // lens/store.h
class TimeSeriesSource;  // lens/timeseries.h

// ---- input -----------------------------------------------------------------

// One rank's logged step times: points of (Unix ms, elapsed ms per
// iteration), in time order.
struct StragglerRankSteps {
  std::string node;  // where the rank ran
  std::string gpu;   // its GPU index as the agent labels it; "" if unknown
  int32_t rank = 0;  // as the log printed it (global, or local per node)
  std::vector<SamplePoint> steps;
};

// Appends the step times of `records` (one pod's log, any order) to `out`,
// one entry per rank, placed on `node` with the GPU unknown. Records without
// a rank, an elapsed_ms or a timestamp are skipped: without them a step
// cannot be placed in time or on a rank. A rank already in `out` for the
// same node gets the points added (and re-sorted).
LENS_EXPORT void AppendStragglerSteps(std::span<const IterationRecord> records,
                                      std::string_view node,
                                      std::vector<StragglerRankSteps>* out);

// What an evidence series measures, and so how it is read.
enum class StragglerEvidenceKind : uint8_t {
  kGpuThrottle,     // gauge, 1 while `name` (a throttle reason) is active
  kGpuTemperature,  // gauge, degrees Celsius; `name`: the sensor
  kGpuPower,        // gauge, watts
  kGpuPowerCap,     // gauge, watts: the limit kGpuPower is read against
  kGpuEccErrors,    // counter; `name`: "correctable", "uncorrectable"
  kRdmaPortErrors,  // counter; `name`: the port counter, `device`: "mlx5_0/1"
  kRdmaCongestion,  // counter; as kRdmaPortErrors
  kTcpRetransmits,  // counter, segments; `device`: the pod ("ns/name")
};

// "gpu_throttle", "gpu_temperature", "gpu_power", "gpu_power_cap",
// "gpu_ecc_errors", "rdma_port_errors", "rdma_congestion", "tcp_retransmits".
LENS_EXPORT std::string_view StragglerEvidenceKindName(
    StragglerEvidenceKind kind);

// Which kind an RDMA port counter (counters/ or hw_counters/ of
// /sys/class/infiniband/<dev>/ports/<p>) is evidence of: errors
// (symbol_error, port_rcv_errors, link_downed, out_of_sequence, ...) or
// congestion (port_xmit_wait, np_cnp_sent, rp_cnp_handled, ...); nullopt
// for data counters and counters that are not evidence.
LENS_EXPORT std::optional<StragglerEvidenceKind> ClassifyRdmaCounter(
    std::string_view counter);

// One evidence series. Counters are cumulative; a decrease is a reset.
struct StragglerEvidenceSeries {
  StragglerEvidenceKind kind = StragglerEvidenceKind::kGpuThrottle;
  std::string node;
  std::string gpu;     // "" for node-wide series (RDMA ports, TCP)
  std::string device;  // RDMA "device/port", the pod for TCP; "" otherwise
  std::string name;    // reason, sensor, ECC type, counter; "" for power
  std::vector<SamplePoint> points;  // in time order
};

// The job over an interval. Entities are ranks (from `steps`) and GPUs
// (from `utilization`); either may be empty.
struct StragglerInput {
  Timestamp from{};  // the interval, inclusive; required
  Timestamp to{};
  std::vector<StragglerRankSteps> steps;
  std::vector<GpuUtilizationSeries> utilization;  // 0..1
  // Any nodes' evidence; only the suspects' nodes' series are read, so a
  // caller may pass just those (see FindStragglerSuspectNodes).
  std::vector<StragglerEvidenceSeries> evidence;
};

struct LENS_EXPORT StragglerOptions {
  // An entity is out when its modified z-score (oriented so that slower is
  // larger) exceeds this; 3.5 is Iglewicz and Hoaglin's recommendation.
  double z_threshold = 3.5;
  // ... and it differs from the median by at least this share of it, so a
  // tight job (MAD of microseconds) does not flag a 0.1% difference.
  double min_deviation_ratio = 0.05;
  // Points an entity needs in the interval to be measured.
  int32_t min_samples = 3;
  // Entities (and nodes) needed for statistics; fewer find no outliers.
  int32_t min_entities = 3;
  // A counter's last point at most this long before `from` is its baseline
  // (so an increase just at the interval's start counts).
  std::chrono::seconds max_baseline_age{300};
  // Temperature is evidence at or above hot_celsius, or when the GPU's
  // maximum exceeds its node peers' median maximum by temperature_margin.
  double hot_celsius = 90;
  double temperature_margin_celsius = 10;
  // Power at or above power_cap_ratio x cap counts as "at the cap"; it is
  // evidence when the GPU's share of samples at the cap exceeds its node
  // peers' median share by power_share_margin (a job that runs every GPU
  // at the cap gives no power evidence).
  double power_cap_ratio = 0.98;
  double power_share_margin = 0.2;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// ---- output ----------------------------------------------------------------

enum class StragglerMeasure : uint8_t {
  kStepTime,     // a rank's median elapsed ms per iteration; slow = larger
  kUtilization,  // a GPU's mean utilisation 0..1; slow = smaller
};
// "step_time", "utilization".
LENS_EXPORT std::string_view StragglerMeasureName(StragglerMeasure measure);

// The job's statistics of one measure over its entities (ranks or GPUs)
// and its nodes (each node's median of its entities).
struct StragglerStats {
  StragglerMeasure measure = StragglerMeasure::kStepTime;
  int32_t entities = 0;  // measured (with min_samples points)
  double median = 0;
  double mad = 0;  // median absolute deviation
  int32_t nodes = 0;
  double node_median = 0;
  double node_mad = 0;
};

// One way a suspect is out.
struct StragglerFinding {
  StragglerMeasure measure = StragglerMeasure::kStepTime;
  double value = 0;            // the suspect's (ms, or utilisation 0..1)
  double job_median = 0;       // the job's (its nodes' for a node suspect)
  double score = 0;            // modified z-score, slower = larger
  double deviation_ratio = 0;  // |value - job_median| / job_median
};

// One evidence item over the interval.
struct StragglerEvidence {
  StragglerEvidenceKind kind = StragglerEvidenceKind::kGpuThrottle;
  std::string gpu;  // "" for node-wide evidence
  std::string device;
  std::string name;
  // How much: a counter's increase (resets handled); a throttle reason's
  // share of samples active (0..1); a temperature's maximum (Celsius); the
  // share of samples at the power cap (0..1).
  double amount = 0;
  // Temperature and power: the node's other GPUs' median of the same
  // figure, when there are any.
  std::optional<double> peer_median;
};

enum class StragglerScope : uint8_t {
  kGpu,   // one rank or GPU
  kNode,  // a node whose entities are out together (its median is out)
};

struct StragglerSuspect {
  StragglerScope scope = StragglerScope::kGpu;
  std::string node;
  std::string gpu;              // kGpu: the GPU, "" when only a rank is known
  std::optional<int32_t> rank;  // kGpu: the rank, when step times gave one
  // kNode: the node's ranks and GPUs that are out by themselves too.
  std::vector<int32_t> ranks_out;
  std::vector<std::string> gpus_out;
  double score = 0;                        // the largest finding's
  std::vector<StragglerFinding> findings;  // by score, largest first
  // By kind (the enum's order), then amount, largest first. Empty: no
  // evidence found; the suspect is still reported.
  std::vector<StragglerEvidence> evidence;
};

struct StragglerReport {
  // By score, then number of evidence items, most first; then node, GPU,
  // rank.
  std::vector<StragglerSuspect> suspects;
  std::optional<StragglerStats> step_time;    // when ranks were measured
  std::optional<StragglerStats> utilization;  // when GPUs were measured
};

// The suspects of `input` with their evidence. A node whose median is out
// is one kNode suspect (its ranks and GPUs out for the same measure fold
// into it); other outliers are kGpu suspects, a rank and its GPU's
// utilisation merged when the rank's GPU is known. Evidence: a kGpu
// suspect's GPU series and its node's node-wide series (every GPU of the
// node when the GPU is unknown); a kNode suspect's node, all of it.
// Counters count when they increased; throttle reasons other than idle or
// clock settings when active; temperature and power by the options' rules.
// InvalidArgument for bad options, an unset or reversed interval. Cost:
// linear in the measured points plus the suspects' nodes' evidence points.
LENS_EXPORT StatusOr<StragglerReport> FindStragglers(
    const StragglerInput& input, const StragglerOptions& options);

// The nodes FindStragglers would report suspects on, from the measures
// alone (`input.evidence` is not read): what a reader fetches evidence for.
LENS_EXPORT StatusOr<std::vector<std::string>> FindStragglerSuspectNodes(
    const StragglerInput& input, const StragglerOptions& options);

// The evidence series of `nodes` over [from - step, to] at `step` (the
// extra step gives counters a baseline), from a time-series source, as
// the node agent and lens-netflow export them (with the scrape's `node`
// label): lens_gpu_throttled{gpu,reason}, lens_gpu_temperature_celsius
// {gpu,sensor}, lens_gpu_power_watts{gpu}, lens_gpu_power_cap_watts{gpu},
// lens_gpu_ecc_errors_total{gpu,type}, lens_rdma_port_stat_total and
// lens_rdma_port_hw_stat_total{device,port,counter} (the counters
// ClassifyRdmaCounter knows), and lens_tcp_flow_retransmits_total{workload}
// of `pods` ("namespace/pod"; name: "<class> <direction>"). Counters come
// back as their values (FindStragglers takes the increases). Series
// without the labels they need are skipped. Errors: the source's
// (InvalidArgument, ResourceExhausted, Unavailable), naming the metric.
LENS_EXPORT StatusOr<std::vector<StragglerEvidenceSeries>>
ReadStragglerEvidence(TimeSeriesSource& source,
                      std::span<const std::string> nodes,
                      std::span<const std::string> pods, Timestamp from,
                      Timestamp to, std::chrono::milliseconds step);

// A workload's stragglers over [from, to] from what Lens stores: its GPUs
// are the holdings of its pods' containers (ReadGpuHoldings), their
// utilisation from `series` at `step`, and the evidence of the nodes found
// out (ReadStragglerEvidence). Per-rank step times are not stored, so this
// compares utilisation. NotFound for an unknown workload.
struct WorkloadStragglers {
  int32_t gpus = 0;  // the workload's GPUs in the range
  StragglerReport report;
};
LENS_EXPORT StatusOr<WorkloadStragglers> FindWorkloadStragglers(
    Store& store, TimeSeriesSource& series, std::string_view workload_uid,
    Timestamp from, Timestamp to, std::chrono::milliseconds step,
    const StragglerOptions& options = {});

}  // namespace lens

#endif  // LENS_INSIGHTS_STRAGGLERS_H_
