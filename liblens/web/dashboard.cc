// Serving the embedded dashboard: one exact route per file, each answered
// from bytes and headers computed once at registration.
#include "web/dashboard.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "web/assets.h"

namespace lens {
namespace {

struct ContentType {
  std::string_view extension;
  std::string_view type;
};

// The types of the files web/ holds (and a few it may).
constexpr ContentType kContentTypes[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".json", "application/json"},
};

// No inline script or style, no eval, no framing; the page talks to its own
// origin only. Chart.js 3 sets canvas sizes through the CSSOM, which
// style-src does not restrict.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// index.html names its assets without a version, so it is revalidated on
// every load; the assets are revalidated daily (their ETag changes with
// their bytes, so a stale copy costs one 304 round trip after a day).
constexpr std::string_view kPageCacheControl = "no-cache";
constexpr std::string_view kAssetCacheControl = "public, max-age=86400";

std::string_view TypeOf(std::string_view name) {
  for (const ContentType& t : kContentTypes) {
    if (name.size() >= t.extension.size() &&
        name.substr(name.size() - t.extension.size()) == t.extension)
      return t.type;
  }
  return "application/octet-stream";
}

// FNV-1a, 64 bits: an ETag only has to change when the bytes do, and the
// server is the only one making them (no adversary to collide with).
std::string ETagOf(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char text[40];
  std::snprintf(text, sizeof(text), "\"%016llx-%zx\"",
                static_cast<unsigned long long>(hash), bytes.size());
  return text;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// If-None-Match: "*" or a comma-separated list of entity tags, weak
// ("W/") ones matching too (RFC 9110 13.1.2 uses the weak comparison).
bool NoneMatchHits(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view tag = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view()
                                             : header.substr(comma + 1);
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
  }
  return false;
}

// What every response for one file carries.
struct Served {
  std::string_view bytes;
  std::string content_type;
  std::string etag;
  std::string_view cache_control;
};

void Serve(const Served& file, const HttpRequest& req, HttpResponse* out) {
  out->headers = {
      {"ETag", file.etag},
      {"Cache-Control", std::string(file.cache_control)},
      {"X-Content-Type-Options", "nosniff"},
      {"Content-Security-Policy", std::string(kContentSecurityPolicy)},
      {"Referrer-Policy", "no-referrer"}};
  const std::string if_none_match = req.Header("if-none-match");
  if (!if_none_match.empty() && NoneMatchHits(if_none_match, file.etag)) {
    out->status = 304;
    out->content_type.clear();
    out->body.clear();
    return;
  }
  out->status = 200;
  out->content_type = file.content_type;
  out->body.assign(file.bytes);
}

// "index.html" is the page at "/"; every other asset keeps its name.
std::string PathOf(std::string_view name) {
  return name == "index.html" ? std::string("/") : "/" + std::string(name);
}

}  // namespace

void AddDashboardRoutes(HttpServer* server) {
  for (const web::EmbeddedAsset& asset : web::EmbeddedAssets()) {
    auto file = std::make_shared<const Served>(Served{
        asset.bytes, std::string(TypeOf(asset.name)), ETagOf(asset.bytes),
        asset.name == "index.html" ? kPageCacheControl : kAssetCacheControl});
    server->Handle("GET", PathOf(asset.name),
                   [file](const HttpRequest& req, HttpResponse* out) {
                     Serve(*file, req, out);
                   });
  }
}

std::vector<std::string> DashboardPublicPaths() {
  std::vector<std::string> paths;
  for (const web::EmbeddedAsset& asset : web::EmbeddedAssets())
    paths.push_back(PathOf(asset.name));
  return paths;
}

}  // namespace lens
