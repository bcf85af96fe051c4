// lens-controller composed once: the Kubernetes client, leader election on
// a Lease, the controller (GPU pods, their owner chains and the nodes into
// the store) and /healthz, /readyz and /metrics over HTTP, built from one
// options struct and that struct from the config (`controller:`,
// `database:`).
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::ControllerServiceOptionsFromConfig(*config);
//   auto service = lens::ControllerService::Start(*options);
//   ...
//   (*service)->Stop();
#ifndef LENS_SERVICE_CONTROLLER_SERVICE_H_
#define LENS_SERVICE_CONTROLLER_SERVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "http/http.h"
#include "lens/kube.h"
#include "lens/status.h"
#include "service/config.h"

namespace lens {

// What a ControllerService runs. Plain value.
struct ControllerServiceOptions {
  std::string database_url;  // Store::Open's URL
  KubeConnection connection;
  KubeClientOptions client;
  HttpServerOptions http;  // /healthz, /readyz (public), /metrics
  // Extended resources that count as GPUs ('*' at the end: a prefix).
  std::vector<std::string> gpu_resources = {"amd.com/gpu", "nvidia.com/gpu",
                                            "nvidia.com/mig-*"};
  // Off: this replica always writes (one replica, or `lens up`).
  bool leader_election = true;
  KubeLeaderOptions leader;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// From the config's `controller:` and `database:` sections: the kubeconfig
// (or the in-cluster service account) is read here, so a bad file is an
// error before anything starts. Errors name the key and the file, never a
// token.
StatusOr<ControllerServiceOptions> ControllerServiceOptionsFromConfig(
    const Config& config);

// The running service. Thread-safe.
class ControllerService {
 public:
  // Opens the store (migrating it), connects the client, serves HTTP, then
  // elects and runs the controller on its own threads. Errors:
  // InvalidArgument/NotFound (options, credential files), the store's
  // errors (its URL named with the password redacted), Unavailable (cannot
  // listen; names the address). An unreachable API server is not an error:
  // the controller retries, and /readyz says 503 until it has synced.
  static StatusOr<std::unique_ptr<ControllerService>> Start(
      const ControllerServiceOptions& options);
  ~ControllerService();  // stops
  ControllerService(const ControllerService&) = delete;
  ControllerService& operator=(const ControllerService&) = delete;

  // Stops HTTP, the controller (writing what is queued while still
  // leading), then releases the Lease. Idempotent.
  void Stop();

  // Pods and nodes listed and (while leading) the store reconciled.
  bool Ready() const;
  bool IsLeader() const;
  std::string http_url() const;
  std::string database() const;  // the store's target, password redacted
  std::string server() const;    // the API server's URL

 private:
  ControllerService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_CONTROLLER_SERVICE_H_
