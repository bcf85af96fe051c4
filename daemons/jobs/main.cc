// lens-jobs: receives container events from the node agents (gRPC) and
// stores them; /metrics and /healthz over HTTP. Flags and lifecycle only.
#include <cstdio>
#include <memory>

#include "flags.h"
#include "lens/container_events.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/metrics.h"
#include "lens/process.h"
#include "lens/store.h"
#include "lens/version.h"

namespace {

// Bad flags, TLS files or an unreachable database: 2. Anything else: 1.
int Fail(std::string_view what, const lens::Status& status) {
  std::fprintf(stderr, "lens-jobs: %.*s: %s\n", static_cast<int>(what.size()),
               what.data(), status.message().c_str());
  return status.code() == lens::StatusCode::kInvalidArgument ? 2 : 1;
}

void AddRoutes(lens::HttpServer& http,
               const lens::ContainerEventServer& events) {
  http.Handle("GET", "/metrics",
              [&events](const lens::HttpRequest&, lens::HttpResponse* r) {
                r->content_type = std::string(lens::kPrometheusTextContentType);
                r->body = events.RenderMetrics();
              });
  http.Handle("GET", "/healthz",
              [](const lens::HttpRequest&, lens::HttpResponse* r) {
                r->content_type = "text/plain";
                r->body = "ok\n";
              });
}

}  // namespace

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{"lens-jobs: stores the container events of the node agents"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::JobsFlags flags;
  flags.Register(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  lens::StatusOr<lens::cli::JobsOptions> options = flags.Apply();
  if (!options.ok()) return Fail("flags", options.status());
  lens::ConfigureLogging({options->log_level, lens::LogFormat::kText, {}, {}});

  auto store = lens::Store::Open(options->database_url);
  if (!store.ok()) {
    Fail("database", store.status());
    return 2;
  }
  lens::ContainerEventServer events(options->events, store->get());
  if (lens::Status st = events.Start(); !st.ok()) return Fail("gRPC", st);
  auto http = lens::HttpServer::Create(options->http);
  if (!http.ok()) return Fail("HTTP", http.status());
  AddRoutes(**http, events);
  if (lens::Status st = (*http)->Start(); !st.ok()) return Fail("HTTP", st);
  LENS_LOG(INFO)
          .Field("grpc", options->events.listen)
          .Field("grpc_port", events.port())
          .Field("http", (*http)->url())
          .Field("database", (*store)->target())
      << "lens-jobs serving";

  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-jobs stopping";
  (*http)->Stop();
  events.Stop();
  return 0;
}
