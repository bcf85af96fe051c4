#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "core/metric_writer.h"

namespace lens {
namespace {

// Orders label-value tuples lexicographically; also compares with a span of
// string_views so lookups do not allocate.
struct LabelValuesLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return std::lexicographical_compare(
        a.begin(), a.end(), b.begin(), b.end(),
        [](std::string_view x, std::string_view y) { return x < y; });
  }
};

constexpr std::string_view kRejectedFamilyName =
    "lens_metrics_series_rejected_total";

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Series names a family exposes (a histogram owns three beside its base name).
std::vector<std::string> SampleNames(std::string_view name, MetricType type) {
  std::vector<std::string> out{std::string(name)};
  if (type == MetricType::kHistogram) {
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      out.push_back(out[0] + suffix);
  }
  return out;
}

Status CheckLabelNames(const std::vector<std::string>& names, MetricType type) {
  for (size_t i = 0; i < names.size(); ++i) {
    LENS_RETURN_IF_ERROR(ValidateLabelName(names[i]));
    if (type == MetricType::kHistogram && names[i] == "le") {
      return InvalidArgumentError(
          "label name \"le\" is reserved for histogram buckets");
    }
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i]) {
        return InvalidArgumentError("duplicate label name \"" + names[i] +
                                    "\"");
      }
    }
  }
  return OkStatus();
}

Status CheckBuckets(std::vector<double>* buckets) {
  if (!buckets->empty() && std::isinf(buckets->back()) && buckets->back() > 0) {
    buckets->pop_back();  // +Inf is implied.
  }
  for (size_t i = 0; i < buckets->size(); ++i) {
    const double b = (*buckets)[i];
    if (!std::isfinite(b)) {
      return InvalidArgumentError(
          "bucket bounds must be finite (got a non-finite bound)");
    }
    if (i > 0 && !(b > (*buckets)[i - 1])) {
      return InvalidArgumentError(
          "bucket bounds must be strictly increasing (bound " +
          std::to_string(i) + ")");
    }
  }
  return OkStatus();
}

}  // namespace

Histogram::Histogram(std::shared_ptr<const std::vector<double>> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      counts_(new std::atomic<uint64_t>[bounds_->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i)
    counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // le is inclusive: the first bound >= value.
  const size_t i = static_cast<size_t>(
      std::lower_bound(bounds_->begin(), bounds_->end(), value) -
      bounds_->begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot snap;
  snap.upper_bounds = *bounds_;
  snap.upper_bounds.push_back(std::numeric_limits<double>::infinity());
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    snap.cumulative_counts.push_back(total);
  }
  snap.count = total;
  snap.sum = sum_.load(std::memory_order_relaxed);
  return snap;
}

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names,
                       FamilyOptions options, std::shared_ptr<Counter> rejected)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      options_(options),
      rejected_(std::move(rejected)) {}

FamilyBase::~FamilyBase() = default;

uint64_t FamilyBase::rejected_series() const {
  return rejected_ ? static_cast<uint64_t>(rejected_->Value()) : 0;
}

Status FamilyBase::CheckLabelValues(
    std::span<const std::string_view> values) const {
  if (values.size() != label_names_.size()) {
    std::string want;
    for (const std::string& n : label_names_)
      want += (want.empty() ? "" : ", ") + n;
    return InvalidArgumentError(
        name_ + ": got " + std::to_string(values.size()) +
        " label values, want " + std::to_string(label_names_.size()) + " (" +
        want + ")");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    Status s = ValidateLabelValue(values[i]);
    if (!s.ok()) return s.WithContext(name_ + " label " + label_names_[i]);
  }
  return OkStatus();
}

Status FamilyBase::CheckCapacity(size_t current_children) const {
  if (options_.max_children == 0 || current_children < options_.max_children)
    return OkStatus();
  if (rejected_) rejected_->Inc();
  return ResourceExhaustedError(name_ + ": series limit of " +
                                std::to_string(options_.max_children) +
                                " reached");
}

template <typename M>
struct Family<M>::Children {
  const std::shared_ptr<const std::vector<double>> buckets;  // histograms
  mutable std::mutex mu;
  std::map<std::vector<std::string>, std::shared_ptr<M>, LabelValuesLess>
      map;  // GUARDED_BY(mu)
};

struct Registry::Families {
  mutable std::mutex mu;
  std::map<std::string, std::unique_ptr<FamilyBase>, std::less<>>
      by_name;                                      // GUARDED_BY(mu)
  std::set<std::string, std::less<>> sample_names;  // GUARDED_BY(mu)
  CounterFamily* rejected = nullptr;  // lens_metrics_series_rejected_total
};

template <typename M>
Family<M>::~Family() = default;

template <typename M>
Family<M>::Family(std::string name, std::string help, MetricType type,
                  std::vector<std::string> label_names, FamilyOptions options,
                  std::shared_ptr<Counter> rejected,
                  std::shared_ptr<const std::vector<double>> buckets)
    : FamilyBase(std::move(name), std::move(help), type, std::move(label_names),
                 options, std::move(rejected)),
      children_(new Children{std::move(buckets), {}, {}}) {}

template <typename M>
StatusOr<std::shared_ptr<M>> Family<M>::WithLabels(
    std::span<const std::string_view> values) {
  LENS_RETURN_IF_ERROR(CheckLabelValues(values));
  std::lock_guard<std::mutex> lock(children_->mu);
  if (auto it = children_->map.find(values); it != children_->map.end())
    return it->second;
  LENS_RETURN_IF_ERROR(CheckCapacity(children_->map.size()));
  std::shared_ptr<M> child;
  if constexpr (std::is_same_v<M, Histogram>) {
    child = std::make_shared<Histogram>(children_->buckets);
  } else {
    child = std::make_shared<M>();
  }
  children_->map.emplace(std::vector<std::string>(values.begin(), values.end()),
                         child);
  return child;
}

template <typename M>
bool Family<M>::Remove(std::span<const std::string_view> values) {
  std::lock_guard<std::mutex> lock(children_->mu);
  auto it = children_->map.find(values);
  if (it == children_->map.end()) return false;
  children_->map.erase(it);
  return true;
}

template <typename M>
void Family<M>::Clear() {
  std::lock_guard<std::mutex> lock(children_->mu);
  children_->map.clear();
}

template <typename M>
size_t Family<M>::size() const {
  std::lock_guard<std::mutex> lock(children_->mu);
  return children_->map.size();
}

template <typename M>
void Family<M>::RenderTo(std::string* out) const {
  std::lock_guard<std::mutex> lock(children_->mu);
  MetricWriter w(out);
  w.Family(name_, help_, TypeName(type_));
  std::vector<Label> labels;
  for (const auto& [values, child] : children_->map) {
    labels.clear();
    for (size_t i = 0; i < label_names_.size(); ++i)
      labels.emplace_back(label_names_[i], values[i]);
    if constexpr (std::is_same_v<M, Histogram>) {
      w.HistogramSeries(labels, child->Snapshot());
    } else {
      w.SampleNamed(name_, labels, child->Value());
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Registry::Registry() : families_(std::make_unique<Families>()) {
  auto family = AddCounterFamily(
      kRejectedFamilyName,
      "New series refused because a family reached its series limit.",
      {"family"});
  families_->rejected = family.ok() ? *family : nullptr;
}

Registry::~Registry() = default;

template <typename M>
StatusOr<Family<M>*> Registry::Add(
    std::string_view name, std::string_view help, MetricType type,
    std::vector<std::string> label_names, FamilyOptions options,
    std::shared_ptr<const std::vector<double>> buckets) {
  LENS_RETURN_IF_ERROR(ValidateMetricName(name));
  LENS_RETURN_IF_ERROR(
      CheckLabelNames(label_names, type).WithContext(std::string(name)));
  const std::vector<std::string> samples = SampleNames(name, type);
  std::lock_guard<std::mutex> lock(families_->mu);
  for (const std::string& s : samples) {
    if (families_->sample_names.contains(s)) {
      return Status(StatusCode::kAlreadyExists,
                    "metric \"" + std::string(name) +
                        "\" collides with registered series \"" + s + "\"");
    }
  }
  std::shared_ptr<Counter> rejected;
  if (options.max_children > 0 && families_->rejected != nullptr) {
    // Lock order registry -> family, as in RenderTo().
    const std::string_view family_label[] = {name};
    LENS_ASSIGN_OR_RETURN(rejected,
                          families_->rejected->WithLabels(family_label));
  }
  auto* family = new Family<M>(std::string(name), std::string(help), type,
                               std::move(label_names), options,
                               std::move(rejected), std::move(buckets));
  families_->by_name.emplace(std::string(name),
                             std::unique_ptr<FamilyBase>(family));
  families_->sample_names.insert(samples.begin(), samples.end());
  return family;
}

StatusOr<CounterFamily*> Registry::AddCounterFamily(
    std::string_view name, std::string_view help,
    std::vector<std::string> label_names, FamilyOptions options) {
  return Add<Counter>(name, help, MetricType::kCounter, std::move(label_names),
                      options, nullptr);
}

StatusOr<GaugeFamily*> Registry::AddGaugeFamily(
    std::string_view name, std::string_view help,
    std::vector<std::string> label_names, FamilyOptions options) {
  return Add<Gauge>(name, help, MetricType::kGauge, std::move(label_names),
                    options, nullptr);
}

StatusOr<HistogramFamily*> Registry::AddHistogramFamily(
    std::string_view name, std::string_view help,
    std::vector<std::string> label_names, std::vector<double> buckets,
    FamilyOptions options) {
  LENS_RETURN_IF_ERROR(CheckBuckets(&buckets).WithContext(std::string(name)));
  return Add<Histogram>(
      name, help, MetricType::kHistogram, std::move(label_names), options,
      std::make_shared<const std::vector<double>>(std::move(buckets)));
}

StatusOr<std::shared_ptr<Counter>> Registry::AddCounter(std::string_view name,
                                                        std::string_view help) {
  LENS_ASSIGN_OR_RETURN(CounterFamily * family,
                        AddCounterFamily(name, help, {}));
  return family->WithLabels({});
}

StatusOr<std::shared_ptr<Gauge>> Registry::AddGauge(std::string_view name,
                                                    std::string_view help) {
  LENS_ASSIGN_OR_RETURN(GaugeFamily * family, AddGaugeFamily(name, help, {}));
  return family->WithLabels({});
}

StatusOr<std::shared_ptr<Histogram>> Registry::AddHistogram(
    std::string_view name, std::string_view help, std::vector<double> buckets) {
  LENS_ASSIGN_OR_RETURN(HistogramFamily * family,
                        AddHistogramFamily(name, help, {}, std::move(buckets)));
  return family->WithLabels({});
}

std::string Registry::Render() const {
  std::string out;
  RenderTo(&out);
  return out;
}

void Registry::RenderTo(std::string* out) const {
  std::lock_guard<std::mutex> lock(families_->mu);
  for (const auto& [name, family] : families_->by_name) family->RenderTo(out);
}

}  // namespace lens
