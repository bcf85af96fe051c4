// Structures shared by bpf/tcp_flow.bpf.c and its loader in liblens/flow/.
// Fixed-width types only: this header is compiled for the BPF target and for
// userspace.
#ifndef LENS_BPF_TCP_FLOW_H_
#define LENS_BPF_TCP_FLOW_H_

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

// log2 of srtt in microseconds: bucket i holds [2^i, 2^(i+1)).
#define LENS_FLOW_RTT_BUCKETS 32
#define LENS_FLOW_COMM_LEN 16
#define LENS_FLOW_GENERATIONS 8

// One socket as the kernel sees it: local then remote end, ports in host
// byte order, IPv4 addresses in the first 4 bytes. cgroup_id is the socket's
// cgroup v2 id (the creating task's cgroup; an accepted socket inherits the
// listener's), 0 where the kernel has no cgroup v2 data.
struct lens_flow_key {
  __u8 saddr[16];
  __u8 daddr[16];
  __u16 sport;
  __u16 dport;
  __u16 family;  // AF_INET (2) or AF_INET6 (10)
  // Tells apart connections that reuse a 4-tuple before userspace drained
  // the closed one (TIME_WAIT reuse on loopback, SYN on a TIME_WAIT socket):
  // the first free of LENS_FLOW_GENERATIONS slots at the open.
  __u16 generation;
  __u64 cgroup_id;
};

enum lens_flow_role {
  LENS_FLOW_ROLE_UNKNOWN = 0,  // opened before the probes were attached
  LENS_FLOW_ROLE_ACTIVE = 1,   // this host connected
  LENS_FLOW_ROLE_PASSIVE = 2,  // this host accepted
};

// Running totals of one socket since the probes saw it first. Counters only
// grow; userspace computes deltas.
struct lens_flow_value {
  __u64 bytes_sent;      // sock_send_length (what the application wrote)
  __u64 bytes_received;  // sock_recv_length, MSG_PEEK excluded
  __u64 retransmits;     // tcp_retransmit_skb
  __u64 rtt_sum_us;      // sum of srtt samples (tcp_probe)
  __u64 open_ns;         // bpf_ktime_get_ns() at the open; 0 if not seen
  __u64 close_ns;        // ... at TCP_CLOSE; 0 while open
  __u32 rtt_count;
  __u32 rtt_min_us;
  __u32 rtt_max_us;
  __u32 segs_out;  // tcp_sock counters, latest value read
  __u32 segs_in;
  __u32 pid;       // tgid of the first process seen using the socket
  __u8 role;       // enum lens_flow_role
  __u8 closed;
  __u8 pad[6];
  char comm[LENS_FLOW_COMM_LEN];
  __u32 rtt_hist[LENS_FLOW_RTT_BUCKETS];
};

enum lens_flow_event_type {
  LENS_FLOW_EVENT_OPEN = 1,
  LENS_FLOW_EVENT_CLOSE = 2,
};

// Connection open/close through the ring buffer.
struct lens_flow_event {
  struct lens_flow_key key;
  __u64 ts_ns;
  __u64 bytes_sent;  // totals at close
  __u64 bytes_received;
  __u32 pid;
  __u8 type;  // enum lens_flow_event_type
  __u8 role;
  __u16 pad;
  char comm[LENS_FLOW_COMM_LEN];
};

// Per-CPU counters of the probe's own health (array map "stats").
enum lens_flow_stat {
  LENS_FLOW_STAT_FLOWS_CREATED = 0,
  LENS_FLOW_STAT_FLOW_CREATE_FAILED,
  LENS_FLOW_STAT_EVENTS_DROPPED,  // ring buffer full
  LENS_FLOW_STAT_CONNECT_FAILED,  // SYN_SENT -> CLOSE
  LENS_FLOW_STAT_ACTIVE_OPENS,
  LENS_FLOW_STAT_PASSIVE_OPENS,
  LENS_FLOW_STAT_CLOSES,
  LENS_FLOW_STAT_COUNT,
};

#endif  // LENS_BPF_TCP_FLOW_H_
