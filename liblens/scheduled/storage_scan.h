// The storage scan: which storage systems the cluster uses (its CSI drivers
// and PersistentVolumes from the API server, and the mount points named in
// the config) with their capacity, usage and health, as `storage` rows.
// Never a credential: only whitelisted fields of the API objects are kept
// (secret references are not even named).
#ifndef LENS_SCHEDULED_STORAGE_SCAN_H_
#define LENS_SCHEDULED_STORAGE_SCAN_H_

#include <span>
#include <vector>

#include "lens/kube.h"
#include "lens/model.h"
#include "lens/status.h"
#include "scheduled/jobs.h"
#include "scheduled/scheduler.h"

namespace lens::scheduled {

// One row per CSI driver (name "csi:<driver>", kind "csi"), per storage
// class of the PersistentVolumes (name "class:<class>", kind from the
// volumes' source: the CSI driver, "nfs", "cephfs", "local", "hostPath",
// ...; config_json: volumes, bound volumes, capacity bytes) and per mount
// (name and kind from the config; status "Healthy" with capacity, used and
// available bytes from statfs, or "Unavailable: <why>"). `client` null: the
// mounts only. Errors: the API server's (a list that fails), never a
// mount's (that is its row's status). Stops listing past `deadline`
// (DeadlineExceeded).
StatusOr<std::vector<StorageRecord>> ScanStorage(
    KubeClient* client, std::span<const StorageMount> mounts, Timestamp now,
    SteadyTime deadline);

}  // namespace lens::scheduled

#endif  // LENS_SCHEDULED_STORAGE_SCAN_H_
