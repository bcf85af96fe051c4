// A real, private VictoriaMetrics (single-node) or vmagent for tests and
// benchmarks, from Debian's victoria-metrics package: a fresh temporary
// directory, 127.0.0.1 on a free port, killed (and its directory removed)
// by the destructor. Stop() and StartAgain() keep the data directory, so a
// test can take the receiver away and bring it back.
#ifndef LENS_TEST_SUPPORT_VICTORIA_METRICS_H_
#define LENS_TEST_SUPPORT_VICTORIA_METRICS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::test {

class VictoriaMetrics {
 public:
  // "/usr/bin/victoria-metrics" or "/usr/bin/vmagent" when installed, else
  // empty (the caller skips with the reason).
  static std::string Binary();
  static std::string AgentBinary();

  // Starts victoria-metrics and waits (up to 30 s) for /health. Errors
  // include the tail of its log.
  static StatusOr<std::unique_ptr<VictoriaMetrics>> Start();
  // Starts vmagent with `args` (e.g. -promscrape.config=..,
  // -remoteWrite.url=..) and its own -remoteWrite.tmpDataPath, and waits
  // for /health.
  static StatusOr<std::unique_ptr<VictoriaMetrics>> StartAgent(
      const std::vector<std::string>& args);
  ~VictoriaMetrics();
  VictoriaMetrics(const VictoriaMetrics&) = delete;
  VictoriaMetrics& operator=(const VictoriaMetrics&) = delete;

  // Kills the server (SIGKILL: nothing flushed on the way out beyond what
  // it already acknowledged) and waits for it.
  void Stop();
  // The same binary, data and port again; waits for /health.
  Status StartAgain();

  int port() const { return port_; }
  std::string url() const;        // http://127.0.0.1:<port>
  std::string write_url() const;  // .../api/v1/write
  const std::string& dir() const { return dir_; }
  std::string log() const;

  // GET `path_and_query` on the server: the body, or an error with the
  // status. (VictoriaMetrics only.)
  StatusOr<std::string> Get(const std::string& path_and_query) const;
  // POSTs `body` to `path` on the server (e.g. /api/v1/import with JSON
  // lines): the answer's body, or an error with the status unless it is
  // 2xx. (VictoriaMetrics only.)
  StatusOr<std::string> Post(const std::string& path, const std::string& body,
                             const std::string& content_type) const;
  // Makes recent samples searchable (/internal/force_flush), then
  // /api/v1/export of `match` (a series selector): one JSON object per
  // series and line, {"metric":{...},"values":[...],"timestamps":[...]}.
  StatusOr<std::string> Export(const std::string& match) const;

 private:
  VictoriaMetrics() = default;
  Status Launch();
  Status WaitHealthy();

  std::string binary_;
  std::vector<std::string> args_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_VICTORIA_METRICS_H_
