// lens-multicluster: gathers every member cluster's storage config into one
// Secret that lens-api reads (docs/multicluster.md). Flags and lifecycle
// only: the multicluster service does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "flags.h"
#include "lens/log.h"
#include "lens/version.h"
#include "service/multicluster_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{
      "lens-multicluster: publishes each member cluster's storage config "
      "for lens-api"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app, "YAML config file (multiCluster section, logging)");
  flags.Add(app, lens::cli::kMultiClusterFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-multicluster");
  }
  // Bad flags, config, kubeconfig, token or TLS files: 2. A port that
  // cannot be used, anything else: 1.
  auto config = flags.Load();
  auto options = config.ok()
                     ? lens::MultiClusterServiceOptionsFromConfig(*config)
                     : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-multicluster: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::MultiClusterService::Start(*options);
  if (!service.ok()) {
    return lens::cli::StartFailureExit(service.status(), "lens-multicluster");
  }
  LENS_LOG(INFO)
          .Field("http", (*service)->http_url())
          .Field("home", options->home.origin)
          .Field("clusters_secret",
                 options->namespace_name + "/" + options->clusters_secret)
          .Field("output_secret",
                 options->namespace_name + "/" + options->output_secret)
      << "lens-multicluster running";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-multicluster stopping";
  (*service)->Stop();
  return 0;
}
