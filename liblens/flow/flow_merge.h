// Adding one period's TcpFlow deltas into running totals, keyed by socket.
#ifndef LENS_FLOW_FLOW_MERGE_H_
#define LENS_FLOW_FLOW_MERGE_H_

#include <algorithm>
#include <cstring>
#include <string>

#include "lens/flow.h"

namespace lens::flow {

// The connection identity of a flow: addresses, ports, cgroup and open
// time, as bytes.
inline std::string FlowIdentity(const TcpFlow& f) {
  std::string key;
  key.reserve(64);
  key.append(reinterpret_cast<const char*>(f.saddr.bytes.data()), 16);
  key.append(reinterpret_cast<const char*>(f.daddr.bytes.data()), 16);
  key.append(reinterpret_cast<const char*>(&f.sport), sizeof f.sport);
  key.append(reinterpret_cast<const char*>(&f.dport), sizeof f.dport);
  key.append(reinterpret_cast<const char*>(&f.cgroup_id), sizeof f.cgroup_id);
  key.append(reinterpret_cast<const char*>(&f.open_time_ns),
             sizeof f.open_time_ns);
  key.push_back(static_cast<char>(f.saddr.family));
  return key;
}

// Adds `delta`'s counters to `total`; owner and role are kept from the first
// period that knew them.
inline void MergeFlow(const TcpFlow& delta, TcpFlow* total) {
  total->bytes_sent += delta.bytes_sent;
  total->bytes_received += delta.bytes_received;
  total->segments_sent += delta.segments_sent;
  total->segments_received += delta.segments_received;
  total->retransmits += delta.retransmits;
  if (delta.rtt_count) {
    total->rtt_min_us = total->rtt_count
                            ? std::min(total->rtt_min_us, delta.rtt_min_us)
                            : delta.rtt_min_us;
    total->rtt_max_us = std::max(total->rtt_max_us, delta.rtt_max_us);
  }
  total->rtt_count += delta.rtt_count;
  total->rtt_sum_us += delta.rtt_sum_us;
  for (int i = 0; i < kFlowRttBuckets; ++i) {
    total->rtt_histogram[i] += delta.rtt_histogram[i];
  }
  total->opened |= delta.opened;
  total->closed |= delta.closed;
  if (!total->pid && delta.pid) {
    total->pid = delta.pid;
    total->comm = delta.comm;
  }
  if (total->role == FlowRole::kUnknown) total->role = delta.role;
}

}  // namespace lens::flow

#endif  // LENS_FLOW_FLOW_MERGE_H_
