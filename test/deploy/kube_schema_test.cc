// The schema validator of the deploy/ manifest tests, against the vendored
// Kubernetes 1.36 and monitoring CRD schemas (test/fixtures/kube-openapi/).
#include "kube_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace lens::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDeployment[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: lens-api
  namespace: lens
  creationTimestamp: null
  labels: {app.kubernetes.io/name: lens-api}
spec:
  replicas: 2
  selector:
    matchLabels: {app.kubernetes.io/name: lens-api}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: "25%"}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: lens-api}
    spec:
      serviceAccountName: lens-api
      containers:
      - name: api
        image: ghcr.io/example/lens:1.0.0
        args: ["--listen=:8080"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /healthz, port: http}
        livenessProbe:
          httpGet: {path: /healthz, port: 8080}
        resources:
          requests: {cpu: 1, memory: 256Mi}
          limits: {cpu: "2", memory: 1.5Gi, nvidia.com/gpu: 0}
)";

constexpr char kOthers[] = R"(---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: lens-agent, namespace: lens}
spec:
  selector: {matchLabels: {app: lens-agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 10%}}
  template:
    metadata: {labels: {app: lens-agent}}
    spec:
      hostPID: true
      tolerations: [{operator: Exists}]
      containers:
      - name: agent
        image: ghcr.io/example/lens-agent:1.0.0
        securityContext: {privileged: true}
        volumeMounts: [{name: sys, mountPath: /host/sys, readOnly: true}]
      volumes: [{name: sys, hostPath: {path: /sys}}]
---
apiVersion: v1
kind: Service
metadata: {name: lens-api, namespace: lens}
spec:
  selector: {app.kubernetes.io/name: lens-api}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: grpc, port: 9090, targetPort: grpc}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lens-leader, namespace: lens}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: lens-api, namespace: lens}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: lens-api}}
  policyTypes: [Ingress]
  ingress:
  - ports: [{port: 8080, protocol: TCP}, {port: http}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: lens-api, namespace: lens}
spec:
  minAvailable: 1
  selector: {matchLabels: {app.kubernetes.io/name: lens-api}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: lens-api, namespace: lens, labels: {release: prometheus}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: lens-api}}
  endpoints: [{port: http, path: /metrics, interval: 30s}]
---
apiVersion: operator.victoriametrics.com/v1beta1
kind: VMServiceScrape
metadata: {name: lens-api, namespace: lens}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: lens-api}}
  endpoints: [{port: http, path: /metrics, interval: 30s}]
)";

class KubeSchemaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    schemas_ = new std::optional<KubeSchemas>(
        KubeSchemas::Load(LENS_KUBE_OPENAPI_DIR, &error));
    ASSERT_TRUE(schemas_->has_value()) << error;
  }
  static void TearDownTestSuite() { delete schemas_; }

  static std::vector<rapidjson::Document> Yaml(const std::string& yaml) {
    std::string error;
    std::vector<rapidjson::Document> docs = YamlToJsonDocuments(yaml, &error);
    EXPECT_EQ(error, "");
    return docs;
  }
  // The problems of the one object in `yaml`.
  static std::vector<std::string> Problems(const std::string& yaml) {
    std::vector<rapidjson::Document> docs = Yaml(yaml);
    if (docs.size() != 1) return {"expected one document"};
    return (*schemas_)->Validate(docs[0]);
  }
  static std::string Edited(const std::string& from, const std::string& to) {
    std::string yaml = kDeployment;
    const size_t at = yaml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? yaml : yaml.replace(at, from.size(), to);
  }

  static std::optional<KubeSchemas>* schemas_;
};

std::optional<KubeSchemas>* KubeSchemaTest::schemas_ = nullptr;

TEST_F(KubeSchemaTest, KnowsTheVendoredKinds) {
  const KubeSchemas& s = **schemas_;
  EXPECT_TRUE(s.Knows("v1", "Namespace"));
  EXPECT_TRUE(s.Knows("v1", "PersistentVolumeClaim"));
  EXPECT_TRUE(s.Knows("apps/v1", "StatefulSet"));
  EXPECT_TRUE(s.Knows("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"));
  EXPECT_TRUE(s.Knows("monitoring.coreos.com/v1", "PodMonitor"));
  EXPECT_TRUE(s.Knows("operator.victoriametrics.com/v1beta1", "VMPodScrape"));
  EXPECT_FALSE(s.Knows("apps/v1beta1", "Deployment"));
  EXPECT_FALSE(s.Knows("v1", "Pod"));
}

TEST_F(KubeSchemaTest, AcceptsValidObjects) {
  EXPECT_THAT(Problems(kDeployment), IsEmpty());
  std::vector<rapidjson::Document> docs = Yaml(kOthers);
  ASSERT_EQ(docs.size(), 7u);
  for (const rapidjson::Document& doc : docs) {
    EXPECT_THAT((*schemas_)->Validate(doc), IsEmpty())
        << doc["kind"].GetString();
  }
}

TEST_F(KubeSchemaTest, ReportsUnknownFieldWithItsPointer) {
  EXPECT_THAT(
      Problems(Edited("readinessProbe:", "readinessProb:")),
      ElementsAre("Deployment lens/lens-api: /spec/template/spec/containers/0: "
                  "unknown field \"readinessProb\""));
  EXPECT_THAT(
      Problems(Edited("spec:\n  replicas", "spec:\n  replica")),
      ElementsAre(
          "Deployment lens/lens-api: /spec: unknown field \"replica\""));
}

TEST_F(KubeSchemaTest, ReportsWrongType) {
  EXPECT_THAT(
      Problems(Edited("replicas: 2", "replicas: two")),
      ElementsAre(
          "Deployment lens/lens-api: /spec/replicas: got string \"two\", "
          "want integer"));
}

TEST_F(KubeSchemaTest, ReportsMissingRequiredField) {
  EXPECT_THAT(
      Problems(Edited("- name: api\n        image", "- image")),
      ElementsAre("Deployment lens/lens-api: /spec/template/spec/containers/0: "
                  "missing required field \"name\""));
}

TEST_F(KubeSchemaTest, ReportsEveryProblemOfAnObject) {
  std::string yaml = Edited("replicas: 2", "replicas: \"2\"");
  for (auto [from, to] : {std::pair<std::string, std::string>{
                              "- name: api\n        image", "- image"},
                          {"livenessProbe", "livenesProbe"},
                          {"cpu: \"2\"", "cpu: [2]"}}) {
    yaml.replace(yaml.find(from), from.size(), to);
  }
  EXPECT_THAT(
      Problems(yaml),
      ElementsAre(HasSubstr("/spec/replicas: got string \"2\""),
                  "Deployment lens/lens-api: /spec/template/spec/containers/0: "
                  "missing required field \"name\"",
                  HasSubstr("/spec/template/spec/containers/0: unknown field "
                            "\"livenesProbe\""),
                  HasSubstr("/spec/template/spec/containers/0/resources/limits/"
                            "cpu: got array")));
}

TEST_F(KubeSchemaTest, AcceptsNumericPortsAndQuantities) {
  EXPECT_THAT(Problems(Edited("port: http}", "port: 8080}")), IsEmpty());
  EXPECT_THAT(Problems(Edited("cpu: 1,", "cpu: 0.5,")), IsEmpty());
  EXPECT_THAT(
      Problems(Edited("cpu: 1,", "cpu: true,")),
      ElementsAre(HasSubstr("/resources/requests/cpu: got boolean true")));
  EXPECT_THAT(
      Problems(Edited("port: http}", "port: [1]}")),
      ElementsAre(HasSubstr("/readinessProbe/httpGet/port: got array")));
}

TEST_F(KubeSchemaTest, ChecksCustomResourcesAndTheirMetadata) {
  std::vector<rapidjson::Document> docs = Yaml(R"(
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: a, namespace: lens, labels: {release: 1}}
spec:
  selector: {}
  endpoints: [{prot: http, scheme: gopher, interval: often}]
---
apiVersion: operator.victoriametrics.com/v1beta1
kind: VMServiceScrape
metadata: {name: b, namespace: lens, label: {}}
spec:
  selector: {matchLabels: {}}
  endpoints: [{port: 8080}]
)");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_THAT(
      (*schemas_)->Validate(docs[0]),
      ElementsAre(
          "ServiceMonitor lens/a: /metadata/labels/release: got integer 1, "
          "want string",
          "ServiceMonitor lens/a: /spec/endpoints/0: unknown field \"prot\"",
          HasSubstr("/spec/endpoints/0/interval: \"often\" fails \"pattern\""),
          HasSubstr("/spec/endpoints/0/scheme: \"gopher\" is not one of")));
  EXPECT_THAT(
      (*schemas_)->Validate(docs[1]),
      ElementsAre(
          "VMServiceScrape lens/b: /metadata: unknown field \"label\"",
          "VMServiceScrape lens/b: /spec/endpoints/0/port: got integer 8080, "
          "want string"));
}

TEST_F(KubeSchemaTest, ReportsUnknownKinds) {
  std::vector<rapidjson::Document> docs = Yaml(
      "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n"
      "kind: Deployment\nmetadata: {name: d, namespace: lens}\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_THAT((*schemas_)->Validate(docs[0]),
              ElementsAre("Widget w: no schema for apiVersion "
                          "\"example.com/v1\" kind \"Widget\""));
  EXPECT_THAT((*schemas_)->Validate(docs[1]),
              ElementsAre("Deployment lens/d: no apiVersion or kind"));
}

TEST(YamlToJsonDocumentsTest, ResolvesPlainScalarsByTheCoreSchema) {
  std::string error;
  std::vector<rapidjson::Document> docs = YamlToJsonDocuments(
      "---\n---\na: \"8080\"\nb: 8080\nc: true\nd: 'true'\ne: ~\n"
      "f: 1.5\ng: 0x1F\nh: 1e3\ni: 8080a\nj: |\n  12\nk: !!str 7\n"
      "l: -3\nm: yes\nn: [1, \"1\"]\no:\np: -.inf\n",
      &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(docs.size(), 1u);
  const rapidjson::Document& d = docs[0];
  EXPECT_STREQ(d["a"].GetString(), "8080");
  ASSERT_TRUE(d["b"].IsInt());
  EXPECT_EQ(d["b"].GetInt(), 8080);
  EXPECT_TRUE(d["c"].IsTrue());
  EXPECT_STREQ(d["d"].GetString(), "true");
  EXPECT_TRUE(d["e"].IsNull());
  EXPECT_DOUBLE_EQ(d["f"].GetDouble(), 1.5);
  EXPECT_EQ(d["g"].GetInt(), 31);
  EXPECT_DOUBLE_EQ(d["h"].GetDouble(), 1000);
  EXPECT_STREQ(d["i"].GetString(), "8080a");
  EXPECT_STREQ(d["j"].GetString(), "12\n");
  EXPECT_STREQ(d["k"].GetString(), "7");
  EXPECT_EQ(d["l"].GetInt(), -3);
  EXPECT_STREQ(d["m"].GetString(),
               "yes");  // YAML 1.1's boolean, a string in 1.2.
  EXPECT_TRUE(d["n"][0].IsInt());
  EXPECT_TRUE(d["n"][1].IsString());
  EXPECT_TRUE(d["o"].IsNull());
  EXPECT_TRUE(d["p"].IsDouble() && std::isinf(d["p"].GetDouble()));
}

TEST(YamlToJsonDocumentsTest, ReportsErrorsWithTheLine) {
  std::string error;
  EXPECT_THAT(YamlToJsonDocuments("a: 1\nb: 2\na: 3\n", &error), IsEmpty());
  EXPECT_EQ(error, "line 3: duplicate key \"a\"");
  EXPECT_THAT(YamlToJsonDocuments("a: [1, 2\nb: 3\n", &error), IsEmpty());
  EXPECT_THAT(error, HasSubstr("line"));
}

TEST(KubeSchemasLoadTest, NamesTheFileOrDirectoryThatFails) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "kube_schema_load_test";
  fs::remove_all(dir);
  std::string error;
  EXPECT_FALSE(KubeSchemas::Load(dir.string(), &error).has_value());
  EXPECT_THAT(error, HasSubstr(dir.string()));

  fs::create_directories(dir);
  std::ofstream(dir / "a.json")
      << R"({"definitions": {"x": {"$ref": "#/definitions/y"}}})";
  EXPECT_FALSE(KubeSchemas::Load(dir.string(), &error).has_value());
  EXPECT_EQ(error, "a.json: x refers to #/definitions/y, which no file in " +
                       dir.string() + " defines");

  std::ofstream(dir / "b.json")
      << R"({"definitions": {"y": {"type": "string"},)";
  EXPECT_FALSE(KubeSchemas::Load(dir.string(), &error).has_value());
  EXPECT_THAT(error, HasSubstr((dir / "b.json").string() + ": offset"));

  std::ofstream(dir / "b.json")
      << R"({"definitions": {"y": {"type": "string"}}})";
  EXPECT_TRUE(KubeSchemas::Load(dir.string(), &error).has_value()) << error;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lens::test
