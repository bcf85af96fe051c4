// The skeleton every service stands on, written once: its HTTP server with
// the standard /healthz, /readyz (from state the service keeps current; a
// probe never waits on a database or a remote server) and /metrics (the
// service's families, then the server's own); leader election on a Lease
// on a thread of its own; the service's background threads; and an ordered
// stop. A service adds its own routes and threads and keeps its logic.
//
//   ServiceHost::Options o;
//   o.http = options.http;
//   o.ready = [impl] { return impl->controller->Ready() ? OkStatus() : ...; };
//   o.metrics = [impl] { return RenderControllerMetrics(...); };
//   o.leader_client = client.get();  // with leader election
//   LENS_ASSIGN_OR_RETURN(host, ServiceHost::Create(std::move(o)));
//   host->AddThread("controller", [c] { return c->Run(); },
//                   [c] { c->Stop(); });
//   LENS_RETURN_IF_ERROR(host->Start());
#ifndef LENS_SERVICE_SERVICE_HOST_H_
#define LENS_SERVICE_SERVICE_HOST_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/http.h"
#include "lens/kube.h"
#include "lens/status.h"

namespace lens::service {

class ServiceHost {
 public:
  struct Options {
    HttpServerOptions http;
    // /readyz: 200 "ok" while this is OK, else 503 with its message. It
    // reads state the service keeps (never a blocking call); unset: ready
    // once serving.
    std::function<Status()> ready;
    // /metrics: the service's own families in the text format; the HTTP
    // server's request metrics follow (or are in a Registry the service
    // renders itself: HttpServerOptions::metrics).
    std::function<std::string()> metrics;
    // Leader election on a Lease through this client (borrowed; it outlives
    // the host) when set; without it Leading() is always true.
    KubeClient* leader_client = nullptr;
    KubeLeaderOptions leader;
  };

  // Creates the server (listening, not serving yet) with the standard
  // routes; Unavailable naming the address when it cannot listen.
  static StatusOr<std::unique_ptr<ServiceHost>> Create(Options options);
  ~ServiceHost();  // stops
  ServiceHost(const ServiceHost&) = delete;
  ServiceHost& operator=(const ServiceHost&) = delete;

  // For the service's own routes, before Start().
  HttpServer& http() { return *http_; }
  std::string url() const { return http_->url(); }

  // `run` on a thread of its own from Start(); its error is logged with
  // `what`. `stop` asks it to end (called by Stop() before joining). Before
  // Start() only, as AddStop.
  void AddThread(std::string what, std::function<Status()> run,
                 std::function<void()> stop);
  // Called by Stop() after the threads, in reverse order of adding (the
  // service's components that stop without a thread of the host's).
  void AddStop(std::function<void()> stop);

  // Serves HTTP, then starts leader election and the threads.
  Status Start();
  // HTTP first (no new requests), then each thread (stop, join) and each
  // stop callback in reverse order of adding, leader election last (the
  // Lease is released once nothing writes any more). Idempotent.
  void Stop();

  // Whether this replica leads: true without leader election.
  bool Leading() const;
  uint64_t leader_transitions() const;

 private:
  struct Part;
  explicit ServiceHost(Options options);
  Options options_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<KubeLeaderElector> elector_;
  struct State;
  std::unique_ptr<State> state_;
};

// A service's HTTP surface from its section's keys: `listen`, the bearer
// token read from `token_file` (none when empty; errors name
// `<section>.bearerTokenFile` and the file, never a token), the TLS files.
// /healthz and /readyz answer without the token; /metrics, /healthz and
// /readyz are served first under load.
StatusOr<HttpServerOptions> ServiceHttpOptions(std::string_view section,
                                               const std::string& listen,
                                               const std::string& token_file,
                                               const std::string& tls_cert_file,
                                               const std::string& tls_key_file);

// A service's leader election from its section's keys: the Lease
// `lease_namespace`/`lease_name`, and this replica's `identity` (empty:
// DefaultLeaderIdentity(fallback), from $POD_NAME or the host name).
KubeLeaderOptions ServiceLeaderOptions(const std::string& lease_namespace,
                                       const std::string& lease_name,
                                       const std::string& identity,
                                       std::string_view fallback);

}  // namespace lens::service

#endif  // LENS_SERVICE_SERVICE_HOST_H_
