// Flags of lens-jobs, parsed once into typed options.
#ifndef LENS_DAEMONS_JOBS_FLAGS_H_
#define LENS_DAEMONS_JOBS_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "lens/container_events.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/status.h"

namespace lens::cli {

// What lens-jobs runs with. Plain value.
struct JobsOptions {
  std::string database_url;
  ContainerEventServerOptions events;  // the gRPC event server
  HttpServerOptions http;              // /metrics and /healthz
  LogLevel log_level = LogLevel::kInfo;
};

struct JobsFlags {
  std::string listen_grpc = "0.0.0.0:50051";
  std::string listen_http = "0.0.0.0:8993";
  std::string database = "sqlite:///var/lib/lens/lens.db";
  std::string bearer_token_file, tls_cert, tls_key;
  std::string log_level = "info";

  void Register(CLI::App& app) {
    app.add_option("--listen-grpc", listen_grpc,
                   "host:port of the container event server (node agents)")
        ->capture_default_str();
    app.add_option("--listen-http", listen_http,
                   "host:port serving /metrics and /healthz")
        ->capture_default_str();
    app.add_option("--database", database,
                   "store URL: sqlite:///path.db or postgresql://...")
        ->envname("LENS_STORE_URL")
        ->capture_default_str();
    app.add_option("--bearer-token-file", bearer_token_file,
                   "require this bearer token from node agents and on every "
                   "HTTP route but /healthz");
    app.add_option("--tls-cert", tls_cert,
                   "serve gRPC and HTTP over TLS with this PEM certificate");
    app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert");
    app.add_option("--log-level", log_level, "debug | info | warn | error")
        ->capture_default_str();
  }

  StatusOr<JobsOptions> Apply() const {
    JobsOptions o;
    StatusOr<LogLevel> level = ParseLogLevel(log_level);
    if (!level.ok()) return level.status().WithContext("--log-level");
    o.log_level = *level;
    if (database.empty()) return InvalidArgumentError("--database is empty");
    o.database_url = database;
    std::string token;
    if (!bearer_token_file.empty()) {
      StatusOr<std::string> read =
          ReadBearerTokenFile(bearer_token_file, "--bearer-token-file");
      if (!read.ok()) return read.status();
      token = *read;
    }
    o.events.listen = listen_grpc;
    o.events.bearer_token = token;
    o.events.tls_cert_file = tls_cert;
    o.events.tls_key_file = tls_key;
    o.http.listen = listen_http;
    o.http.bearer_token = token;
    o.http.tls_cert_file = tls_cert;
    o.http.tls_key_file = tls_key;
    LENS_RETURN_IF_ERROR(o.http.Validate());
    return o;
  }

};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_JOBS_FLAGS_H_
