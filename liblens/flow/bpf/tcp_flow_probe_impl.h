// The libbpf flow probe's parts shared by its files: the program table and
// the TcpFlowProbe class (tcp_flow_probe.cc loads and drains it,
// tcp_flow_stats.cc reports its counters and run-time statistics,
// tcp_flow_open.cc checks the kernel and opens it). Only these files include
// libbpf's headers.
#ifndef LENS_FLOW_BPF_TCP_FLOW_PROBE_IMPL_H_
#define LENS_FLOW_BPF_TCP_FLOW_PROBE_IMPL_H_

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "flow/bpf/flow_key.h"
#include "flow/probe_preflight.h"
#include "lens/flow.h"
#include "lens/status.h"
#include "tcp_flow.h"
#include "tcp_flow.skel.h"

namespace lens::flow::probe_internal {

inline std::string Errno(int err) {
  return std::strerror(err < 0 ? -err : err);
}

// The probe's programs: the tracepoint (or kprobe) each attaches to, and
// where the skeleton keeps its link (destroying the skeleton detaches).
struct Program {
  bpf_program* prog;
  bpf_link** link;
};
struct ProgramSpec {
  const char* label;
  Program (*get)(tcp_flow_bpf*);
  bool required;  // without it the probe reports nothing useful
};

#define LENS_FLOW_PROGRAM(label, name, required)         \
  ProgramSpec {                                          \
    label,                                               \
        [](tcp_flow_bpf* s) {                            \
          return Program{s->progs.name, &s->links.name}; \
        },                                               \
        required                                         \
  }

// Both sets of programs (one is loaded): each pair of variants of a
// tracepoint shares its label. Attached in this order, the socket state
// program last: a socket reported as opened then had every byte of its life
// counted. With it first, a connection made while the byte programs were
// still attaching showed up opened and closed with its first bytes missing;
// now such a socket is one that predates the probe (opened stays false).
inline const ProgramSpec kPrograms[] = {
    LENS_FLOW_PROGRAM("sock/sock_send_length", lens_sock_send_length, true),
    LENS_FLOW_PROGRAM("sock/sock_recv_length", lens_sock_recv_length, true),
    LENS_FLOW_PROGRAM("tcp/tcp_probe", lens_tcp_probe, false),
    LENS_FLOW_PROGRAM("tcp/tcp_retransmit_skb", lens_tcp_retransmit_skb, false),
    LENS_FLOW_PROGRAM("sock/inet_sock_set_state", lens_inet_sock_set_state,
                      true),
    LENS_FLOW_PROGRAM("sock/sock_send_length", lens_raw_sock_send_length, true),
    LENS_FLOW_PROGRAM("sock/sock_recv_length", lens_raw_sock_recv_length, true),
    LENS_FLOW_PROGRAM("kprobe/tcp_sendmsg", lens_kprobe_tcp_sendmsg, true),
    LENS_FLOW_PROGRAM("kprobe/tcp_cleanup_rbuf", lens_kprobe_tcp_cleanup_rbuf,
                      true),
    LENS_FLOW_PROGRAM("tcp/tcp_probe", lens_raw_tcp_probe, false),
    LENS_FLOW_PROGRAM("tcp/tcp_retransmit_skb", lens_raw_tcp_retransmit_skb,
                      false),
    LENS_FLOW_PROGRAM("sock/inet_sock_set_state", lens_raw_inet_sock_set_state,
                      true),
};
#undef LENS_FLOW_PROGRAM

class TcpFlowProbe final : public FlowProbe {
 public:
  ~TcpFlowProbe() override {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_stopping_ = true;
    }
    stats_cv_.notify_all();
    if (sampler_.joinable()) sampler_.join();
    if (reader_.joinable()) reader_.join();
    if (ring_) ring_buffer__free(ring_);
    if (fold_link_) bpf_link__destroy(fold_link_);
    if (skel_) tcp_flow_bpf__destroy(skel_);  // detaches every link
    if (stats_fd_ >= 0) ::close(stats_fd_);
  }

  Status Load(const FlowProbeOptions& options, const ProbeKernel& kernel);
  // Why the fold iterator's start-up self-test failed (Load then fails);
  // empty when it passed or did not run.
  const std::string& fold_self_test_failure() const {
    return fold_self_test_failure_;
  }
  StatusOr<std::vector<TcpFlow>> Drain() override;
  FlowProbeStats Stats() const override;

 private:
  static int OnEvent(void* ctx, void* data, size_t size);
  std::vector<lens_flow_key> Keys() const;
  void AddDelta(const lens_flow_key& key, const lens_flow_value& cur,
                const lens_flow_value* prev, std::vector<TcpFlow>* out);
  std::vector<uint64_t> KernelCounters() const;
  // Runs lens_fold_pending over every socket: bytes the programs counted in
  // the sockets move into the flow table (socket storage only).
  Status AttachFoldIterator();
  Status FoldPending();

  // Kernel BPF run-time statistics in windows (FlowProbeOptions): the
  // sampler thread turns them on for `window` out of every `period` and
  // keeps what the programs' counters moved while they were on.
  struct Runs {
    uint64_t count = 0;
    uint64_t time_ns = 0;
  };
  std::vector<Runs> ReadRuns() const;
  void SampleStats(std::chrono::milliseconds window,
                   std::chrono::milliseconds period);
  bool OpenStatsWindow();   // stats_mu_ held
  void CloseStatsWindow();  // stats_mu_ held

  // Reads the event ring buffer continuously (the only thread touching
  // ring_ after Load), so a burst of connections between drains is not
  // dropped.
  void ReadEvents();

  tcp_flow_bpf* skel_ = nullptr;
  bpf_link* fold_link_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> events_received_{0};
  std::thread sampler_;
  mutable std::mutex stats_mu_;
  std::condition_variable stats_cv_;
  bool stats_stopping_ = false;  // guarded by stats_mu_
  int stats_fd_ = -1;            // an open window; guarded by stats_mu_
  std::chrono::steady_clock::time_point window_open_;
  std::vector<Runs> window_base_;  // counters when the window opened
  std::vector<Runs> sampled_ = std::vector<Runs>(std::size(kPrograms));
  uint64_t sampled_ns_ = 0;  // closed windows' length
  std::string byte_source_;
  std::string socket_entries_;
  std::string socket_entries_reason_;
  std::vector<bool> attached_ = std::vector<bool>(std::size(kPrograms));
  uint32_t capacity_ = 0;
  std::string fold_self_test_failure_;
  // Last cumulative value of every socket in the table (Drain's thread).
  std::unordered_map<lens_flow_key, lens_flow_value, FlowKeyHash, FlowKeyEqual>
      prev_;
  uint64_t evicted_ = 0;
  uint64_t drains_ = 0;
  uint32_t map_entries_ = 0;
};

}  // namespace lens::flow::probe_internal

#endif  // LENS_FLOW_BPF_TCP_FLOW_PROBE_IMPL_H_
