// The `telemetry:` section of the configuration file: lens-telemetry.
// Owned here; registered in service/config.cc.
#ifndef LENS_TELEMETRY_CONFIG_H_
#define LENS_TELEMETRY_CONFIG_H_

#include <chrono>
#include <string>
#include <vector>

#include "core/config_section.h"
#include "lens/status.h"
#include "telemetry/telemetry.h"

namespace lens {

// `telemetry:` section: lens-telemetry (docs/telemetry.md). Lists are YAML
// lists or comma-separated text.
struct TelemetryConfigOptions {
  // `listen`: host:port of remote write, logs, the caches, /metrics.
  // `bearerTokenFile`: required on every route but /healthz and /readyz.
  // `tlsCertFile`, `tlsKeyFile`: HTTPS.
  std::string listen = "0.0.0.0:8994";
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // `forward`: remote-write URLs the enriched samples go to; their bearer
  // token (`forwardTokenFile`), CA (`forwardCaFile`),
  // `forwardInsecureSkipTlsVerify`, `forwardTimeout` per request (one
  // processor.forward target per URL when the service is built).
  std::vector<std::string> forward;
  std::string forward_token_file;
  std::string forward_ca_file;
  bool forward_insecure_skip_tls_verify = false;
  std::chrono::milliseconds forward_timeout{10000};
  // The processor's own options, which the other keys decode into (their
  // defaults are spelled once, in telemetry/telemetry.h):
  // `maxRequestBytes` (the largest request body, compressed; a body's
  // snappy header may declare 4 times that: max_body_bytes and
  // max_uncompressed_bytes; bytes or with a unit: 32MiB, 1GiB), `queueDir`,
  // `queueMaxBytes`, `queueFsync`, the series looked at and their identity
  // labels (metricPrefixes, namespaceLabels, podLabels, nodeLabels,
  // gpuIndexLabels, gpuSerialLabels, gpuBdfLabels, gpuUuidLabels,
  // rdmaDeviceLabels), `compatNames`, `ownershipRefresh`,
  // `ownershipHistory`, `sampleHistory`, `sampleResolution`,
  // `sampleRetention`, `sampleMaxSeries`, `logs` and `selfPodPrefixes`.
  TelemetryOptions processor;

  // InvalidArgument naming the key.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<TelemetryConfigOptions> kTelemetrySection;
}  // namespace config

}  // namespace lens

#endif  // LENS_TELEMETRY_CONFIG_H_
