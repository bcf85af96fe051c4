#include "flow/flow_metrics.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/metric_writer.h"

namespace lens::flow {
namespace {

// Bucket i holds [2^i, 2^(i+1)) µs: the series show le=2^(i+1) from 2 µs to
// ~33 s, then +Inf (the slower buckets).
constexpr int kShownRttBuckets = 25;
using RttCounts = std::array<uint64_t, kShownRttBuckets + 1>;

const std::array<double, kShownRttBuckets + 1>& RttBounds() {
  static const auto bounds = [] {
    std::array<double, kShownRttBuckets + 1> b{};
    for (int i = 0; i < kShownRttBuckets; ++i) {
      b[i] = static_cast<double>(uint64_t{1} << (i + 1));
    }
    b[kShownRttBuckets] = std::numeric_limits<double>::infinity();
    return b;
  }();
  return bounds;
}

RttCounts Cumulative(const std::array<uint64_t, kFlowRttBuckets>& buckets,
                     uint64_t count) {
  RttCounts out{};
  uint64_t cumulative = 0;
  for (int i = 0; i < kShownRttBuckets; ++i) {
    cumulative += buckets[i];
    out[i] = cumulative;
  }
  out[kShownRttBuckets] = count;
  return out;
}

}  // namespace

std::string WorkloadOf(const TcpFlow& flow) {
  if (flow.pod_name.empty()) return "host";
  return flow.pod_namespace + "/" + flow.pod_name;
}

void FlowMetrics::Update(const std::vector<TcpFlow>& flows,
                         Clock::time_point now) {
  for (const TcpFlow& f : flows) {
    Counters& c = counters_[{f.remote_class, f.direction, WorkloadOf(f)}];
    c.bytes_sent += f.bytes_sent;
    c.bytes_received += f.bytes_received;
    c.connections += f.opened ? 1 : 0;
    c.retransmits += f.retransmits;
    c.segments_sent += f.segments_sent;
    c.segments_received += f.segments_received;
    c.last_active = now;
    if (f.rtt_count) {
      Rtt& r = rtt_[{f.remote_class, f.direction}];
      for (int i = 0; i < kFlowRttBuckets; ++i)
        r.buckets[i] += f.rtt_histogram[i];
      r.sum_us += f.rtt_sum_us;
      r.count += f.rtt_count;
    }
  }
  std::erase_if(counters_, [&](const auto& kv) {
    return now - kv.second.last_active > kWorkloadIdle;
  });
  UpdateRemotes(flows, now);
}

// Exported remotes keep their series while active; free slots go to the
// candidates with the most bytes since they last competed. Bytes of remotes
// without a slot go to "other", so every exported counter stays monotonic.
void FlowMetrics::UpdateRemotes(const std::vector<TcpFlow>& flows,
                                Clock::time_point now) {
  for (const TcpFlow& f : flows) {
    const uint64_t bytes = f.bytes_sent + f.bytes_received;
    if (!bytes) continue;
    RemoteKey key{f.daddr.Unmapped().ToString(), f.remote_class, f.direction};
    auto it = remotes_.find(key);
    if (it == remotes_.end()) {
      if (remotes_.size() >= kMaxRemoteCandidates) {
        other_remote_bytes_[{f.remote_class, f.direction}] += bytes;
        continue;
      }
      it = remotes_.emplace(key, Remote{}).first;
    }
    Remote& r = it->second;
    r.last_active = now;
    if (r.exported) {
      r.bytes += bytes;
    } else {
      r.recent_bytes += bytes;
    }
  }
  size_t exported = 0;
  for (auto it = remotes_.begin(); it != remotes_.end();) {
    const bool idle = now - it->second.last_active > kRemoteIdle;
    if (idle) {
      it = remotes_.erase(it);
      continue;
    }
    exported += it->second.exported;
    ++it;
  }
  std::vector<std::map<RemoteKey, Remote>::iterator> candidates;
  for (auto it = remotes_.begin(); it != remotes_.end(); ++it) {
    if (!it->second.exported && it->second.recent_bytes)
      candidates.push_back(it);
  }
  std::sort(candidates.begin(), candidates.end(), [](auto a, auto b) {
    return a->second.recent_bytes > b->second.recent_bytes;
  });
  for (auto it : candidates) {
    Remote& r = it->second;
    if (exported < top_remote_) {
      r.exported = true;
      r.bytes = r.recent_bytes;
      ++exported;
    } else {
      const auto& [addr, cls, dir] = it->first;
      other_remote_bytes_[{cls, dir}] += r.recent_bytes;
    }
    r.recent_bytes = 0;
  }
}

void FlowMetrics::Render(std::string* out) const {
  MetricWriter w(out);
  struct Field {
    const char* name;
    const char* help;
    uint64_t Counters::*value;
  };
  static constexpr Field kFields[] = {
      {"lens_tcp_flow_bytes_sent_total",
       "Bytes applications wrote to TCP sockets.", &Counters::bytes_sent},
      {"lens_tcp_flow_bytes_received_total",
       "Bytes applications read from TCP sockets.", &Counters::bytes_received},
      {"lens_tcp_flow_connections_total", "TCP connections opened.",
       &Counters::connections},
      {"lens_tcp_flow_retransmits_total", "TCP segments retransmitted.",
       &Counters::retransmits},
      {"lens_tcp_flow_segments_sent_total", "TCP segments sent.",
       &Counters::segments_sent},
      {"lens_tcp_flow_segments_received_total", "TCP segments received.",
       &Counters::segments_received},
  };
  for (const Field& field : kFields) {
    w.Family(field.name, field.help, "counter");
    for (const auto& [key, c] : counters_) {
      const auto& [cls, dir, workload] = key;
      w.Sample({{"class", FlowClassName(cls)},
                {"direction", FlowDirectionName(dir)},
                {"workload", workload}},
               static_cast<double>(c.*field.value));
    }
  }
  w.Family("lens_tcp_flow_rtt_microseconds",
           "Smoothed TCP round-trip time samples (one per received segment).",
           "histogram");
  for (const auto& [key, r] : rtt_) {
    const Label labels[] = {{"class", FlowClassName(key.first)},
                            {"direction", FlowDirectionName(key.second)}};
    w.HistogramSeries(labels, RttBounds(), Cumulative(r.buckets, r.count),
                      static_cast<double>(r.sum_us), r.count);
  }
  w.Family("lens_tcp_flow_remote_bytes_total",
           "Bytes sent plus received per remote address, for the busiest "
           "remotes; the rest are remote=\"other\".",
           "counter");
  for (const auto& [key, r] : remotes_) {
    if (!r.exported) continue;
    const auto& [addr, cls, dir] = key;
    w.Sample({{"remote", addr},
              {"class", FlowClassName(cls)},
              {"direction", FlowDirectionName(dir)}},
             static_cast<double>(r.bytes));
  }
  for (const auto& [key, bytes] : other_remote_bytes_) {
    w.Sample({{"remote", "other"},
              {"class", FlowClassName(key.first)},
              {"direction", FlowDirectionName(key.second)}},
             static_cast<double>(bytes));
  }
  if (compat_) RenderCompat(out);
}

// The original platform's names: bytes (sent + received) by direction and
// class, by pod for attributed flows, and the RTT histogram by class.
void FlowMetrics::RenderCompat(std::string* out) const {
  MetricWriter w(out);
  for (FlowDirection want : {FlowDirection::kEgress, FlowDirection::kIngress}) {
    const bool egress = want == FlowDirection::kEgress;
    w.Family(egress ? "primus_lens_network_tcp_flow_egress"
                    : "primus_lens_network_tcp_flow_ingress",
             "TCP bytes by remote class (compatibility name).", "counter");
    std::map<FlowClass, uint64_t> by_class;
    for (const auto& [key, c] : counters_) {
      const auto& [cls, dir, workload] = key;
      if (dir == want) by_class[cls] += c.bytes_sent + c.bytes_received;
    }
    for (const auto& [cls, bytes] : by_class) {
      w.Sample({{"type", FlowClassName(cls)}}, static_cast<double>(bytes));
    }
  }
  w.Family("primus_lens_network_k8s_tcp_flow",
           "TCP bytes by pod (compatibility name).", "counter");
  for (const auto& [key, c] : counters_) {
    const auto& [cls, dir, workload] = key;
    if (workload == "host") continue;
    const size_t slash = workload.find('/');
    w.Sample({{"namespace", std::string_view(workload).substr(0, slash)},
              {"pod", std::string_view(workload).substr(slash + 1)},
              {"type", FlowClassName(cls)},
              {"direction", FlowDirectionName(dir)}},
             static_cast<double>(c.bytes_sent + c.bytes_received));
  }
  w.Family("primus_lens_network_tcp_flow_rtt",
           "TCP smoothed RTT in microseconds (compatibility name).",
           "histogram");
  std::map<FlowClass, Rtt> by_class;
  for (const auto& [key, r] : rtt_) {
    Rtt& t = by_class[key.first];
    for (int i = 0; i < kFlowRttBuckets; ++i) t.buckets[i] += r.buckets[i];
    t.sum_us += r.sum_us;
    t.count += r.count;
  }
  for (const auto& [cls, r] : by_class) {
    const Label labels[] = {{"type", FlowClassName(cls)}};
    w.HistogramSeries(labels, RttBounds(), Cumulative(r.buckets, r.count),
                      static_cast<double>(r.sum_us), r.count);
  }
}

}  // namespace lens::flow
