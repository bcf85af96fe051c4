// Training log files tailed into a LogIngest, for `lens up --logs PATH...` on
// one machine: each file is one log stream, read from its beginning and
// followed while it is written, across rotations, so a file gives the rows
// `lens parse-log --store URL --workload UID FILE` gives (the same source:
// the file's absolute path; the same lines, numbered the same way).
//
// Rotation, checked at every poll:
// - rename + create (logrotate's default): once a new file has the path, the
//   old one (still open) is read to its end, then the new one from its start;
// - copytruncate: a file shorter than what was read was truncated; it is read
//   again from its start. What was written between the last poll and the
//   truncation is lost, as with any reader of copytruncate. NUL bytes (the
//   hole a writer without O_APPEND leaves in the truncated file) are
//   dropped.
// A line cut by a rotation is ended there (a newline is fed) rather than
// joined with the next file's first line.
#ifndef LENS_TELEMETRY_LOG_TAIL_H_
#define LENS_TELEMETRY_LOG_TAIL_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lens/status.h"
#include "telemetry/logs.h"

namespace lens::telemetry {

struct LogFileTailerOptions {
  std::chrono::milliseconds poll_interval{250};
  size_t read_chunk_bytes = size_t{1} << 20;
  size_t max_bytes_per_poll = size_t{64} << 20;  // per file; the rest next time
};

struct TailedLogFile {
  std::string path;
  // The workload the log belongs to; empty: the file's absolute path (pass
  // the same to `lens parse-log --store --workload` for the same rows).
  std::string workload_uid;
  std::string workload_name;  // gauge label; empty: the file's name
};

// Thread-safe. Files are polled, never watched (inotify misses files on
// network filesystems, where training logs often are).
class LogFileTailer {
 public:
  // `ingest` must outlive the tailer.
  explicit LogFileTailer(LogIngest* ingest, LogFileTailerOptions options = {});
  ~LogFileTailer();  // Stop()s
  LogFileTailer(const LogFileTailer&) = delete;
  LogFileTailer& operator=(const LogFileTailer&) = delete;

  // Follows `file` from the next poll on; it need not exist yet.
  // kInvalidArgument for an empty path.
  Status Add(TailedLogFile file);

  // Reads what is new in every file now and feeds it to the ingest. Returns
  // the first error (a file that cannot be read, naming it); the other files
  // are still read.
  Status Poll();

  // Polls every poll_interval on a thread of its own until Stop(), which
  // polls a last time. The thread logs nothing: the last poll's result is
  // last_error().
  void Start();
  void Stop();
  Status last_error() const;

 private:
  struct File;
  Status PollFile(File& f);
  Status ReadToEnd(File& f, int fd);
  Status Feed(File& f, std::string_view text);
  void Loop();

  LogIngest* const ingest_;
  const LogFileTailerOptions options_;

  std::mutex poll_mu_;                        // one Poll at a time
  std::vector<std::unique_ptr<File>> files_;  // GUARDED_BY(poll_mu_)
  std::string buf_, nul_free_;                // GUARDED_BY(poll_mu_)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  Status last_error_;      // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_LOG_TAIL_H_
