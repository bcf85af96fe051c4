// A one-node Lens cluster for the dashboards, every part a real process:
// lens-node-agent on the 8-GPU + 8-HCA fixture host (node gpu-node-a03,
// --compat-names), lens-jobs and lens-telemetry over a SQLite store seeded
// with a PyTorchJob whose two pods hold the node's GPUs, lens-netflow when
// eBPF can run, all with --compat-names. The topology of a deployment: a
// Prometheus in agent mode scrapes the daemons (adding the `node` target
// label to the node's own daemons) and remote-writes to lens-telemetry, which
// enriches the GPU series with workload labels and forwards everything to a
// second Prometheus (remote-write receiver): the one the dashboards query.
// The fluent-bit records of test/fixtures/telemetry (that PyTorchJob's
// Megatron-LM log) are posted to lens-telemetry for the training series.
#ifndef LENS_TEST_DASHBOARDS_FIXTURE_CLUSTER_H_
#define LENS_TEST_DASHBOARDS_FIXTURE_CLUSTER_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::test {

struct FixtureClusterOptions {
  std::string dir;     // scratch: store, logs, Prometheus data (created)
  bool flows = false;  // start lens-netflow (root, eBPF)
  std::map<std::string, std::string> binaries;  // "lens-node-agent" -> path
};

class FixtureCluster {
 public:
  static constexpr char kNode[] = "gpu-node-a03";

  // Starts everything and waits until each daemon answers; the dashboards'
  // series arrive over the next seconds. Errors carry the failing log.
  static StatusOr<std::unique_ptr<FixtureCluster>> Start(
      FixtureClusterOptions options);
  // Stops every process it started (SIGTERM, then SIGKILL after 10 s).
  ~FixtureCluster();

  // The HTTP port of the Prometheus the dashboards query.
  int query_port() const { return query_port_; }
  // The last lines of every process's log, for failure messages.
  std::string Logs() const;

 private:
  struct Process {
    std::string name;
    pid_t pid = -1;
    std::string log;
  };
  explicit FixtureCluster(FixtureClusterOptions options)
      : options_(std::move(options)) {}
  Status Spawn(const std::string& name, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {});
  // GET http://127.0.0.1:<port><path> until it answers 200 (10 s).
  Status WaitReady(const std::string& name, int port, const std::string& path);
  Status SeedStore(const std::string& gpus_json);
  Status PostTrainingLogs(int telemetry_port);
  std::string Bin(const std::string& name) const;

  FixtureClusterOptions options_;
  std::vector<Process> processes_;
  int query_port_ = 0;
};

}  // namespace lens::test

#endif  // LENS_TEST_DASHBOARDS_FIXTURE_CLUSTER_H_
