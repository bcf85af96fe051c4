#include "telemetry/log_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace lens::telemetry {
namespace {

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

std::string RealPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return out;
}

}  // namespace

struct LogFileTailer::File {
  ~File() {
    if (fd >= 0) ::close(fd);
  }
  TailedLogFile spec;
  LogStreamId id;  // set when the file is first opened
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t offset = 0;
  bool ends_line = true;  // the last byte fed was '\n' (or none was fed)
};

LogFileTailer::LogFileTailer(LogIngest* ingest, LogFileTailerOptions options)
    : ingest_(ingest), options_(options) {}

LogFileTailer::~LogFileTailer() { Stop(); }

Status LogFileTailer::Add(TailedLogFile file) {
  if (file.path.empty()) return InvalidArgumentError("log file: empty path");
  auto f = std::make_unique<File>();
  f->spec = std::move(file);
  std::lock_guard lock(poll_mu_);
  files_.push_back(std::move(f));
  return OkStatus();
}

Status LogFileTailer::Poll() {
  std::lock_guard lock(poll_mu_);
  Status first;
  for (const std::unique_ptr<File>& f : files_) {
    Status st = PollFile(*f);
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

Status LogFileTailer::Feed(File& f, std::string_view text) {
  // NUL bytes are never text: the hole a writer without O_APPEND leaves
  // after a copytruncate reads as NULs.
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) {
    nul_free_.clear();
    for (char c : text) {
      if (c != '\0') nul_free_.push_back(c);
    }
    text = nul_free_;
  }
  if (text.empty()) return OkStatus();
  f.ends_line = text.back() == '\n';
  return ingest_->IngestText(f.id, text, Now());
}

Status LogFileTailer::ReadToEnd(File& f, int fd) {
  buf_.resize(options_.read_chunk_bytes);
  size_t budget = options_.max_bytes_per_poll;
  while (budget > 0) {
    const ssize_t n =
        ::pread(fd, buf_.data(), std::min(buf_.size(), budget), f.offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read " + f.spec.path);
    }
    if (n == 0) break;
    f.offset += n;
    budget -= static_cast<size_t>(n);
    LENS_RETURN_IF_ERROR(
        Feed(f, std::string_view(buf_.data(), static_cast<size_t>(n))));
  }
  return OkStatus();
}

Status LogFileTailer::PollFile(File& f) {
  // A rotated file is read to its end, then its successor from the start;
  // a few rotations between two polls are followed one after the other.
  for (int round = 0; round < 4; ++round) {
    if (f.fd < 0) {
      const int fd = ::open(f.spec.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT) return OkStatus();  // not (yet, again) there
        return ErrnoError(errno, "open " + f.spec.path);
      }
      struct stat st;
      if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        ::close(fd);
        return InvalidArgumentError(f.spec.path + ": not a readable log file");
      }
      f.fd = fd;
      f.dev = st.st_dev;
      f.ino = st.st_ino;
      f.offset = 0;
      if (f.id.key.empty()) {
        // As `lens parse-log --store` names its input.
        f.id.source = RealPath(f.spec.path);
        f.id.key = "file:" + f.id.source;
        f.id.owner.workload_uid =
            f.spec.workload_uid.empty() ? f.id.source : f.spec.workload_uid;
        f.id.owner.workload_name =
            f.spec.workload_name.empty()
                ? f.id.source.substr(f.id.source.rfind('/') + 1)
                : f.spec.workload_name;
        f.id.owner.workload_kind = "LogFile";
      }
    }
    struct stat st;
    if (::fstat(f.fd, &st) == 0 && st.st_size < f.offset) {  // copytruncate
      if (!f.ends_line) LENS_RETURN_IF_ERROR(Feed(f, "\n"));
      f.offset = 0;
    }
    LENS_RETURN_IF_ERROR(ReadToEnd(f, f.fd));
    struct stat now;
    if (::stat(f.spec.path.c_str(), &now) != 0 ||
        (now.st_dev == f.dev && now.st_ino == f.ino)) {
      return OkStatus();  // the same file (or none yet in its place)
    }
    // Renamed away and replaced: what the writer added before it moved on.
    LENS_RETURN_IF_ERROR(ReadToEnd(f, f.fd));
    ::close(f.fd);
    f.fd = -1;
    if (!f.ends_line) LENS_RETURN_IF_ERROR(Feed(f, "\n"));
  }
  return OkStatus();
}

void LogFileTailer::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void LogFileTailer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status LogFileTailer::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void LogFileTailer::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    const bool stop = cv_.wait_for(lock, options_.poll_interval,
                                   [this] { return stopping_; });
    lock.unlock();
    Status st = Poll();  // the last one after Stop() too
    lock.lock();
    last_error_ = st;
    if (stop) return;
  }
}

}  // namespace lens::telemetry
