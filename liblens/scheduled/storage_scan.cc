// The storage scan: CSI drivers and PersistentVolumes from the API server,
// and the configured mount points from statfs, as `storage` rows.
#include "scheduled/storage_scan.h"

#include <rapidjson/document.h>
#include <sys/statvfs.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "controller/pod_model.h"
#include "core/json.h"
#include "core/json_reader.h"

namespace lens::scheduled {
namespace {

constexpr int kPageSize = 500;
// More objects than any real cluster has: a server (or proxy) that keeps
// answering is stopped here rather than filling memory.
constexpr size_t kMaxObjects = 100000;
constexpr char kCsiDrivers[] = "/apis/storage.k8s.io/v1/csidrivers";
constexpr char kPersistentVolumes[] = "/api/v1/persistentvolumes";
// The PV that predates spec.storageClassName (still honoured by Kubernetes).
constexpr char kBetaClassAnnotation[] =
    "volume.beta.kubernetes.io/storage-class";

// The fields of a CSIDriver's spec that are copied (all others, tokenRequests
// among them, are dropped).
constexpr const char* kCsiDriverFields[] = {"attachRequired", "podInfoOnMount",
                                            "volumeLifecycleModes",
                                            "fsGroupPolicy"};

// The volume sources of core/v1 PersistentVolumeSpec (k8s.io/api v0.31); the
// first one present is a volume's kind. "csi" is handled on its own.
// clang-format off
constexpr const char* kVolumeSources[] = {
    "nfs", "cephfs", "local", "hostPath", "iscsi", "rbd", "glusterfs", "fc",
    "azureFile", "azureDisk", "awsElasticBlockStore", "gcePersistentDisk",
    "cinder", "flexVolume", "flocker", "portworxVolume", "quobyte", "scaleIO",
    "storageos", "vsphereVolume", "photonPersistentDisk"};
// clang-format on

// The object member `key` of `object` (may be null), or nullptr.
const rapidjson::Value* ObjectAt(const rapidjson::Value* object,
                                 const char* key) {
  if (!object || !object->IsObject()) return nullptr;
  const rapidjson::Value* v = JsonMember(*object, key);
  return v && v->IsObject() ? v : nullptr;
}

// The string member `key` of `object` (may be null), or "".
std::string StringAt(const rapidjson::Value* object, const char* key) {
  return object ? JsonString(*object, key) : std::string();
}

std::string NameOf(const rapidjson::Value& object) {
  return StringAt(ObjectAt(&object, "metadata"), "name");
}

// Lists `collection` page by page, calling `on_item` with each item.
Status ListAll(KubeClient* client, const std::string& collection,
               SteadyTime deadline,
               const std::function<Status(const rapidjson::Value&)>& on_item) {
  std::string token;
  size_t count = 0;
  do {
    if (std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceededError("list " + collection +
                                   ": past the scan's deadline");
    }
    std::string path = collection + "?limit=" + std::to_string(kPageSize);
    if (!token.empty()) path += "&continue=" + KubeQueryEscape(token);
    LENS_ASSIGN_OR_RETURN(KubeResponse r, client->Request("GET", path));
    if (r.status < 200 || r.status >= 300) {
      return KubeError("GET", client->server(), path, r);
    }
    rapidjson::Document doc;
    doc.Parse(r.body.data(), r.body.size());
    const rapidjson::Value* items = !doc.HasParseError() && doc.IsObject()
                                        ? JsonMember(doc, "items")
                                        : nullptr;
    if (!items || !items->IsArray()) {
      return InvalidArgumentError("GET " + path + ": not a list");
    }
    count += items->Size();
    if (count > kMaxObjects) {
      return ResourceExhaustedError("list " + collection + ": more than " +
                                    std::to_string(kMaxObjects) + " objects");
    }
    for (const auto& item : items->GetArray()) {
      if (item.IsObject()) LENS_RETURN_IF_ERROR(on_item(item));
    }
    token = StringAt(ObjectAt(&doc, "metadata"), "continue");
  } while (!token.empty());
  return OkStatus();
}

// Whether a whitelisted field has the type the API gives it (a bool, a
// string, or a list of strings), so nothing nested is ever copied.
bool IsPlain(const rapidjson::Value& v) {
  if (!v.IsArray()) return v.IsBool() || v.IsString();
  for (const auto& e : v.GetArray()) {
    if (!e.IsString()) return false;
  }
  return true;
}

// The PersistentVolumes of one storage class.
struct ClassStats {
  std::string kind;  // of the first volume seen
  int64_t volumes = 0;
  int64_t bound = 0;
  int64_t capacity_bytes = 0;
  bool failed = false;
  std::set<std::string> nfs_servers;
};

// Adds a PersistentVolume to its class and counts it for its CSI driver.
Status AddVolume(const rapidjson::Value& pv,
                 std::map<std::string, ClassStats>* classes,
                 std::map<std::string, int64_t>* volumes_by_driver) {
  const rapidjson::Value* spec = ObjectAt(&pv, "spec");
  if (!spec) return OkStatus();
  std::string class_name = StringAt(spec, "storageClassName");
  if (class_name.empty()) {
    class_name = StringAt(ObjectAt(ObjectAt(&pv, "metadata"), "annotations"),
                          kBetaClassAnnotation);
  }
  ClassStats& c = (*classes)[class_name.empty() ? "(none)" : class_name];
  std::string kind = StringAt(ObjectAt(spec, "csi"), "driver");
  if (!kind.empty()) ++(*volumes_by_driver)[kind];
  for (const char* source : kVolumeSources) {
    if (!kind.empty()) break;
    if (JsonMember(*spec, source)) kind = source;
  }
  if (c.kind.empty()) c.kind = kind.empty() ? "unknown" : kind;
  ++c.volumes;
  if (std::string server = StringAt(ObjectAt(spec, "nfs"), "server");
      !server.empty()) {
    c.nfs_servers.insert(std::move(server));
  }
  if (std::string storage = StringAt(ObjectAt(spec, "capacity"), "storage");
      !storage.empty()) {
    auto bytes = controller::ParseQuantity(storage);
    if (!bytes.ok()) {
      return InvalidArgumentError(
          "persistentvolume " + NameOf(pv) +
          ": spec.capacity.storage: " + bytes.status().message());
    }
    c.capacity_bytes =
        *bytes > std::numeric_limits<int64_t>::max() - c.capacity_bytes
            ? std::numeric_limits<int64_t>::max()
            : c.capacity_bytes + *bytes;
  }
  const std::string phase = StringAt(ObjectAt(&pv, "status"), "phase");
  if (phase == "Bound") ++c.bound;
  if (phase == "Failed") c.failed = true;
  return OkStatus();
}

StorageRecord Row(std::string name, std::string kind, std::string status,
                  std::string config, Timestamp now) {
  return StorageRecord{.name = std::move(name),
                       .kind = std::move(kind),
                       .status = std::move(status),
                       .config_json = std::move(config),
                       .updated_at = now};
}

StorageRecord ClassRow(const std::string& name, const ClassStats& c,
                       Timestamp now) {
  JsonWriter w;
  w.StartObject();
  w.Key("volumes");
  w.Int64(c.volumes);
  w.Key("bound");
  w.Int64(c.bound);
  w.Key("capacity_bytes");
  w.Int64(c.capacity_bytes);
  if (!c.nfs_servers.empty()) {
    w.Key("nfs_servers");
    w.StartArray();
    for (const std::string& s : c.nfs_servers) {
      w.String(s);
    }
    w.EndArray();
  }
  w.EndObject();
  return Row("class:" + name, c.kind, c.failed ? "Degraded" : "Available",
             w.Take(), now);
}

StorageRecord CsiDriverRow(const std::string& name,
                           const rapidjson::Value& driver, int64_t volumes,
                           Timestamp now) {
  JsonWriter w;
  w.StartObject();
  const rapidjson::Value* spec = ObjectAt(&driver, "spec");
  for (const char* key : kCsiDriverFields) {
    const rapidjson::Value* v = spec ? JsonMember(*spec, key) : nullptr;
    if (!v || !IsPlain(*v)) continue;
    w.Key(key);
    WriteJsonValue(*v, &w);
  }
  w.Key("volumes");
  w.Int64(volumes);
  w.EndObject();
  return Row("csi:" + name, "csi", "Available", w.Take(), now);
}

StorageRecord MountRow(const StorageMount& mount, Timestamp now) {
  JsonWriter w;
  w.StartObject();
  w.Key("path");
  w.String(mount.path);
  struct statvfs fs {};
  if (::statvfs(mount.path.c_str(), &fs) != 0) {
    const std::string why = std::strerror(errno);
    w.EndObject();
    return Row(mount.name, mount.kind, "Unavailable: " + why, w.Take(), now);
  }
  const uint64_t block = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
  w.Key("capacity_bytes");
  w.Uint64(fs.f_blocks * block);
  w.Key("used_bytes");
  w.Uint64((fs.f_blocks - fs.f_bfree) * block);
  w.Key("available_bytes");
  w.Uint64(fs.f_bavail * block);
  w.EndObject();
  return Row(mount.name, mount.kind, "Healthy", w.Take(), now);
}

// The CSI driver and storage class rows.
Status ScanCluster(KubeClient* client, Timestamp now, SteadyTime deadline,
                   std::vector<StorageRecord>* out) {
  // The volumes first, so that each driver's row can count its own.
  std::map<std::string, ClassStats> classes;
  std::map<std::string, int64_t> volumes_by_driver;
  LENS_RETURN_IF_ERROR(ListAll(
      client, kPersistentVolumes, deadline, [&](const rapidjson::Value& pv) {
        return AddVolume(pv, &classes, &volumes_by_driver);
      }));
  LENS_RETURN_IF_ERROR(
      ListAll(client, kCsiDrivers, deadline, [&](const rapidjson::Value& d) {
        if (std::string name = NameOf(d); !name.empty()) {
          out->push_back(CsiDriverRow(name, d, volumes_by_driver[name], now));
        }
        return OkStatus();
      }));
  for (const auto& [name, stats] : classes) {
    out->push_back(ClassRow(name, stats, now));
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<StorageRecord>> ScanStorage(
    KubeClient* client, std::span<const StorageMount> mounts, Timestamp now,
    SteadyTime deadline) {
  std::vector<StorageRecord> out;
  if (client) {
    LENS_RETURN_IF_ERROR(
        ScanCluster(client, now, deadline, &out).WithContext("storage scan"));
  }
  for (const StorageMount& mount : mounts) out.push_back(MountRow(mount, now));
  return out;
}

}  // namespace lens::scheduled
