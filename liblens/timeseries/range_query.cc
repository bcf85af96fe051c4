// RangeQuery and PromQlSourceOptions validation: errors name the field.
#include <string>

#include "core/metrics.h"
#include "core/redact.h"
#include "lens/timeseries.h"
#include "timeseries/range.h"

namespace lens {
namespace {

Status FieldError(std::string_view field, const Status& cause) {
  return InvalidArgumentError("range query " + std::string(field) + ": " +
                              cause.message());
}

}  // namespace

Status RangeQuery::Validate() const {
  if (metric.empty()) {
    return InvalidArgumentError("range query metric: required");
  }
  if (Status st = ValidateMetricName(metric); !st.ok()) {
    return FieldError("metric", st);
  }
  for (size_t i = 0; i < matchers.size(); ++i) {
    const std::string field = "matchers[" + std::to_string(i) + "]";
    if (Status st = ValidateLabelName(matchers[i].first); !st.ok()) {
      return FieldError(field, st);
    }
    if (Status st = ValidateLabelValue(matchers[i].second); !st.ok()) {
      return FieldError(field, st);
    }
  }
  if (from_ms < 0) {
    return InvalidArgumentError(
        "range query from_ms: " + std::to_string(from_ms) + " is before 1970");
  }
  if (to_ms > timeseries::kMaxTimeMs) {
    return InvalidArgumentError("range query to_ms: " + std::to_string(to_ms) +
                                " is after the year 9999");
  }
  if (from_ms > to_ms) {
    return InvalidArgumentError(
        "range query from_ms: " + std::to_string(from_ms) + " is after to_ms " +
        std::to_string(to_ms));
  }
  if (step.count() <= 0 || step.count() > timeseries::kMaxStepMs) {
    return InvalidArgumentError(
        "range query step: " + std::to_string(step.count()) +
        " ms, want 1 ms to 366 days");
  }
  if (const int64_t steps = timeseries::StepCount(*this);
      steps > timeseries::kMaxSteps) {
    return InvalidArgumentError("range query step: " + std::to_string(steps) +
                                " steps from from_ms to to_ms, at most " +
                                std::to_string(timeseries::kMaxSteps) +
                                " (use a larger step)");
  }
  if (max_series == 0) {
    return InvalidArgumentError("range query max_series: must be at least 1");
  }
  return OkStatus();
}

Status PromQlSourceOptions::Validate() const {
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    return InvalidArgumentError("PromQL source url \"" + RedactedUrl(url) +
                                "\": expected an http:// or https:// URL");
  }
  if (url.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgumentError("PromQL source url: contains blanks");
  }
  for (char c : bearer_token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgumentError(
          "PromQL source bearer_token: contains control characters");
    }
  }
  if (timeout.count() <= 0) {
    return InvalidArgumentError("PromQL source timeout: must be positive");
  }
  if (max_response_bytes < 1024) {
    return InvalidArgumentError(
        "PromQL source max_response_bytes: at least 1024");
  }
  return OkStatus();
}

}  // namespace lens
