// Writes Prometheus text exposition straight from values (no registry
// lookups): the one way Lens writes the text format. The node agent renders
// each snapshot this way, family by family; the flow monitor and the
// Registry too.
#ifndef LENS_CORE_METRIC_WRITER_H_
#define LENS_CORE_METRIC_WRITER_H_

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/metrics.h"

namespace lens {

using Label = std::pair<std::string_view, std::string_view>;

// An integer as a label value (gpu="3") without allocating: view() lives as
// long as the IntLabel.
class IntLabel {
 public:
  explicit IntLabel(int64_t v) {
    auto r = std::to_chars(buf_, buf_ + sizeof buf_, v);
    len_ = static_cast<size_t>(r.ptr - buf_);
  }
  std::string_view view() const { return {buf_, len_}; }

 private:
  char buf_[24];
  size_t len_ = 0;
};

class MetricWriter {
 public:
  explicit MetricWriter(std::string* out) : out_(out) {}

  // Starts a family; its HELP/TYPE lines are written with its first sample
  // (a family without samples leaves no trace).
  void Family(std::string_view name, std::string_view help,
              std::string_view type) {
    name_ = name;
    help_ = help;
    type_ = type;
    header_written_ = false;
    part_names_.clear();
  }
  // One sample of the current family, label values escaped.
  void Sample(std::initializer_list<Label> labels, double value) {
    SampleNamed(name_, labels, value);
  }
  // One sample with a name other than the family's (histogram parts).
  void SampleNamed(std::string_view name, std::initializer_list<Label> labels,
                   double value) {
    SampleNamed(name, std::span<const Label>(labels.begin(), labels.size()),
                value);
  }
  // Labels known only at run time (the Registry's families).
  void SampleNamed(std::string_view name, std::span<const Label> labels,
                   double value) {
    if (!header_written_) WriteHeader();
    out_->append(name);
    if (!labels.empty()) {
      out_->push_back('{');
      bool first = true;
      for (const auto& [k, v] : labels) {
        if (!first) out_->push_back(',');
        first = false;
        out_->append(k);
        out_->append("=\"");
        AppendEscapedLabelValue(v, out_);
        out_->push_back('"');
      }
      out_->push_back('}');
    }
    out_->push_back(' ');
    AppendMetricValue(value, out_);
    out_->push_back('\n');
  }

  // One series of the current (histogram) family: a _bucket sample per upper
  // bound with `le` after `labels` (the last bound +Inf), then _sum and
  // _count. `cumulative_counts` has one count per bound, each including the
  // buckets below it (as HistogramSnapshot keeps them).
  void HistogramSeries(std::span<const Label> labels,
                       std::span<const double> upper_bounds,
                       std::span<const uint64_t> cumulative_counts, double sum,
                       uint64_t count) {
    if (part_names_.empty()) {
      for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
        part_names_.push_back(std::string(name_).append(suffix));
      }
    }
    scratch_.assign(labels.begin(), labels.end());
    scratch_.emplace_back("le", std::string_view());
    const size_t n = std::min(upper_bounds.size(), cumulative_counts.size());
    for (size_t i = 0; i < n; ++i) {
      le_.clear();
      AppendMetricValue(upper_bounds[i], &le_);
      scratch_.back().second = le_;
      SampleNamed(part_names_[0], scratch_,
                  static_cast<double>(cumulative_counts[i]));
    }
    scratch_.pop_back();
    SampleNamed(part_names_[1], scratch_, sum);
    SampleNamed(part_names_[2], scratch_, static_cast<double>(count));
  }
  void HistogramSeries(std::span<const Label> labels,
                       const HistogramSnapshot& h) {
    HistogramSeries(labels, h.upper_bounds, h.cumulative_counts, h.sum,
                    h.count);
  }
  void HistogramSeries(std::initializer_list<Label> labels,
                       const HistogramSnapshot& h) {
    HistogramSeries(std::span<const Label>(labels.begin(), labels.size()), h);
  }

 private:
  // HELP only when there is help text.
  void WriteHeader() {
    if (!help_.empty()) {
      out_->append("# HELP ");
      out_->append(name_);
      out_->push_back(' ');
      AppendEscapedHelp(help_, out_);
      out_->push_back('\n');
    }
    out_->append("# TYPE ");
    out_->append(name_);
    out_->push_back(' ');
    out_->append(type_);
    out_->push_back('\n');
    header_written_ = true;
  }

  std::string* out_;
  std::string_view name_;
  std::string_view help_;
  std::string_view type_;
  bool header_written_ = false;
  std::vector<std::string> part_names_;  // _bucket, _sum, _count
  std::vector<Label> scratch_;
  std::string le_;
};

}  // namespace lens

#endif  // LENS_CORE_METRIC_WRITER_H_
