// The bytes of responses, and the bearer check, of the HTTP server.
#include "http/wire.h"

#include <cctype>

#include "core/constant_time.h"

namespace lens::http {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const char* Reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

// Header values with CR/LF removed, so a handler cannot split the response.
std::string HeaderSafe(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '\r' && c != '\n') out += c;
  return out;
}

std::string Serialize(const HttpResponse& r, bool head_only, bool keep_alive) {
  std::string out =
      "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  if (!r.content_type.empty())
    out += "Content-Type: " + HeaderSafe(r.content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  for (const auto& [k, v] : r.headers)
    out += HeaderSafe(k) + ": " + HeaderSafe(v) + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n"
                    : "Connection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

std::string ErrorBytes(int status, std::string_view message, bool keep_alive,
                       bool head_only) {
  HttpResponse r;
  RespondError(status, message, &r);
  return Serialize(r, head_only, keep_alive);
}

// "Bearer <token>": the scheme in any case, one or more spaces.
bool Authorized(std::string_view header, std::string_view token) {
  const size_t sp = header.find(' ');
  if (sp == std::string_view::npos || Lower(header.substr(0, sp)) != "bearer")
    return false;
  std::string_view credential = header.substr(sp);
  while (!credential.empty() && credential.front() == ' ')
    credential.remove_prefix(1);
  while (!credential.empty() && credential.back() == ' ')
    credential.remove_suffix(1);
  return ConstantTimeEquals(credential, token);
}

}  // namespace lens::http
