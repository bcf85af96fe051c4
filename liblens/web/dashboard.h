// The Lens dashboard: a single-page web app (web/: HTML, CSS and plain
// JavaScript modules, with Debian's Chart.js 3.9) embedded in the binary at
// build time and served next to the REST API (api/api.h) that it reads.
//
//   lens::HttpServerOptions options;
//   for (std::string& p : lens::DashboardPublicPaths())
//     options.public_paths.push_back(std::move(p));
//   auto server = lens::HttpServer::Create(options);
//   lens::AddDashboardRoutes(server->get());
//   lens::AddApiRoutes(store, series, api_options, server->get());
//
// The page holds no data: it fetches /api/v1/... with the bearer token the
// user enters (kept in the browser's localStorage), so the page and its
// assets can be public while the API is not.
#ifndef LENS_WEB_DASHBOARD_H_
#define LENS_WEB_DASHBOARD_H_

#include <string>
#include <vector>

#include "http/http.h"

namespace lens {

// Registers GET (and so HEAD) of "/" (the page, index.html) and of
// "/static/<file>" for every embedded asset (the app's modules and styles,
// "/static/chart.min.js") on `server`, before server->Start(). `server` is
// borrowed; the bytes are static, so the handlers hold nothing else.
//
// Every answer carries the file's Content-Type, an ETag (a hash of its bytes,
// computed here once), X-Content-Type-Options: nosniff, Referrer-Policy:
// no-referrer and a Content-Security-Policy that allows only this origin's
// scripts, styles and connections (no inline script, no eval, no framing).
// "Cache-Control: no-cache" for the page, "public, max-age=86400" for the
// assets. A request whose If-None-Match names the current ETag (or "*")
// gets 304 with an empty body. Handlers are thread-safe.
void AddDashboardRoutes(HttpServer* server);

// The exact paths AddDashboardRoutes serves ("/", "/static/app.js", ...),
// to append to HttpServerOptions::public_paths so the page loads without a
// token.
std::vector<std::string> DashboardPublicPaths();

}  // namespace lens

#endif  // LENS_WEB_DASHBOARD_H_
