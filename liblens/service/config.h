// The product's configuration file: every section, who owns it, and how a
// daemon loads it. Each area owns its section (struct, defaults, decoding,
// rules across keys) in <area>/config.h; this file registers them under
// their names (service/config.cc); core/config.h reads the file and applies
// the environment and the flags over it.
//
//   logging:                 # core (core/config.h)
//     level: info            # debug | info | warn | error
//     format: json           # text | json
//   metrics:                 # core
//     compatNames: true      # also export the original platform's metric names
//     listenAddress: ":9400" # empty: serve /metrics on httpPort
//   httpPort: 8989           # the daemon's own HTTP port
//
//   nodeExporter:            # agent/config.h: lens-node-agent
//   (docs/node-agent.md)
//     interval: 5s
//     kubeletUrl: https://127.0.0.1:10250
//   netflow:                 # flow/config.h: lens-netflow (docs/netflow.md)
//     policyFile: /etc/lens/netflow-policy.yaml
//   jobs:                    # scheduled/config.h: lens-jobs (docs/jobs.md)
//     listenGrpc: 0.0.0.0:50051
//   controller:              # controller/config.h: lens-controller
//     inCluster: true
//   telemetry:               # telemetry/config.h: lens-telemetry
//     forward: [https://vm:8428/api/v1/write]
//   api:                     # api/config.h: lens-api (docs/api.md)
//     cluster: prod
//   database:                # store/config.h: every cluster daemon, `lens db`
//     url: sqlite:///var/lib/lens/lens.db
//   tuner:                   # tuner/config.h: lens-tuner (docs/tuner.md)
//     sysctls:
//       vm.max_map_count: 262144
//   multiCluster:            # multicluster/config.h: lens-multicluster
//     inCluster: true
//
// Any other key is rejected as unknown. To add a section: its struct (with
// defaults and `Status Validate() const`) and its `SectionSpec` in the
// area's config.h/.cc, a member here and its row in service/config.cc's
// table; every key of it can then be set from the environment
// (core/config.h names the variables and the precedence).
#ifndef LENS_SERVICE_CONFIG_H_
#define LENS_SERVICE_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>

#include "agent/config.h"
#include "api/config.h"
#include "controller/config.h"
#include "core/config.h"
#include "flow/config.h"
#include "lens/status.h"
#include "multicluster/config.h"
#include "scheduled/config.h"
#include "store/config.h"
#include "telemetry/config.h"
#include "tuner/config.h"

namespace lens {

// The whole configuration file. Plain value; copy freely.
struct Config {
  LoggingOptions logging;
  MetricsOptions metrics;
  NodeExporterOptions node_exporter;
  NetflowOptions netflow;
  JobsOptions jobs;
  ControllerConfigOptions controller;
  TelemetryConfigOptions telemetry;
  ApiConfigOptions api;
  DatabaseOptions database;
  TunerOptions tuner;
  MultiClusterOptions multi_cluster;
  // `httpPort`: the daemon's HTTP port, 1..65535; unset means the daemon's own
  // default.
  std::optional<int> http_port;

  // Validates every section; the first error names its section
  // ("metrics: listenAddress: ...").
  Status Validate() const;
};

// Reads and parses the YAML file at `path`, applies LENS_* environment
// overrides, validates. Errors: NotFound (no such file, message names the
// path), PermissionDenied, ResourceExhausted (file larger than max_file_bytes),
// InvalidArgument for bad content:
// "<path>:<line>:<column>: <key path>: <problem>", e.g.
// "/etc/lens.yaml:3:3: logging.levle: unknown key" or
// "/etc/lens.yaml:7:11: httpPort: expected an integer, got \"eighty\"".
// Values that came from the environment are reported as "LENS_HTTP_PORT=...:
// httpPort: ...".
StatusOr<Config> LoadConfigFile(const std::string& path,
                                const ConfigLoadOptions& options = {});

// What every daemon loads: the file at `path` (the defaults when empty), then
// LENS_* variables, then options.overrides (its flags), each value decoded
// and checked once, by the same rules.
StatusOr<Config> LoadConfig(const std::string& path,
                            const ConfigLoadOptions& options = {});

// As LoadConfigFile, from YAML text already in memory; `source_name` prefixes
// error locations. Empty text gives the defaults (plus environment overrides).
StatusOr<Config> ParseConfig(std::string_view yaml,
                             std::string_view source_name,
                             const ConfigLoadOptions& options = {});

}  // namespace lens

#endif  // LENS_SERVICE_CONFIG_H_
