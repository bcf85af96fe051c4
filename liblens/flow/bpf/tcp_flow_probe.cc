// FlowProbe on libbpf: owns the tcp_flow skeleton (programs, maps, links),
// the ring buffer and the sampled BPF run-time statistics; turns the
// kernel's running totals into per-drain deltas. The only file that includes
// libbpf's headers.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "flow/bpf/flow_key.h"
#include "flow/probe_preflight.h"
#include "lens/flow.h"
#include "lens/log.h"
#include "tcp_flow.h"
#include "tcp_flow.skel.h"

namespace lens::flow {
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

std::string Errno(int err) { return std::strerror(err < 0 ? -err : err); }

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
// tracepoint shares its label.
const ProgramSpec kPrograms[] = {
    LENS_FLOW_PROGRAM("sock/inet_sock_set_state", lens_inet_sock_set_state,
                      true),
    LENS_FLOW_PROGRAM("sock/sock_send_length", lens_sock_send_length, true),
    LENS_FLOW_PROGRAM("sock/sock_recv_length", lens_sock_recv_length, true),
    LENS_FLOW_PROGRAM("tcp/tcp_probe", lens_tcp_probe, false),
    LENS_FLOW_PROGRAM("tcp/tcp_retransmit_skb", lens_tcp_retransmit_skb, false),
    LENS_FLOW_PROGRAM("sock/inet_sock_set_state", lens_raw_inet_sock_set_state,
                      true),
    LENS_FLOW_PROGRAM("sock/sock_send_length", lens_raw_sock_send_length, true),
    LENS_FLOW_PROGRAM("sock/sock_recv_length", lens_raw_sock_recv_length, true),
    LENS_FLOW_PROGRAM("tcp/tcp_probe", lens_raw_tcp_probe, false),
    LENS_FLOW_PROGRAM("tcp/tcp_retransmit_skb", lens_raw_tcp_retransmit_skb,
                      false),
    LENS_FLOW_PROGRAM("kprobe/tcp_sendmsg", lens_kprobe_tcp_sendmsg, true),
    LENS_FLOW_PROGRAM("kprobe/tcp_cleanup_rbuf", lens_kprobe_tcp_cleanup_rbuf,
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
  std::vector<bool> attached_ = std::vector<bool>(std::size(kPrograms));
  uint32_t capacity_ = 0;
  // Last cumulative value of every socket in the table (Drain's thread).
  std::unordered_map<lens_flow_key, lens_flow_value, FlowKeyHash, FlowKeyEqual>
      prev_;
  uint64_t evicted_ = 0;
  uint64_t drains_ = 0;
  uint32_t map_entries_ = 0;
};

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
  }
  ring_ = ring_buffer__new(bpf_map__fd(skel_->maps.events), &OnEvent, this,
                           nullptr);
  if (!ring_) {
    return InternalError("open the flow event ring buffer: " + Errno(errno));
  }
  reader_ = std::thread([this] { ReadEvents(); });
  if (options.kernel_stats) {
    sampler_ =
        std::thread([this, w = options.kernel_stats_window,
                     p = options.kernel_stats_period] { SampleStats(w, p); });
  }
  return OkStatus();
}

std::vector<TcpFlowProbe::Runs> TcpFlowProbe::ReadRuns() const {
  std::vector<Runs> runs(std::size(kPrograms));
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    bpf_program* prog = kPrograms[i].get(skel_).prog;
    if (!bpf_program__autoload(prog)) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
      runs[i] = {info.run_cnt, info.run_time_ns};
    }
  }
  return runs;
}

bool TcpFlowProbe::OpenStatsWindow() {
  stats_fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats_fd_ < 0) {
    LENS_LOG(WARN).Field("error", Errno(errno))
        << "BPF run-time statistics unavailable (needs CAP_SYS_ADMIN); "
           "program cost not reported";
    return false;
  }
  window_base_ = ReadRuns();
  window_open_ = std::chrono::steady_clock::now();
  return true;
}

void TcpFlowProbe::CloseStatsWindow() {
  if (stats_fd_ < 0) return;
  std::vector<Runs> now = ReadRuns();
  for (size_t i = 0; i < now.size(); ++i) {
    // Counters only grow; min() guards against a program reloaded under us.
    sampled_[i].count +=
        now[i].count - std::min(now[i].count, window_base_[i].count);
    sampled_[i].time_ns +=
        now[i].time_ns - std::min(now[i].time_ns, window_base_[i].time_ns);
  }
  sampled_ns_ += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - window_open_)
          .count());
  ::close(stats_fd_);
  stats_fd_ = -1;
}

void TcpFlowProbe::SampleStats(std::chrono::milliseconds window,
                               std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(stats_mu_);
  auto stopping = [this] { return stats_stopping_; };
  const auto off = period - window;
  while (!stats_stopping_) {
    if (off.count() > 0 && stats_cv_.wait_for(lock, off, stopping)) break;
    if (!OpenStatsWindow()) return;
    if (off.count() > 0) {
      stats_cv_.wait_for(lock, window, stopping);
    } else {
      stats_cv_.wait(lock, stopping);  // always on
    }
    CloseStatsWindow();
  }
}

int TcpFlowProbe::OnEvent(void* ctx, void* /*data*/, size_t size) {
  if (size < sizeof(lens_flow_event)) return 0;
  static_cast<TcpFlowProbe*>(ctx)->events_received_++;
  return 0;
}

void TcpFlowProbe::ReadEvents() {
  while (!stop_.load()) {
    // poll() processes only after a wakeup, which the program sends only
    // when the buffer fills up; consume() takes what arrived meanwhile.
    int n = ring_buffer__poll(ring_, 100 /* ms */);
    if (n >= 0) n = ring_buffer__consume(ring_);
    if (n < 0 && n != -EINTR) {
      LENS_LOG(WARN).Field("error", Errno(n)) << "flow event ring buffer";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  (void)ring_buffer__consume(ring_);
}

// Every key in the table. get_next_key restarts from the first key when the
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

std::vector<uint64_t> TcpFlowProbe::KernelCounters() const {
  std::vector<uint64_t> totals(LENS_FLOW_STAT_COUNT, 0);
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return totals;
  std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus));
  const int fd = bpf_map__fd(skel_->maps.stats);
  for (uint32_t i = 0; i < LENS_FLOW_STAT_COUNT; ++i) {
    if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
    for (uint64_t v : per_cpu) totals[i] += v;
  }
  return totals;
}

FlowProbeStats TcpFlowProbe::Stats() const {
  FlowProbeStats s;
  s.byte_source = byte_source_;
  s.socket_entries = socket_entries_;
  std::vector<Runs> runs;
  {
    // What closed windows measured, plus the open one so far.
    std::lock_guard<std::mutex> lock(stats_mu_);
    runs = sampled_;
    s.kernel_stats_sampled_ns = sampled_ns_;
    if (stats_fd_ >= 0) {
      std::vector<Runs> now = ReadRuns();
      for (size_t i = 0; i < now.size(); ++i) {
        runs[i].count +=
            now[i].count - std::min(now[i].count, window_base_[i].count);
        runs[i].time_ns +=
            now[i].time_ns - std::min(now[i].time_ns, window_base_[i].time_ns);
      }
      s.kernel_stats_sampled_ns += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::steady_clock::now() - window_open_)
              .count());
    }
  }
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    bpf_program* prog = kPrograms[i].get(skel_).prog;
    if (!bpf_program__autoload(prog)) continue;
    FlowProgramStats p;
    p.name = kPrograms[i].label;
    p.attached = attached_[i];
    p.run_count = runs[i].count;
    p.run_time_ns = runs[i].time_ns;
    s.programs.push_back(std::move(p));
  }
  std::vector<uint64_t> k = KernelCounters();
  s.flows_created = k[LENS_FLOW_STAT_FLOWS_CREATED];
  s.flow_create_failed = k[LENS_FLOW_STAT_FLOW_CREATE_FAILED];
  s.events_dropped = k[LENS_FLOW_STAT_EVENTS_DROPPED];
  s.connect_failed = k[LENS_FLOW_STAT_CONNECT_FAILED];
  s.active_opens = k[LENS_FLOW_STAT_ACTIVE_OPENS];
  s.passive_opens = k[LENS_FLOW_STAT_PASSIVE_OPENS];
  s.closes = k[LENS_FLOW_STAT_CLOSES];
  s.events_received = events_received_.load();
  s.flows_evicted = evicted_;
  s.drains = drains_;
  s.map_entries = map_entries_;
  s.map_capacity = capacity_;
  return s;
}

// Whether the kernel's BTF names a type (any kind) or, for "BPF_FUNC_*", a
// value of enum bpf_func_id.
bool HasBtfName(const btf* vmlinux, const std::string& name) {
  if (name.rfind("BPF_FUNC_", 0) != 0) {
    return btf__find_by_name(vmlinux, name.c_str()) > 0;
  }
  const int id = btf__find_by_name_kind(vmlinux, "bpf_func_id", BTF_KIND_ENUM);
  if (id <= 0) return false;
  const btf_type* type = btf__type_by_id(vmlinux, id);
  const struct btf_enum* values = btf_enum(type);
  for (int i = 0; i < btf_vlen(type); ++i) {
    if (name == btf__name_by_offset(vmlinux, values[i].name_off)) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::unique_ptr<FlowProbe>> OpenTcpFlowProbe(
    const FlowProbeOptions& options) {
  if (options.max_flows == 0) {
    return InvalidArgumentError("flow probe: max_flows must be positive");
  }
  if (options.kernel_stats &&
      (options.kernel_stats_window.count() <= 0 ||
       options.kernel_stats_period < options.kernel_stats_window)) {
    return InvalidArgumentError(
        "flow probe: kernel_stats_window must be positive and at most "
        "kernel_stats_period, got " +
        std::to_string(options.kernel_stats_window.count()) + " ms of " +
        std::to_string(options.kernel_stats_period.count()) + " ms");
  }
  const uint32_t rb = options.ring_buffer_bytes;
  if (rb < 4096 || (rb & (rb - 1)) != 0) {
    return InvalidArgumentError(
        "flow probe: ring_buffer_bytes must be a power of two >= 4096, got " +
        std::to_string(rb));
  }
  LENS_RETURN_IF_ERROR(CheckBpfPrivileges());
  LENS_RETURN_IF_ERROR(CheckKernelBtf());
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    return FailedPreconditionError("read the kernel's BTF: " + Errno(errno));
  }
  // 0: the kernel refuses the program type itself (before our programs'
  // verification); a negative value (the probe could not run) decides
  // nothing.
  const bool tracing =
      libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING, nullptr) != 0;
  StatusOr<ProbeKernel> kernel = ProbeKernelFrom(
      [vmlinux](std::string_view n) {
        return HasBtfName(vmlinux, std::string(n));
      },
      tracing);
  btf__free(vmlinux);
  if (!kernel.ok()) return kernel.status();
  auto probe = std::make_unique<TcpFlowProbe>();
  LENS_RETURN_IF_ERROR(probe->Load(options, *kernel));
  return std::unique_ptr<FlowProbe>(std::move(probe));
}

}  // namespace lens::flow

namespace lens {
StatusOr<std::unique_ptr<FlowProbe>> FlowProbe::Open(
    const FlowProbeOptions& options) {
  return flow::OpenTcpFlowProbe(options);
}
}  // namespace lens
