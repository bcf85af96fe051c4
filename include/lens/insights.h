// Insights: answers computed from what Lens holds (docs/insights.md). Each
// is a pure computation over plain, time-stamped histories (so it is tested
// on scripted histories and benchmarked at cluster scale), plus a reader
// that gathers those histories from a Store and a TimeSeriesSource.
//
// This header: idle allocated GPUs, and goodput and MFU per workload and
// run. Device health, the placement audit and stragglers have headers of
// their own (insights_health.h, insights_placement.h,
// insights_stragglers.h).
#ifndef LENS_INSIGHTS_H_
#define LENS_INSIGHTS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/model.h"
#include "lens/sample_history.h"
#include "lens/status.h"
#include "lens/training.h"

namespace lens {

class Store;
class TimeSeriesSource;

// ---- idle allocated GPUs ------------------------------------------------

// One GPU held by one container for an interval: the container's devices
// while it ran.
struct GpuHolding {
  std::string node;
  std::string gpu;     // the GPU's index, as the agent labels its series
  std::string serial;  // the device's identity, "" when unknown
  std::string container_id;
  std::string pod_uid;
  std::string pod_name;
  std::string namespace_name;
  std::string workload_uid;  // the top-level workload, "" when none
  std::string workload_name;
  Timestamp from{};             // the container started
  std::optional<Timestamp> to;  // ... and finished; unset while it runs
};

// One GPU's utilisation (0..1) samples, in time order.
struct GpuUtilizationSeries {
  std::string node;
  std::string gpu;
  std::vector<SamplePoint> points;
};

struct LENS_EXPORT IdleGpuOptions {
  double threshold = 0.05;  // utilisation below this is idle
  // An idle stretch counts once it lasts this long (and then from its start).
  std::chrono::seconds window{30 * 60};
  // A sample stands for the time until the next one, but for at most this
  // long: a longer gap (agent down, series missing) is unknown time, which
  // ends an idle stretch rather than extending it.
  std::chrono::seconds max_sample_gap{120};
  Timestamp now{};  // the end of the history; required

  // InvalidArgument naming the field.
  Status Validate() const;
};

// A stretch of at least `window` during which one holder's GPU stayed under
// the threshold. A GPU passed from one pod to another is two holders: the
// second is never charged for the first's idle time.
struct IdleGpuEpisode {
  std::string node;
  std::string gpu;
  std::string serial;
  std::string container_id;
  std::string pod_uid;
  std::string pod_name;
  std::string namespace_name;
  std::string workload_uid;
  std::string workload_name;
  Timestamp since{};            // the first idle sample
  Timestamp until{};            // the end of the last idle sample's time
  bool ongoing = false;         // still idle, and still held, at `now`
  double mean_utilization = 0;  // over the stretch's samples
  double gpu_hours = 0;         // idle time, in hours (one GPU)
};

// Every episode in the histories: ongoing ones first, then by idle
// GPU-hours, most first. Samples outside every holding are ignored (an idle
// GPU nobody holds is not waste of an allocation). Cost: linear in samples
// and holdings (after sorting each GPU's holdings).
LENS_EXPORT StatusOr<std::vector<IdleGpuEpisode>> FindIdleAllocatedGpus(
    std::span<const GpuHolding> holdings,
    std::span<const GpuUtilizationSeries> series,
    const IdleGpuOptions& options);

// Per workload (pods without one under their own uid): GPUs idle now, and
// idle GPU-hours over the episodes; by GPUs idle now, then GPU-hours.
struct IdleGpuWorkload {
  std::string workload_uid;  // "" for pods without a workload
  std::string workload_name;
  std::string namespace_name;
  int32_t idle_gpus_now = 0;
  double gpu_hours = 0;
  int32_t episodes = 0;
};
LENS_EXPORT std::vector<IdleGpuWorkload> IdleGpusByWorkload(
    std::span<const IdleGpuEpisode> episodes);

// The holdings of containers that ran at some time in [from, to], from the
// store: each container's GPU devices (identified by serial, else bus
// address) matched to the node's GPU inventory for the index, the pod's
// top-level workload for the owner.
LENS_EXPORT StatusOr<std::vector<GpuHolding>> ReadGpuHoldings(Store& store,
                                                              Timestamp from,
                                                              Timestamp to);

// lens_gpu_utilization_ratio per node and GPU over [from, to] at `step`,
// from a time-series source (several series of one GPU merged); only
// `node`'s when set.
LENS_EXPORT StatusOr<std::vector<GpuUtilizationSeries>> ReadGpuUtilization(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step, std::string_view node = {});

// ---- goodput and MFU -----------------------------------------------------

// A GPU model's peak dense BF16/FP16 tensor throughput, and where the figure
// comes from.
struct GpuPeak {
  std::string_view model;  // the marketing name, "MI300X", "H100 SXM"
  double dense_bf16_tflops = 0;
  std::string_view source;  // the vendor document the figure is from
};

// The table, most specific names first.
LENS_EXPORT std::span<const GpuPeak> GpuPeaks();

// The peak for a model name as the node agent or a device plugin reports it
// ("AMD Instinct MI300X", "NVIDIA H100 80GB HBM3", "mi250x"); nullptr when
// the model is not in the table.
LENS_EXPORT const GpuPeak* FindGpuPeak(std::string_view model);

// A pod of the workload: when it was created, first ran and ended.
struct PodLifecycle {
  std::string uid;
  Timestamp created_at{};
  std::optional<Timestamp> started_at;
  std::optional<Timestamp> ended_at;
};

// What goodput is computed from: the workload's pods, its iterations and
// training events (all runs; iterations and events need timestamps), and
// its GPU model for MFU.
struct GoodputInput {
  Timestamp created_at{};             // the workload was created
  std::optional<Timestamp> ended_at;  // ... and ended; unset while it runs
  Timestamp now{};                    // the end of the history; required
  std::vector<PodLifecycle> pods;
  std::vector<IterationRecord> iterations;  // any order
  std::vector<TrainingEvent> events;        // any order
  std::string gpu_model;                    // "" when unknown (no MFU)
  // An interval between two logged iterations longer than this many times
  // the run's median time per iteration is a stall: the excess is idle.
  double stall_factor = 5;
};

// Wall time split into parts that add up to wall_s. Seconds.
struct GoodputBreakdown {
  double wall_s = 0;
  double scheduling_s = 0;  // created to first running
  double startup_s = 0;     // first running to first iteration
  double productive_s = 0;  // iterations not done before
  double checkpoint_s = 0;  // checkpoint saves
  // A run's end (its last iteration) to the next run's first iteration,
  // plus the time spent redoing iterations an earlier run had done.
  double restart_s = 0;
  double idle_s = 0;   // everything else: stalls, after the last iteration
  double goodput = 0;  // productive_s / wall_s (0 when wall_s is 0)
  int64_t iterations_redone = 0;
};

// One attempt: a stored run, with the runs that overlap it in time (the
// logs of the job's other pods or ranks).
struct RunGoodput {
  int32_t run = 0;  // the attempt's first run number
  Timestamp first_iteration_at{};
  Timestamp last_iteration_at{};
  int64_t first_iteration = 0;
  int64_t last_iteration = 0;
  // Time-weighted mean of the run's logged TFLOP/s per GPU over its
  // productive intervals, and MFU against the model's peak.
  std::optional<double> tflops_per_gpu;
  std::optional<double> mfu;
  GoodputBreakdown breakdown;  // the run's share of the workload's time
};

struct GoodputReport {
  GoodputBreakdown total;
  std::vector<RunGoodput> runs;          // by run number
  std::optional<double> tflops_per_gpu;  // over all productive time
  std::optional<double> mfu;
  const GpuPeak* peak = nullptr;  // the table's entry used, when known
  int32_t restarts = 0;           // attempts after the first
  // Logged iterations the split used (within an attempt, each iteration
  // once, however many logs reported it), and those left out for lack of a
  // timestamp.
  int64_t iterations_used = 0;
  int64_t iterations_without_time = 0;
};

// InvalidArgument when `now` is unset or before created_at.
LENS_EXPORT StatusOr<GoodputReport> ComputeGoodput(const GoodputInput& input);

// The input for a workload from the store: the workload, its pods (and
// their child workloads' pods), its iterations and events, and the GPU
// model of the nodes its pods ran on.
LENS_EXPORT StatusOr<GoodputInput> ReadGoodputInput(
    Store& store, std::string_view workload_uid, Timestamp now);

}  // namespace lens

#endif  // LENS_INSIGHTS_H_
