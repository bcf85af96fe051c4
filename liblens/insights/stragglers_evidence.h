// Stragglers, internal: the evidence one node's series give over an
// interval (stragglers_evidence.cc), for the suspect assembly
// (stragglers.cc).
#ifndef LENS_INSIGHTS_STRAGGLERS_EVIDENCE_H_
#define LENS_INSIGHTS_STRAGGLERS_EVIDENCE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "lens/insights_stragglers.h"

namespace lens::insights {

// The interval in Unix ms, and the options' evidence rules.
struct StragglerWindow {
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  int64_t max_baseline_ms = 0;
};

// A counter's increase over the window: from its last point at most
// max_baseline_ms before from_ms (else its first point in the window) to
// its last point in the window, a decrease counted as a reset to zero.
// Non-finite and out-of-order points are skipped.
double StragglerCounterIncrease(std::span<const SamplePoint> points,
                                const StragglerWindow& w);

// The evidence items of one node's series (all of them one node's), in no
// particular order.
std::vector<StragglerEvidence> StragglerNodeEvidence(
    std::span<const StragglerEvidenceSeries* const> series,
    const StragglerWindow& w, const StragglerOptions& options);

// The median of `values` (reordered); 0 when empty.
double StragglerMedian(std::vector<double>& values);

}  // namespace lens::insights

#endif  // LENS_INSIGHTS_STRAGGLERS_EVIDENCE_H_
