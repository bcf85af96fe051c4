// SPDX-License-Identifier: GPL-2.0
// TCP flow accounting in the kernel: one LRU hash entry per socket (5-tuple +
// cgroup id) with bytes, segments, retransmits and srtt statistics, plus
// open/close events through a bounded ring buffer. Userspace
// (liblens/flow/) drains the map periodically; nothing per segment crosses
// into userspace.
//
// Programs are raw tracepoints on sock/inet_sock_set_state,
// sock/sock_send_length, sock/sock_recv_length, tcp/tcp_retransmit_skb and
// (optionally) tcp/tcp_probe; struct sock is read with CO-RE. The kprobe
// variants at the end are for kernels older than 6.3, which lack
// sock/sock_{send,recv}_length; they are not loaded unless the loader turns
// them on ("?" in the section name: autoload off).
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tcp_flow.h"

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define MSG_PEEK 2

// TCP states (include/net/tcp_states.h).
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_SYN_RECV 3
#define TCP_CLOSE 7
#define TCP_LISTEN 10

char LICENSE[] SEC("license") = "GPL";

// Set by the loader before load.
const volatile __u32 flow_map_entries_hint = 0;  // informational
const volatile __u8 emit_events = 1;
// tcp_probe fires for every received segment; srtt is a smoothed value, so
// one sample per socket per millisecond describes it as well as all of them
// at a fraction of the cost.
const volatile __u64 rtt_sample_ns = 1000000;
// 0: srtt is sampled when the application reads or writes (no per-segment
// program at all); 1: from tcp_probe, for every received segment.
const volatile __u8 rtt_per_segment = 0;

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);  // resized by the loader
  __type(key, struct lens_flow_key);
  __type(value, struct lens_flow_value);
} flows SEC(".maps");

// connect() in progress: the socket's owner, recorded in process context at
// SYN_SENT (when the source port is not chosen yet) and used at ESTABLISHED.
struct connect_owner {
  __u32 pid;
  char comm[LENS_FLOW_COMM_LEN];
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u64);  // struct sock *
  __type(value, struct connect_owner);
} connecting SEC(".maps");

// The flow key of each live socket, so the per-segment and per-syscall
// programs do one (inlined) hash lookup instead of eight kernel reads.
// Written when a socket is first seen or established, removed at TCP_CLOSE,
// so a recycled struct sock never inherits a stale key.
struct sock_entry {
  struct lens_flow_key key;
  __u64 next_rtt_ns;  // srtt is sampled at most once per rtt_sample_ns
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);  // resized with `flows`
  __type(key, __u64);          // struct sock *
  __type(value, struct sock_entry);
} sock_keys SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);  // resized by the loader
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LENS_FLOW_STAT_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 stat) {
  __u64 *v = bpf_map_lookup_elem(&stats, &stat);
  if (v) *v += 1;  // per-CPU: no atomics needed
}

// The socket's cgroup v2 id. Kernels since 5.15 keep a cgroup pointer in
// sock_cgroup_data; older ones pack it into `val`, which we do not decode.
static __always_inline __u64 sock_cgroup_id(const struct sock *sk) {
  if (!bpf_core_field_exists(sk->sk_cgrp_data.cgroup)) return 0;
  struct cgroup *cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup);
  if (!cg) return 0;
  return BPF_CORE_READ(cg, kn, id);
}

// Fills `key` from the socket; false for anything but TCP over IPv4/IPv6.
static __always_inline bool flow_key_of(const struct sock *sk,
                                        struct lens_flow_key *key) {
  __u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
  // Read into typed locals: BPF_CORE_READ_INTO copies sizeof(*dst), which
  // for a byte array would be one byte.
  if (family == AF_INET) {
    __u32 saddr = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
    __u32 daddr = BPF_CORE_READ(sk, __sk_common.skc_daddr);
    __builtin_memcpy(key->saddr, &saddr, sizeof(saddr));
    __builtin_memcpy(key->daddr, &daddr, sizeof(daddr));
  } else if (family == AF_INET6) {
    struct in6_addr saddr6 = BPF_CORE_READ(sk, __sk_common.skc_v6_rcv_saddr);
    struct in6_addr daddr6 = BPF_CORE_READ(sk, __sk_common.skc_v6_daddr);
    __builtin_memcpy(key->saddr, &saddr6, sizeof(saddr6));
    __builtin_memcpy(key->daddr, &daddr6, sizeof(daddr6));
  } else {
    return false;
  }
  key->family = family;
  // inet_sport, not skc_num: at TCP_CLOSE the port is already released
  // (inet_put_port zeroes skc_num before the state tracepoint fires).
  key->sport = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
  key->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
  key->cgroup_id = sock_cgroup_id(sk);
  return true;
}

static __always_inline bool is_tcp_ip(const struct sock *sk) {
  __u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
  if (family != AF_INET && family != AF_INET6) return false;
  return BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) == IPPROTO_TCP;
}

// The socket's cache entry, or `scratch` filled and cached (a fresh entry
// lives on the caller's stack until the next event finds it in the map).
// NULL for sockets other than TCP over IPv4/IPv6.
static __always_inline struct sock_entry *cached_entry(
    const struct sock *sk, struct sock_entry *scratch) {
  __u64 skp = (__u64)sk;
  struct sock_entry *e = bpf_map_lookup_elem(&sock_keys, &skp);
  if (e) return e;
  if (!is_tcp_ip(sk) || !flow_key_of(sk, &scratch->key)) return 0;
  scratch->next_rtt_ns = 0;
  bpf_map_update_elem(&sock_keys, &skp, scratch, BPF_ANY);
  return scratch;
}

static __always_inline void read_segments(const struct sock *sk,
                                          struct lens_flow_value *v) {
  const struct tcp_sock *tp = (const struct tcp_sock *)sk;
  v->segs_out = BPF_CORE_READ(tp, segs_out);
  v->segs_in = BPF_CORE_READ(tp, segs_in);
}

static __always_inline struct lens_flow_value *flow_get_or_create(
    const struct lens_flow_key *key) {
  struct lens_flow_value *v = bpf_map_lookup_elem(&flows, key);
  if (v) return v;
  struct lens_flow_value zero = {};
  // BPF_NOEXIST: a concurrent creator on another CPU wins, we use its entry.
  if (bpf_map_update_elem(&flows, key, &zero, BPF_NOEXIST) == 0) {
    count(LENS_FLOW_STAT_FLOWS_CREATED);
  }
  v = bpf_map_lookup_elem(&flows, key);
  if (!v) count(LENS_FLOW_STAT_FLOW_CREATE_FAILED);
  return v;
}

static __always_inline void set_owner_from_current(struct lens_flow_value *v) {
  if (v->pid) return;
  v->pid = bpf_get_current_pid_tgid() >> 32;
  bpf_get_current_comm(v->comm, sizeof(v->comm));
}

static __always_inline void emit(const struct lens_flow_key *key,
                                 const struct lens_flow_value *v, __u8 type) {
  if (!emit_events) return;
  struct lens_flow_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    count(LENS_FLOW_STAT_EVENTS_DROPPED);
    return;
  }
  __builtin_memcpy(&e->key, key, sizeof(*key));
  e->ts_ns = bpf_ktime_get_ns();
  e->bytes_sent = v->bytes_sent;
  e->bytes_received = v->bytes_received;
  e->pid = v->pid;
  e->type = type;
  e->role = v->role;
  e->pad = 0;
  __builtin_memcpy(e->comm, v->comm, sizeof(e->comm));
  // Wake the reader only once a quarter of the buffer is used: a wakeup
  // per event would cost more than the event. The reader also polls on a
  // short timeout, so nothing waits long.
  __u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
  __u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
  bpf_ringbuf_submit(e, used >= size / 4 ? BPF_RB_FORCE_WAKEUP
                                         : BPF_RB_NO_WAKEUP);
}

static __always_inline void on_state(const struct sock *sk, int oldstate,
                                     int newstate) {
  __u64 skp = (__u64)sk;
  if (newstate == TCP_SYN_SENT) {
    // Process context (connect()): remember who connects.
    struct connect_owner owner = {};
    owner.pid = bpf_get_current_pid_tgid() >> 32;
    bpf_get_current_comm(owner.comm, sizeof(owner.comm));
    bpf_map_update_elem(&connecting, &skp, &owner, BPF_ANY);
    return;
  }
  struct sock_entry entry = {};
  struct lens_flow_key key = {};
  if (newstate == TCP_ESTABLISHED &&
      (oldstate == TCP_SYN_SENT || oldstate == TCP_SYN_RECV)) {
    if (!flow_key_of(sk, &entry.key)) return;
    // A new connection never adds to an older one's entry: take the first
    // generation of this tuple not in the table (the last one if all are).
    for (__u16 g = 0; g < LENS_FLOW_GENERATIONS; ++g) {
      entry.key.generation = g;
      if (!bpf_map_lookup_elem(&flows, &entry.key)) break;
    }
    bpf_map_update_elem(&sock_keys, &skp, &entry, BPF_ANY);
    key = entry.key;
    struct lens_flow_value *v = flow_get_or_create(&key);
    if (!v) return;
    v->open_ns = bpf_ktime_get_ns();
    if (oldstate == TCP_SYN_SENT) {
      v->role = LENS_FLOW_ROLE_ACTIVE;
      count(LENS_FLOW_STAT_ACTIVE_OPENS);
      struct connect_owner *owner = bpf_map_lookup_elem(&connecting, &skp);
      if (owner) {
        v->pid = owner->pid;
        __builtin_memcpy(v->comm, owner->comm, sizeof(v->comm));
        bpf_map_delete_elem(&connecting, &skp);
      }
    } else {
      // Softirq context: the owner is whoever first reads or writes.
      v->role = LENS_FLOW_ROLE_PASSIVE;
      count(LENS_FLOW_STAT_PASSIVE_OPENS);
    }
    emit(&key, v, LENS_FLOW_EVENT_OPEN);
    return;
  }
  if (newstate != TCP_CLOSE) return;
  if (oldstate == TCP_SYN_SENT) {
    bpf_map_delete_elem(&connecting, &skp);
    count(LENS_FLOW_STAT_CONNECT_FAILED);
    return;
  }
  if (oldstate == TCP_LISTEN) return;
  const struct sock_entry *cached = bpf_map_lookup_elem(&sock_keys, &skp);
  if (cached) {
    key = cached->key;
    bpf_map_delete_elem(&sock_keys, &skp);
  } else if (!flow_key_of(sk, &key)) {
    return;
  }
  struct lens_flow_value *v = bpf_map_lookup_elem(&flows, &key);
  if (!v) return;  // no traffic seen: nothing to account
  read_segments(sk, v);
  v->close_ns = bpf_ktime_get_ns();
  v->closed = 1;
  count(LENS_FLOW_STAT_CLOSES);
  emit(&key, v, LENS_FLOW_EVENT_CLOSE);
}

static __always_inline void sample_rtt(const struct sock *sk,
                                       struct sock_entry *e,
                                       struct lens_flow_value *v);

static __always_inline void on_bytes(const struct sock *sk, int bytes,
                                     bool sent) {
  if (bytes <= 0) return;
  struct sock_entry scratch = {};
  struct sock_entry *e = cached_entry(sk, &scratch);
  if (!e) return;
  struct lens_flow_value *v = flow_get_or_create(&e->key);
  if (!v) return;
  if (sent) {
    __sync_fetch_and_add(&v->bytes_sent, (__u64)bytes);
  } else {
    __sync_fetch_and_add(&v->bytes_received, (__u64)bytes);
  }
  set_owner_from_current(v);  // send/recv run in the application's context
  if (!rtt_per_segment) sample_rtt(sk, e, v);
}

static __always_inline __u32 log2_u32(__u32 v) {
  __u32 r = (v > 0xFFFF) << 4;
  v >>= r;
  __u32 shift = (v > 0xFF) << 3;
  v >>= shift;
  r |= shift;
  shift = (v > 0xF) << 2;
  v >>= shift;
  r |= shift;
  shift = (v > 0x3) << 1;
  v >>= shift;
  r |= shift;
  r |= (v >> 1);
  return r;
}

// One srtt sample (at most one per socket per rtt_sample_ns), and the
// segment counters with it.
static __always_inline void sample_rtt(const struct sock *sk,
                                       struct sock_entry *e,
                                       struct lens_flow_value *v) {
  __u64 now = bpf_ktime_get_ns();
  if (now < e->next_rtt_ns) return;
  e->next_rtt_ns = now + rtt_sample_ns;
  read_segments(sk, v);
  const struct tcp_sock *tp = (const struct tcp_sock *)sk;
  __u32 srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3;  // the kernel keeps it <<3
  if (srtt_us == 0) return;  // no RTT measured yet
  __sync_fetch_and_add(&v->rtt_sum_us, (__u64)srtt_us);
  __sync_fetch_and_add(&v->rtt_count, 1);
  // Racy min/max across CPUs; a lost update only loosens the bound.
  if (v->rtt_min_us == 0 || srtt_us < v->rtt_min_us) v->rtt_min_us = srtt_us;
  if (srtt_us > v->rtt_max_us) v->rtt_max_us = srtt_us;
  __u32 bucket = log2_u32(srtt_us);
  if (bucket >= LENS_FLOW_RTT_BUCKETS) bucket = LENS_FLOW_RTT_BUCKETS - 1;
  __sync_fetch_and_add(&v->rtt_hist[bucket], 1);
}

// tcp_probe (per received segment): only sockets already known; a segment
// alone neither computes a key nor creates an entry.
static __always_inline void on_segment(const struct sock *sk) {
  __u64 skp = (__u64)sk;
  struct sock_entry *e = bpf_map_lookup_elem(&sock_keys, &skp);
  if (!e) return;
  struct lens_flow_value *v = bpf_map_lookup_elem(&flows, &e->key);
  if (v) sample_rtt(sk, e, v);
}

static __always_inline void on_retransmit(const struct sock *sk) {
  struct sock_entry scratch = {};
  struct sock_entry *e = cached_entry(sk, &scratch);
  if (!e) return;
  struct lens_flow_value *v = bpf_map_lookup_elem(&flows, &e->key);
  if (v) __sync_fetch_and_add(&v->retransmits, 1);
}

// Every program is a raw tracepoint: the tracepoints named above, attached
// by name (no tracefs needed) and handed the kernel's arguments directly,
// without the trace record a classic tracepoint formats first (for
// tcp_probe, two socket addresses and a dozen fields per segment).
SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(lens_inet_sock_set_state, const struct sock *sk, int oldstate,
             int newstate) {
  if (!is_tcp_ip(sk)) return 0;  // also fires for SCTP, DCCP, MPTCP
  on_state(sk, oldstate, newstate);
  return 0;
}

SEC("raw_tp/sock_send_length")
int BPF_PROG(lens_sock_send_length, struct sock *sk, int ret, int flags) {
  on_bytes(sk, ret, true);  // non-TCP sockets end at the key cache miss
  return 0;
}

SEC("raw_tp/sock_recv_length")
int BPF_PROG(lens_sock_recv_length, struct sock *sk, int ret, int flags) {
  if (flags & MSG_PEEK) return 0;
  on_bytes(sk, ret, false);
  return 0;
}

SEC("raw_tp/tcp_probe")
int BPF_PROG(lens_tcp_probe, struct sock *sk, const struct sk_buff *skb) {
  on_segment(sk);
  return 0;
}

SEC("raw_tp/tcp_retransmit_skb")
int BPF_PROG(lens_tcp_retransmit_skb, const struct sock *sk,
             const struct sk_buff *skb) {
  on_retransmit(sk);
  return 0;
}

// Fallbacks for kernels without sock/sock_{send,recv}_length (before 6.3).
// tcp_sendmsg's size is what the application asked to send (the same as the
// tracepoint's for blocking sockets); tcp_cleanup_rbuf's `copied` is what a
// read consumed.
SEC("?kprobe/tcp_sendmsg")
int BPF_KPROBE(lens_kprobe_tcp_sendmsg, struct sock *sk, void *msg,
               size_t size) {
  on_bytes(sk, (int)size, true);
  return 0;
}

SEC("?kprobe/tcp_cleanup_rbuf")
int BPF_KPROBE(lens_kprobe_tcp_cleanup_rbuf, struct sock *sk, int copied) {
  on_bytes(sk, copied, false);
  return 0;
}
