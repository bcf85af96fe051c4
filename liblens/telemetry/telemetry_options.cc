// TelemetryOptions::Validate: what the processor refuses to start with.
#include "telemetry/telemetry.h"

namespace lens {

Status TelemetryOptions::Validate() const {
  if (max_body_bytes < 1024) {
    return InvalidArgumentError("max_body_bytes: must be at least 1024");
  }
  if (max_uncompressed_bytes < max_body_bytes) {
    return InvalidArgumentError(
        "max_uncompressed_bytes: must be at least max_body_bytes");
  }
  if (max_labels_per_series < 8) {
    return InvalidArgumentError("max_labels_per_series: must be at least 8");
  }
  if (ownership_refresh < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("ownership_refresh: must be at least 100ms");
  }
  if (ownership_history < ownership_refresh) {
    return InvalidArgumentError(
        "ownership_history: must be at least ownership_refresh");
  }
  for (const TelemetryForwardTarget& t : forward) {
    if (t.url.rfind("http://", 0) != 0 && t.url.rfind("https://", 0) != 0) {
      return InvalidArgumentError("forward: \"" + t.url +
                                  "\" is not an http:// or https:// URL");
    }
    if (t.timeout < std::chrono::milliseconds(100)) {
      return InvalidArgumentError("forward: timeout must be at least 100ms");
    }
  }
  if (!forward.empty() && queue_dir.empty()) {
    return InvalidArgumentError("queue_dir: empty (forwarding needs a queue)");
  }
  if (queue_max_bytes < (uint64_t{1} << 20)) {
    return InvalidArgumentError("queue_max_bytes: must be at least 1 MiB");
  }
  if (sample_resolution < std::chrono::seconds(1)) {
    return InvalidArgumentError("sample_resolution: must be at least 1s");
  }
  if (sample_retention < sample_resolution) {
    return InvalidArgumentError(
        "sample_retention: must be at least sample_resolution");
  }
  if (sample_max_series < 1) {
    return InvalidArgumentError("sample_max_series: must be at least 1");
  }
  return OkStatus();
}

}  // namespace lens
