#include "telemetry/remote_write_client.h"

#include "core/http_client.h"

namespace lens::telemetry {
namespace {

constexpr size_t kBodyBytesKept = 512;

}  // namespace

std::string ForwardTargetName(const ForwardTarget& target) {
  std::string from_text;
  std::string_view from = target.name;
  if (from.empty()) {
    // Host, port and path only: credentials in the URL (user:password@,
    // ?token=) never reach a label, a directory name or a log line.
    from_text = RedactedUrl(target.url);
    from = from_text;
    for (std::string_view scheme : {"http://", "https://"}) {
      if (from.starts_with(scheme)) from.remove_prefix(scheme.size());
    }
  }
  std::string name;
  for (char c : from.substr(0, 100)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                      c == '-';
    name.push_back(keep ? c : '_');
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  // Never "", "." or "..": those are not directories of their own.
  if (name.empty() || name.front() == '.') name.insert(0, "_");
  return name;
}

struct RemoteWriteClient::Impl {
  std::unique_ptr<HttpClient> http;
};

StatusOr<std::unique_ptr<RemoteWriteClient>> RemoteWriteClient::Create(
    const ForwardTarget& target) {
  HttpClientOptions o;
  o.base_url = target.url;
  o.user_agent = "lens-telemetry";
  o.timeout = target.timeout;
  o.connect_timeout = target.timeout;
  o.ca_file = target.ca_file;
  o.insecure_skip_verify = target.insecure_skip_verify;
  o.bearer_token = target.bearer_token;
  o.headers = {{"Content-Encoding", "snappy"},
               {"Content-Type", "application/x-protobuf"},
               {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
  o.headers.insert(o.headers.end(), target.headers.begin(),
                   target.headers.end());
  o.idle_handles = 1;  // one poster: one kept-alive connection
  auto http = HttpClient::Create(std::move(o));
  if (!http.ok()) return http.status().WithContext("remote write target");
  auto impl = std::make_unique<Impl>();
  impl->http = std::move(*http);
  return std::unique_ptr<RemoteWriteClient>(
      new RemoteWriteClient(std::move(impl)));
}

RemoteWriteClient::RemoteWriteClient(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

RemoteWriteClient::~RemoteWriteClient() = default;

PostResult RemoteWriteClient::Post(std::string_view body,
                                   const std::atomic<bool>* stop) {
  HttpClient::Request request;
  request.method = "POST";
  request.body = body;
  request.stop = stop;
  request.keep_prefix = kBodyBytesKept;
  auto answer = impl_->http->Send(request);
  PostResult r;
  if (!answer.ok()) {
    r.stopped = answer.status().code() == StatusCode::kCancelled;
    r.error = answer.status().message();
    return r;
  }
  r.status = answer->status;
  r.retry_after_seconds = answer->retry_after_seconds;
  r.body = std::move(answer->body);
  return r;
}

}  // namespace lens::telemetry
