// SPDX-License-Identifier: GPL-2.0
// TCP flow accounting in the kernel: one LRU hash entry per socket (5-tuple +
// cgroup id) with bytes, segments, retransmits and srtt statistics, plus
// open/close events through a bounded ring buffer. Userspace
// (liblens/flow/) drains the map periodically; nothing per segment crosses
// into userspace.
//
// Two sets of programs, one loaded (the loader picks; "?" in a section name
// means autoload off):
// - socket storage (default): BTF-typed raw tracepoints (tp_btf) on
//   sock/inet_sock_set_state, sock/sock_send_length, sock/sock_recv_length,
//   tcp/tcp_retransmit_skb and (optionally) tcp/tcp_probe; each socket's flow
//   key lives in the socket itself (socket-local storage), so a read or write
//   costs one hash lookup (the flow's).
// - address hash: plain raw tracepoints (raw_tp) on the same tracepoints, or
//   kprobes for the bytes on kernels older than 6.3 (which lack
//   sock/sock_{send,recv}_length). For kernels that refuse tracing programs
//   (tp_btf, iterators: some hardened or virtual-machine kernels) or lack
//   socket storage in them. Socket entries live in `sock_keys`, keyed by the
//   socket's address, and bytes go straight into the flow.
// struct sock is read with CO-RE in both.
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
// srtt is a smoothed value: one sample per socket per kernel tick (1 to 10
// ms by CONFIG_HZ) describes it as well as one per segment or per read, at
// a fraction of the cost. Ticks, not bpf_ktime_get_ns(): jiffies is a plain
// load, the clock a paravirtual read on every event (the coarse clock is
// not offered to tracing programs).
const volatile __u64 rtt_sample_jiffies = 1;
// 0: srtt is sampled when the application reads or writes (no per-segment
// program at all); 1: from tcp_probe, for every received segment.
const volatile __u8 rtt_per_segment = 0;

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);  // resized by the loader
  __type(key, struct lens_flow_key);
  __type(value, struct lens_flow_value);
} flows SEC(".maps");

// What the probe keeps in each socket (socket-local storage, freed with the
// socket, in the memory the socket's own reads and writes keep warm): its
// flow key once known; bytes not yet moved into the flow's entry (a read or
// write adds here, and they move at most once per tick, at the close, and
// at every userspace drain through lens_fold_pending); when srtt is
// sampled next; and the owner (the process that called connect(), recorded
// at SYN_SENT in process context, or the first to read or write).
struct sock_entry {
  struct lens_flow_key key;
  __u64 pending_sent;
  __u64 pending_received;
  __u64 next_fold_jiffies;  // bytes move (and srtt is sampled) once per tick
  __u64 next_rtt_jiffies;   // tcp_probe's samples, once per tick
  __u32 owner_pid;
  __u8 has_key;
  __u8 pad[3];
  char owner_comm[LENS_FLOW_COMM_LEN];
};

struct {
  __uint(type, BPF_MAP_TYPE_SK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct sock_entry);
} socks SEC(".maps");

// The address-hash programs' socket entries: socket address -> entry,
// written from SYN_SENT or ESTABLISHED and removed at TCP_CLOSE, so a
// recycled struct sock never inherits a stale key.
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);  // the loader sizes it with `flows`, or 1
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

// The socket's entry with its key, created (key computed) the first time a
// socket that predates the probes shows up. NULL for sockets other than TCP
// over IPv4/IPv6. tp_btf programs only: `sk` must be a BTF pointer.
static __always_inline struct sock_entry *socket_entry(const struct sock *sk) {
  struct sock_entry *e = bpf_sk_storage_get(&socks, (void *)sk, 0, 0);
  if (e && e->has_key) return e;
  if (!is_tcp_ip(sk)) return 0;
  if (!e) {
    e = bpf_sk_storage_get(&socks, (void *)sk, 0,
                           BPF_SK_STORAGE_GET_F_CREATE);
    if (!e) return 0;
  }
  if (!flow_key_of(sk, &e->key)) return 0;
  e->has_key = 1;
  return e;
}

// The address-hash programs' entry with its key: from `sock_keys`, or
// `scratch` filled and cached (a fresh entry lives on the caller's stack
// until the next event finds it in the map).
static __always_inline struct sock_entry *hashed_entry(
    const struct sock *sk, struct sock_entry *scratch) {
  __u64 skp = (__u64)sk;
  struct sock_entry *e = bpf_map_lookup_elem(&sock_keys, &skp);
  if (e && e->has_key) return e;
  if (!is_tcp_ip(sk)) return 0;
  if (e) {  // connecting (SYN_SENT): the owner is known, the key not yet
    if (!flow_key_of(sk, &e->key)) return 0;
    e->has_key = 1;
    return e;
  }
  if (!flow_key_of(sk, &scratch->key)) return 0;
  scratch->has_key = 1;
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

// Moves the socket's pending bytes, and its owner, into its flow's entry
// (created if needed). Exchanges, not reads: a read or write on another CPU
// meanwhile adds to what stays pending, never to what moved.
static __always_inline struct lens_flow_value *fold(struct sock_entry *e) {
  struct lens_flow_value *v = flow_get_or_create(&e->key);
  if (!v) return 0;
  __u64 sent = __sync_lock_test_and_set(&e->pending_sent, 0);
  __u64 received = __sync_lock_test_and_set(&e->pending_received, 0);
  if (sent) __sync_fetch_and_add(&v->bytes_sent, sent);
  if (received) __sync_fetch_and_add(&v->bytes_received, received);
  if (!v->pid && e->owner_pid) {
    v->pid = e->owner_pid;
    __builtin_memcpy(v->comm, e->owner_comm, sizeof(v->comm));
  }
  return v;
}

// The socket's entry, created if `create`: in the socket (socket storage,
// tp_btf programs only: `sk` must be a BTF pointer) or in `sock_keys`
// (hashed). `hashed` is a constant at every call: the other branch is
// compiled out.
static __always_inline struct sock_entry *entry_of(const struct sock *sk,
                                                   const bool hashed,
                                                   const bool create) {
  if (!hashed) {
    return bpf_sk_storage_get(&socks, (void *)sk, 0,
                              create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
  }
  __u64 skp = (__u64)sk;
  struct sock_entry *e = bpf_map_lookup_elem(&sock_keys, &skp);
  if (e || !create) return e;
  struct sock_entry zero = {};
  bpf_map_update_elem(&sock_keys, &skp, &zero, BPF_NOEXIST);
  return bpf_map_lookup_elem(&sock_keys, &skp);
}

static __always_inline void forget(const struct sock *sk, const bool hashed) {
  if (!hashed) {
    bpf_sk_storage_delete(&socks, (void *)sk);
    return;
  }
  __u64 skp = (__u64)sk;
  bpf_map_delete_elem(&sock_keys, &skp);
}

static __always_inline void on_state(const struct sock *sk, int oldstate,
                                     int newstate, const bool hashed) {
  if (newstate == TCP_SYN_SENT) {
    // Process context (connect()): remember who connects.
    struct sock_entry *e = entry_of(sk, hashed, true);
    if (!e) return;
    e->owner_pid = bpf_get_current_pid_tgid() >> 32;
    bpf_get_current_comm(e->owner_comm, sizeof(e->owner_comm));
    return;
  }
  if (newstate == TCP_ESTABLISHED &&
      (oldstate == TCP_SYN_SENT || oldstate == TCP_SYN_RECV)) {
    struct sock_entry *e = entry_of(sk, hashed, true);
    if (!e || !flow_key_of(sk, &e->key)) return;
    // Accepted: the owner is whoever first reads or writes (a hashed entry
    // may be a recycled address's).
    if (oldstate == TCP_SYN_RECV) e->owner_pid = 0;
    // A new connection never adds to an older one's entry: take the first
    // generation of this tuple not in the table (the last one if all are).
    for (__u16 g = 0; g < LENS_FLOW_GENERATIONS; ++g) {
      e->key.generation = g;
      if (!bpf_map_lookup_elem(&flows, &e->key)) break;
    }
    e->has_key = 1;
    e->pending_sent = 0;
    e->pending_received = 0;
    e->next_fold_jiffies = 0;
    e->next_rtt_jiffies = 0;
    struct lens_flow_value *v = flow_get_or_create(&e->key);
    if (!v) return;
    v->open_ns = bpf_ktime_get_ns();
    if (oldstate == TCP_SYN_SENT) {
      v->role = LENS_FLOW_ROLE_ACTIVE;
      count(LENS_FLOW_STAT_ACTIVE_OPENS);
      if (e->owner_pid) {
        v->pid = e->owner_pid;
        __builtin_memcpy(v->comm, e->owner_comm, sizeof(v->comm));
      }
    } else {
      // Softirq context: the owner is whoever first reads or writes.
      v->role = LENS_FLOW_ROLE_PASSIVE;
      count(LENS_FLOW_STAT_PASSIVE_OPENS);
    }
    emit(&e->key, v, LENS_FLOW_EVENT_OPEN);
    return;
  }
  if (newstate != TCP_CLOSE) return;
  if (oldstate == TCP_SYN_SENT) {
    forget(sk, hashed);
    count(LENS_FLOW_STAT_CONNECT_FAILED);
    return;
  }
  if (oldstate == TCP_LISTEN) return;
  struct lens_flow_key key = {};
  struct lens_flow_value *v = 0;
  struct sock_entry *e = entry_of(sk, hashed, false);
  if (e && e->has_key) {
    key = e->key;
    // The last pending bytes (hashed programs keep none pending).
    v = hashed ? bpf_map_lookup_elem(&flows, &key) : fold(e);
  } else if (flow_key_of(sk, &key)) {
    v = bpf_map_lookup_elem(&flows, &key);
  }
  // A socket can connect again after a close: it starts without a key.
  if (e) forget(sk, hashed);
  if (!v) return;  // no traffic seen: nothing to account
  read_segments(sk, v);
  v->close_ns = bpf_ktime_get_ns();
  v->closed = 1;
  count(LENS_FLOW_STAT_CLOSES);
  emit(&key, v, LENS_FLOW_EVENT_CLOSE);
}

static __always_inline void record_rtt(const struct sock *sk,
                                       struct lens_flow_value *v);

// A read or write (tp_btf programs): counted in the socket; once per tick
// the bytes move to the flow and srtt is sampled.
static __always_inline void add_pending(const struct sock *sk,
                                        struct sock_entry *e, int bytes,
                                        bool sent) {
  if (sent) {
    __sync_fetch_and_add(&e->pending_sent, (__u64)bytes);
  } else {
    __sync_fetch_and_add(&e->pending_received, (__u64)bytes);
  }
  if (!e->owner_pid) {  // reads and writes run in the application's context
    e->owner_pid = bpf_get_current_pid_tgid() >> 32;
    bpf_get_current_comm(e->owner_comm, sizeof(e->owner_comm));
  }
  __u64 now = bpf_jiffies64();
  if (now < e->next_fold_jiffies) return;
  e->next_fold_jiffies = now + rtt_sample_jiffies;
  struct lens_flow_value *v = fold(e);
  if (!v) return;
  read_segments(sk, v);
  if (!rtt_per_segment) record_rtt(sk, v);
}

// A read or write seen by the address-hash programs: straight into the
// flow.
static __always_inline void add_direct(const struct sock *sk,
                                       struct sock_entry *e, int bytes,
                                       bool sent) {
  struct lens_flow_value *v = flow_get_or_create(&e->key);
  if (!v) return;
  if (sent) {
    __sync_fetch_and_add(&v->bytes_sent, (__u64)bytes);
  } else {
    __sync_fetch_and_add(&v->bytes_received, (__u64)bytes);
  }
  set_owner_from_current(v);
  __u64 now = bpf_jiffies64();
  if (now < e->next_fold_jiffies) return;
  e->next_fold_jiffies = now + rtt_sample_jiffies;
  read_segments(sk, v);
  if (!rtt_per_segment) record_rtt(sk, v);
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

// One srtt sample into the flow (callers limit how often).
static __always_inline void record_rtt(const struct sock *sk,
                                       struct lens_flow_value *v) {
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
static __always_inline void on_segment(const struct sock *sk,
                                       const bool hashed) {
  struct sock_entry *e = entry_of(sk, hashed, false);
  if (!e || !e->has_key) return;
  __u64 now = bpf_jiffies64();
  if (now < e->next_rtt_jiffies) return;
  e->next_rtt_jiffies = now + rtt_sample_jiffies;
  struct lens_flow_value *v = bpf_map_lookup_elem(&flows, &e->key);
  if (v) record_rtt(sk, v);
}

static __always_inline void on_retransmit(const struct sock *sk,
                                          const bool hashed) {
  struct sock_entry scratch = {};
  struct sock_entry *e = hashed ? hashed_entry(sk, &scratch) : socket_entry(sk);
  if (!e) return;
  struct lens_flow_value *v = bpf_map_lookup_elem(&flows, &e->key);
  if (v) __sync_fetch_and_add(&v->retransmits, 1);
}

// Every program is a BTF-typed raw tracepoint: attached by name (no tracefs
// needed) and handed the kernel's arguments directly, without the trace
// record a classic tracepoint formats first (for tcp_probe, two socket
// addresses and a dozen fields per segment); the typed socket pointer is
// what socket-local storage needs.
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(lens_inet_sock_set_state, const struct sock *sk, int oldstate,
             int newstate) {
  if (!is_tcp_ip(sk)) return 0;  // also fires for SCTP, DCCP, MPTCP
  on_state(sk, oldstate, newstate, false);
  return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(lens_sock_send_length, struct sock *sk, int ret, int flags) {
  if (ret <= 0) return 0;
  struct sock_entry *e = socket_entry(sk);  // NULL for UDP, unix, ...
  if (e) add_pending(sk, e, ret, true);
  return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(lens_sock_recv_length, struct sock *sk, int ret, int flags) {
  if (ret <= 0 || (flags & MSG_PEEK)) return 0;
  struct sock_entry *e = socket_entry(sk);
  if (e) add_pending(sk, e, ret, false);
  return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(lens_tcp_probe, struct sock *sk, const struct sk_buff *skb) {
  on_segment(sk, false);
  return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(lens_tcp_retransmit_skb, const struct sock *sk,
             const struct sk_buff *skb) {
  on_retransmit(sk, false);
  return 0;
}

// Run by userspace before each drain: every socket's pending bytes move to
// its flow, so an idle socket's last writes are not held back.
SEC("iter/bpf_sk_storage_map")
int lens_fold_pending(struct bpf_iter__bpf_sk_storage_map *ctx) {
  struct sock *sk = ctx->sk;
  if (!sk || !ctx->value) return 0;
  struct sock_entry *e = bpf_sk_storage_get(&socks, sk, 0, 0);
  if (e && e->has_key && (e->pending_sent || e->pending_received)) fold(e);
  return 0;
}

// The address-hash programs: the same tracepoints as plain raw tracepoints
// (arguments as the tracepoint passes them, struct sock read with
// bpf_probe_read_kernel through CO-RE).
SEC("?raw_tp/inet_sock_set_state")
int BPF_PROG(lens_raw_inet_sock_set_state, const struct sock *sk,
             int oldstate, int newstate) {
  if (!is_tcp_ip(sk)) return 0;
  on_state(sk, oldstate, newstate, true);
  return 0;
}

SEC("?raw_tp/sock_send_length")
int BPF_PROG(lens_raw_sock_send_length, struct sock *sk, int ret, int flags) {
  if (ret <= 0) return 0;
  struct sock_entry scratch = {};
  struct sock_entry *e = hashed_entry(sk, &scratch);
  if (e) add_direct(sk, e, ret, true);
  return 0;
}

SEC("?raw_tp/sock_recv_length")
int BPF_PROG(lens_raw_sock_recv_length, struct sock *sk, int ret, int flags) {
  if (ret <= 0 || (flags & MSG_PEEK)) return 0;
  struct sock_entry scratch = {};
  struct sock_entry *e = hashed_entry(sk, &scratch);
  if (e) add_direct(sk, e, ret, false);
  return 0;
}

SEC("?raw_tp/tcp_probe")
int BPF_PROG(lens_raw_tcp_probe, struct sock *sk, const struct sk_buff *skb) {
  on_segment(sk, true);
  return 0;
}

SEC("?raw_tp/tcp_retransmit_skb")
int BPF_PROG(lens_raw_tcp_retransmit_skb, const struct sock *sk,
             const struct sk_buff *skb) {
  on_retransmit(sk, true);
  return 0;
}

// Address-hash bytes for kernels without sock/sock_{send,recv}_length
// (before 6.3).
// tcp_sendmsg's size is what the application asked to send (the same as the
// tracepoint's for blocking sockets); tcp_cleanup_rbuf's `copied` is what a
// read consumed.
SEC("?kprobe/tcp_sendmsg")
int BPF_KPROBE(lens_kprobe_tcp_sendmsg, struct sock *sk, void *msg,
               size_t size) {
  if ((int)size <= 0) return 0;
  struct sock_entry scratch = {};
  struct sock_entry *e = hashed_entry(sk, &scratch);
  if (e) add_direct(sk, e, (int)size, true);
  return 0;
}

SEC("?kprobe/tcp_cleanup_rbuf")
int BPF_KPROBE(lens_kprobe_tcp_cleanup_rbuf, struct sock *sk, int copied) {
  if (copied <= 0) return 0;
  struct sock_entry scratch = {};
  struct sock_entry *e = hashed_entry(sk, &scratch);
  if (e) add_direct(sk, e, copied, false);
  return 0;
}
