// FlowProbe on libbpf, what it reports: the kernel-side counters, the flow
// table's occupancy and the programs' sampled BPF run-time statistics, and
// the ring buffer's event reader.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flow/bpf/tcp_flow_probe_impl.h"
#include "lens/log.h"

namespace lens::flow::probe_internal {

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
    if (stats_fd_ < 0 && !OpenStatsWindow()) return;  // open: always on
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
  s.socket_entries_reason = socket_entries_reason_;
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

}  // namespace lens::flow::probe_internal
