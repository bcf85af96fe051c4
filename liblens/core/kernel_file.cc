#include "core/kernel_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <utility>

namespace lens {
namespace {

constexpr size_t kMaxValueBytes = 64 * 1024;

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 64)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (text.size() > 64) out += "...";
  out += '"';
  return out;
}

// pread until EOF (a read of 0 bytes) or `max_bytes`. A short read is not
// the end: seq_file (procfs tables such as /proc/net/tcp, /proc/stat on a
// large host) returns at most one buffer of whole records per read.
Status ReadAll(int fd, const std::string& path, size_t max_bytes,
               std::string* out) {
  out->clear();
  size_t cap = std::min<size_t>(4096, max_bytes + 1);
  for (;;) {
    size_t used = out->size();
    out->resize(std::max(cap, used + 1));
    const size_t want = out->size() - used;
    ssize_t n = ::pread(fd, out->data() + used, want, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) {
        out->resize(used);
        continue;
      }
      int err = errno;
      out->resize(used);
      return ErrnoError(err, "read " + path);
    }
    out->resize(used + static_cast<size_t>(n));
    if (out->size() > max_bytes) {
      return ResourceExhaustedError("read " + path + ": larger than " +
                                    std::to_string(max_bytes) + " bytes");
    }
    if (n == 0) return OkStatus();
    if (out->size() * 2 > cap) cap = out->size() * 2;
  }
}

}  // namespace

std::string_view TrimKernelValue(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size() && (text[begin] == ' ' || text[begin] == '\t')) {
    ++begin;
  }
  size_t end = text.size();
  while (end > begin) {
    char c = text[end - 1];
    if (c != '\0' && c != '\n' && c != ' ' && c != '\t' && c != '\r') break;
    --end;
  }
  return text.substr(begin, end - begin);
}

StatusOr<uint64_t> ParseKernelUint64(std::string_view text,
                                     std::string_view where) {
  std::string_view value = TrimKernelValue(text);
  int base = 10;
  if (value.size() > 2 && value[0] == '0' &&
      (value[1] == 'x' || value[1] == 'X')) {
    value.remove_prefix(2);
    base = 16;
  }
  uint64_t out = 0;
  auto [ptr, ec] =
      std::from_chars(value.data(), value.data() + value.size(), out, base);
  if (value.empty() || ec != std::errc() ||
      ptr != value.data() + value.size()) {
    return InvalidArgumentError(std::string(where) +
                                ": expected an unsigned integer, got " +
                                Quoted(TrimKernelValue(text)));
  }
  return out;
}

StatusOr<int64_t> ParseKernelInt64(std::string_view text,
                                   std::string_view where) {
  std::string_view value = TrimKernelValue(text);
  int64_t out = 0;
  auto [ptr, ec] =
      std::from_chars(value.data(), value.data() + value.size(), out);
  if (value.empty() || ec != std::errc() ||
      ptr != value.data() + value.size()) {
    return InvalidArgumentError(std::string(where) +
                                ": expected an integer, got " +
                                Quoted(TrimKernelValue(text)));
  }
  return out;
}

StatusOr<std::string> ReadKernelFile(const std::string& path,
                                     size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open " + path);
  std::string out;
  Status st = ReadAll(fd, path, max_bytes, &out);
  ::close(fd);
  if (!st.ok()) return st;
  return out;
}

StatusOr<std::string> ReadKernelValue(const std::string& path) {
  LENS_ASSIGN_OR_RETURN(std::string raw, ReadKernelFile(path, kMaxValueBytes));
  return std::string(TrimKernelValue(raw));
}

StatusOr<std::vector<std::string>> ListKernelDir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoError(errno, "list " + path);
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::string> ReadKernelLink(const std::string& path) {
  std::string target(4096, '\0');
  ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n < 0) {
    if (errno == EINVAL) {
      return InvalidArgumentError("readlink " + path + ": not a symbolic link");
    }
    return ErrnoError(errno, "readlink " + path);
  }
  target.resize(static_cast<size_t>(n));
  return target;
}

StatusOr<std::string> ReadKernelLinkName(const std::string& path) {
  LENS_ASSIGN_OR_RETURN(std::string target, ReadKernelLink(path));
  while (!target.empty() && target.back() == '/') target.pop_back();
  size_t slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

KernelFile::~KernelFile() {
  if (fd_ >= 0) ::close(fd_);
}

KernelFile::KernelFile(KernelFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

KernelFile& KernelFile::operator=(KernelFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

StatusOr<KernelFile> KernelFile::Open(std::string path) {
  // O_NOATIME: re-reading a file every cycle must not write its inode (sysfs
  // and procfs ignore it; on a copied tree it saves ~10% of each read). Only
  // the owner or CAP_FOWNER may ask for it, so fall back without.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open " + path);
  return KernelFile(fd, std::move(path));
}

StatusOr<size_t> KernelFile::ReadSmall(char* buf, size_t size) const {
  if (fd_ < 0) return FailedPreconditionError("read: file not open");
  ssize_t n;
  do {
    n = ::pread(fd_, buf, size, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoError(errno, "read " + path_);
  return static_cast<size_t>(n);
}

StatusOr<std::string_view> KernelFile::Read(std::string* buffer) const {
  // Most values are short: read them through a stack buffer, so `buffer` is
  // assigned (no zero-filling resize) and its capacity reused.
  char small[512];
  LENS_ASSIGN_OR_RETURN(size_t n, ReadSmall(small, sizeof small));
  if (n < sizeof small) {
    buffer->assign(small, n);
  } else {
    LENS_RETURN_IF_ERROR(ReadAll(fd_, path_, kMaxValueBytes, buffer));
  }
  return TrimKernelValue(*buffer);
}

StatusOr<uint64_t> KernelFile::ReadUint64() const {
  char buf[64];
  LENS_ASSIGN_OR_RETURN(size_t n, ReadSmall(buf, sizeof buf));
  return ParseKernelUint64(std::string_view(buf, n), path_);
}

StatusOr<int64_t> KernelFile::ReadInt64() const {
  char buf[64];
  LENS_ASSIGN_OR_RETURN(size_t n, ReadSmall(buf, sizeof buf));
  return ParseKernelInt64(std::string_view(buf, n), path_);
}

}  // namespace lens
