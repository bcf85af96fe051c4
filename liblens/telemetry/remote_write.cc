#include "telemetry/remote_write.h"

#include <snappy.h>

#include <cstring>

#include "core/text.h"

namespace lens::telemetry {
namespace {

enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

// A cursor over protobuf bytes; every read checks the end.
class Reader {
 public:
  Reader(std::string_view bytes, size_t base)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())),
        begin_(p_),
        end_(p_ + bytes.size()),
        base_(base) {}

  bool done() const { return p_ == end_; }
  size_t offset() const { return base_ + static_cast<size_t>(p_ - begin_); }
  const char* pos() const { return reinterpret_cast<const char*>(p_); }

  bool Varint(uint64_t* v) {
    uint64_t out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      out |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) {
        *v = out;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool Fixed64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    std::memcpy(v, p_, 8);  // little-endian on every platform Lens targets
    p_ += 8;
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n = 0;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  bool Skip(uint8_t wire_type) {
    uint64_t v = 0;
    std::string_view s;
    switch (wire_type) {
      case kVarint:
        return Varint(&v);
      case kFixed64:
        return Fixed64(&v);
      case kBytes:
        return Bytes(&s);
      case kFixed32:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      default:
        return false;  // groups are not in proto3
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
  size_t base_;
};

Status Malformed(std::string_view what, size_t offset) {
  return InvalidArgumentError("remote write: malformed protobuf (" +
                              std::string(what) + ") at byte " +
                              std::to_string(offset));
}

// The base offset of `inner` within `outer_buffer`, for messages.
size_t OffsetIn(std::string_view buffer, std::string_view inner) {
  return static_cast<size_t>(inner.data() - buffer.data());
}

// Valid UTF-8 without NUL: what every remote-write target accepts.
bool CleanUtf8(std::string_view s) {
  return FirstInvalidUtf8(s) == std::string_view::npos &&
         s.find('\0') == std::string_view::npos;
}

Status DecodeLabel(std::string_view bytes, size_t base, WireLabel* out) {
  Reader r(bytes, base);
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return Malformed("label tag", r.offset());
    if ((tag >> 3) == 0) return Malformed("field number 0", r.offset());
    const uint64_t field = tag >> 3;
    const uint8_t type = tag & 7;
    if ((field == 1 || field == 2) && type == kBytes) {
      std::string_view s;
      if (!r.Bytes(&s)) return Malformed("label text", r.offset());
      (field == 1 ? out->name : out->value) = s;
    } else if (!r.Skip(type)) {
      return Malformed("label field", r.offset());
    }
  }
  if (out->name.empty()) {
    return InvalidArgumentError(
        "remote write: a label without a name at byte " + std::to_string(base));
  }
  if (!CleanUtf8(out->name) || !CleanUtf8(out->value)) {
    return InvalidArgumentError(
        "remote write: label " + std::string(out->name.substr(0, 64)) +
        " at byte " + std::to_string(base) +
        ": name or value is not valid UTF-8 or holds a NUL");
  }
  return OkStatus();
}

Status DecodeSample(std::string_view bytes, size_t base, WireSample* out) {
  Reader r(bytes, base);
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return Malformed("sample tag", r.offset());
    if ((tag >> 3) == 0) return Malformed("field number 0", r.offset());
    const uint64_t field = tag >> 3;
    const uint8_t type = tag & 7;
    uint64_t v = 0;
    if (field == 1 && type == kFixed64) {
      if (!r.Fixed64(&v)) return Malformed("sample value", r.offset());
      std::memcpy(&out->value, &v, 8);
    } else if (field == 2 && type == kVarint) {
      if (!r.Varint(&v)) return Malformed("sample timestamp", r.offset());
      out->timestamp_ms = static_cast<int64_t>(v);
    } else if (!r.Skip(type)) {
      return Malformed("sample field", r.offset());
    }
  }
  return OkStatus();
}

Status DecodeSeries(std::string_view bytes, size_t base,
                    const RemoteWriteLimits& limits, RemoteWriteRequest* out) {
  WireSeries s;
  s.first_label = static_cast<uint32_t>(out->labels.size());
  s.first_sample = static_cast<uint32_t>(out->samples.size());
  s.extra_offset = static_cast<uint32_t>(out->series_extra.size());
  Reader r(bytes, base);
  while (!r.done()) {
    const char* field_start = r.pos();
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return Malformed("series tag", r.offset());
    if ((tag >> 3) == 0) return Malformed("field number 0", r.offset());
    const uint64_t field = tag >> 3;
    const uint8_t type = tag & 7;
    std::string_view m;
    if (field == 1 && type == kBytes) {
      if (!r.Bytes(&m)) return Malformed("label", r.offset());
      if (++s.label_count > limits.max_labels_per_series) {
        return InvalidArgumentError(
            "remote write: a series has more than " +
            std::to_string(limits.max_labels_per_series) + " labels");
      }
      WireLabel label;
      LENS_RETURN_IF_ERROR(
          DecodeLabel(m, base + (m.data() - bytes.data()), &label));
      out->labels.push_back(label);
    } else if (field == 2 && type == kBytes) {
      if (!r.Bytes(&m)) return Malformed("sample", r.offset());
      if (out->samples.size() >= limits.max_samples) {
        return InvalidArgumentError("remote write: more than " +
                                    std::to_string(limits.max_samples) +
                                    " samples in one request");
      }
      WireSample sample;
      LENS_RETURN_IF_ERROR(
          DecodeSample(m, base + (m.data() - bytes.data()), &sample));
      out->samples.push_back(sample);
      ++s.sample_count;
    } else {
      if (!r.Skip(type)) return Malformed("series field", r.offset());
      out->series_extra.append(field_start, r.pos());
    }
  }
  if (s.label_count == 0) {
    return InvalidArgumentError(
        "remote write: a series without labels at byte " +
        std::to_string(base));
  }
  s.extra_size =
      static_cast<uint32_t>(out->series_extra.size() - s.extra_offset);
  out->series.push_back(s);
  return OkStatus();
}

Status DecodeBuffer(const RemoteWriteLimits& limits, RemoteWriteRequest* out) {
  out->series.clear();
  out->labels.clear();
  out->samples.clear();
  out->series_extra.clear();
  out->extra.clear();
  const std::string_view all(out->buffer);
  Reader r(all, 0);
  while (!r.done()) {
    const char* field_start = r.pos();
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return Malformed("request tag", r.offset());
    if ((tag >> 3) == 0) return Malformed("field number 0", r.offset());
    const uint64_t field = tag >> 3;
    const uint8_t type = tag & 7;
    if (field == 1 && type == kBytes) {
      std::string_view m;
      if (!r.Bytes(&m)) return Malformed("series", r.offset());
      if (out->series.size() >= limits.max_series) {
        return InvalidArgumentError("remote write: more than " +
                                    std::to_string(limits.max_series) +
                                    " series in one request");
      }
      LENS_RETURN_IF_ERROR(DecodeSeries(m, OffsetIn(all, m), limits, out));
      const size_t arrays = out->labels.size() * sizeof(WireLabel) +
                            out->samples.size() * sizeof(WireSample) +
                            out->series.size() * sizeof(WireSeries);
      if (arrays > 2 * all.size() + (size_t{64} << 10)) {
        return InvalidArgumentError(
            "remote write: at byte " + std::to_string(r.offset()) +
            ", more labels and samples than " + std::to_string(all.size()) +
            " bytes of real series hold (empty messages?)");
      }
    } else {
      if (!r.Skip(type)) return Malformed("request field", r.offset());
      out->extra.append(field_start, r.pos());
    }
  }
  return OkStatus();
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void PutBytes(char tag, std::string_view s, std::string* out) {
  out->push_back(tag);
  PutVarint(s.size(), out);
  out->append(s);
}

}  // namespace

Status DecodeRemoteWrite(std::string_view body, const RemoteWriteLimits& limits,
                         RemoteWriteRequest* out) {
  if (body.size() > limits.max_compressed_bytes) {
    return ResourceExhaustedError("remote write: body of " +
                                  std::to_string(body.size()) +
                                  " bytes over the limit of " +
                                  std::to_string(limits.max_compressed_bytes));
  }
  // The block's preamble: its uncompressed length, a varint of at most 5
  // bytes. Read here, so that a length snappy itself would refuse as
  // over 32 bits is named too.
  uint64_t length = 0;
  size_t used = 0;
  for (int shift = 0; used < body.size() && used < 5; shift += 7) {
    const uint8_t b = static_cast<uint8_t>(body[used++]);
    length |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) break;
    if (used == 5 || used == body.size()) {
      return InvalidArgumentError(
          "remote write: not a snappy block (no valid length preamble)");
    }
  }
  if (used == 0) return InvalidArgumentError("remote write: empty body");
  if (length > limits.max_uncompressed_bytes) {
    return ResourceExhaustedError(
        "remote write: declares " + std::to_string(length) +
        " uncompressed bytes, over the limit of " +
        std::to_string(limits.max_uncompressed_bytes));
  }
  size_t declared = 0;
  if (!snappy::GetUncompressedLength(body.data(), body.size(), &declared) ||
      declared != length) {
    return InvalidArgumentError(
        "remote write: not a snappy block (no valid length preamble)");
  }
  // A snappy element expands at most 64 bytes from 3 (a copy), so a body
  // cannot hold more than about 22 times its size: a short body declaring
  // more is refused before the buffer is allocated. The block is then walked
  // without writing anything, so what is allocated is only ever what it
  // really holds.
  if (declared > (body.size() - used) * 22 + 64) {
    return InvalidArgumentError(
        "remote write: corrupt snappy block (declares " +
        std::to_string(declared) + " bytes, more than " +
        std::to_string(body.size()) + " bytes can hold)");
  }
  if (!snappy::IsValidCompressedBuffer(body.data(), body.size())) {
    return InvalidArgumentError("remote write: corrupt snappy block");
  }
  out->buffer.resize(declared);
  if (!snappy::RawUncompress(body.data(), body.size(), out->buffer.data())) {
    out->buffer.clear();
    return InvalidArgumentError("remote write: corrupt snappy block");
  }
  return DecodeBuffer(limits, out);
}

Status DecodeWriteRequest(std::string_view proto,
                          const RemoteWriteLimits& limits,
                          RemoteWriteRequest* out) {
  if (proto.size() > limits.max_uncompressed_bytes) {
    return ResourceExhaustedError("remote write: request over the limit");
  }
  out->buffer.assign(proto);
  return DecodeBuffer(limits, out);
}

void RemoteWriteEncoder::AddSeries(std::span<const WireLabel> labels,
                                   std::span<const WireSample> samples,
                                   std::string_view extra) {
  std::string& s = series_scratch_;
  s.clear();
  for (const WireLabel& l : labels) {
    s.push_back(0x0a);  // labels = 1
    PutVarint(2 + VarintSize(l.name.size()) + l.name.size() +
                  VarintSize(l.value.size()) + l.value.size(),
              &s);
    PutBytes(0x0a, l.name, &s);
    PutBytes(0x12, l.value, &s);
  }
  for (const WireSample& x : samples) {
    const uint64_t ts = static_cast<uint64_t>(x.timestamp_ms);
    s.push_back(0x12);  // samples = 2
    PutVarint(1 + 8 + 1 + VarintSize(ts), &s);
    s.push_back(0x09);  // value = 1, fixed64
    char bits[8];
    std::memcpy(bits, &x.value, 8);
    s.append(bits, 8);
    s.push_back(0x10);  // timestamp = 2, varint
    PutVarint(ts, &s);
  }
  s.append(extra);
  proto_.push_back(0x0a);  // timeseries = 1
  PutVarint(s.size(), &proto_);
  proto_.append(s);
  ++series_;
}

void RemoteWriteEncoder::AddExtra(std::string_view extra) {
  proto_.append(extra);
}

std::string RemoteWriteEncoder::Finish() {
  std::string out;
  snappy::Compress(proto_.data(), proto_.size(), &out);
  proto_.clear();
  series_ = 0;
  return out;
}

}  // namespace lens::telemetry
