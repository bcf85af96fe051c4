// lens-multicluster: gathers every member cluster's storage config into one
// Secret that lens-api reads (docs/multicluster.md). Flags and lifecycle
// only: the multicluster service does the work.
#include "flags.h"
#include "run_daemon.h"
#include "service/multicluster_service.h"

int main(int argc, char** argv) {
  using lens::MultiClusterService;
  using lens::MultiClusterServiceOptions;
  // Bad flags, config, kubeconfig, token or TLS files: 2. A port that
  // cannot be used, anything else: 1.
  return lens::cli::RunDaemon<MultiClusterServiceOptions, MultiClusterService>(
      argc, argv,
      {.name = "lens-multicluster",
       .about = "lens-multicluster: publishes each member cluster's storage "
                "config for lens-api",
       .config_help = "YAML config file (multiCluster section, logging)",
       .flags = {lens::cli::kMultiClusterFlags},
       .options = lens::MultiClusterServiceOptionsFromConfig,
       .describe =
           [](lens::LogMessage& line, const lens::Config&,
              const MultiClusterServiceOptions& o, MultiClusterService& s) {
             line.Field("http", s.http_url())
                 .Field("home", o.home.origin)
                 .Field("clusters_secret",
                        o.namespace_name + "/" + o.clusters_secret)
                 .Field("output_secret",
                        o.namespace_name + "/" + o.output_secret);
           },
       .running = "running"});
}
