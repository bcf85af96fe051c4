// KubeDiscovery: apiVersion/kind -> resource from the server's
// APIResourceList documents (/api/v1, /apis/<group>/<version>), fetched once
// per group/version (again after a minute for a kind not found).
// Subresources ("pods/status") are skipped.
#include <rapidjson/document.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "core/json_reader.h"
#include "kube/kube_json.h"
#include "lens/kube.h"

namespace lens {

struct KubeDiscovery::State {
  std::mutex mu;
  struct Entry {
    std::map<std::string, KubeResource> kinds;  // empty: not served
    std::chrono::steady_clock::time_point fetched;
  };
  // group/version -> its kinds. A kind missing from an entry is asked again
  // once the entry is older than kRefresh (a CRD installed since).
  std::map<std::string, Entry, std::less<>> by_group_version;  // GUARDED_BY(mu)
};

namespace {
constexpr std::chrono::seconds kRefresh{60};
}  // namespace

KubeDiscovery::KubeDiscovery(KubeClient* client)
    : client_(client), state_(std::make_unique<State>()) {}
KubeDiscovery::~KubeDiscovery() = default;

namespace {

StatusOr<std::map<std::string, KubeResource>> FetchGroupVersion(
    KubeClient* client, std::string_view api_version) {
  const size_t slash = api_version.find('/');
  KubeResource base;
  if (slash == std::string_view::npos) {
    base.version = std::string(api_version);
  } else {
    base.group = std::string(api_version.substr(0, slash));
    base.version = std::string(api_version.substr(slash + 1));
  }
  const std::string path = base.group.empty()
                               ? "/api/" + base.version
                               : "/apis/" + base.group + "/" + base.version;
  LENS_ASSIGN_OR_RETURN(KubeResponse r, client->Request("GET", path));
  std::map<std::string, KubeResource> kinds;
  if (r.status == 404) return kinds;
  if (r.status != 200) return KubeError("GET", client->server(), path, r);
  rapidjson::Document doc;
  doc.Parse(r.body.data(), r.body.size());
  const rapidjson::Value* resources =
      doc.IsObject() ? JsonMember(doc, "resources") : nullptr;
  if (!resources || !resources->IsArray()) {
    return InvalidArgumentError("GET " + client->server() + path +
                                ": not an APIResourceList");
  }
  for (const rapidjson::Value& entry : resources->GetArray()) {
    const rapidjson::Value* name = JsonMember(entry, "name");
    const rapidjson::Value* kind = JsonMember(entry, "kind");
    const rapidjson::Value* namespaced = JsonMember(entry, "namespaced");
    if (!name || !name->IsString() || !kind || !kind->IsString()) continue;
    std::string resource = name->GetString();
    if (resource.find('/') != std::string::npos) continue;  // subresource
    KubeResource r2 = base;
    r2.resource = std::move(resource);
    r2.kind = kind->GetString();
    r2.namespaced = namespaced && namespaced->IsBool() && namespaced->GetBool();
    kinds.emplace(r2.kind, std::move(r2));
  }
  return kinds;
}

}  // namespace

StatusOr<KubeResource> KubeDiscovery::ResourceFor(std::string_view api_version,
                                                  std::string_view kind) {
  if (api_version.empty() || kind.empty()) {
    return InvalidArgumentError("discovery: empty apiVersion or kind");
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  const auto now = std::chrono::steady_clock::now();
  auto gv = state_->by_group_version.find(api_version);
  if (gv == state_->by_group_version.end() ||
      (!gv->second.kinds.count(std::string(kind)) &&
       now - gv->second.fetched >= kRefresh)) {
    LENS_ASSIGN_OR_RETURN(auto kinds, FetchGroupVersion(client_, api_version));
    gv = state_->by_group_version
             .insert_or_assign(std::string(api_version),
                               State::Entry{std::move(kinds), now})
             .first;
  }
  auto it = gv->second.kinds.find(std::string(kind));
  if (it == gv->second.kinds.end()) {
    return NotFoundError("the API server serves no kind " + std::string(kind) +
                         " in " + std::string(api_version));
  }
  return it->second;
}

}  // namespace lens
