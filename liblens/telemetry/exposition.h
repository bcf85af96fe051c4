// Reads the Prometheus text exposition format 0.0.4 (what every Lens daemon
// serves on /metrics) into samples: the local scrape of `lens up`, which
// feeds this process's own metrics into the same path as remote write.
// Reference: prometheus/docs content/docs/instrumenting/exposition_formats.md
#ifndef LENS_TELEMETRY_EXPOSITION_H_
#define LENS_TELEMETRY_EXPOSITION_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/sample_history.h"
#include "lens/status.h"

namespace lens::telemetry {

// Appends one MetricSample per sample line of `text` whose metric name
// starts with one of `prefixes` (empty: every line), at `default_ms` unless
// the line carries its own timestamp. Comments and blank lines are skipped.
// InvalidArgument naming the line number and what is wrong for a malformed
// line (nothing is appended from a text that fails).
Status ParseExposition(std::string_view text, int64_t default_ms,
                       std::span<const std::string> prefixes,
                       std::vector<MetricSample>* out);

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_EXPOSITION_H_
