// lens-multicluster's test world: a home API server and two member API
// servers (in-process, TLS and a bearer token each) serving Secrets, with
// seeded credentials that no log line or metric may ever show.
#ifndef LENS_TEST_MULTICLUSTER_MULTICLUSTER_TESTING_H_
#define LENS_TEST_MULTICLUSTER_MULTICLUSTER_TESTING_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "core/cluster_directory.h"
#include "core/text.h"
#include "kube_api_server.h"
#include "multicluster/multicluster.h"
#include "multicluster/secret_data.h"
#include "service/multicluster_service.h"

namespace lens::multicluster_testing {

using std::chrono::milliseconds;
using test::KubeApiServer;

// The seeded credentials.
inline constexpr char kHomeToken[] = "home-token-s3cret-0000";
inline constexpr char kTokenA[] = "member-token-s3cret-aaaa";
inline constexpr char kTokenB[] = "member-token-s3cret-bbbb";
inline constexpr char kDbA[] =
    "postgresql://lens:pg-pass-s3cret-aaaa@db.a:5432/lens";
inline constexpr char kDbB[] =
    "postgresql://lens:pg-pass-s3cret-bbbb@db.b:5432/lens";
inline constexpr char kPromA[] = "https://vm.a.example.com";
inline constexpr char kPromTokenA[] = "prom-token-s3cret-aaaa";
inline const std::vector<std::string> kSecrets = {
    kHomeToken, kTokenA, kTokenB, "pg-pass-s3cret", "prom-token-s3cret"};

inline bool WaitUntil(const std::function<bool()>& done,
                      milliseconds timeout = milliseconds(10000)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return true;
}

inline std::unique_ptr<KubeApiServer> SecretServer(const std::string& token) {
  auto s = std::make_unique<KubeApiServer>(
      test::KubeApiServerOptions{.token = token, .tls = true});
  s->AddResource({"", "v1", "secrets", "Secret", true});
  return s;
}

// Creates or replaces the Secret namespace/name with `data`.
inline void PutSecret(KubeApiServer& server, const std::string& ns,
                      const std::string& name,
                      const std::map<std::string, std::string>& data) {
  const std::string json = multicluster::SecretJson(ns, name, {}, data, "");
  if (server.Create(json).empty()) server.Update(json);
}

// A member's kubeconfig as a Secret value holds it: inline CA and token.
inline std::string MemberKubeconfig(const KubeApiServer& server,
                                    const std::string& token) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: member\n"
         "clusters:\n- name: member\n  cluster:\n    server: " +
         server.url() + "\n    certificate-authority-data: " +
         Base64Encode(test::ReadFile(KubeApiServer::CaFile())) +
         "\nusers:\n- name: lens\n  user:\n    token: " + token +
         "\ncontexts:\n- name: member\n  context: {cluster: member, user: "
         "lens}\n";
}

inline void SetStorage(KubeApiServer& member, const std::string& db,
                       const std::string& prom = "",
                       const std::string& prom_token = "") {
  std::map<std::string, std::string> data = {{"databaseUrl", db}};
  if (!prom.empty()) data["prometheusUrl"] = prom;
  if (!prom_token.empty()) data["prometheusToken"] = prom_token;
  PutSecret(member, "lens", "lens-storage", data);
}

// The published directory; empty when there is none (or it is unreadable).
inline std::vector<ClusterEndpoints> Published(const KubeApiServer& home) {
  const std::string json =
      home.Get("v1", "Secret", "lens", "lens-clusters-config");
  if (json.empty()) return {};
  auto data = SecretData(json, "output");
  if (!data.ok() || !data->count("clusters.yaml")) return {};
  auto parsed = ParseClusterDirectory(data->at("clusters.yaml"));
  return parsed.ok() ? *parsed : std::vector<ClusterEndpoints>{};
}

inline const ClusterEndpoints* Find(const std::vector<ClusterEndpoints>& all,
                                    const std::string& name) {
  for (const ClusterEndpoints& e : all) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// Home plus members a and b, each member's storage Secret seeded and both
// listed in the clusters Secret.
struct World {
  std::unique_ptr<KubeApiServer> home = SecretServer(kHomeToken);
  std::unique_ptr<KubeApiServer> a = SecretServer(kTokenA);
  std::unique_ptr<KubeApiServer> b = SecretServer(kTokenB);

  World() {
    SetStorage(*a, kDbA, kPromA, kPromTokenA);
    SetStorage(*b, kDbB);
    SetClusters({{"cluster-a", MemberKubeconfig(*a, kTokenA)},
                 {"cluster-b", MemberKubeconfig(*b, kTokenB)}});
  }
  void SetClusters(const std::map<std::string, std::string>& kubeconfigs) {
    PutSecret(*home, "lens", "lens-clusters", kubeconfigs);
  }
  MultiClusterServiceOptions Options() const {
    MultiClusterServiceOptions o;
    o.home.server = home->url();
    o.home.token = kHomeToken;
    o.home.ca_file = KubeApiServer::CaFile();
    o.home.origin = "test home";
    o.client.request_timeout = milliseconds(2000);
    o.client.connect_timeout = milliseconds(1000);
    o.refresh = milliseconds(200);
    o.leader_election = false;
    o.leader.identity = "test-replica";
    o.leader.lease_name = "lens-multicluster";
    o.http.listen = "127.0.0.1:0";
    return o;
  }
};

}  // namespace lens::multicluster_testing

#endif  // LENS_TEST_MULTICLUSTER_MULTICLUSTER_TESTING_H_
