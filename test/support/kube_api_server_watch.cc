// KubeApiServer's watch streams.
//
// A watch is answered 200 at once and then written chunk by chunk
// (Transfer-Encoding: chunked) by the worker that accepted it: one JSON event
// per line. It ends cleanly (the last chunk) at its deadline or on
// CloseWatches(); it drops the connection when the server stops or restarts,
// as a real API server's connections drop.
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>

#include "kube_api_server_impl.h"

namespace lens::test {
namespace kube {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);

// The socket of the connection from 127.0.0.1:`remote_port` to
// `local_port`, or -1: httplib does not hand it to handlers, and a watch
// needs it to notice the client leaving while nothing is written.
int ConnectionFd(int local_port, int remote_port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  int found = -1;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || fd == ::dirfd(dir)) continue;
    // Other numbers may close meanwhile; the one sought stays open while
    // its request is served.
    sockaddr_in local{};
    sockaddr_in peer{};
    socklen_t local_len = sizeof local;
    socklen_t peer_len = sizeof peer;
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local),
                      &local_len) == 0 &&
        ::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer),
                      &peer_len) == 0 &&
        local.sin_family == AF_INET && ntohs(local.sin_port) == local_port &&
        ntohs(peer.sin_port) == remote_port) {
      found = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// Whether the client closed its end (a watch client leaves by closing).
bool ClientGone(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  char byte;
  return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace
}  // namespace kube

using kube::Clock;
using kube::EventType;

std::string KubeApiServer::Impl::ObjectJson(const kube::StoredObject& object,
                                            bool metadata_only) const {
  if (!metadata_only) return object.json;
  return R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",)"
         R"("metadata":)" +
         object.metadata + "}";
}

std::string KubeApiServer::Impl::RenderEvent(const kube::Watch& watch,
                                             const kube::Event& event) const {
  const kube::StoredObject& object = *event.object;
  const bool now_in = watch.scope.Contains(object);
  const bool was_in = event.previous && watch.scope.Contains(*event.previous);
  const char* type = nullptr;
  std::string json;
  switch (event.event_type) {
    case EventType::kAdded:
    case EventType::kModified:
      // A change that moves an object into or out of the watch's scope is
      // an addition or a deletion to it (as the API server's watch cache
      // sends); a deletion carries the last state in scope, at the event's
      // resourceVersion.
      if (now_in) {
        type = event.event_type == EventType::kModified && was_in ? "MODIFIED"
                                                                  : "ADDED";
        json = ObjectJson(object, watch.metadata_only);
      } else if (was_in) {
        type = "DELETED";
        json =
            ObjectJson(*kube::Restamp(*event.previous, event.resource_version),
                       watch.metadata_only);
      }
      break;
    case EventType::kDeleted:
      if (now_in) {
        type = "DELETED";
        json = ObjectJson(object, watch.metadata_only);
      }
      break;
  }
  if (!type) return "";
  return std::string(R"({"type":")") + type + R"(","object":)" + json + "}\n";
}

std::string KubeApiServer::Impl::BookmarkLine(const kube::WatchStream& stream,
                                              bool initial_events_end) const {
  const auto& type = types_[stream.type];
  std::string object =
      stream.metadata_only
          ? R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",)"
          : R"({"kind":")" + type.kind + R"(","apiVersion":")" +
                ApiVersion(stream.type) + "\",";
  object += R"("metadata":{"resourceVersion":")" +
            std::to_string(resource_version_) + "\"";
  if (initial_events_end) {
    object += R"(,"annotations":{"k8s.io/initial-events-end":"true"})";
  }
  return R"({"type":"BOOKMARK","object":)" + object + "}}}\n";
}

void KubeApiServer::Impl::ServeWatch(const httplib::Request& req,
                                     httplib::Response& res,
                                     const kube::Target& target,
                                     kube::Selector selector) {
  const std::string rv_text = req.get_param_value("resourceVersion");
  uint64_t from = 0;
  if (!rv_text.empty() && !kube::ParseUint(rv_text, &from)) {
    kube::AnswerStatus(res, kube::StatusOf(400, "invalid resourceVersion \"" +
                                                    rv_text + "\""));
    return;
  }
  uint64_t timeout_s = 0;
  kube::ParseUint(req.get_param_value("timeoutSeconds"), &timeout_s);
  const uint64_t max_s = static_cast<uint64_t>(options_.max_watch_seconds);
  timeout_s = timeout_s == 0 ? max_s : std::min(timeout_s, max_s);
  // sendInitialEvents=true: the current state first, then a bookmark that
  // marks its end (the streaming-list form of list-then-watch).
  const bool send_initial =
      kube::ParseBool(req.get_param_value("sendInitialEvents"));
  const bool initial_events = from == 0 || send_initial;

  auto stream = std::make_shared<kube::WatchStream>();
  stream->type = target.type;
  stream->metadata_only =
      kube::WantsMetadataOnly(req.get_header_value("Accept"));
  stream->bookmarks =
      kube::ParseBool(req.get_param_value("allowWatchBookmarks"));
  stream->deadline = Clock::now() + std::chrono::seconds(timeout_s);
  stream->last_write = Clock::now();
  stream->fd = kube::ConnectionFd(req.local_port, req.remote_port);
  {
    std::lock_guard lock(mu_);
    if (!serving_) {
      kube::AnswerStatus(res, kube::StatusOf(503));
      return;
    }
    stream->epoch = epoch_;
    if (!initial_events && from < history_start_) {
      // The API server answers an expired watch 200 and one ERROR event.
      kube::StatusSpec expired = kube::StatusOf(
          410, "too old resource version: " + std::to_string(from) + " (" +
                   std::to_string(history_start_) + ")");
      expired.reason = "Expired";
      stream->pending =
          R"({"type":"ERROR","object":)" + kube::StatusJson(expired) + "}\n";
    } else {
      auto watch = std::make_shared<kube::Watch>();
      watch->scope = {target.type, target.namespace_name, target.name,
                      std::move(selector)};
      watch->metadata_only = stream->metadata_only;
      if (initial_events) {
        // The current state as synthetic additions, then what follows.
        for (const auto& [key, object] : objects_[target.type]) {
          kube::Event added;
          added.type = target.type;
          added.resource_version = object->resource_version;
          added.object = object;
          stream->pending += RenderEvent(*watch, added);
        }
        if (send_initial && stream->bookmarks) {
          stream->pending += BookmarkLine(*stream, true);
        }
      } else {
        for (const auto& event : history_) {
          if (event->resource_version > from && event->type == target.type) {
            watch->queue.push_back(event);
          }
        }
      }
      watches_.insert(watch);
      stream->watch = std::move(watch);
    }
  }
  // httplib gzips application/json for clients that accept it, and its
  // gzip stream holds back data until the end: a watch would send nothing.
  // The API server never compresses watches.
  const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
  res.status = 200;
  res.set_chunked_content_provider(
      "application/json",
      [this, stream](size_t, httplib::DataSink& sink) {
        return PumpWatch(*stream, sink);
      },
      [this, stream](bool) {
        std::lock_guard lock(mu_);
        if (stream->watch) watches_.erase(stream->watch);
      });
}

bool KubeApiServer::Impl::PumpWatch(kube::WatchStream& stream,
                                    httplib::DataSink& sink) {
  auto write = [&](const std::string& text) {
    stream.last_write = Clock::now();
    return sink.write(text.data(), text.size());
  };
  if (!stream.pending.empty()) {
    std::string text = std::move(stream.pending);
    stream.pending.clear();
    return write(text);
  }
  const auto bookmark_interval =
      std::chrono::milliseconds(options_.bookmark_interval_ms);
  std::unique_lock lock(mu_);
  while (true) {
    if (!serving_ || epoch_ != stream.epoch) return false;
    kube::Watch* watch = stream.watch.get();
    if (watch && !watch->queue.empty()) {
      std::string text;
      for (const auto& event : watch->queue) {
        text += RenderEvent(*watch, *event);
      }
      watch->queue.clear();
      if (!text.empty()) {
        lock.unlock();
        return write(text);
      }
    }
    const auto now = Clock::now();
    if (!watch || watch->closed || now >= stream.deadline) {
      if (watch) watches_.erase(stream.watch);
      lock.unlock();
      sink.done();
      return true;
    }
    auto wake = std::min(stream.deadline, now + kube::kPollInterval);
    if (stream.bookmarks) {
      if (now - stream.last_write >= bookmark_interval) {
        const std::string line = BookmarkLine(stream, false);
        lock.unlock();
        return write(line);
      }
      wake = std::min(wake, stream.last_write + bookmark_interval);
    }
    if (kube::ClientGone(stream.fd)) {
      watches_.erase(stream.watch);
      return false;
    }
    changed_.wait_until(lock, wake);
  }
}

}  // namespace lens::test
