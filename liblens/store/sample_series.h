// A sample series' identity as the sample history stores it: the metric
// name and its labels as canonical JSON text (names sorted, empty values
// dropped, UTF-8 sanitised), so that one series is always one row of
// sample_series. Internal to liblens.
#ifndef LENS_STORE_SAMPLE_SERIES_H_
#define LENS_STORE_SAMPLE_SERIES_H_

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/status.h"

namespace lens::store {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

// The canonical labels are at most this long: PostgreSQL refuses a btree
// entry over ~2.7 kB, and (metric, labels) is the series' unique key.
inline constexpr size_t kMaxSeriesLabelsBytes = 2048;

// Sets `*metric` to `in`, sanitised; kInvalidArgument "<where>.metric: ..."
// when empty or over kMaxKeyBytes.
Status SeriesMetric(std::string_view where, std::string_view in,
                    std::string* metric);

// Sets `*json` to the canonical form of `labels`; kInvalidArgument
// "<where>.labels: ..." for an empty or oversized name, a name twice,
// __name__, or a result over kMaxSeriesLabelsBytes.
Status SeriesLabels(std::string_view where,
                    std::span<const std::pair<std::string, std::string>> labels,
                    std::string* json);

// The labels of a stored series, sorted by name; empty for text that is not
// a JSON object.
LabelPairs ReadSeriesLabels(std::string_view json);

}  // namespace lens::store

#endif  // LENS_STORE_SAMPLE_SERIES_H_
