// lens-multicluster's model of the member clusters (docs/multicluster.md):
// which members there are (the clusters Secret: each data key a member's
// name, each value its kubeconfig), what each member's storage Secret said
// at the last read, and the cluster directory built from that
// (core/cluster_directory.h). No HTTP and no home cluster here: the service
// (service/multicluster_service.h) watches the clusters Secret, calls Refresh
// and publishes Directory().
//
//   MemberClusters members({.storage_secret = "lens-storage"});
//   members.SetMembers(*SecretData(secret_json, "Secret lens/lens-clusters"),
//                      "Secret lens/lens-clusters");
//   members.Refresh(std::chrono::system_clock::now());
//   auto yaml = RenderClusterDirectory(members.Directory());
//
// Credentials (kubeconfig tokens and keys, database passwords, Prometheus
// tokens) never appear in an error, a MemberStatus or a log line; only
// Directory() carries the storage Secret's values, for the output Secret.
#ifndef LENS_MULTICLUSTER_MULTICLUSTER_H_
#define LENS_MULTICLUSTER_MULTICLUSTER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_directory.h"
#include "lens/kube.h"
#include "lens/status.h"

namespace lens {

// A Secret's `data` (JSON text of a v1 Secret), each value base64-decoded.
// InvalidArgument naming `origin` and the key for a body that is not a
// Secret or a value that is not base64; never quoting a value. A Secret
// without data gives an empty map.
StatusOr<std::map<std::string, std::string>> SecretData(
    std::string_view secret_json, std::string_view origin);

// How members are read. Plain value.
struct MemberReadOptions {
  // Each member's storage Secret: keys databaseUrl (required),
  // prometheusUrl, prometheusToken.
  std::string storage_namespace = "lens";
  std::string storage_secret = "lens-storage";
  KubeClientOptions client;  // request_timeout bounds one read
};

// One member as last seen. Plain value; holds no credential.
struct MemberStatus {
  std::string name;
  std::string server;         // the API server, user information removed
  bool configured = false;    // its kubeconfig was usable
  bool up = false;            // the last read succeeded
  bool stale = false;         // in the directory with endpoints not re-read
  bool in_directory = false;  // read successfully at least once
  int64_t last_success_unix = 0;
  std::string error;  // why the last read (or the kubeconfig) failed
  // Reads by result: "ok", "error" (no answer or an error answer),
  // "invalid" (the storage Secret's content), "bad_kubeconfig".
  std::map<std::string, uint64_t> reads;
};

// The outcome of one member's read in a Refresh.
struct MemberRead {
  std::string name;
  Status status;        // no credential in the message
  bool was_up = false;  // before this read
};

// The member clusters and their last endpoints. Thread-safe: Refresh may run
// while SetMembers changes the set (a read of a member removed meanwhile is
// dropped, of one whose kubeconfig changed is discarded).
class MemberClusters {
 public:
  explicit MemberClusters(MemberReadOptions options);
  ~MemberClusters();
  MemberClusters(const MemberClusters&) = delete;
  MemberClusters& operator=(const MemberClusters&) = delete;

  // Replaces the members: name -> kubeconfig text (as SecretData gives).
  // Members no longer named are dropped at once with their endpoints; a
  // new member, or one whose kubeconfig changed, gets a new client (and
  // keeps its endpoints until it is read). A name that is not a DNS label
  // or a kubeconfig that cannot be used is kept as an unconfigured member
  // (reported in Members(), its last endpoints kept and marked stale).
  // Returns those problems, messages naming `origin` and the key.
  std::vector<Status> SetMembers(
      const std::map<std::string, std::string>& kubeconfigs,
      std::string_view origin);

  // Reads every member's storage Secret, members in parallel, each bounded
  // by the client's request_timeout. A success replaces the member's
  // endpoints (stale false; updated `now`, or kept when they are unchanged);
  // a failure keeps them, stale.
  std::vector<MemberRead> Refresh(std::chrono::system_clock::time_point now);

  // Members read successfully at least once, by name: what to publish.
  std::vector<ClusterEndpoints> Directory() const;
  // Every member, by name.
  std::vector<MemberStatus> Members() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_MULTICLUSTER_MULTICLUSTER_H_
