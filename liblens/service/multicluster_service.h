// lens-multicluster composed once (docs/multicluster.md): the home
// cluster's client, a watch on the clusters Secret, the member clusters
// (multicluster/multicluster.h) read every refresh, the cluster directory
// published into the output Secret by the leader of a Lease, and /healthz,
// /readyz and /metrics over HTTP, from one options struct and that struct from
// the config (`multiCluster:`).
//
//   GET /healthz   public
//   GET /readyz    public: 200 once the leader published (a follower: once
//                  it has read the clusters Secret)
//   GET /metrics   lens_multicluster_* (docs/multicluster.md), lens_http_*
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::MultiClusterServiceOptionsFromConfig(*config);
//   auto service = lens::MultiClusterService::Start(*options);
//   ...
//   (*service)->Stop();
#ifndef LENS_SERVICE_MULTICLUSTER_SERVICE_H_
#define LENS_SERVICE_MULTICLUSTER_SERVICE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "http/http.h"
#include "lens/kube.h"
#include "lens/status.h"
#include "multicluster/multicluster.h"
#include "service/config.h"

namespace lens {

// What a MultiClusterService runs. Plain value (the connection holds
// credentials: never log it).
struct MultiClusterServiceOptions {
  KubeConnection home;       // where the clusters and output Secrets live
  KubeClientOptions client;  // home and members alike
  std::string namespace_name = "lens";
  std::string clusters_secret = "lens-clusters";
  std::string output_secret = "lens-clusters-config";
  MemberReadOptions members;  // its `client` is replaced by `client`
  // Between reads of every member; at least 50ms (the config asks >= 1s).
  std::chrono::milliseconds refresh{30000};
  // Off: this replica always publishes (one replica).
  bool leader_election = true;
  KubeLeaderOptions leader;
  HttpServerOptions http;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// From the config's `multiCluster:` section: the home kubeconfig (or the
// in-cluster service account) and the bearer token file are read here, so
// a bad file is an error before anything starts. Errors name the key and
// the file, never a token.
StatusOr<MultiClusterServiceOptions> MultiClusterServiceOptionsFromConfig(
    const Config& config);

// The running service. Thread-safe.
class MultiClusterService {
 public:
  // Connects to the home cluster, serves HTTP, then watches, reads and
  // publishes on its own threads. Errors: InvalidArgument/NotFound
  // (options, credential files), Unavailable (cannot listen; names the
  // address). An unreachable home or member cluster is not an error: the
  // service retries, and /readyz answers 503 until its first publish.
  static StatusOr<std::unique_ptr<MultiClusterService>> Start(
      const MultiClusterServiceOptions& options);
  ~MultiClusterService();  // stops
  MultiClusterService(const MultiClusterService&) = delete;
  MultiClusterService& operator=(const MultiClusterService&) = delete;

  // Stops HTTP, the watch and the reads, then releases the Lease.
  // Idempotent.
  void Stop();

  // The output Secret has been written (or found current) at least once.
  bool Published() const;
  bool IsLeader() const;
  // The members as last seen (no credential in them).
  std::vector<MemberStatus> Members() const;
  std::string http_url() const;

 private:
  MultiClusterService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_MULTICLUSTER_SERVICE_H_
