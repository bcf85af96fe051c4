#include "telemetry/disk_queue_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace lens::telemetry {
namespace {

constexpr std::string_view kSegmentSuffix = ".seg";
constexpr uint32_t kCursorMagic = 0x3243514c;  // "LQC2"
constexpr size_t kSeqDigits = 20;

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

#if defined(__x86_64__)
// 8 bytes per instruction: about 8 GB/s, against 0.5 for the table.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(uint32_t crc,
                                                       const uint8_t* p,
                                                       size_t n) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#endif

uint32_t HeaderCrc(const char* header, std::string_view payload) {
  return Crc32c(Crc32c(0, {header + 4, kRecordHeaderBytes - 4}), payload);
}

}  // namespace

uint32_t Crc32c(uint32_t crc, std::string_view bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  crc = ~crc;
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return ~Crc32cSse42(crc, p, n);
#endif
  for (; n > 0; --n) crc = kCrcTable[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// Little-endian on every platform Lens targets, so memcpy is the encoding.
void EncodeRecordHeader(std::string_view payload, uint64_t samples,
                        int64_t time_ms, char out[kRecordHeaderBytes]) {
  const auto length = static_cast<uint32_t>(payload.size());
  std::memcpy(out + 4, &length, 4);
  std::memcpy(out + 8, &samples, 8);
  std::memcpy(out + 16, &time_ms, 8);
  const uint32_t crc = HeaderCrc(out, payload);
  std::memcpy(out, &crc, 4);
}

RecordHeader DecodeRecordHeader(const char in[kRecordHeaderBytes]) {
  RecordHeader h;
  std::memcpy(&h.crc, in, 4);
  std::memcpy(&h.length, in + 4, 4);
  std::memcpy(&h.samples, in + 8, 8);
  std::memcpy(&h.time_ms, in + 16, 8);
  return h;
}

bool RecordCrcMatches(const char header[kRecordHeaderBytes],
                      std::string_view payload) {
  return DecodeRecordHeader(header).crc == HeaderCrc(header, payload);
}

Status ReadAt(int fd, char* buf, size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, buf, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError(errno, "read");
    if (got == 0) return Status(StatusCode::kDataLoss, "unexpected end");
    buf += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return OkStatus();
}

Status WriteAt(int fd, iovec* iov, int count, uint64_t offset) {
  while (count > 0) {
    ssize_t n = ::pwritev(fd, iov, count, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, "write");
    if (n == 0) return ErrnoError(ENOSPC, "write");
    offset += static_cast<uint64_t>(n);
    for (; count > 0 && static_cast<size_t>(n) >= iov->iov_len;
         ++iov, --count) {
      n -= static_cast<ssize_t>(iov->iov_len);
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + n;
      iov->iov_len -= static_cast<size_t>(n);
    }
  }
  return OkStatus();
}

Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open " + dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? OkStatus() : ErrnoError(err, "fsync " + dir);
}

void EncodeCursorSlot(const CursorSlot& cursor, char out[kCursorSlotBytes]) {
  std::memcpy(out + 8, &cursor.generation, 8);
  std::memcpy(out + 16, &cursor.segment, 8);
  std::memcpy(out + 24, &cursor.offset, 8);
  const uint32_t crc = Crc32c(0, {out + 8, kCursorSlotBytes - 8});
  std::memcpy(out, &kCursorMagic, 4);
  std::memcpy(out + 4, &crc, 4);
}

std::optional<CursorSlot> DecodeCursor(std::string_view content) {
  std::optional<CursorSlot> best;
  for (size_t at = 0;
       at + kCursorSlotBytes <= content.size() && at < 2 * kCursorSlotBytes;
       at += kCursorSlotBytes) {
    const char* p = content.data() + at;
    uint32_t magic = 0, crc = 0;
    std::memcpy(&magic, p, 4);
    std::memcpy(&crc, p + 4, 4);
    if (magic != kCursorMagic ||
        crc != Crc32c(0, {p + 8, kCursorSlotBytes - 8})) {
      continue;
    }
    CursorSlot c;
    std::memcpy(&c.generation, p + 8, 8);
    std::memcpy(&c.segment, p + 16, 8);
    std::memcpy(&c.offset, p + 24, 8);
    if (!best || c.generation > best->generation) best = c;
  }
  return best;
}

std::optional<uint64_t> SegmentSeq(std::string_view name) {
  if (name.size() != kSeqDigits + kSegmentSuffix.size() ||
      !name.ends_with(kSegmentSuffix)) {
    return std::nullopt;
  }
  uint64_t seq = 0;
  for (char c : name.substr(0, kSeqDigits)) {
    if (c < '0' || c > '9') return std::nullopt;
    seq = seq * 10 + static_cast<uint64_t>(c - '0');
  }
  return seq;
}

StatusOr<std::vector<uint64_t>> ListSegments(const std::string& dir) {
  std::error_code ec;
  std::vector<uint64_t> seqs;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (auto seq = SegmentSeq(e.path().filename().string())) {
      seqs.push_back(*seq);
    }
  }
  if (ec) return ErrnoError(ec.value(), "list " + dir);
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

std::string SegmentName(uint64_t seq) {
  char name[kSeqDigits + 8];
  std::snprintf(name, sizeof name, "%020llu.seg",
                static_cast<unsigned long long>(seq));
  return name;
}

Status ScanSegment(const std::string& path, bool verify, uint64_t cursor,
                   SegmentScan* s) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoError(err, "stat " + path);
  }
  s->file_bytes = static_cast<uint64_t>(st.st_size);
  char header[kRecordHeaderBytes];
  std::string payload;
  uint64_t off = 0;
  Status status;
  for (;;) {
    if (off <= cursor) {
      s->cursor_offset = off;
      s->cursor_records = s->records;
    }
    if (off == s->file_bytes) break;
    if (s->file_bytes - off < kRecordHeaderBytes) {
      s->damage = "header cut short";
      break;
    }
    status = ReadAt(fd, header, kRecordHeaderBytes, off);
    if (!status.ok()) break;
    const RecordHeader h = DecodeRecordHeader(header);
    if (h.length == 0 || h.length > s->file_bytes - off - kRecordHeaderBytes) {
      s->damage = "record cut short or bad length";
      break;
    }
    if (verify) {
      payload.resize(h.length);
      status = ReadAt(fd, payload.data(), h.length, off + kRecordHeaderBytes);
      if (!status.ok()) break;
      if (!RecordCrcMatches(header, payload)) {
        s->damage = "CRC mismatch";
        break;
      }
    }
    off += kRecordHeaderBytes + h.length;
    ++s->records;
  }
  s->valid_bytes = off;
  ::close(fd);
  return status.WithContext("read " + path);
}

}  // namespace lens::telemetry
