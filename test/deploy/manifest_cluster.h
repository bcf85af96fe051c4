// The rendered base deployed on this machine: each Lens container of each
// workload started as its own process with the command, arguments,
// environment and lens.yaml the manifests give it. What Kubernetes would
// provide is provided from the manifests too:
// - every volume mount is a directory of the test: a ConfigMap's data files,
//   a Secret's listed items (generated tokens; the node daemons' certificate
//   and CA as scripts/make-node-certs.sh makes them), an emptyDir or a
//   StatefulSet's volume claim; a hostPath is a fixture host (/sys, /proc,
//   /dev) or an empty directory; paths in the arguments and in lens.yaml are
//   rewritten from the mount path to it;
// - every container port is a free loopback port ("0.0.0.0:<port>" in
//   lens.yaml, Service names like lens-jobs.lens.svc:<port> and lens-jobs'
//   agentPort are rewritten);
// - env from the downward API and Secrets (the database URL: a SQLite file
//   per workload);
// - the Kubernetes API: a test API server per workload that uses it, reached
//   through a kubeconfig in place of the service account (whose files sit at a
//   fixed path), and logging every request for the RBAC check.
#ifndef LENS_TEST_DEPLOY_MANIFEST_CLUSTER_H_
#define LENS_TEST_DEPLOY_MANIFEST_CLUSTER_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kube_api_server.h"
#include "loopback_traffic.h"
#include "manifests.h"

namespace lens::test {

// An HTTP probe of a container.
struct DeployedProbe {
  std::string path;
  std::string port;    // its name
  bool https = false;  // scheme: HTTPS
};

struct DeployedContainer {
  std::string workload;  // "lens-jobs"
  std::string namespace_name;
  std::string service_account;
  std::string binary;  // "lens-jobs"
  std::vector<std::string> argv;
  std::vector<std::string> env;      // NAME=value
  std::map<std::string, int> ports;  // port name -> loopback port
  std::map<int, int> port_numbers;   // containerPort -> loopback port
  std::vector<DeployedProbe> probes;
  // The port its probes and /metrics are on, and whether it serves HTTPS.
  std::string http_port;
  bool https = false;
  std::map<std::string, std::string> host_paths;  // hostPath -> its stand-in
  // "<secret>/<key>" -> the file the pod sees it as.
  std::map<std::string, std::string> secret_files;
  std::string token;   // the bearer token of its HTTP routes ("" if none)
  std::string config;  // the lens.yaml it reads, rewritten
  std::string log;
  KubeApiServer* api = nullptr;  // when it calls the Kubernetes API
  pid_t pid = -1;
};

class DeployedCluster {
 public:
  // `skip`: workloads not to start (e.g. lens-netflow without eBPF).
  DeployedCluster(const Rendered& rendered, const std::string& dir,
                  const std::set<std::string>& skip);
  ~DeployedCluster();

  // Empty when every Lens container was prepared; else what went wrong.
  const std::string& error() const { return error_; }
  // Where scripts/make-node-certs.sh wrote the node daemons' CA and
  // certificate (ca.crt, tls.crt, tls.key): the Secrets lens-node-tls and
  // lens-node-ca.
  const std::string& node_certs() const { return node_certs_; }
  // Starts them all, the jobs first (the node agents stream to it).
  void Start();
  // SIGTERM to each; the exit statuses (Describe()) by workload, each but
  // "exit status 0" followed by the end of the process's log.
  std::map<std::string, std::string> Stop();

  std::vector<DeployedContainer>& containers() { return containers_; }
  DeployedContainer* Get(const std::string& workload);
  // Whether the process still runs (false with its exit in `*why`).
  bool Running(DeployedContainer& c, std::string* why);

 private:
  void Prepare(const rapidjson::Value& workload, const rapidjson::Value& spec,
               const rapidjson::Value& container);

  const Rendered& rendered_;
  std::string dir_;
  std::set<std::string> skip_;
  std::string error_;
  std::string node_certs_;
  std::map<std::string, std::string> tokens_;  // lens-tokens key -> value
  std::map<int, int> service_ports_;           // containerPort -> loopback
  std::vector<DeployedContainer> containers_;
  std::vector<std::unique_ptr<KubeApiServer>> servers_;
};

// An HTTP GET on loopback; the status (0 when nothing answered) and body.
// `https`: over TLS, with no verification of the certificate (as the
// kubelet's probes).
int HttpGet(int port, const std::string& path, const std::string& token,
            std::string* body = nullptr, bool https = false);

}  // namespace lens::test

#endif  // LENS_TEST_DEPLOY_MANIFEST_CLUSTER_H_
