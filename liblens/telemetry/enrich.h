// Enrichment of remote-write series in flight: a selected series that
// identifies a pod (namespace + pod labels) or a device (node + GPU index,
// serial, BDF or UUID labels; node + RDMA device name) gains workload_uid,
// workload_name, workload_kind, workload_namespace and pod_uid, from the owner
// that held it at each sample's own timestamp. Samples with different owners go
// to separate series (split where the owner changed); samples with none keep
// the series as it came. Labels are added in place and kept sorted; nothing
// is copied unless asked (compat_names: also the original's
// `workload_<name>` copy of each enriched series).
#ifndef LENS_TELEMETRY_ENRICH_H_
#define LENS_TELEMETRY_ENRICH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/ownership.h"
#include "telemetry/remote_write.h"
#include "telemetry/series_labels.h"

namespace lens::telemetry {

struct EnrichOptions {
  // The series looked at and their identity labels; an RDMA device's name
  // is held in the index as "rdma:<name>".
  SeriesIdentityLabels series;
  bool compat_names = false;
};

// What one request's enrichment did.
struct EnrichStats {
  uint64_t series_in = 0;
  uint64_t samples_in = 0;
  uint64_t samples_enriched = 0;  // got workload labels
  uint64_t series_split = 0;      // series whose samples had several owners
  uint64_t series_out = 0;
};

// Enriches `request` into `out` (appended; Finish() it to send) against
// `index` (samples with no owner there pass unchanged). Not thread-safe per
// object; one per worker.
class Enricher {
 public:
  explicit Enricher(EnrichOptions options);
  EnrichStats Enrich(const RemoteWriteRequest& request,
                     const OwnershipIndex& index, RemoteWriteEncoder* out);

 private:
  EnrichOptions options_;
  // Scratch reused across series.
  std::vector<const Owner*> owners_;
  std::vector<WireLabel> labels_;
  std::string compat_name_;
  std::string bdf_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_ENRICH_H_
