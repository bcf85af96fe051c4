// NewSampleHistorySource: RangeQuery over Store::samples(), downsampled to
// the step grid (timeseries/downsample.h).
#include <algorithm>
#include <limits>

#include "lens/store.h"
#include "lens/timeseries.h"
#include "timeseries/downsample.h"
#include "timeseries/range.h"

namespace lens {
namespace {

constexpr size_t kMaxHistorySeries = 100000;  // SampleQuery::max_series

class SampleHistorySource final : public TimeSeriesSource {
 public:
  explicit SampleHistorySource(Store* store) : store_(store) {}

  StatusOr<std::vector<SeriesSamples>> QueryRange(
      const RangeQuery& q) override {
    LENS_RETURN_IF_ERROR(q.Validate());
    const timeseries::StepGrid grid{.start_ms = timeseries::AlignedStartMs(q),
                                    .step_ms = q.step.count(),
                                    .steps = timeseries::StepCount(q)};
    SampleQuery sq;
    sq.metric = q.metric;
    sq.matchers = q.matchers;
    // A rate needs the point before the first step: two steps back.
    sq.from_ms = SaturatingSub(SaturatingSub(grid.start_ms, grid.step_ms),
                               grid.step_ms - 1);
    sq.to_ms = grid.start_ms + (grid.steps - 1) * grid.step_ms;
    // The history's own bound; more series than that are too many anyway.
    sq.max_series = std::min(q.max_series, kMaxHistorySeries);
    LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                          store_->samples().QuerySamples(sq));
    std::vector<SeriesSamples> out;
    out.reserve(series.size());
    for (SeriesSamples& s : series) {
      s.points = q.function == RangeFunction::kRate
                     ? timeseries::RatePerStep(s.points, grid)
                     : timeseries::LastPerStep(s.points, grid);
      if (!s.points.empty()) out.push_back(std::move(s));
    }
    // QuerySamples' order already; kept explicit as the contract.
    std::sort(out.begin(), out.end(), timeseries::SeriesLess);
    return out;
  }

  std::string_view backend() const override { return "sample-history"; }

 private:
  // a - b for b >= 0, no lower than the smallest int64_t.
  static int64_t SaturatingSub(int64_t a, int64_t b) {
    if (a >= std::numeric_limits<int64_t>::min() + b) return a - b;
    return std::numeric_limits<int64_t>::min();
  }

  Store* const store_;  // borrowed; thread-safe (SampleRepository)
};

}  // namespace

std::unique_ptr<TimeSeriesSource> NewSampleHistorySource(Store* store) {
  return std::make_unique<SampleHistorySource>(store);
}

}  // namespace lens
