// Request accessors, option validation and the REST envelope.
#include <cctype>

#include "core/json.h"
#include "http/http.h"
#include "http/listen_address.h"

namespace lens {

std::string HttpRequest::Query(std::string_view name,
                               std::string_view fallback) const {
  auto it = query.find(std::string(name));
  return it == query.end() ? std::string(fallback) : it->second;
}

std::string HttpRequest::Header(std::string_view name) const {
  std::string key(name);
  for (char& c : key)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = headers.find(key);
  return it == headers.end() ? std::string() : it->second;
}

Status HttpServerOptions::Validate() const {
  LENS_RETURN_IF_ERROR(http::ParseListenAddress(listen).status());
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "TLS needs both a certificate file and a key file (got only the " +
        std::string(tls_cert_file.empty() ? "key" : "certificate") + ")");
  }
  if (threads < 1 || threads > 256) {
    return InvalidArgumentError("threads must be in 1..256, got " +
                                std::to_string(threads));
  }
  if (bearer_token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgumentError("bearer token must not contain whitespace");
  }
  if (max_body_bytes == 0)
    return InvalidArgumentError("max_body_bytes must be > 0");
  if (max_request_line_bytes < 64 || max_header_bytes < 256) {
    return InvalidArgumentError(
        "max_request_line_bytes must be >= 64 and max_header_bytes >= 256");
  }
  if (read_timeout.count() < 1 || write_timeout.count() < 1 ||
      idle_timeout.count() < 1) {
    return InvalidArgumentError(
        "read_timeout, write_timeout and idle_timeout must be >= 1s");
  }
  if (max_connections < 1 || max_connections > 65536) {
    return InvalidArgumentError("max_connections must be in 1..65536, got " +
                                std::to_string(max_connections));
  }
  if (max_connections_per_peer < 1 ||
      max_connections_per_peer > max_connections) {
    return InvalidArgumentError(
        "max_connections_per_peer must be in 1..max_connections (" +
        std::to_string(max_connections) + "), got " +
        std::to_string(max_connections_per_peer));
  }
  if (max_body_bytes_in_flight < max_body_bytes) {
    return InvalidArgumentError("max_body_bytes_in_flight (" +
                                std::to_string(max_body_bytes_in_flight) +
                                ") must be at least max_body_bytes (" +
                                std::to_string(max_body_bytes) + ")");
  }
  if (max_queued_requests < 1 || max_queued_requests > 65536) {
    return InvalidArgumentError(
        "max_queued_requests must be in 1..65536, got " +
        std::to_string(max_queued_requests));
  }
  return OkStatus();
}

// The envelope every Lens REST answer has: {"code":..,"data":..,"message":..}.
// The data is spliced in as rendered, never parsed and written again.
void RespondData(std::string_view data_json, HttpResponse* out) {
  out->status = 200;
  out->content_type = "application/json";
  out->body.clear();
  out->body.reserve(data_json.size() + 40);
  JsonWriter w(&out->body);
  w.StartObject();
  w.Member("code", 0);
  w.Key("data");
  w.RawValue(data_json.empty() ? std::string_view("null") : data_json);
  w.Member("message", "success");
  w.EndObject();
  out->body.push_back('\n');
}

void RespondError(int http_status, std::string_view message,
                  HttpResponse* out) {
  out->status = http_status;
  out->content_type = "application/json";
  out->body.clear();
  JsonWriter w(&out->body);
  w.StartObject();
  w.Member("code", http_status);
  w.Key("data");
  w.Null();
  w.Member("message", message);
  w.EndObject();
  out->body.push_back('\n');
}

void RespondStatus(const Status& status, HttpResponse* out) {
  int code = 500;
  switch (status.code()) {
    case StatusCode::kOk:
      code = 200;
      break;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      code = 400;
      break;
    case StatusCode::kUnauthenticated:
      code = 401;
      break;
    case StatusCode::kPermissionDenied:
      code = 403;
      break;
    case StatusCode::kNotFound:
      code = 404;
      break;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
      code = 409;
      break;
    case StatusCode::kFailedPrecondition:
      code = 412;
      break;
    case StatusCode::kResourceExhausted:
      code = 429;
      break;
    case StatusCode::kUnimplemented:
      code = 501;
      break;
    case StatusCode::kUnavailable:
      code = 503;
      break;
    case StatusCode::kDeadlineExceeded:
      code = 504;
      break;
    default:
      code = 500;
  }
  if (status.ok()) {
    RespondData("null", out);
  } else {
    RespondError(code, status.message(), out);
  }
}

}  // namespace lens
