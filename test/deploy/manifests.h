// The manifests in deploy/ as the tests see them: rendered by `kubectl
// kustomize` (the one on the machine; scripts/install-deps.sh installs
// Debian's when there is none) and converted to JSON objects.
#ifndef LENS_TEST_DEPLOY_MANIFESTS_H_
#define LENS_TEST_DEPLOY_MANIFESTS_H_

#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "command.h"
#include "kube_schema.h"

namespace lens::test {

inline const char kDeployDir[] = LENS_SOURCE_DIR "/deploy";
// Every kustomization a user may apply.
inline const std::vector<std::string> kOverlays = {
    "base",
    "overlays/external-postgresql",
    "overlays/victoriametrics",
    "overlays/prometheus-operator",
    "overlays/fluent-bit",
    "overlays/multicluster"};
// Where the manifests say the image is (deploy/base/kustomization.yaml).
inline const char kImage[] = "ghcr.io/lens-observability/lens";

// The daemons this build made, by file name ("lens-jobs" -> its path), from
// LENS_DAEMON_FILES (their paths separated by ':'); missing files are left
// out.
inline std::map<std::string, std::string> DaemonFiles() {
  std::map<std::string, std::string> out;
  const std::string files = LENS_DAEMON_FILES;
  for (size_t start = 0; start < files.size();) {
    size_t end = files.find(':', start);
    if (end == std::string::npos) end = files.size();
    const std::filesystem::path path = files.substr(start, end - start);
    if (std::filesystem::exists(path)) {
      out[path.filename().string()] = path.string();
    }
    start = end + 1;
  }
  return out;
}

struct Rendered {
  std::vector<rapidjson::Document> objects;
  std::string error;  // empty when rendered
};

// `kubectl kustomize deploy/<overlay>`.
inline Rendered Render(const std::string& overlay) {
  Rendered out;
  const std::string kubectl = FindBinary("kubectl");
  if (kubectl.empty()) {
    out.error = "kubectl not found (scripts/install-deps.sh installs it)";
    return out;
  }
  auto run = RunCommand(
      {kubectl, "kustomize", std::string(kDeployDir) + "/" + overlay});
  if (!run.ok()) {
    out.error = run.status().message();
  } else if (run->wait_status != 0) {
    out.error = "kubectl kustomize " + overlay + ": " +
                Describe(run->wait_status) + ": " + run->err;
  } else {
    out.objects = YamlToJsonDocuments(run->out, &out.error);
  }
  return out;
}

// The string at a JSON pointer ("/metadata/name"), or "".
inline std::string Str(const rapidjson::Value& v, const char* pointer) {
  const rapidjson::Value* found = rapidjson::Pointer(pointer).Get(v);
  return found && found->IsString() ? found->GetString() : "";
}

// "Kind namespace/name", for messages.
inline std::string Describe(const rapidjson::Value& object) {
  return Str(object, "/kind") + " " + Str(object, "/metadata/namespace") + "/" +
         Str(object, "/metadata/name");
}

inline const rapidjson::Value* Find(const Rendered& r, const std::string& kind,
                                    const std::string& ns,
                                    const std::string& name) {
  for (const auto& o : r.objects) {
    if (Str(o, "/kind") == kind && Str(o, "/metadata/namespace") == ns &&
        Str(o, "/metadata/name") == name) {
      return &o;
    }
  }
  return nullptr;
}

inline std::vector<const rapidjson::Value*> OfKind(const Rendered& r,
                                                   const std::string& kind) {
  std::vector<const rapidjson::Value*> out;
  for (const auto& o : r.objects) {
    if (Str(o, "/kind") == kind) out.push_back(&o);
  }
  return out;
}

// The pod template of a workload (DaemonSet, Deployment, StatefulSet), or
// null for other kinds.
inline const rapidjson::Value* PodSpec(const rapidjson::Value& object) {
  const std::string kind = Str(object, "/kind");
  if (kind != "DaemonSet" && kind != "Deployment" && kind != "StatefulSet") {
    return nullptr;
  }
  return rapidjson::Pointer("/spec/template/spec").Get(object);
}

// Calls `fn(workload, pod spec, container)` for every container of every
// workload.
inline void ForEachContainer(
    const Rendered& r,
    const std::function<void(const rapidjson::Value&, const rapidjson::Value&,
                             const rapidjson::Value&)>& fn) {
  for (const auto& o : r.objects) {
    const rapidjson::Value* spec = PodSpec(o);
    if (!spec || !spec->HasMember("containers")) continue;
    for (const auto& c : (*spec)["containers"].GetArray()) fn(o, *spec, c);
  }
}

// Whether the container runs the Lens image.
inline bool IsLens(const rapidjson::Value& container) {
  return Str(container, "/image").rfind(std::string(kImage) + ":", 0) == 0;
}

}  // namespace lens::test

#endif  // LENS_TEST_DEPLOY_MANIFESTS_H_
