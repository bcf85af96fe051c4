// The flow metrics' state: counters per (class, direction, workload), an
// srtt histogram per (class, direction) and per-remote bytes for a bounded
// set of remote addresses, updated from each drain's classified flows and
// rendered as Prometheus text. Cardinality: 7 classes x 3 directions x the
// workloads seen on this node (a workload idle for an hour is dropped), and
// at most `top_remote` + 1 remote series.
#ifndef LENS_FLOW_FLOW_METRICS_H_
#define LENS_FLOW_FLOW_METRICS_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "lens/flow.h"

namespace lens::flow {

class FlowMetrics {
 public:
  using Clock = std::chrono::steady_clock;
  FlowMetrics(size_t top_remote, bool compat)
      : top_remote_(top_remote), compat_(compat) {}

  // Adds one drain's flows (classified and attributed). Not thread-safe:
  // the caller serialises Update and Render.
  void Update(const std::vector<TcpFlow>& flows, Clock::time_point now);
  void Render(std::string* out) const;

  // How long an idle remote keeps its exported series (and slot).
  static constexpr auto kRemoteIdle = std::chrono::minutes(10);
  static constexpr auto kWorkloadIdle = std::chrono::hours(1);

 private:
  struct Counters {
    uint64_t bytes_sent = 0, bytes_received = 0, connections = 0;
    uint64_t retransmits = 0, segments_sent = 0, segments_received = 0;
    Clock::time_point last_active{};
  };
  struct Rtt {
    std::array<uint64_t, kFlowRttBuckets> buckets{};
    uint64_t sum_us = 0, count = 0;
  };
  struct Remote {
    uint64_t bytes = 0;         // exported total (only when exported)
    uint64_t recent_bytes = 0;  // since it last competed for a slot
    bool exported = false;
    Clock::time_point last_active{};
  };
  // (class, direction, workload)
  using Key = std::tuple<FlowClass, FlowDirection, std::string>;
  // (remote address, class, direction)
  using RemoteKey = std::tuple<std::string, FlowClass, FlowDirection>;

  void UpdateRemotes(const std::vector<TcpFlow>& flows, Clock::time_point now);
  void RenderCompat(std::string* out) const;

  size_t top_remote_;
  bool compat_;
  std::map<Key, Counters> counters_;
  std::map<std::pair<FlowClass, FlowDirection>, Rtt> rtt_;
  std::map<RemoteKey, Remote> remotes_;
  std::map<std::pair<FlowClass, FlowDirection>, uint64_t> other_remote_bytes_;
  static constexpr size_t kMaxRemoteCandidates = 4096;
};

// "namespace/pod" when attributed, else "host".
std::string WorkloadOf(const TcpFlow& flow);

}  // namespace lens::flow

#endif  // LENS_FLOW_FLOW_METRICS_H_
