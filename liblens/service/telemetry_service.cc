// lens-telemetry composed once: the store, the processor and the HTTP
// routes, from one options struct.
#include "service/telemetry_service.h"

#include <algorithm>
#include <charconv>

#include "lens/store.h"
#include "service/service_host.h"

namespace lens {
namespace {

void Answer(const IngestResult& r, HttpResponse* out) {
  out->status = r.http_status;
  out->content_type = "text/plain; charset=utf-8";
  out->body = r.http_status == 204 ? "" : r.message + "\n";
  if (r.retry_after_seconds > 0) {
    out->headers.emplace_back("Retry-After",
                              std::to_string(r.retry_after_seconds));
  }
}

// fluent-bit's `json` format is one array; `json_lines` one object per line.
LogBodyFormat FormatOf(const HttpRequest& req) {
  const std::string format = req.Query("format");
  if (format == "json") return LogBodyFormat::kJson;
  if (format == "json_lines") return LogBodyFormat::kJsonLines;
  for (char c : req.body) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '[' ? LogBodyFormat::kJson : LogBodyFormat::kJsonLines;
  }
  return LogBodyFormat::kJsonLines;
}

size_t LimitOf(const HttpRequest& req) {
  const std::string text = req.Query("limit");
  size_t limit = 10000;
  if (!text.empty()) {
    std::from_chars(text.data(), text.data() + text.size(), limit);
  }
  return std::clamp<size_t>(limit, 1, 1'000'000);
}

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

}  // namespace

Status TelemetryServiceOptions::Validate() const {
  if (database_url.empty()) return InvalidArgumentError("database: empty URL");
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  LENS_RETURN_IF_ERROR(telemetry.Validate().WithContext("telemetry"));
  return OkStatus();
}

StatusOr<TelemetryServiceOptions> TelemetryServiceOptionsFromConfig(
    const Config& config) {
  LENS_RETURN_IF_ERROR(config.telemetry.Validate().WithContext("telemetry"));
  LENS_RETURN_IF_ERROR(config.database.Validate().WithContext("database"));
  const TelemetryConfigOptions& c = config.telemetry;
  TelemetryServiceOptions o;
  o.database_url = config.database.url;
  LENS_ASSIGN_OR_RETURN(o.http, service::ServiceHttpOptions(
                                    "telemetry", c.listen, c.bearer_token_file,
                                    c.tls_cert_file, c.tls_key_file));
  TelemetryOptions& t = o.telemetry;
  t = c.processor;
  std::string forward_token;
  if (!c.forward_token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(forward_token,
                          ReadBearerTokenFile(c.forward_token_file,
                                              "telemetry.forwardTokenFile"));
  }
  for (const std::string& url : c.forward) {
    t.forward.push_back({url, forward_token, c.forward_ca_file,
                         c.forward_insecure_skip_tls_verify,
                         c.forward_timeout});
  }
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

void AddTelemetryRoutes(TelemetryProcessor* processor, HttpServer* server) {
  auto remote_write = [processor](const HttpRequest& req, HttpResponse* r) {
    Answer(processor->WriteRemote(req.body, req.Header("content-type")), r);
  };
  server->Handle("POST", "/api/v1/write", remote_write);
  server->Handle("POST", "/prometheus", remote_write);
  auto logs = [processor](const HttpRequest& req, HttpResponse* r) {
    Answer(processor->IngestLogs(req.body, FormatOf(req), Now()), r);
  };
  server->Handle("POST", "/v1/logs", logs);
  server->Handle("POST", "/logs", logs);
  server->Handle("GET", "/pods/cache",
                 [processor](const HttpRequest& req, HttpResponse* r) {
                   RespondData(processor->PodsCacheJson(LimitOf(req)), r);
                 });
  server->Handle("GET", "/pods/workload/cache",
                 [processor](const HttpRequest& req, HttpResponse* r) {
                   RespondData(processor->WorkloadCacheJson(LimitOf(req)), r);
                 });
}

struct TelemetryService::Impl {
  std::unique_ptr<Store> store;
  std::unique_ptr<TelemetryProcessor> processor;
  std::unique_ptr<service::ServiceHost> host;  // stops before the rest goes
};

TelemetryService::TelemetryService() : impl_(std::make_unique<Impl>()) {}
TelemetryService::~TelemetryService() { Stop(); }

StatusOr<std::unique_ptr<TelemetryService>> TelemetryService::Start(
    const TelemetryServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<TelemetryService> service(new TelemetryService());
  Impl& s = *service->impl_;
  LENS_ASSIGN_OR_RETURN(s.store, Store::Open(options.database_url));
  LENS_ASSIGN_OR_RETURN(s.processor, TelemetryProcessor::Create(
                                         options.telemetry, s.store.get()));
  TelemetryProcessor* processor = s.processor.get();
  service::ServiceHost::Options host;
  host.http = options.http;
  host.http.max_body_bytes = options.telemetry.max_body_bytes;
  host.http.max_body_bytes_in_flight = std::max(
      host.http.max_body_bytes_in_flight, 2 * host.http.max_body_bytes);
  // Ready once the store is open and the queues recovered: always, here.
  host.metrics = [processor] { return processor->RenderMetrics(); };
  LENS_ASSIGN_OR_RETURN(s.host, service::ServiceHost::Create(std::move(host)));
  s.host->AddStop([processor] { processor->Stop(); });
  AddTelemetryRoutes(processor, &s.host->http());
  LENS_RETURN_IF_ERROR(s.processor->Start());
  LENS_RETURN_IF_ERROR(s.host->Start());
  return service;
}

void TelemetryService::Stop() {
  if (impl_->host) {
    impl_->host->Stop();
  } else if (impl_->processor) {
    impl_->processor->Stop();
  }
}

std::string TelemetryService::http_url() const { return impl_->host->url(); }

TelemetryProcessor& TelemetryService::processor() { return *impl_->processor; }
std::string TelemetryService::database() const {
  return impl_->store->target();
}

}  // namespace lens
