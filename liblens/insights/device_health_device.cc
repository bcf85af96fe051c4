// One device's health state machine: evidence from counter increases, rates
// over trailing windows and link states; hold and clear with hysteresis.
// The common observation (nothing moved) touches only HealthHot.
#include "insights/device_health_device.h"

#include <algorithm>
#include <bit>

namespace lens::health_internal {

void HealthWindow::Add(int64_t at_us, uint32_t channel, uint64_t amount) {
  if (channel >= sums_.size()) sums_.resize(channel + 1, 0);
  sums_[channel] += amount;
  entries_.push_back({at_us, channel, amount});
}

void HealthWindow::Expire(int64_t cutoff_us) {
  while (head_ < entries_.size() && entries_[head_].at_us <= cutoff_us) {
    sums_[entries_[head_].channel] -= entries_[head_].amount;
    ++head_;
  }
  if (head_ == entries_.size()) {
    entries_.clear();
    head_ = 0;
  } else if (head_ >= 32 && head_ * 2 >= entries_.size()) {
    // Compact once the dead prefix is at least half: amortised O(1).
    entries_.erase(entries_.begin(),
                   entries_.begin() + static_cast<ptrdiff_t>(head_));
    head_ = 0;
  }
}

void HealthHot::SetIdentity(std::string_view text) {
  if (text.size() > kIdentityInline) {
    identity_len = kIdentityInline + 1;
    return;
  }
  identity_len = static_cast<uint8_t>(text.size());
  std::copy(text.begin(), text.end(), identity);
}

int64_t HealthClearAfterUs(DeviceHealth severity,
                           const DeviceHealthOptions& options) {
  const auto after = severity == DeviceHealth::kUnhealthy
                         ? options.unhealthy_clear_after
                         : options.degraded_clear_after;
  return std::chrono::duration_cast<std::chrono::microseconds>(after).count();
}

namespace {

// The evidence found in one observation: the first of each signal. Only
// the entries named in `mask` are set (no per-observation clearing).
struct HealthFound {
  uint32_t mask = 0;
  struct Note {
    DeviceHealth severity;
    uint32_t counter;
    uint64_t amount;
  };
  Note notes[kHealthSignalCount];

  void Add(HealthSignal signal, DeviceHealth severity, uint32_t counter,
           uint64_t amount) {
    const uint32_t bit = 1u << static_cast<uint32_t>(signal);
    if (mask & bit) return;
    mask |= bit;
    notes[static_cast<size_t>(signal)] = {severity, counter, amount};
  }
};

DeviceHealth HealthWorstHeld(const HealthDevice& dev) {
  DeviceHealth worst = DeviceHealth::kHealthy;
  for (const HealthHeld& h : dev.held) {
    if (h.active && h.severity > worst) worst = h.severity;
  }
  return worst;
}

int64_t HealthNextClear(const HealthDevice& dev,
                        const DeviceHealthOptions& options) {
  int64_t next = kHealthNever;
  for (const HealthHeld& h : dev.held) {
    if (h.active) {
      next = std::min(next, h.at_us + HealthClearAfterUs(h.severity, options));
    }
  }
  return next;
}

void HealthChangeState(HealthHot* hot, HealthDevice* dev, int64_t at_us,
                       DeviceHealth to, bool cleared, size_t signal,
                       std::vector<HealthChange>* changes) {
  changes->push_back({at_us, hot->state, to, cleared,
                      static_cast<HealthSignal>(signal), dev->held[signal]});
  hot->state = to;
  dev->since_us = at_us;
  ++dev->transitions;
}

// Lets go of the evidence whose quiet period ended at or before `t_us`, in
// time order, each drop of state a transition at the moment it cleared.
void HealthExpire(int64_t t_us, const DeviceHealthOptions& options,
                  HealthHot* hot, HealthDevice* dev,
                  std::vector<HealthChange>* changes) {
  while (hot->next_clear_us <= t_us) {
    const int64_t at = hot->next_clear_us;
    std::optional<size_t> worst;
    for (size_t s = 0; s < kHealthSignalCount; ++s) {
      HealthHeld& h = dev->held[s];
      if (!h.active) continue;
      if (h.at_us + HealthClearAfterUs(h.severity, options) > at) continue;
      h.active = false;
      if (!worst || h.severity > dev->held[*worst].severity) worst = s;
    }
    const DeviceHealth now = HealthWorstHeld(*dev);
    if (worst && now < hot->state) {
      HealthChangeState(hot, dev, at, now, true, *worst, changes);
    }
    hot->next_clear_us = HealthNextClear(*dev, options);
  }
}

// Holds the observation's evidence and escalates when it is worse than the
// current state; then marks the device observed at `t_us`.
void HealthAdmitSlow(const HealthFound& found, int64_t t_us,
                     const DeviceHealthOptions& options, HealthHot* hot,
                     HealthDevice* dev, std::vector<HealthChange>* changes) {
  if (found.mask != 0) {
    std::optional<size_t> worst;
    for (size_t s = 0; s < kHealthSignalCount; ++s) {
      if (!(found.mask & (1u << s))) continue;
      const HealthFound::Note& n = found.notes[s];
      dev->held[s] = {true, n.severity, t_us, n.counter, n.amount};
      if (!worst || n.severity > dev->held[*worst].severity) worst = s;
    }
    if (worst && dev->held[*worst].severity > hot->state) {
      HealthChangeState(hot, dev, t_us, dev->held[*worst].severity, false,
                        *worst, changes);
    }
    hot->next_clear_us = HealthNextClear(*dev, options);
  }
  if (!hot->observed) {
    hot->observed = true;
    dev->first_seen_us = t_us;
    dev->since_us = t_us;
  }
  hot->last_seen_us = t_us;
}

inline void HealthAdmit(const HealthFound& found, int64_t t_us,
                        const DeviceHealthOptions& options, HealthHot* hot,
                        HealthDevice* dev, std::vector<HealthChange>* changes) {
  if (found.mask == 0 && hot->observed) {
    hot->last_seen_us = t_us;  // the common case: nothing happened
    return;
  }
  HealthAdmitSlow(found, t_us, options, hot, dev, changes);
}

int64_t HealthUs(std::chrono::seconds s) {
  return std::chrono::duration_cast<std::chrono::microseconds>(s).count();
}

// Matches the RAS blocks to the kept ones by position, or by name when the
// list changed (a block that is new starts its own baseline).
void HealthSyncRasBlocks(const std::vector<RasBlockCounts>& blocks,
                         HealthDevice* dev) {
  bool same = blocks.size() == dev->ras_names.size();
  for (size_t b = 0; same && b < blocks.size(); ++b) {
    same = blocks[b].block == dev->ras_names[b];
  }
  if (same) return;
  std::vector<std::string> names;
  std::vector<HealthCounter> ue(blocks.size()), ce(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    names.push_back(blocks[b].block);
    auto it = std::find(dev->ras_names.begin(), dev->ras_names.end(),
                        blocks[b].block);
    if (it == dev->ras_names.end()) continue;
    const size_t old = static_cast<size_t>(it - dev->ras_names.begin());
    ue[b] = dev->ras_ue[old];
    ce[b] = dev->ras_ce[old];
  }
  dev->ras_names = std::move(names);
  dev->ras_ue = std::move(ue);
  dev->ras_ce = std::move(ce);
  // The window's channels follow block positions: start it afresh.
  dev->correctable = HealthWindow();
}

// Correctable errors: the increase joins the window; evidence when the
// window's total for that counter reaches the threshold.
void HealthCorrectable(uint32_t channel, uint64_t increase, int64_t t_us,
                       const DeviceHealthOptions& options, HealthDevice* dev,
                       HealthFound* found) {
  if (increase == 0) return;
  dev->correctable.Add(t_us, channel, increase);
  dev->correctable.Expire(t_us - HealthUs(options.correctable_window));
  const uint64_t sum = dev->correctable.Sum(channel);
  if (sum < options.correctable_errors_threshold) return;
  if (channel < 2) {
    found->Add(HealthSignal::kEccCorrectable, DeviceHealth::kDegraded, channel,
               sum);
  } else {
    found->Add(HealthSignal::kRasCorrectable, DeviceHealth::kDegraded,
               channel - 2, sum);
  }
}

void HealthRasBlocks(const GpuHealthObservation& obs, int64_t t_us,
                     const DeviceHealthOptions& options, HealthHot* hot,
                     HealthDevice* dev, HealthFound* found) {
  HealthSyncRasBlocks(obs.ras_blocks, dev);
  for (size_t b = 0; b < obs.ras_blocks.size(); ++b) {
    const uint32_t block = static_cast<uint32_t>(b);
    const uint64_t ue = dev->ras_ue[b].Step(obs.ras_blocks[b].uncorrectable,
                                            &hot->counter_resets);
    if (ue > 0) {
      found->Add(HealthSignal::kRasUncorrectable, DeviceHealth::kUnhealthy,
                 block, ue);
    }
    const uint64_t ce = dev->ras_ce[b].Step(obs.ras_blocks[b].correctable,
                                            &hot->counter_resets);
    HealthCorrectable(2 + block, ce, t_us, options, dev, found);
  }
}

}  // namespace

void HealthObserveGpu(const GpuHealthObservation& obs, int64_t t_us,
                      const DeviceHealthOptions& options, HealthHot* hot,
                      HealthDevice* dev, std::vector<HealthChange>* changes) {
  if (hot->next_clear_us <= t_us)
    HealthExpire(t_us, options, hot, dev, changes);
  HealthFound found;
  uint32_t* resets = &hot->counter_resets;
  auto& c = hot->counters;
  const bool blocks = !obs.ras_blocks.empty();
  if (blocks) HealthRasBlocks(obs, t_us, options, hot, dev, &found);
  // The totals keep their baselines even when the blocks are the evidence,
  // so a later observation without blocks does not see a stale jump.
  uint32_t ignored_resets = 0;
  uint32_t* total_resets = blocks ? &ignored_resets : resets;
  const uint64_t ue = c[kHealthUe].Step(obs.ecc_uncorrectable, total_resets);
  const uint64_t ce = c[kHealthCe].Step(obs.ecc_correctable, total_resets);
  if (!blocks) {
    if (ue > 0) {
      found.Add(HealthSignal::kEccUncorrectable, DeviceHealth::kUnhealthy, 0,
                ue);
    }
    HealthCorrectable(0, ce, t_us, options, dev, &found);
  }
  const uint64_t ue_life = c[kHealthUeLifetime].Step(
      obs.ecc_uncorrectable_lifetime, resets, HealthCounter::Drop::kRebase);
  if (ue_life > 0) {
    found.Add(HealthSignal::kEccUncorrectable, DeviceHealth::kUnhealthy, 1,
              ue_life);
  }
  HealthCorrectable(
      1,
      c[kHealthCeLifetime].Step(obs.ecc_correctable_lifetime, resets,
                                HealthCounter::Drop::kRebase),
      t_us, options, dev, &found);

  const uint32_t reasons = obs.throttle_reasons & options.throttle_reasons;
  if (obs.throttle_known && reasons != 0 && hot->observed) {
    const int64_t dt =
        std::min(t_us - hot->last_seen_us, HealthUs(options.max_sample_gap));
    if (dt > 0) {
      dev->throttled.Add(t_us, 0, static_cast<uint64_t>(dt));
      dev->throttled.Expire(t_us - HealthUs(options.throttle_window));
      const uint64_t sum = dev->throttled.Sum(0);
      if (sum >= static_cast<uint64_t>(HealthUs(options.throttle_threshold))) {
        found.Add(HealthSignal::kThrottle, DeviceHealth::kDegraded,
                  static_cast<uint32_t>(std::countr_zero(reasons)), sum);
      }
    }
  }
  HealthAdmit(found, t_us, options, hot, dev, changes);
}

namespace {

// Port error counters: each increase joins the window; of the counters
// over their threshold, the one furthest over is the evidence.
void HealthPortErrors(uint32_t moved, int64_t t_us,
                      const DeviceHealthOptions& options, HealthDevice* dev,
                      HealthFound* found) {
  dev->port_errors.Expire(t_us - HealthUs(options.port_error_window));
  std::optional<uint32_t> best;
  double best_ratio = 0;
  for (uint32_t c = 0; c < kPortErrorCounterCount; ++c) {
    const uint64_t threshold = options.port_error_thresholds[c];
    if (!(moved & (1u << c)) || threshold == 0) continue;
    const uint64_t sum = dev->port_errors.Sum(c);
    if (sum < threshold) continue;
    const double ratio =
        static_cast<double>(sum) / static_cast<double>(threshold);
    if (!best || ratio > best_ratio) {
      best = c;
      best_ratio = ratio;
    }
  }
  if (best) {
    found->Add(HealthSignal::kPortErrors, DeviceHealth::kDegraded, *best,
               dev->port_errors.Sum(*best));
  }
}

}  // namespace

void HealthObservePort(const PortHealthObservation& obs, int64_t t_us,
                       const DeviceHealthOptions& options, HealthHot* hot,
                       HealthDevice* dev, std::vector<HealthChange>* changes) {
  if (hot->next_clear_us <= t_us)
    HealthExpire(t_us, options, hot, dev, changes);
  HealthFound found;
  const uint32_t link = (static_cast<uint32_t>(obs.state) << 8) |
                        static_cast<uint32_t>(obs.phys_state);
  const bool active = obs.state == RdmaLinkState::kActive ||
                      obs.state == RdmaLinkState::kActiveDefer;
  if (active) {
    hot->link_seen_active = true;
    if (obs.phys_state != RdmaPhysState::kUnknown &&
        obs.phys_state != RdmaPhysState::kLinkUp) {
      found.Add(HealthSignal::kLinkPhysical, DeviceHealth::kDegraded, link, 0);
    }
  } else if (obs.state != RdmaLinkState::kUnknown && hot->link_seen_active) {
    found.Add(HealthSignal::kLinkDown, DeviceHealth::kUnhealthy, link, 0);
  }
  if (obs.state != RdmaLinkState::kUnknown) {
    hot->link_state = obs.state;
    hot->phys_state = obs.phys_state;
  }
  uint32_t moved = 0;  // bit c: counter c increased
  for (size_t c = 0; c < kPortErrorCounterCount; ++c) {
    const uint64_t d =
        hot->counters[c].Step(obs.errors[c], &hot->counter_resets);
    if (d == 0) continue;
    dev->port_errors.Add(t_us, static_cast<uint32_t>(c), d);
    moved |= 1u << c;
  }
  if (moved != 0) HealthPortErrors(moved, t_us, options, dev, &found);
  HealthAdmit(found, t_us, options, hot, dev, changes);
}

std::optional<HealthSignal> HealthHoldingSignal(const HealthHot& hot,
                                                const HealthDevice& dev) {
  if (hot.state == DeviceHealth::kHealthy) return std::nullopt;
  std::optional<size_t> pick;
  for (size_t s = 0; s < kHealthSignalCount; ++s) {
    const HealthHeld& h = dev.held[s];
    if (!h.active || h.severity != hot.state) continue;
    if (!pick || h.at_us > dev.held[*pick].at_us) pick = s;
  }
  if (!pick) return std::nullopt;
  return static_cast<HealthSignal>(*pick);
}

int64_t HealthClearsAtUs(const HealthHot& hot, const HealthDevice& dev,
                         const DeviceHealthOptions& options) {
  if (hot.state == DeviceHealth::kHealthy) return kHealthNever;
  int64_t at = std::numeric_limits<int64_t>::min();
  for (const HealthHeld& h : dev.held) {
    if (h.active && h.severity == hot.state) {
      at = std::max(at, h.at_us + HealthClearAfterUs(h.severity, options));
    }
  }
  return at;
}

}  // namespace lens::health_internal
