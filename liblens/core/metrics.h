// Prometheus metrics: a registry of counter, gauge and histogram families
// rendered in the text exposition format 0.0.4 (what every Lens daemon serves
// on /metrics).
//
//   lens::Registry registry;
//   auto family = registry.AddCounterFamily("lens_rdma_port_rx_bytes_total",
//                                           "Bytes received on an RDMA port.",
//                                           {"device", "port"});
//   if (!family.ok()) return family.status();
//   auto rx = (*family)->WithLabels({"mlx5_0", "1"});   //
//   StatusOr<std::shared_ptr<Counter>> if (rx.ok()) (*rx)->Add(4096);
//   std::string body = registry.Render();
//
// Ownership and lifetime: the Registry owns its families; a Family* stays valid
// until the Registry is destroyed (families are never removed). Children (one
// per label-value tuple) are shared: a std::shared_ptr handle stays usable
// after Family::Remove() or the registry's destruction, but a removed child is
// no longer exported (and WithLabels creates a new one).
//
// Thread safety: everything here may be used from any thread. Value updates are
// lock-free atomics; creating/removing children takes the family's mutex;
// Render() takes the registry's mutex and then each family's in turn.
//
// Output is deterministic: families sorted by name, children by label values
// (tuple order); families without children are omitted.
#ifndef LENS_CORE_METRICS_H_
#define LENS_CORE_METRICS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

// The Content-Type of Registry::Render()'s output.
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// OK if `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*; InvalidArgument naming it
// otherwise.
Status ValidateMetricName(std::string_view name);
// OK if `name` matches [a-zA-Z_][a-zA-Z0-9_]* and does not start with "__"
// (reserved).
Status ValidateLabelName(std::string_view name);
// OK if `value` is valid UTF-8 (required of label values); InvalidArgument
// otherwise.
Status ValidateLabelValue(std::string_view value);

// Appends `value` escaped for use inside a double-quoted label value: \ -> \\,
// " -> \", newline -> \n; invalid UTF-8 and NUL bytes become U+FFFD (a
// scrape with them is refused whole). Also the right escaping for a PromQL
// string literal in double quotes.
void AppendEscapedLabelValue(std::string_view value, std::string* out);
// Appends HELP text escaped: \ -> \\, newline -> \n.
void AppendEscapedHelp(std::string_view help, std::string* out);
// Appends a sample value: shortest round-trip form ("1", "0.25", "1e+06"), or
// "NaN",
// "+Inf", "-Inf".
void AppendMetricValue(double value, std::string* out);

// A monotonically increasing value (a `_total` series). Lock-free; any thread.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds 1.
  void Inc() { int_part_.fetch_add(1, std::memory_order_relaxed); }
  // Adds `delta`; a negative or NaN delta is ignored (a counter never goes
  // down).
  void Add(double delta) {
    if (delta >= 0) float_part_.fetch_add(delta, std::memory_order_relaxed);
  }
  // Sets the total, for mirroring a counter kept elsewhere (kernel or device
  // counters read from sysfs). A smaller total is exported as is; Prometheus
  // treats it as a counter reset. Do not mix with concurrent Inc()/Add() on the
  // same child.
  void SetTotal(double total) {
    float_part_.store(total, std::memory_order_relaxed);
    int_part_.store(0, std::memory_order_relaxed);
  }
  // The current total.
  double Value() const {
    return static_cast<double>(int_part_.load(std::memory_order_relaxed)) +
           float_part_.load(std::memory_order_relaxed);
  }

 private:
  // Integer increments use a plain atomic add (cheaper than a CAS loop on a
  // double).
  std::atomic<uint64_t> int_part_{0};
  std::atomic<double> float_part_{0.0};
};

// A value that goes up and down. Lock-free; any thread.
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  void Inc() { Add(1.0); }
  void Dec() { Add(-1.0); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A consistent-enough copy of a histogram: cumulative counts per upper bound,
// the last one being +Inf (so cumulative_counts.back() == count).
struct HistogramSnapshot {
  std::vector<double> upper_bounds;  // finite bounds, then +Inf
  std::vector<uint64_t> cumulative_counts;
  double sum = 0;
  uint64_t count = 0;
};

// Counts observations into buckets with fixed upper bounds (le, inclusive).
// Lock-free.
class Histogram {
 public:
  // `upper_bounds` must be valid (see Registry::AddHistogramFamily); shared by
  // all children.
  explicit Histogram(std::shared_ptr<const std::vector<double>> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Records one observation. NaN is ignored: it carries no information and
  // would turn _sum into NaN forever. Any thread.
  void Observe(double value);
  // Counts read bucket by bucket; count is derived from the buckets so _count
  // always equals the +Inf bucket even while other threads observe.
  HistogramSnapshot Snapshot() const;

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]>
      counts_;  // bounds_->size() + 1 (the +Inf bucket)
  std::atomic<double> sum_{0.0};
};

// The Prometheus default buckets: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10.
std::vector<double> DefaultBuckets();
// `count` bounds start, start+width, ...; empty if count < 1.
std::vector<double> LinearBuckets(double start, double width, int count);
// `count` bounds start, start*factor, ...; empty if count < 1.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

enum class MetricType { kCounter, kGauge, kHistogram };

// Per-family knobs.
struct FamilyOptions {
  // Most children the family may hold; 0 means unlimited. When full,
  // WithLabels() for a new tuple fails with ResourceExhausted and
  // lens_metrics_series_rejected_total{family=...} is incremented (existing
  // children keep working).
  size_t max_children = 0;
};

// What a family is, independent of its metric type. Not for subclassing outside
// Lens.
class FamilyBase {
 public:
  virtual ~FamilyBase();
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Number of children now. Thread-safe.
  virtual size_t size() const = 0;
  // New series refused because of FamilyOptions::max_children (0 when
  // unlimited).
  uint64_t rejected_series() const;

  // Appends this family's HELP, TYPE and sample lines (nothing when it has no
  // children). Thread-safe; takes the family's mutex.
  virtual void RenderTo(std::string* out) const = 0;

 protected:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names, FamilyOptions options,
             std::shared_ptr<Counter> rejected);
  // OK if `values` fit the label names (count, UTF-8); InvalidArgument naming
  // the family.
  Status CheckLabelValues(std::span<const std::string_view> values) const;
  // Called under the family's mutex before creating a child; ResourceExhausted
  // when full.
  Status CheckCapacity(size_t current_children) const;

  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
  const FamilyOptions options_;
  const std::shared_ptr<Counter> rejected_;  // null when unlimited
};

// All children of one metric, one per label-value tuple. Obtained from a
// Registry, which owns it. M is Counter, Gauge or Histogram.
template <typename M>
class Family final : public FamilyBase {
 public:
  // Returns the child for `values` (one per label name, same order), creating
  // it at zero. InvalidArgument: wrong number of values or invalid UTF-8.
  // ResourceExhausted: a new child would exceed max_children. Thread-safe.
  StatusOr<std::shared_ptr<M>> WithLabels(
      std::span<const std::string_view> values);
  StatusOr<std::shared_ptr<M>> WithLabels(
      std::initializer_list<std::string_view> values) {
    return WithLabels(
        std::span<const std::string_view>(values.begin(), values.size()));
  }
  // Stops exporting the child for `values` (existing handles stay valid but are
  // no longer rendered). Returns true if it existed. Thread-safe.
  bool Remove(std::span<const std::string_view> values);
  bool Remove(std::initializer_list<std::string_view> values) {
    return Remove(
        std::span<const std::string_view>(values.begin(), values.size()));
  }
  // Removes every child.
  void Clear();

  size_t size() const override;
  void RenderTo(std::string* out) const override;

 private:
  friend class Registry;
  Family(std::string name, std::string help, MetricType type,
         std::vector<std::string> label_names, FamilyOptions options,
         std::shared_ptr<Counter> rejected,
         std::shared_ptr<const std::vector<double>> buckets);
  ~Family() override;

  struct Children;  // the children and their mutex (metrics.cc)
  const std::unique_ptr<Children> children_;
};

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;
using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// A set of metric families rendered together. Usually one per daemon, owned by
// main and passed by pointer to the components that register metrics (no global
// registry).
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family. `name` must be a valid metric name not used by another
  // family (including a histogram's _bucket/_sum/_count series) else
  // InvalidArgument / AlreadyExists; `label_names` must be valid, distinct
  // label names ("le" is reserved for histograms). The returned pointer is
  // owned by the registry. Thread-safe.
  StatusOr<CounterFamily*> AddCounterFamily(
      std::string_view name, std::string_view help,
      std::vector<std::string> label_names, FamilyOptions options = {});
  StatusOr<GaugeFamily*> AddGaugeFamily(std::string_view name,
                                        std::string_view help,
                                        std::vector<std::string> label_names,
                                        FamilyOptions options = {});
  // `buckets`: strictly increasing finite upper bounds (a trailing +Inf is
  // accepted and dropped; +Inf is always implied). InvalidArgument otherwise.
  StatusOr<HistogramFamily*> AddHistogramFamily(
      std::string_view name, std::string_view help,
      std::vector<std::string> label_names, std::vector<double> buckets,
      FamilyOptions options = {});

  // Shortcuts for a family without labels: registers it and returns its only
  // child.
  StatusOr<std::shared_ptr<Counter>> AddCounter(std::string_view name,
                                                std::string_view help);
  StatusOr<std::shared_ptr<Gauge>> AddGauge(std::string_view name,
                                            std::string_view help);
  StatusOr<std::shared_ptr<Histogram>> AddHistogram(
      std::string_view name, std::string_view help,
      std::vector<double> buckets);

  // The exposition text (format 0.0.4) of every family with at least one child.
  std::string Render() const;
  // As Render(), appending to `out` (lets a server reuse its buffer).
  void RenderTo(std::string* out) const;

 private:
  template <typename M>
  StatusOr<Family<M>*> Add(std::string_view name, std::string_view help,
                           MetricType type,
                           std::vector<std::string> label_names,
                           FamilyOptions options,
                           std::shared_ptr<const std::vector<double>> buckets);

  struct Families;  // the families, their series names and a mutex
  const std::unique_ptr<Families> families_;
};

}  // namespace lens

#endif  // LENS_CORE_METRICS_H_
