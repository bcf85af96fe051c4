#include "store/sample_series.h"

#include <algorithm>

#include "core/json.h"
#include "core/labels.h"
#include "core/text.h"
#include "store/text.h"

namespace lens::store {
namespace {

// `s`, or a sanitised copy in `*copy` when it is not valid UTF-8 or holds a
// NUL byte (rare: remote write carries valid UTF-8).
std::string_view Valid(std::string_view s, std::string* copy) {
  if (FirstInvalidUtf8(s) == std::string_view::npos &&
      s.find('\0') == std::string_view::npos) {
    return s;
  }
  *copy = ValidUtf8(s);
  return *copy;
}

}  // namespace

Status SeriesMetric(std::string_view where, std::string_view in,
                    std::string* metric) {
  std::string copy;
  *metric = std::string(Valid(in, &copy));
  if (metric->empty()) {
    return InvalidArgumentError(std::string(where) +
                                ".metric: must not be empty");
  }
  if (metric->size() > kMaxKeyBytes) {
    return InvalidArgumentError(
        std::string(where) + ".metric: " + std::to_string(metric->size()) +
        " bytes exceed the limit of " + std::to_string(kMaxKeyBytes));
  }
  return OkStatus();
}

Status SeriesLabels(std::string_view where,
                    std::span<const std::pair<std::string, std::string>> labels,
                    std::string* json) {
  const auto bad = [&](const std::string& why) {
    return InvalidArgumentError(std::string(where) + ".labels: " + why);
  };
  std::vector<const std::pair<std::string, std::string>*> sorted;
  sorted.reserve(labels.size());
  for (const auto& l : labels) {
    if (l.first.empty()) return bad("a label has an empty name");
    if (l.first.size() > kMaxKeyBytes) {
      return bad("label name of " + std::to_string(l.first.size()) +
                 " bytes exceeds the limit of " + std::to_string(kMaxKeyBytes));
    }
    if (l.first == "__name__") {
      return bad("__name__ is not a label here (it is the metric)");
    }
    // An empty value is no label, as in Prometheus.
    if (!l.second.empty()) sorted.push_back(&l);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  json->clear();
  JsonWriter w(json);  // sanitises, as the store does
  w.StartObject();
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i]->first == sorted[i - 1]->first) {
      return bad("label '" + ValidUtf8(sorted[i]->first.substr(0, 64)) +
                 "' appears twice");
    }
    w.Member(sorted[i]->first, sorted[i]->second);
    if (json->size() > kMaxSeriesLabelsBytes) break;
  }
  w.EndObject();
  if (json->size() > kMaxSeriesLabelsBytes) {
    return bad("more than " + std::to_string(kMaxSeriesLabelsBytes) +
               " bytes as JSON");
  }
  return OkStatus();
}

LabelPairs ReadSeriesLabels(std::string_view json) {
  const Labels map = LabelsFromJson(json).value_or(Labels());
  return LabelPairs(map.begin(), map.end());
}

}  // namespace lens::store
