// The kernel's flow key (bpf/tcp_flow.h) as a hash-map key in userspace, and
// its conversion to the public TcpFlow identity.
#ifndef LENS_FLOW_BPF_FLOW_KEY_H_
#define LENS_FLOW_BPF_FLOW_KEY_H_

#include <cstddef>
#include <cstring>
#include <string_view>

#include "lens/flow.h"
#include "tcp_flow.h"

namespace lens::flow {

struct FlowKeyHash {
  size_t operator()(const lens_flow_key& key) const {
    return std::hash<std::string_view>()(
        std::string_view(reinterpret_cast<const char*>(&key), sizeof key));
  }
};
struct FlowKeyEqual {
  bool operator()(const lens_flow_key& a, const lens_flow_key& b) const {
    return std::memcmp(&a, &b, sizeof a) == 0;
  }
};

// Sets addresses, ports, cgroup, owner and role of `flow` from the kernel's
// key and value.
inline void FillIdentity(const lens_flow_key& key, const lens_flow_value& value,
                         TcpFlow* flow) {
  constexpr int kAfInet = 2;
  if (key.family == kAfInet) {
    flow->saddr = IpAddress::V4(key.saddr);
    flow->daddr = IpAddress::V4(key.daddr);
  } else {
    flow->saddr = IpAddress::V6(key.saddr);
    flow->daddr = IpAddress::V6(key.daddr);
  }
  flow->sport = key.sport;
  flow->dport = key.dport;
  flow->cgroup_id = key.cgroup_id;
  flow->open_time_ns = value.open_ns;
  flow->pid = value.pid;
  flow->comm.assign(value.comm, strnlen(value.comm, sizeof value.comm));
  switch (value.role) {
    case LENS_FLOW_ROLE_ACTIVE:
      flow->role = FlowRole::kActive;
      break;
    case LENS_FLOW_ROLE_PASSIVE:
      flow->role = FlowRole::kPassive;
      break;
    default:
      flow->role = FlowRole::kUnknown;
  }
}

}  // namespace lens::flow

#endif  // LENS_FLOW_BPF_FLOW_KEY_H_
