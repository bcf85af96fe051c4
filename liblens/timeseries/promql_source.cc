// NewPromQlSource: a RangeQuery as a POST (form) to <url>/api/v1/query_range
// through the one outbound HTTP client (kept-alive connections, TLS, the
// bearer token, the answer's size limit).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/http_client.h"
#include "core/text.h"
#include "lens/timeseries.h"
#include "timeseries/promql_response.h"
#include "timeseries/promql_text.h"
#include "timeseries/range.h"

namespace lens {
namespace {

// <base path>/api/v1/query_range, keeping a query string of the base URL
// (VictoriaMetrics' extra_label, a tenant) and dropping a fragment.
std::string Endpoint(const std::string& base) {
  std::string path = base.substr(0, base.find_first_of("?#"));
  std::string query;
  if (const size_t q = base.find('?'); q != std::string::npos) {
    query = base.substr(q, base.find('#', q) - q);
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path + "/api/v1/query_range" + query;
}

class PromQlSource final : public TimeSeriesSource {
 public:
  PromQlSource(PromQlSourceOptions options, std::unique_ptr<HttpClient> http)
      : options_(std::move(options)), http_(std::move(http)) {}

  StatusOr<std::vector<SeriesSamples>> QueryRange(
      const RangeQuery& q) override {
    LENS_RETURN_IF_ERROR(q.Validate());
    // A POSTed form, so that long selectors never meet a URL length limit.
    const std::string form =
        "query=" + PercentEncode(timeseries::PromQlExpression(q)) +
        "&start=" + timeseries::PromQlSeconds(timeseries::AlignedStartMs(q)) +
        "&end=" + timeseries::PromQlSeconds(q.to_ms) +
        "&step=" + timeseries::PromQlSeconds(q.step.count());
    HttpClient::Request request;
    request.method = "POST";
    request.body = form;
    request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    auto answer = http_->Send(request);
    if (!answer.ok()) {
      if (answer.status().code() == StatusCode::kResourceExhausted) {
        return ResourceExhaustedError(
            "PromQL server " + http_->shown() +
            ": answer larger than max_response_bytes (" +
            std::to_string(options_.max_response_bytes) +
            " bytes); narrow the query");
      }
      // Whatever failed (refused, TLS, timeout): the server is unavailable.
      return UnavailableError(
          answer.status().WithContext("PromQL server").message());
    }
    if (answer->status < 200 || answer->status >= 300) {
      return UnavailableError(
          "PromQL server " + http_->shown() + " answered HTTP " +
          std::to_string(answer->status) + ": " +
          http_->Scrub(timeseries::PromQlErrorText(answer->body)));
    }
    return timeseries::ParseQueryRangeResponse(answer->body, q.metric,
                                               q.max_series, http_->shown());
  }

  std::string_view backend() const override { return "promql"; }

 private:
  const PromQlSourceOptions options_;
  const std::unique_ptr<HttpClient> http_;
};

}  // namespace

StatusOr<std::unique_ptr<TimeSeriesSource>> NewPromQlSource(
    const PromQlSourceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  if (!options.ca_file.empty() &&
      ::access(options.ca_file.c_str(), R_OK) != 0) {
    return InvalidArgumentError("PromQL source ca_file " + options.ca_file +
                                ": " + std::strerror(errno));
  }
  HttpClientOptions http;
  http.base_url = Endpoint(options.url);
  http.timeout = options.timeout;
  http.max_response_bytes = options.max_response_bytes;
  http.bearer_token = options.bearer_token;
  http.ca_file = options.ca_file;
  http.accept_compressed = true;
  LENS_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                        HttpClient::Create(std::move(http)));
  return std::unique_ptr<TimeSeriesSource>(
      new PromQlSource(options, std::move(client)));
}

}  // namespace lens
