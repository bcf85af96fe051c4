// The cluster directory: where each cluster's Lens data lives (its store and
// its time-series endpoint). lens-multicluster writes it (into a Secret, key
// `clusters.yaml`; docs/multicluster.md) and lens-api reads it to serve the
// `cluster=` parameter of every route (`api.clustersFile`). It holds
// credentials (database URLs with passwords, bearer tokens), so it lives in
// Secrets only and nothing that prints an entry prints them.
//
//   clusters:
//   - name: us-east-1                    # [a-z0-9] and '-', unique
//     databaseUrl: postgresql://lens:secret@db.us-east-1:5432/lens
//     prometheusUrl: https://vm.us-east-1.example.com   # optional
//     prometheusToken: "..."                            # optional
//     stale: false      # true: the member did not answer at the last read
//     updated: 1764122400  # Unix seconds of the read that found these
//                          # endpoints (re-reads that find the same keep it)
#ifndef LENS_CORE_CLUSTER_DIRECTORY_H_
#define LENS_CORE_CLUSTER_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

// Whether `name` can name a cluster: a DNS label (a-z, 0-9, '-' inside, at
// most 63).
bool IsClusterName(std::string_view name);

struct ClusterEndpoints {
  std::string name;
  std::string database_url;
  std::string prometheus_url;
  std::string prometheus_token;
  bool stale = false;
  int64_t updated_unix = 0;

  // InvalidArgument naming the field: a name that is not a DNS label, an
  // empty or non-sqlite/postgresql database URL, a non-http(s) Prometheus
  // URL. Messages never contain a URL or token.
  Status Validate() const;
  friend bool operator==(const ClusterEndpoints&,
                         const ClusterEndpoints&) = default;
};

// The YAML text above, entries in the given order. Every entry must be valid
// and names unique (InvalidArgument naming the entry otherwise).
StatusOr<std::string> RenderClusterDirectory(
    const std::vector<ClusterEndpoints>& clusters);

// Parses that text (at most 1 MiB). InvalidArgument naming the entry and
// field, never echoing a value: unknown keys, duplicate names, bad entries.
StatusOr<std::vector<ClusterEndpoints>> ParseClusterDirectory(
    std::string_view text);

}  // namespace lens

#endif  // LENS_CORE_CLUSTER_DIRECTORY_H_
