// Prometheus remote write 1.0 on the wire: the snappy block format around a
// protobuf `prometheus.WriteRequest` (prompb/types.proto: timeseries = 1,
// metadata = 3; TimeSeries labels = 1, samples = 2, exemplars = 3,
// histograms = 4; Label name = 1, value = 2; Sample value = 1 (double),
// timestamp = 2 (int64 ms)), decoded without a protobuf library into flat
// arrays of views into one buffer, and encoded back. What Lens does not
// change (exemplars, native histograms, metadata, unknown fields) is carried
// through as raw bytes, so a request re-encoded with no label changed is
// the same request.
#ifndef LENS_TELEMETRY_REMOTE_WRITE_H_
#define LENS_TELEMETRY_REMOTE_WRITE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::telemetry {

// Checked before anything is allocated for a request. The decoded arrays
// (labels, samples, series) may take at most twice the uncompressed bytes
// plus 64 KiB: a real request takes about 1.5 times (a label is 20 bytes or
// more on the wire, a sample 11 or more), a bomb of empty messages eight to
// sixteen times.
struct RemoteWriteLimits {
  size_t max_compressed_bytes = size_t{16} << 20;    // the HTTP body
  size_t max_uncompressed_bytes = size_t{32} << 20;  // snappy's declared size
  size_t max_series = 500'000;
  size_t max_labels_per_series = 1024;
  size_t max_samples = 2'000'000;  // in the whole request
};

struct WireLabel {
  std::string_view name;
  std::string_view value;
};

struct WireSample {
  double value = 0;
  int64_t timestamp_ms = 0;
};

// One series: ranges of the request's flat label and sample arrays, and of
// the encoded bytes of its other fields (exemplars, histograms, unknown).
struct WireSeries {
  uint32_t first_label = 0;
  uint32_t label_count = 0;
  uint32_t first_sample = 0;
  uint32_t sample_count = 0;
  uint32_t extra_offset = 0;  // in RemoteWriteRequest::series_extra
  uint32_t extra_size = 0;
};

// A decoded request. The views point into `buffer` (the uncompressed
// protobuf), so a request is moved, never copied, while they are in use.
// Decoding into the same object again reuses its memory.
struct RemoteWriteRequest {
  std::string buffer;
  std::vector<WireSeries> series;
  std::vector<WireLabel> labels;
  std::vector<WireSample> samples;
  std::string series_extra;  // the series' other fields, verbatim
  std::string extra;         // the WriteRequest's other fields (metadata)

  std::span<const WireLabel> LabelsOf(const WireSeries& s) const {
    return {labels.data() + s.first_label, s.label_count};
  }
  std::span<const WireSample> SamplesOf(const WireSeries& s) const {
    return {samples.data() + s.first_sample, s.sample_count};
  }
  std::string_view ExtraOf(const WireSeries& s) const {
    return std::string_view(series_extra).substr(s.extra_offset, s.extra_size);
  }
};

// Decodes a request body (snappy block of a WriteRequest). Errors, all
// kInvalidArgument (a payload the sender must not retry) but the sizes
// (kResourceExhausted): the body or the declared uncompressed length over
// the limits (checked before decompressing), a snappy block that is not
// valid or declares more than its bytes can hold (checked before anything
// is allocated, so a small body costs little whatever it declares), corrupt
// snappy, truncated or malformed protobuf (with the byte offset; field
// number 0 is malformed), a series without labels, a label whose name is
// empty or whose name or value is not valid UTF-8 or holds a NUL (what every
// remote-write target refuses), more series, labels or samples than the
// limits allow, decoded arrays over their share of the request.
Status DecodeRemoteWrite(std::string_view body, const RemoteWriteLimits& limits,
                         RemoteWriteRequest* out);
// The same on an uncompressed WriteRequest (tests, fuzzing). `out->buffer`
// takes a copy of `proto`.
Status DecodeWriteRequest(std::string_view proto,
                          const RemoteWriteLimits& limits,
                          RemoteWriteRequest* out);

// Builds a WriteRequest series by series, then its snappy body. Reusable:
// Finish() resets it.
class RemoteWriteEncoder {
 public:
  // Labels are written in the order given (remote write wants them sorted by
  // name; the caller keeps them so). `extra`: the series' other fields.
  void AddSeries(std::span<const WireLabel> labels,
                 std::span<const WireSample> samples,
                 std::string_view extra = {});
  // The WriteRequest's other fields (metadata), appended verbatim.
  void AddExtra(std::string_view extra);
  size_t series() const { return series_; }
  size_t proto_bytes() const { return proto_.size(); }
  // The uncompressed WriteRequest so far.
  const std::string& proto() const { return proto_; }
  // The snappy-compressed request; resets the encoder.
  std::string Finish();

 private:
  std::string proto_;
  std::string series_scratch_;
  size_t series_ = 0;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_REMOTE_WRITE_H_
