// Everything of Lens in one process on one machine (`lens up`), composed
// from one config: the node service with all its parts (agent, containers,
// flows), the controller when there is a cluster to watch, the scheduled
// jobs against this node's agent, the telemetry processor (remote write
// into the sample history, fluent-bit logs, training log files followed,
// this machine's own GPU, RDMA and flow series scraped into it) and lens-api
// with the dashboard, all over one store and guarded by one token.
//
//   auto plan = lens::OneMachinePlan::FromConfig(*config, logs);  // 2 if bad
//   auto up = lens::OneMachine::Start(*std::move(plan));           // 1 if bad
//   ... (*up)->api().http_url() ...
//   (*up)->Stop();
#ifndef LENS_SERVICE_ONE_MACHINE_H_
#define LENS_SERVICE_ONE_MACHINE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lens/status.h"
#include "service/api_service.h"
#include "service/config.h"
#include "service/controller_service.h"
#include "service/jobs_service.h"
#include "service/node_service.h"
#include "service/telemetry_service.h"

namespace lens {

// What runs, decided from the config before anything starts. Plain value.
struct OneMachinePlan {
  Config config;                  // as adjusted for one machine (store, token)
  std::vector<std::string> logs;  // training log files to follow
  NodeServiceOptions node;
  std::optional<ControllerServiceOptions> controller;  // with a kubeconfig

  // The store defaults to the user's state directory when /var/lib/lens
  // does not exist; the node agent's token file guards every surface that
  // names none of its own; the controller runs as the one replica. Errors
  // (InvalidArgument, NotFound) name the key or file: the config is wrong.
  static StatusOr<OneMachinePlan> FromConfig(Config config,
                                             std::vector<std::string> logs);
};

// The running composition. Thread-safe accessors; Stop() in reverse order
// of starting.
class OneMachine {
 public:
  // Starts the parts in order: node, controller, jobs, telemetry, API.
  // Errors name the part ("controller: ..."); the jobs and the telemetry
  // path are optional (off with the reason) unless log files are to be
  // followed. What started before a failure is stopped again.
  static StatusOr<std::unique_ptr<OneMachine>> Start(OneMachinePlan plan);
  ~OneMachine();  // stops
  OneMachine(const OneMachine&) = delete;
  OneMachine& operator=(const OneMachine&) = delete;

  // API, telemetry, jobs, controller, node. Idempotent.
  void Stop();

  const OneMachinePlan& plan() const { return plan_; }
  NodeService& node() { return *node_; }
  ControllerService* controller() { return controller_.get(); }
  JobsService* jobs() { return jobs_.get(); }
  const Status& jobs_off() const { return jobs_off_; }  // why not running
  TelemetryService* telemetry() { return telemetry_.get(); }
  const Status& telemetry_off() const { return telemetry_off_; }
  ApiService& api() { return *api_; }

 private:
  explicit OneMachine(OneMachinePlan plan) : plan_(std::move(plan)) {}
  OneMachinePlan plan_;
  std::unique_ptr<NodeService> node_;
  std::unique_ptr<ControllerService> controller_;
  std::unique_ptr<JobsService> jobs_;
  Status jobs_off_;
  std::unique_ptr<TelemetryService> telemetry_;
  Status telemetry_off_;
  std::unique_ptr<ApiService> api_;
};

}  // namespace lens

#endif  // LENS_SERVICE_ONE_MACHINE_H_
