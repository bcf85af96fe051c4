// Reading kernel interface files (sysfs attributes, procfs entries) the way a
// per-cycle collector must: files opened once and re-read with pread at
// offset 0 (sysfs and procfs regenerate the content on every read from the
// start), values trimmed of the NUL padding and newlines some drivers leave.
#ifndef LENS_CORE_KERNEL_FILE_H_
#define LENS_CORE_KERNEL_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

// Removes leading spaces/tabs and trailing NULs, newlines, spaces and tabs.
std::string_view TrimKernelValue(std::string_view text);

// Parses an unsigned integer as sysfs prints it: decimal, or hex with a 0x
// prefix; surrounding whitespace/NULs ignored. InvalidArgument naming `where`
// otherwise ("<where>: expected an unsigned integer, got \"N/A\"").
StatusOr<uint64_t> ParseKernelUint64(std::string_view text,
                                     std::string_view where);
// The same for a signed decimal integer.
StatusOr<int64_t> ParseKernelInt64(std::string_view text,
                                   std::string_view where);

// Reads a whole small file (at most `max_bytes`, default 1 MiB) and returns
// it untrimmed. Errors: NotFound (missing), PermissionDenied, others from
// errno; each names the path. ResourceExhausted when larger than max_bytes.
StatusOr<std::string> ReadKernelFile(const std::string& path,
                                     size_t max_bytes = size_t{1} << 20);
// ReadKernelFile + TrimKernelValue.
StatusOr<std::string> ReadKernelValue(const std::string& path);

// Sorted entry names of a directory (no "." and ".."). NotFound when the
// directory does not exist.
StatusOr<std::vector<std::string>> ListKernelDir(const std::string& path);
// The target of a symbolic link, as stored (often relative). NotFound when
// missing, InvalidArgument when `path` is not a link.
StatusOr<std::string> ReadKernelLink(const std::string& path);
// The last path component of a link's target ("../../../0000:0c:00.0" ->
// "0000:0c:00.0"); errors as ReadKernelLink.
StatusOr<std::string> ReadKernelLinkName(const std::string& path);

// One kernel file kept open between reads. Move-only; not thread-safe.
class KernelFile {
 public:
  KernelFile() = default;
  ~KernelFile();
  KernelFile(KernelFile&& other) noexcept;
  KernelFile& operator=(KernelFile&& other) noexcept;
  KernelFile(const KernelFile&) = delete;
  KernelFile& operator=(const KernelFile&) = delete;

  // Opens `path` read-only (O_CLOEXEC). Errors as ReadKernelFile.
  static StatusOr<KernelFile> Open(std::string path);

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  // Re-reads the file from offset 0 into `buffer` (replaced; at most 64 KiB)
  // and returns the trimmed value, a view into `buffer`.
  StatusOr<std::string_view> Read(std::string* buffer) const;
  // Read + ParseKernelUint64 / ParseKernelInt64 (errors name the path).
  StatusOr<uint64_t> ReadUint64() const;
  StatusOr<int64_t> ReadInt64() const;

 private:
  // One pread of at most `size` bytes at offset 0; the byte count.
  StatusOr<size_t> ReadSmall(char* buf, size_t size) const;
  KernelFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace lens

#endif  // LENS_CORE_KERNEL_FILE_H_
