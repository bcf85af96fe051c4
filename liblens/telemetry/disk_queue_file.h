// The disk queue's files (disk_queue.h): record framing (a header with a
// CRC32C), whole reads and writes at an offset, and the scan Open() makes of
// each segment to find where its last whole record ends.
#ifndef LENS_TELEMETRY_DISK_QUEUE_FILE_H_
#define LENS_TELEMETRY_DISK_QUEUE_FILE_H_

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::telemetry {

// CRC32C (Castagnoli; SSE 4.2 when the CPU has it) of `bytes`, extending
// `crc` (0 to start). Crc32c(0, "123456789") == 0xe3069283.
uint32_t Crc32c(uint32_t crc, std::string_view bytes);

// The wall clock in Unix milliseconds (records' append times).
inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A record's header, little-endian: CRC32C of the rest of the header and the
// payload, payload length, sample count, append time (Unix milliseconds).
inline constexpr size_t kRecordHeaderBytes = 24;

struct RecordHeader {
  uint32_t crc = 0;
  uint32_t length = 0;
  uint64_t samples = 0;
  int64_t time_ms = 0;
};

// Writes the header of `payload` (at most 4 GiB) to `out`.
void EncodeRecordHeader(std::string_view payload, uint64_t samples,
                        int64_t time_ms, char out[kRecordHeaderBytes]);
RecordHeader DecodeRecordHeader(const char in[kRecordHeaderBytes]);
// True when `payload` is what `header` was encoded for.
bool RecordCrcMatches(const char header[kRecordHeaderBytes],
                      std::string_view payload);

// Reads exactly `n` bytes at `offset`; DataLoss when the file ends first.
Status ReadAt(int fd, char* buf, size_t n, uint64_t offset);
// Writes the iovecs whole at `offset`, resuming after short writes (it
// changes them).
Status WriteAt(int fd, iovec* iov, int count, uint64_t offset);
// fsync() of a directory, after creating, renaming or deleting in it.
Status SyncDir(const std::string& dir);

// The cursor file: two 32-byte slots written in turn (generation % 2), each
// a magic number, the CRC32C of the rest, the generation, the segment and
// the offset. A write torn by a crash (or power loss) damages only its own
// slot; the other still holds the cursor before it, so at worst the records
// since then are delivered again.
inline constexpr size_t kCursorSlotBytes = 32;

struct CursorSlot {
  uint64_t generation = 0;
  uint64_t segment = 0;
  uint64_t offset = 0;
};

void EncodeCursorSlot(const CursorSlot& cursor, char out[kCursorSlotBytes]);
// The valid slot of the newest generation in the file's `content`; nullopt
// when there is none.
std::optional<CursorSlot> DecodeCursor(std::string_view content);

// The sequence numbers of the segments in `dir`, ascending.
StatusOr<std::vector<uint64_t>> ListSegments(const std::string& dir);
// "00000000000000000042.seg" -> 42; nullopt for other names.
std::optional<uint64_t> SegmentSeq(std::string_view name);
std::string SegmentName(uint64_t seq);

// What a scan finds in one segment.
struct SegmentScan {
  uint64_t file_bytes = 0;
  uint64_t valid_bytes = 0;  // whole records from the start
  uint64_t records = 0;
  std::string damage;  // why the scan stopped before the end of the file
  // The last record boundary at or before the `cursor` asked for, and the
  // records before it.
  uint64_t cursor_offset = 0;
  uint64_t cursor_records = 0;
};

// Walks the records' headers, and checks each CRC when `verify` (the last
// segment, where a crash can leave a torn record). Errors: I/O, naming
// `path`.
Status ScanSegment(const std::string& path, bool verify, uint64_t cursor,
                   SegmentScan* scan);

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_DISK_QUEUE_FILE_H_
