// WatchFlows: attach, drain every few seconds for the duration, merge per
// socket, classify.
#include <algorithm>
#include <thread>
#include <unordered_map>

#include "flow/classify.h"
#include "flow/flow_merge.h"
#include "lens/flow.h"

namespace lens {

StatusOr<std::vector<TcpFlow>> WatchFlows(std::chrono::milliseconds duration,
                                          const FlowWatchOptions& options) {
  LENS_ASSIGN_OR_RETURN(std::unique_ptr<FlowClassifier> classifier,
                        FlowClassifier::Create(options.policy));
  LENS_ASSIGN_OR_RETURN(std::unique_ptr<FlowProbe> probe,
                        FlowProbe::Open(options.probe));
  if (options.on_attached) options.on_attached();
  std::unordered_map<std::string, TcpFlow> totals;
  auto merge = [&]() -> Status {
    LENS_ASSIGN_OR_RETURN(std::vector<TcpFlow> flows, probe->Drain());
    for (TcpFlow& f : flows) {
      auto [it, inserted] = totals.try_emplace(flow::FlowIdentity(f));
      if (inserted) {
        it->second = std::move(f);
      } else {
        flow::MergeFlow(f, &it->second);
      }
    }
    return OkStatus();
  };
  // Drain at least every 5 s so the kernel table never fills with closed
  // sockets during a long watch.
  constexpr auto kDrainEvery = std::chrono::seconds(5);
  const auto end = std::chrono::steady_clock::now() + duration;
  auto next_drain = std::chrono::steady_clock::now() + kDrainEvery;
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_until(std::min(end, next_drain));
    if (std::chrono::steady_clock::now() >= next_drain) {
      LENS_RETURN_IF_ERROR(merge());
      next_drain += kDrainEvery;
    }
  }
  LENS_RETURN_IF_ERROR(merge());
  StatusOr<ListeningSockets> listeners =
      ListeningSockets::Read(options.proc_root);
  std::vector<TcpFlow> out;
  out.reserve(totals.size());
  for (auto& [key, f] : totals) {
    flow::ClassifyFlow(*classifier, listeners.ok() ? &*listeners : nullptr, &f);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const TcpFlow& a, const TcpFlow& b) {
    return a.bytes_sent + a.bytes_received > b.bytes_sent + b.bytes_received;
  });
  return out;
}

}  // namespace lens
