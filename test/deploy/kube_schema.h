// Validation of Kubernetes objects against vendored OpenAPI schemas, for the
// tests of the manifests in deploy/ (test/fixtures/kube-openapi/README.md says
// where the schemas come from).
#ifndef LENS_TEST_DEPLOY_KUBE_SCHEMA_H_
#define LENS_TEST_DEPLOY_KUBE_SCHEMA_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rapidjson/document.h"

namespace lens::test {

// The object schemas of a set of API kinds, strict like kubeconform --strict:
// an unknown field is an error. Each kind's schema is compiled on first use and
// kept. Thread safety: const methods may be called from any number of threads.
class KubeSchemas {
 public:
  // Loads every `*.json` in `dir`: files of the form {"definitions": {<name>:
  // <schema>}} in which the schemas of API kinds carry
  // `x-kubernetes-group-version-kind`. Definitions of all files share one
  // namespace, so one file's schemas may `$ref` another's. On failure returns
  // nullopt and sets `*error` to a message that names the file.
  static std::optional<KubeSchemas> Load(const std::string& dir,
                                         std::string* error);

  KubeSchemas(KubeSchemas&&) noexcept;
  KubeSchemas& operator=(KubeSchemas&&) noexcept;
  ~KubeSchemas();

  // Whether a schema for `api_version` ("v1", "apps/v1") and `kind` was loaded.
  bool Knows(const std::string& api_version, const std::string& kind) const;

  // Validates one object (a JSON object with apiVersion and kind). Returns
  // nothing when it is valid, else one line per problem: "<kind>
  // <namespace>/<name>: <pointer>: <what>", e.g. `Deployment lens/lens-api:
  // /spec/template/spec/containers/0: unknown field "readinessProb"`. An object
  // of a kind without schema is one problem. RapidJSON stops at the first
  // problem, so after each one the object is repaired (the unknown field
  // dropped, a missing or wrong value replaced by a placeholder) and validated
  // again, at most 50 times.
  std::vector<std::string> Validate(const rapidjson::Value& object) const;

 private:
  struct Impl;
  explicit KubeSchemas(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Converts a YAML stream of one or more documents (as `kubectl kustomize`
// prints it) to JSON documents; empty documents are skipped. Quoted and block
// scalars are strings; plain scalars are null, bool, integer or float where the
// YAML 1.2 core schema says so, else strings. Explicit `!!str` tags are
// strings. On a YAML error or a duplicate mapping key returns nothing and sets
// `*error` to a message with the line number.
std::vector<rapidjson::Document> YamlToJsonDocuments(const std::string& yaml,
                                                     std::string* error);

}  // namespace lens::test

#endif  // LENS_TEST_DEPLOY_KUBE_SCHEMA_H_
