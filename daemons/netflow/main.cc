// lens-netflow: per-node TCP flow accounting with eBPF; /metrics (bounded:
// per class, direction and workload, top-K remotes), /flows (the last
// drain's sockets as JSON) and /healthz. Flags and lifecycle only.
#include <cstdio>
#include <memory>

#include "flags.h"
#include "lens/flow.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/metrics.h"
#include "lens/process.h"
#include "lens/version.h"
#include "routes.h"

namespace {

// Bad flags or policy: 2. No privilege or kernel support, anything else: 1.
int Fail(std::string_view what, const lens::Status& status) {
  std::fprintf(stderr, "lens-netflow: %.*s: %s\n",
               static_cast<int>(what.size()), what.data(),
               status.message().c_str());
  return status.code() == lens::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{"lens-netflow: TCP flows of this node, counted with eBPF"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::NetflowFlags flags;
  flags.Register(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  lens::StatusOr<lens::cli::NetflowRun> options = flags.Apply();
  if (!options.ok()) return Fail("flags", options.status());
  lens::ConfigureLogging(
      {options->logging.level, options->logging.format, {}, {}});

  auto probe = lens::FlowProbe::Open(options->probe);
  if (!probe.ok()) return Fail("eBPF", probe.status());
  auto monitor = lens::FlowMonitor::Create(std::move(*probe), options->monitor);
  if (!monitor.ok()) return Fail("monitor", monitor.status());
  auto http = lens::HttpServer::Create(options->http);
  if (!http.ok()) return Fail("HTTP", http.status());
  lens::cli::AddFlowRoutes(**http, **monitor);
  if (lens::Status st = (*monitor)->Start(); !st.ok()) {
    return Fail("monitor", st);
  }
  if (lens::Status st = (*http)->Start(); !st.ok()) return Fail("HTTP", st);
  LENS_LOG(INFO)
          .Field("http", (*http)->url())
          .Field("interval_ms", options->monitor.drain_interval.count())
      << "lens-netflow serving";

  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-netflow stopping";
  (*http)->Stop();
  (*monitor)->Stop();
  return 0;
}
