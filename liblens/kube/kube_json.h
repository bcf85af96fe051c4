// The API server's JSON, decoded where it enters: Status bodies, object
// metadata, list pages and watch events. RapidJSON stays inside the area.
#ifndef LENS_KUBE_KUBE_JSON_H_
#define LENS_KUBE_KUBE_JSON_H_

#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

#include "lens/kube.h"
#include "lens/status.h"

namespace lens {

// A metav1.Status (error bodies, watch ERROR events). Empty fields when the
// body is not one.
struct KubeStatusInfo {
  int code = 0;
  std::string reason;   // "Expired", "Conflict", "NotFound", ...
  std::string message;  // printable, at most 512 bytes
};
KubeStatusInfo ParseKubeStatus(std::string_view body);
KubeStatusInfo KubeStatusOf(const rapidjson::Value& status);

// The object's JSON text.
std::string KubeJsonText(const rapidjson::Value& object);

// uid, namespace, name and resourceVersion from `object`'s metadata;
// InvalidArgument when it has none or no name.
Status DecodeKubeMeta(const rapidjson::Value& object, KubeObject* out);

// One page of a list.
struct KubeListPage {
  std::string resource_version;
  std::string continue_token;
  std::vector<KubeObject> items;  // json filled
};
// InvalidArgument naming `where` for a body that is not a list.
StatusOr<KubeListPage> ParseKubeList(std::string_view body,
                                     std::string_view where);

enum class KubeWatchType { kAdded, kModified, kDeleted, kBookmark, kError };

struct KubeWatchEvent {
  KubeWatchType type = KubeWatchType::kAdded;
  KubeObject object;     // json filled except for bookmarks and errors
  KubeStatusInfo error;  // kError
};
// InvalidArgument for a line that is not a watch event (named by `where`).
StatusOr<KubeWatchEvent> ParseKubeWatchEvent(std::string_view line,
                                             std::string_view where);

}  // namespace lens

#endif  // LENS_KUBE_KUBE_JSON_H_
