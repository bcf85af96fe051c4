// FlowProbe on libbpf, loading and draining: loads the tcp_flow skeleton's
// programs for what the kernel offers, attaches them, and turns the kernel's
// running totals into per-drain deltas.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "flow/bpf/tcp_flow_probe_impl.h"
#include "lens/log.h"

namespace lens::flow::probe_internal {
namespace {

// libbpf reports through one process-wide callback. While a probe loads,
// its warnings (the verifier's log among them) are kept here, on the loading
// thread, so the error can quote them; otherwise they go to the debug log.
thread_local std::string* libbpf_capture = nullptr;

int LibbpfPrint(enum libbpf_print_level level, const char* format,
                va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[1024];
  int n = std::vsnprintf(line, sizeof line, format, args);
  std::string_view text(line, n > 0 ? std::min<size_t>(n, sizeof line - 1) : 0);
  if (libbpf_capture && libbpf_capture->size() < (64u << 10)) {
    libbpf_capture->append(text);
  }
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  LENS_LOG(DEBUG).Field("component", "libbpf") << text;
  return n;
}

// The last `lines` lines of captured libbpf output.
std::string Tail(const std::string& text, int lines) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  size_t begin = end;
  for (int i = 0; i < lines && begin > 0; ++i) {
    begin = text.rfind('\n', begin - 1);
    if (begin == std::string::npos) {
      begin = 0;
      break;
    }
  }
  return text.substr(begin, end - begin);
}

}  // namespace

Status TcpFlowProbe::Load(const FlowProbeOptions& options,
                          const ProbeKernel& kernel) {
  libbpf_set_print(LibbpfPrint);
  skel_ = tcp_flow_bpf__open();
  if (!skel_) {
    return InternalError("open the flow probe's BPF object: " + Errno(errno));
  }
  capacity_ = options.max_flows;
  bpf_map__set_max_entries(skel_->maps.flows, options.max_flows);
  bpf_map__set_max_entries(skel_->maps.events, options.ring_buffer_bytes);
  // Socket storage where the kernel runs it (and has the byte tracepoints,
  // 6.3+); else the address-hash programs, with bytes from the raw
  // tracepoints or, before 6.3, the kprobes. Maps and programs of the set
  // not used are neither created nor loaded.
  const bool tp = kernel.send_recv_tracepoints;
  const bool storage = options.socket_storage && kernel.socket_storage && tp;
  socket_entries_ = storage ? "socket-storage" : "address-hash";
  byte_source_ = tp ? "tracepoint" : "kprobe";
  bpf_map__set_autocreate(skel_->maps.socks, storage);
  bpf_map__set_max_entries(skel_->maps.sock_keys,
                           storage ? 1 : options.max_flows);
  const bool per_segment =
      options.rtt_per_segment && kernel.tcp_probe_tracepoint;
  skel_->rodata->rtt_per_segment = per_segment ? 1 : 0;
  const bool retransmits = kernel.retransmit_tracepoint;
  auto autoload = [](bpf_program* prog, bool on) {
    bpf_program__set_autoload(prog, on);
  };
  auto& p = skel_->progs;
  autoload(p.lens_inet_sock_set_state, storage);
  autoload(p.lens_sock_send_length, storage);
  autoload(p.lens_sock_recv_length, storage);
  autoload(p.lens_tcp_probe, storage && per_segment);
  autoload(p.lens_tcp_retransmit_skb, storage && retransmits);
  autoload(p.lens_fold_pending, storage);
  autoload(p.lens_raw_inet_sock_set_state, !storage);
  autoload(p.lens_raw_sock_send_length, !storage && tp);
  autoload(p.lens_raw_sock_recv_length, !storage && tp);
  autoload(p.lens_raw_tcp_probe, !storage && per_segment);
  autoload(p.lens_raw_tcp_retransmit_skb, !storage && retransmits);
  autoload(p.lens_kprobe_tcp_sendmsg, !storage && !tp);
  autoload(p.lens_kprobe_tcp_cleanup_rbuf, !storage && !tp);
  const std::string why = storage                   ? ""
                          : !options.socket_storage ? "FlowProbeOptions"
                          : !kernel.socket_storage
                              ? kernel.socket_storage_missing
                              : "no sock_*_length tracepoints";
  socket_entries_reason_ = why;
  LENS_LOG(INFO)
          .Field("socket_entries", socket_entries_)
          .Field("byte_source", byte_source_)
          .Field("why", why)
      << "loading the flow probe";
  std::string log;
  libbpf_capture = &log;
  const int err = tcp_flow_bpf__load(skel_);
  libbpf_capture = nullptr;
  if (err != 0) {
    return InternalError("load the flow probe into the kernel: " + Errno(err) +
                         "; libbpf said:\n" + Tail(log, 12));
  }
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    Program p = kPrograms[i].get(skel_);
    if (!bpf_program__autoload(p.prog)) continue;
    bpf_link* link = bpf_program__attach(p.prog);
    if (!link) {
      const int err = errno;
      if (kPrograms[i].required) {
        return InternalError(std::string("attach ") + kPrograms[i].label +
                             ": " + Errno(err));
      }
      LENS_LOG(WARN)
              .Field("program", kPrograms[i].label)
              .Field("error", Errno(err))
          << "flow probe program not attached; continuing without it";
      continue;
    }
    *p.link = link;
    attached_[i] = true;
  }
  if (storage) {
    LENS_RETURN_IF_ERROR(AttachFoldIterator());
    // Start-up self-test: the iterator runs over every socket once, as each
    // drain will; a kernel that attaches it but cannot run it fails here,
    // not at the first drain (OpenTcpFlowProbe then falls back).
    if (Status run = FoldPending(); !run.ok()) {
      fold_self_test_failure_ = run.message();
      return FailedPreconditionError(
          "the flow probe's socket iterator failed its start-up self-test: " +
          run.message());
    }
  }
  ring_ = ring_buffer__new(bpf_map__fd(skel_->maps.events), &OnEvent, this,
                           nullptr);
  if (!ring_) {
    return InternalError("open the flow event ring buffer: " + Errno(errno));
  }
  reader_ = std::thread([this] { ReadEvents(); });
  if (options.kernel_stats) {
    // Always on: the window opens before Open returns, so the first traffic
    // after it is counted (from the sampler's thread, a busy machine could
    // start it after that traffic).
    bool run = true;
    if (options.kernel_stats_window >= options.kernel_stats_period) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      run = OpenStatsWindow();
    }
    if (run) {
      sampler_ =
          std::thread([this, w = options.kernel_stats_window,
                       p = options.kernel_stats_period] { SampleStats(w, p); });
    }
  }
  return OkStatus();
}

// current one was deleted meanwhile, so duplicates are removed.
std::vector<lens_flow_key> TcpFlowProbe::Keys() const {
  const int fd = bpf_map__fd(skel_->maps.flows);
  std::vector<lens_flow_key> keys;
  std::unordered_set<lens_flow_key, FlowKeyHash, FlowKeyEqual> seen;
  lens_flow_key key{};
  lens_flow_key next{};
  const void* cursor = nullptr;
  while (bpf_map_get_next_key(fd, cursor, &next) == 0) {
    if (!seen.insert(next).second) break;  // restarted: everything seen
    keys.push_back(next);
    key = next;
    cursor = &key;
    if (keys.size() > capacity_) break;
  }
  return keys;
}

Status TcpFlowProbe::AttachFoldIterator() {
  union bpf_iter_link_info iter_info {};
  iter_info.map.map_fd = static_cast<__u32>(bpf_map__fd(skel_->maps.socks));
  LIBBPF_OPTS(bpf_iter_attach_opts, iter_opts, .link_info = &iter_info,
              .link_info_len = sizeof iter_info);
  fold_link_ =
      bpf_program__attach_iter(skel_->progs.lens_fold_pending, &iter_opts);
  if (!fold_link_) {
    return InternalError("attach the flow probe's socket iterator: " +
                         Errno(errno));
  }
  return OkStatus();
}

Status TcpFlowProbe::FoldPending() {
  if (!fold_link_) return OkStatus();  // address hash: nothing pending
  const int fd = bpf_iter_create(bpf_link__fd(fold_link_));
  if (fd < 0) return InternalError("start the socket iterator: " + Errno(fd));
  char buf[256];  // the program writes nothing; read() runs it to the end
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
  }
  const int err = errno;
  ::close(fd);
  if (n < 0) return InternalError("run the socket iterator: " + Errno(err));
  return OkStatus();
}

StatusOr<std::vector<TcpFlow>> TcpFlowProbe::Drain() {
  ++drains_;
  LENS_RETURN_IF_ERROR(FoldPending());
  const int fd = bpf_map__fd(skel_->maps.flows);
  std::vector<lens_flow_key> keys = Keys();
  map_entries_ = static_cast<uint32_t>(keys.size());
  std::vector<TcpFlow> out;
  std::unordered_set<lens_flow_key, FlowKeyHash, FlowKeyEqual> present;
  for (const lens_flow_key& key : keys) {
    lens_flow_value cur;
    if (bpf_map_lookup_elem(fd, &key, &cur) != 0) continue;  // evicted now
    if (cur.closed) {
      // Final numbers: take and remove in one step (5.14+), so a byte
      // counted between a read and a delete cannot be lost.
      if (bpf_map_lookup_and_delete_elem(fd, &key, &cur) != 0) {
        bpf_map_delete_elem(fd, &key);
      }
    }
    auto it = prev_.find(key);
    AddDelta(key, cur, it == prev_.end() ? nullptr : &it->second, &out);
    if (cur.closed) {
      if (it != prev_.end()) prev_.erase(it);
    } else {
      present.insert(key);
      if (it != prev_.end()) {
        it->second = cur;
      } else {
        prev_.emplace(key, cur);
      }
    }
  }
  // Sockets that left the table without being closed: LRU evictions.
  for (auto it = prev_.begin(); it != prev_.end();) {
    if (present.count(it->first)) {
      ++it;
    } else {
      ++evicted_;
      it = prev_.erase(it);
    }
  }
  return out;
}

void TcpFlowProbe::AddDelta(const lens_flow_key& key,
                            const lens_flow_value& cur,
                            const lens_flow_value* prev,
                            std::vector<TcpFlow>* out) {
  // A recreated entry (same tuple, new socket) starts from zero again.
  if (prev && (cur.bytes_sent < prev->bytes_sent ||
               cur.bytes_received < prev->bytes_received ||
               cur.open_ns != prev->open_ns)) {
    prev = nullptr;
  }
  static const lens_flow_value kZero{};
  const lens_flow_value& p = prev ? *prev : kZero;
  TcpFlow f;
  f.bytes_sent = cur.bytes_sent - p.bytes_sent;
  f.bytes_received = cur.bytes_received - p.bytes_received;
  f.retransmits = cur.retransmits - std::min(cur.retransmits, p.retransmits);
  f.segments_sent = cur.segs_out - std::min(cur.segs_out, p.segs_out);
  f.segments_received = cur.segs_in - std::min(cur.segs_in, p.segs_in);
  f.rtt_count = cur.rtt_count - std::min(cur.rtt_count, p.rtt_count);
  f.rtt_sum_us = cur.rtt_sum_us - std::min(cur.rtt_sum_us, p.rtt_sum_us);
  for (int i = 0; i < kFlowRttBuckets; ++i) {
    f.rtt_histogram[i] =
        cur.rtt_hist[i] - std::min(cur.rtt_hist[i], p.rtt_hist[i]);
  }
  f.opened = !prev && cur.role != LENS_FLOW_ROLE_UNKNOWN;
  f.closed = cur.closed != 0;
  const bool moved = f.bytes_sent || f.bytes_received || f.retransmits ||
                     f.rtt_count || f.segments_sent || f.segments_received;
  if (!moved && !f.opened && !f.closed) return;
  if (f.rtt_count) {
    f.rtt_min_us = cur.rtt_min_us;
    f.rtt_max_us = cur.rtt_max_us;
  }
  FillIdentity(key, cur, &f);
  out->push_back(std::move(f));
}

}  // namespace lens::flow::probe_internal
