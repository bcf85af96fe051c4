// DockerClient::Subscribe: GET /events as a chunked stream of JSON objects,
// one per line, decoded into the tracker's RuntimeEvents. A start is
// completed with the process id and a die with Docker's own FinishedAt
// (an inspect each), so the times match what a list reports later.
#include <cctype>
#include <chrono>
#include <utility>

#include "containers/docker/docker_client.h"
#include "containers/docker/docker_http.h"
#include "core/text.h"

namespace lens::containers::docker {
namespace {

constexpr char kEventFilters[] =
    R"({"type":["container"],"event":["create","start","die","destroy",)"
    R"("pause","unpause","oom","update"]})";

// "<seconds>.<nanoseconds>", the form /events takes for since=.
std::string SinceNow() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  std::string frac = std::to_string(ns % 1000000000);
  frac.insert(0, 9 - frac.size(), '0');
  return std::to_string(ns / 1000000000) + "." + frac;
}

class DockerEventStream final : public RuntimeEventStream {
 public:
  DockerEventStream(DockerClient* client,
                    std::unique_ptr<UnixHttpConnection> conn, std::string where)
      : client_(client), conn_(std::move(conn)), where_(std::move(where)) {}

  bool Next(RuntimeEvent* event) override {
    while (true) {
      const size_t eol = buffer_.find('\n');
      if (eol == std::string::npos) {
        if (buffer_.size() > kMaxEventBytes) {
          return End(ResourceExhaustedError(
              "an event over " + std::to_string(kMaxEventBytes >> 10) +
              " KiB"));
        }
        auto more = conn_->ReadBody(&buffer_, Deadline::max());
        if (!more.ok()) return End(more.status());
        if (!*more) return End(UnavailableError("the Engine ended the stream"));
        continue;
      }
      std::string line = buffer_.substr(0, eol);
      buffer_.erase(0, eol + 1);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      auto parsed = ParseEvent(line);
      if (!parsed.ok()) return End(parsed.status());
      if (!*parsed) continue;  // not followed
      *event = Convert(**parsed);
      return true;
    }
  }

  void Cancel() override { conn_->Cancel(); }

  Status Finish() override { return finish_; }

 private:
  bool End(Status status) {
    finish_ = status.WithContext(where_);
    return false;
  }

  RuntimeEvent Convert(const DockerEvent& e) {
    RuntimeEvent out;
    out.container_id = e.id;
    out.at = Timestamp(std::chrono::microseconds(e.time_nano / 1000));
    switch (e.action) {
      case DockerAction::kCreate:
        out.topic = RuntimeTopic::kContainerCreate;
        break;
      case DockerAction::kUpdate:
        out.topic = RuntimeTopic::kContainerUpdate;
        break;
      case DockerAction::kDestroy:
        out.topic = RuntimeTopic::kContainerDelete;
        break;
      case DockerAction::kPause:
        out.topic = RuntimeTopic::kTaskPaused;
        break;
      case DockerAction::kUnpause:
        out.topic = RuntimeTopic::kTaskResumed;
        break;
      case DockerAction::kOom:
        out.topic = RuntimeTopic::kTaskOom;
        break;
      case DockerAction::kStart: {
        out.topic = RuntimeTopic::kTaskStart;
        // Gone again already: the die that follows says so.
        auto c = client_->Inspect(e.id);
        if (c.ok() && c->status == "running") out.pid = c->pid;
        break;
      }
      case DockerAction::kDie: {
        out.topic = RuntimeTopic::kTaskExit;
        auto c = client_->Inspect(e.id);
        out.exit_status = e.exit_code;
        if (c.ok() && !out.exit_status) out.exit_status = c->exit_code;
        out.exited_at = c.ok() && c->finished_at ? c->finished_at : out.at;
        break;
      }
    }
    return out;
  }

  DockerClient* client_;
  std::unique_ptr<UnixHttpConnection> conn_;
  const std::string where_;
  std::string buffer_;
  Status finish_;
};

}  // namespace

StatusOr<std::unique_ptr<RuntimeEventStream>> DockerClient::Subscribe() {
  // Again on every (re)subscription: the Engine may have been upgraded.
  LENS_ASSIGN_OR_RETURN(std::string version, Negotiate());
  const std::string path = "/events?since=" + SinceNow() +
                           "&filters=" + PercentEncode(kEventFilters);
  const std::string where = Where("GET", "/events");
  const Deadline deadline = std::chrono::steady_clock::now() + timeout_;
  auto conn = UnixHttpConnection::Connect(socket_path_);
  if (!conn.ok()) return conn.status().WithContext(where);
  Status sent = (*conn)->Send("GET", "/v" + version + path, "", "", deadline);
  if (!sent.ok()) return sent.WithContext(where);
  auto head = (*conn)->ReadHead(deadline);
  if (!head.ok()) return head.status().WithContext(where);
  if (head->status != 200) {
    auto body = (*conn)->ReadAll(64 << 10, deadline);
    return UnavailableError(where + ": HTTP " + std::to_string(head->status) +
                            ": " + ErrorMessage(body.ok() ? *body : ""));
  }
  return std::unique_ptr<RuntimeEventStream>(
      new DockerEventStream(this, *std::move(conn), where + " stream"));
}

}  // namespace lens::containers::docker
