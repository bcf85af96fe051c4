// The manifests in deploy/: every kustomization renders, every object
// validates against the Kubernetes 1.36 schema (strict: unknown fields fail),
// and what the objects say of each other and of Lens holds: images and
// commands, ports, probes and Services, Secrets and ConfigMaps, Pod Security.
#include "manifests.h"

#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "lens/version.h"
#include "service/config.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using rapidjson::Value;

// The keys of the Secrets the user creates (docs/deploy.md).
const std::map<std::string, std::set<std::string>> kSecretKeys = {
    {"lens-tokens",
     {"node", "jobs", "controller", "telemetry", "api", "multicluster"}},
    {"lens-database", {"url", "password"}},
    // scripts/make-node-certs.sh (or cert-manager): the node daemons'
    // certificate, and its CA for their clients in `lens`.
    {"lens-node-tls", {"ca.crt", "tls.crt", "tls.key"}},
    {"lens-node-ca", {"ca.crt"}},
    // Published by lens-multicluster, mounted by lens-api.
    {"lens-clusters-config", {"clusters.yaml"}}};

// The Secret mounted where `path` is in the container ("" for none).
std::string SecretAt(const Value& spec, const Value& container,
                     const std::string& path) {
  if (!container.HasMember("volumeMounts")) return "";
  for (const auto& m : container["volumeMounts"].GetArray()) {
    const std::string at = Str(m, "/mountPath") + "/";
    if (path.rfind(at, 0) != 0) continue;
    for (const auto& v : spec["volumes"].GetArray()) {
      if (v["name"] == m["name"]) return Str(v, "/secret/secretName");
    }
  }
  return "";
}

// The config of the lens.yaml ConfigMap in `ns` (the error in `*error`).
std::optional<Config> LensYaml(const Rendered& r, const std::string& ns,
                               std::string* error) {
  for (const Value* cm : OfKind(r, "ConfigMap")) {
    const Value* data = rapidjson::Pointer("/data/lens.yaml").Get(*cm);
    if (!data || Str(*cm, "/metadata/namespace") != ns) continue;
    const fs::path file =
        fs::path(::testing::TempDir()) / ("lens-" + ns + ".yaml");
    if (!WriteFile(file.string(), data->GetString()).ok()) break;
    ConfigLoadOptions options;
    options.getenv = [](const std::string&) { return std::nullopt; };
    auto config = LoadConfig(file.string(), options);
    if (config.ok()) return *config;
    *error = config.status().ToString();
    return std::nullopt;
  }
  if (error->empty()) *error = "no lens.yaml in " + ns;
  return std::nullopt;
}

class ManifestsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    rendered_ = Render(GetParam());
    ASSERT_EQ(rendered_.error, "");
    ASSERT_FALSE(rendered_.objects.empty());
  }
  Rendered rendered_;
};

TEST_P(ManifestsTest, EveryObjectValidatesAgainstTheKubernetesSchema) {
  std::string error;
  auto schemas = KubeSchemas::Load(LENS_KUBE_OPENAPI_DIR, &error);
  ASSERT_TRUE(schemas) << error;
  for (const auto& o : rendered_.objects) {
    EXPECT_TRUE(schemas->Knows(Str(o, "/apiVersion"), Str(o, "/kind")))
        << Describe(o) << ": no schema for " << Str(o, "/apiVersion");
    for (const std::string& problem : schemas->Validate(o)) {
      ADD_FAILURE() << GetParam() << ": " << problem;
    }
  }
}

// Every Lens container runs a daemon the image has, at the project's
// version; the Lens image is the only one pulled by tag of ours.
TEST_P(ManifestsTest, LensContainersRunDaemonsOfThisVersion) {
  const auto daemons = DaemonFiles();
  ASSERT_GE(daemons.size(), 6u) << LENS_DAEMON_FILES;
  int lens_containers = 0;
  ForEachContainer(
      rendered_, [&](const Value& w, const Value&, const Value& c) {
        const std::string image = Str(c, "/image");
        if (!IsLens(c)) {
          EXPECT_EQ(image.find("lens"), std::string::npos)
              << Describe(w) << ": " << image << " looks like ours";
          return;
        }
        ++lens_containers;
        EXPECT_EQ(image, std::string(kImage) + ":" + Version()) << Describe(w);
        const std::string binary = Str(c, "/command/0");
        EXPECT_EQ(binary.rfind("/usr/bin/", 0), 0u)
            << Describe(w) << ": " << binary;
        EXPECT_TRUE(daemons.count(fs::path(binary).filename().string()))
            << Describe(w) << ": " << binary << " is not a Lens daemon";
      });
  EXPECT_GE(lens_containers, 6);
}

// Probes, Services and container ports name each other consistently.
TEST_P(ManifestsTest, PortsProbesAndServicesAgree) {
  ForEachContainer(
      rendered_, [&](const Value& w, const Value& spec, const Value& c) {
        std::set<std::string> names;
        if (c.HasMember("ports")) {
          for (const auto& p : c["ports"].GetArray())
            names.insert(Str(p, "/name"));
        }
        for (const char* probe : {"livenessProbe", "readinessProbe"}) {
          if (!c.HasMember(probe)) continue;
          const Value* port = rapidjson::Pointer("/httpGet/port").Get(c[probe]);
          if (!port) continue;
          EXPECT_TRUE(port->IsString() && names.count(port->GetString()))
              << Describe(w) << " " << probe << ": no such named port";
          EXPECT_EQ(Str(c[probe], "/httpGet/path").front(), '/') << Describe(w);
        }
        if (IsLens(c) && spec.HasMember("hostNetwork")) {
          EXPECT_TRUE(spec["hostNetwork"].GetBool()) << Describe(w);
        }
      });
  for (const Value* svc : OfKind(rendered_, "Service")) {
    const std::string ns = Str(*svc, "/metadata/namespace");
    const Value& selector = (*svc)["spec"]["selector"];
    const Value* pod = nullptr;
    for (const auto& o : rendered_.objects) {
      const Value* labels =
          rapidjson::Pointer("/spec/template/metadata/labels").Get(o);
      if (!PodSpec(o) || !labels || Str(o, "/metadata/namespace") != ns) {
        continue;
      }
      bool all = true;
      for (const auto& m : selector.GetObject()) {
        all &= labels->HasMember(m.name) && (*labels)[m.name] == m.value;
      }
      if (all) pod = &o;
    }
    ASSERT_NE(pod, nullptr) << Describe(*svc) << ": selects no pod template";
    std::set<std::string> names;
    for (const auto& c : (*PodSpec(*pod))["containers"].GetArray()) {
      if (!c.HasMember("ports")) continue;
      for (const auto& p : c["ports"].GetArray()) names.insert(Str(p, "/name"));
    }
    for (const auto& p : (*svc)["spec"]["ports"].GetArray()) {
      EXPECT_TRUE(names.count(Str(p, "/targetPort")))
          << Describe(*svc) << ": targetPort " << Str(p, "/targetPort");
    }
  }
}

// No secret is written in the manifests: the user creates lens-tokens and
// lens-database, and the objects use only their documented keys. Every
// ConfigMap a pod mounts is rendered in its namespace.
TEST_P(ManifestsTest, SecretsAreReferencedNeverWritten) {
  EXPECT_TRUE(OfKind(rendered_, "Secret").empty());
  auto check_key = [&](const Value& w, const std::string& secret,
                       const std::string& key) {
    auto it = kSecretKeys.find(secret);
    ASSERT_NE(it, kSecretKeys.end()) << Describe(w) << ": secret " << secret;
    EXPECT_TRUE(it->second.count(key))
        << Describe(w) << ": " << secret << " has no key " << key;
  };
  for (const auto& o : rendered_.objects) {
    const Value* spec = PodSpec(o);
    if (!spec) continue;
    const std::string ns = Str(o, "/metadata/namespace");
    if (spec->HasMember("volumes")) {
      for (const auto& v : (*spec)["volumes"].GetArray()) {
        if (v.HasMember("secret")) {
          for (const auto& item : v["secret"]["items"].GetArray()) {
            check_key(o, Str(v, "/secret/secretName"), Str(item, "/key"));
          }
        }
        if (v.HasMember("configMap")) {
          EXPECT_NE(Find(rendered_, "ConfigMap", ns, Str(v, "/configMap/name")),
                    nullptr)
              << Describe(o) << ": " << Str(v, "/configMap/name");
        }
      }
    }
    for (const auto& c : (*spec)["containers"].GetArray()) {
      if (!c.HasMember("env")) continue;
      for (const auto& e : c["env"].GetArray()) {
        const Value* ref = rapidjson::Pointer("/valueFrom/secretKeyRef").Get(e);
        if (ref) check_key(o, Str(*ref, "/name"), Str(*ref, "/key"));
      }
    }
  }
}

// What Pod Security "restricted" demands of every pod in a namespace that
// enforces it (the cluster daemons' `lens`), so the namespace admits them.
TEST_P(ManifestsTest, RestrictedNamespacesAdmitTheirPods) {
  std::set<std::string> restricted;
  for (const Value* ns : OfKind(rendered_, "Namespace")) {
    if (Str(*ns, "/metadata/labels/pod-security.kubernetes.io~1enforce") ==
        "restricted") {
      restricted.insert(Str(*ns, "/metadata/name"));
    }
  }
  ASSERT_TRUE(restricted.count("lens"));
  for (const auto& o : rendered_.objects) {
    const Value* spec = PodSpec(o);
    if (!spec || !restricted.count(Str(o, "/metadata/namespace"))) continue;
    const std::string what = Describe(o);
    for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
      EXPECT_FALSE(spec->HasMember(host) && (*spec)[host].GetBool()) << what;
    }
    if (spec->HasMember("volumes")) {
      for (const auto& v : (*spec)["volumes"].GetArray()) {
        EXPECT_FALSE(v.HasMember("hostPath")) << what;
      }
    }
    const Value* pod_non_root =
        rapidjson::Pointer("/securityContext/runAsNonRoot").Get(*spec);
    EXPECT_EQ(Str(*spec, "/securityContext/seccompProfile/type"),
              "RuntimeDefault")
        << what;
    for (const auto& c : (*spec)["containers"].GetArray()) {
      const Value* non_root =
          rapidjson::Pointer("/securityContext/runAsNonRoot").Get(c);
      EXPECT_TRUE((non_root && non_root->GetBool()) ||
                  (pod_non_root && pod_non_root->GetBool()))
          << what;
      const Value* escalation =
          rapidjson::Pointer("/securityContext/allowPrivilegeEscalation")
              .Get(c);
      EXPECT_TRUE(escalation && !escalation->GetBool()) << what;
      EXPECT_EQ(Str(c, "/securityContext/capabilities/drop/0"), "ALL") << what;
      EXPECT_EQ(rapidjson::Pointer("/securityContext/capabilities/add").Get(c),
                nullptr)
          << what;
    }
  }
}

// Node daemons read the host; only what they must write is writable.
TEST_P(ManifestsTest, HostPathsOfLensDaemonsAreReadOnly) {
  ForEachContainer(
      rendered_, [&](const Value& w, const Value& spec, const Value& c) {
        if (!IsLens(c) || !c.HasMember("volumeMounts")) return;
        const std::string binary = Str(c, "/command/0");
        for (const auto& m : c["volumeMounts"].GetArray()) {
          const Value* volume = nullptr;
          for (const auto& v : spec["volumes"].GetArray()) {
            if (v["name"] == m["name"]) volume = &v;
          }
          // Or a StatefulSet's claim (no host path).
          const Value* claims =
              rapidjson::Pointer("/spec/volumeClaimTemplates").Get(w);
          if (!volume && claims) {
            for (const auto& v : claims->GetArray()) {
              if (Str(v, "/metadata/name") == Str(m, "/name")) volume = &v;
            }
          }
          ASSERT_NE(volume, nullptr) << Describe(w) << ": " << Str(m, "/name");
          if (!volume->HasMember("hostPath")) continue;
          // The tuner writes sysctls and limits files; nothing else writes.
          const bool writer = binary == "/usr/bin/lens-tuner";
          const Value* ro = rapidjson::Pointer("/readOnly").Get(m);
          EXPECT_TRUE(writer || (ro && ro->GetBool()))
              << Describe(w) << ": " << Str(m, "/mountPath") << " is writable";
        }
      });
}

// The one lens.yaml the daemons share loads with every key known, and says
// no secret (tokens and the password come from files and the environment).
TEST_P(ManifestsTest, LensYamlLoadsAndHoldsNoSecret) {
  int loaded = 0;
  for (const Value* cm : OfKind(rendered_, "ConfigMap")) {
    const Value* data = rapidjson::Pointer("/data/lens.yaml").Get(*cm);
    if (!data) continue;
    const fs::path file = fs::path(::testing::TempDir()) /
                          ("lens-" + std::to_string(loaded) + ".yaml");
    ASSERT_TRUE(WriteFile(file.string(), data->GetString()).ok());
    ConfigLoadOptions options;
    options.getenv = [](const std::string&) { return std::nullopt; };
    auto config = LoadConfig(file.string(), options);
    ASSERT_TRUE(config.ok())
        << Describe(*cm) << ": " << config.status().message();
    const std::string& url = config->database.url;
    const size_t user = url.find("://") + 3;
    EXPECT_EQ(url.substr(user, url.find('@') - user).find(':'),
              std::string::npos)
        << "a password in database.url";
    for (const std::string* token :
         {&config->node_exporter.bearer_token_file,
          &config->netflow.bearer_token_file, &config->jobs.bearer_token_file,
          &config->controller.bearer_token_file,
          &config->telemetry.bearer_token_file, &config->api.bearer_token_file,
          &config->multi_cluster.bearer_token_file}) {
      EXPECT_EQ(token->rfind("/var/run/lens/tokens/", 0), 0u)
          << Describe(*cm) << ": a daemon without its token";
    }
    ++loaded;
  }
  EXPECT_EQ(loaded, 2);  // one per namespace
}

// The node token crosses the pod network only inside TLS: every node daemon
// serves HTTPS with the certificate of lens-node-tls (its probes say so),
// and lens-jobs reads the agents over https, verifying the chain with the CA
// of lens-node-ca and the certificate against the agents' Service name (pod
// IPs are in no certificate), never skipping verification.
TEST_P(ManifestsTest, NodePortsServeTlsThatTheirClientsVerify) {
  std::string error;
  const auto node = LensYaml(rendered_, "lens-node", &error);
  ASSERT_TRUE(node) << error;
  const auto cluster = LensYaml(rendered_, "lens", &error);
  ASSERT_TRUE(cluster) << error;
  const std::map<std::string, std::pair<std::string, std::string>> served = {
      {"/usr/bin/lens-node-agent",
       {node->node_exporter.tls_cert_file, node->node_exporter.tls_key_file}},
      {"/usr/bin/lens-netflow",
       {node->netflow.tls_cert_file, node->netflow.tls_key_file}},
      {"/usr/bin/lens-tuner",
       {node->tuner.tls_cert_file, node->tuner.tls_key_file}}};
  int node_daemons = 0;
  ForEachContainer(
      rendered_, [&](const Value& w, const Value& spec, const Value& c) {
        if (!IsLens(c)) return;
        const std::string binary = Str(c, "/command/0");
        if (binary == "/usr/bin/lens-jobs") {
          const ScheduledJobsOptions& j = cluster->jobs.scheduled;
          EXPECT_EQ(j.agent_scheme, "https");
          EXPECT_FALSE(j.agent_insecure_skip_tls_verify);
          EXPECT_EQ(SecretAt(spec, c, j.agent_ca_file), "lens-node-ca")
              << "jobs.agentCaFile " << j.agent_ca_file;
          EXPECT_EQ(j.agent_tls_server_name,
                    "lens-node-agent." + j.agent_namespace + ".svc");
          EXPECT_TRUE(
              Find(rendered_, "Service", j.agent_namespace, "lens-node-agent"));
          return;
        }
        auto it = served.find(binary);
        if (it == served.end()) return;
        ++node_daemons;
        EXPECT_EQ(SecretAt(spec, c, it->second.first), "lens-node-tls")
            << Describe(w) << ": tlsCertFile " << it->second.first;
        EXPECT_EQ(SecretAt(spec, c, it->second.second), "lens-node-tls")
            << Describe(w) << ": tlsKeyFile " << it->second.second;
        for (const char* probe : {"livenessProbe", "readinessProbe"}) {
          ASSERT_TRUE(c.HasMember(probe)) << Describe(w);
          EXPECT_EQ(Str(c[probe], "/httpGet/scheme"), "HTTPS")
              << Describe(w) << " " << probe;
        }
      });
  EXPECT_EQ(node_daemons, 3);
}

// lens-telemetry's forward queues (telemetry.queueDir) are on a volume that
// outlives the pod: a claim of its StatefulSet, one per replica, which its
// Service and PodDisruptionBudget still select.
TEST_P(ManifestsTest, TheTelemetryQueueIsOnAPersistentVolumePerReplica) {
  std::string error;
  const auto config = LensYaml(rendered_, "lens", &error);
  ASSERT_TRUE(config) << error;
  const std::string queue = config->telemetry.processor.queue_dir;
  ASSERT_FALSE(queue.empty());
  const Value* set = Find(rendered_, "StatefulSet", "lens", "lens-telemetry");
  ASSERT_NE(set, nullptr) << "lens-telemetry is not a StatefulSet";
  EXPECT_EQ(Find(rendered_, "Deployment", "lens", "lens-telemetry"), nullptr);
  const Value& c = (*PodSpec(*set))["containers"][0];
  std::string claim;
  for (const auto& m : c["volumeMounts"].GetArray()) {
    if (Str(m, "/mountPath") == queue) claim = Str(m, "/name");
  }
  ASSERT_FALSE(claim.empty()) << "nothing mounted at queueDir " << queue;
  for (const auto& v : (*PodSpec(*set))["volumes"].GetArray()) {
    EXPECT_NE(Str(v, "/name"), claim) << "a pod volume, gone with the pod";
  }
  const Value* templates =
      rapidjson::Pointer("/spec/volumeClaimTemplates").Get(*set);
  ASSERT_NE(templates, nullptr);
  bool found = false;
  for (const auto& t : templates->GetArray()) {
    if (Str(t, "/metadata/name") != claim) continue;
    found = true;
    EXPECT_EQ(Str(t, "/spec/accessModes/0"), "ReadWriteOnce");
    EXPECT_FALSE(Str(t, "/spec/resources/requests/storage").empty());
  }
  EXPECT_TRUE(found) << claim << " is no volumeClaimTemplate";
  EXPECT_TRUE(
      Find(rendered_, "Service", "lens", Str(*set, "/spec/serviceName")))
      << "serviceName " << Str(*set, "/spec/serviceName");
  EXPECT_TRUE(Find(rendered_, "PodDisruptionBudget", "lens", "lens-telemetry"));
}

// Every Lens daemon's Service is scraped in both monitoring overlays, on the
// port it names, with the token of its Secret; the node daemons' over
// HTTPS, verified with their CA and their Service's name.
TEST(MonitoringOverlays, ScrapeEveryLensService) {
  const Rendered base = Render("base");
  ASSERT_EQ(base.error, "");
  for (const auto& [overlay, kinds] :
       std::map<std::string, std::vector<std::string>>{
           {"overlays/victoriametrics", {"VMServiceScrape"}},
           {"overlays/prometheus-operator",
            {"ServiceMonitor", "PodMonitor"}}}) {
    const Rendered r = Render(overlay);
    ASSERT_EQ(r.error, "");
    int scraped = 0;
    for (const Value* svc : OfKind(base, "Service")) {
      const std::string name = Str(*svc, "/metadata/name");
      const std::string ns = Str(*svc, "/metadata/namespace");
      if (name == "lens-postgresql") continue;
      const Value* scrape = nullptr;
      for (const std::string& kind : kinds) {
        if (!scrape) scrape = Find(r, kind, ns, name);
      }
      ASSERT_NE(scrape, nullptr) << overlay << ": nothing scrapes " << name;
      const char* endpoints = Str(*scrape, "/kind") == "PodMonitor"
                                  ? "/spec/podMetricsEndpoints/0"
                                  : "/spec/endpoints/0";
      const Value* e = rapidjson::Pointer(endpoints).Get(*scrape);
      ASSERT_NE(e, nullptr) << Describe(*scrape);
      bool named = false;
      for (const auto& p : (*svc)["spec"]["ports"].GetArray()) {
        named |= Str(p, "/name") == Str(*e, "/port");
      }
      EXPECT_TRUE(named) << Describe(*scrape) << ": port " << Str(*e, "/port");
      EXPECT_EQ(Str(*e, "/path"), "/metrics");
      const std::string key = Str(*e, "/bearerTokenSecret/key") +
                              Str(*e, "/authorization/credentials/key");
      EXPECT_TRUE(kSecretKeys.at("lens-tokens").count(key))
          << Describe(*scrape) << ": token key \"" << key << "\"";
      if (ns == "lens-node") {
        EXPECT_EQ(Str(*e, "/scheme"), "https") << Describe(*scrape);
        EXPECT_EQ(Str(*e, "/tlsConfig/ca/secret/name"), "lens-node-tls")
            << Describe(*scrape);
        EXPECT_EQ(Str(*e, "/tlsConfig/ca/secret/key"), "ca.crt")
            << Describe(*scrape);
        EXPECT_EQ(Str(*e, "/tlsConfig/serverName"), name + "." + ns + ".svc")
            << Describe(*scrape);
        EXPECT_EQ(rapidjson::Pointer("/tlsConfig/insecureSkipVerify").Get(*e),
                  nullptr)
            << Describe(*scrape);
      }
      ++scraped;
    }
    EXPECT_GE(scraped, 7) << overlay;
  }
}

// The VictoriaMetrics overlay's vmagent: Debian's vmagent accepts its scrape
// and relabel files with the Deployment's own flags (-dryRun checks them and
// exits), and the relabel rule sends exactly the series lens-telemetry looks
// at (telemetry.metricPrefixes' defaults).
TEST(VictoriaMetricsOverlay, VmagentAcceptsItsConfigAndSendsTheEnrichedSeries) {
  const Rendered r = Render("overlays/victoriametrics");
  ASSERT_EQ(r.error, "");
  const Value* cm = nullptr;
  for (const Value* o : OfKind(r, "ConfigMap")) {
    if (Str(*o, "/metadata/name").rfind("lens-vmagent", 0) == 0) cm = o;
  }
  ASSERT_NE(cm, nullptr);
  const fs::path dir = fs::path(::testing::TempDir()) / "lens-vmagent";
  fs::create_directories(dir);
  // The node CA the scrape config names, as the documented step makes it
  // (vmagent reads it when it loads the config).
  const fs::path certs = dir / "node-certs";
  auto made = RunCommand(
      {LENS_SOURCE_DIR "/scripts/make-node-certs.sh", certs.string()});
  ASSERT_TRUE(made.ok()) << made.status().message();
  ASSERT_EQ(made->wait_status, 0) << made->err;
  for (const auto& file : (*cm)["data"].GetObject()) {
    std::string text = file.value.GetString();
    for (size_t at = text.find("/var/run/lens/node-ca/");
         at != std::string::npos; at = text.find("/var/run/lens/node-ca/")) {
      text.replace(at, 22, certs.string() + "/");
    }
    ASSERT_TRUE(WriteFile((dir / file.name.GetString()).string(), text).ok());
  }
  const Value* deployment = Find(r, "Deployment", "lens", "lens-vmagent");
  ASSERT_NE(deployment, nullptr);
  const std::string vmagent = FindBinary("vmagent");
  ASSERT_NE(vmagent, "") << "vmagent (Debian's victoria-metrics) not found";
  std::vector<std::string> argv = {vmagent, "-dryRun"};
  for (const auto& a :
       (*PodSpec(*deployment))["containers"][0]["args"].GetArray()) {
    std::string arg = a.GetString();
    if (size_t at = arg.find("/etc/vmagent/"); at != std::string::npos) {
      arg.replace(at, 13, dir.string() + "/");
    }
    argv.push_back(arg);
  }
  auto run = RunCommand(argv);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->wait_status, 0) << run->err << run->out;

  // The node agents over HTTPS, verified with the CA that vmagent mounts and
  // the agents' Service name.
  std::string error;
  auto scrape = YamlToJsonDocuments(Str(*cm, "/data/scrape.yaml"), &error);
  ASSERT_EQ(scrape.size(), 1u) << error;
  const Value* job = rapidjson::Pointer("/scrape_configs/0").Get(scrape[0]);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(Str(*job, "/job_name"), "lens-node-agent");
  EXPECT_EQ(Str(*job, "/scheme"), "https");
  EXPECT_EQ(Str(*job, "/tls_config/server_name"),
            "lens-node-agent.lens-node.svc");
  EXPECT_EQ(rapidjson::Pointer("/tls_config/insecure_skip_verify").Get(*job),
            nullptr);
  const Value& spec = *PodSpec(*deployment);
  EXPECT_EQ(
      SecretAt(spec, spec["containers"][0], Str(*job, "/tls_config/ca_file")),
      "lens-node-ca");

  // The rule's alternatives, one per prefix: "(a_|b_|...).*".
  const std::string relabel = ReadFile((dir / "relabel.yaml").string());
  const size_t open = relabel.find("\"(");
  const size_t close = relabel.find(").*\"");
  ASSERT_NE(open, std::string::npos);
  ASSERT_NE(close, std::string::npos);
  std::set<std::string> kept;
  const std::string alternatives = relabel.substr(open + 2, close - open - 2);
  for (size_t start = 0; start <= alternatives.size();) {
    size_t end = alternatives.find('|', start);
    if (end == std::string::npos) end = alternatives.size();
    kept.insert(alternatives.substr(start, end - start));
    start = end + 1;
  }
  const SeriesIdentityLabels defaults;
  EXPECT_EQ(kept, std::set<std::string>(defaults.metric_prefixes.begin(),
                                        defaults.metric_prefixes.end()));
}

INSTANTIATE_TEST_SUITE_P(Deploy, ManifestsTest, ::testing::ValuesIn(kOverlays),
                         [](const auto& info) {
                           std::string name =
                               fs::path(info.param).filename().string();
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lens::test
