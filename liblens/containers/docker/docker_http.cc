#include "containers/docker/docker_http.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace lens::containers::docker {
namespace {

constexpr size_t kMaxChunkLine = 1024;
constexpr size_t kReadBytes = 64 << 10;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(c));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Milliseconds until `deadline` for poll(), -1 for "no deadline".
int PollTimeout(Deadline deadline) {
  if (deadline == Deadline::max()) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

}  // namespace

StatusOr<std::unique_ptr<UnixHttpConnection>> UnixHttpConnection::Connect(
    const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    return InvalidArgumentError(
        "socket path '" + socket_path + "': empty or longer than " +
        std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoError(errno, "socket(AF_UNIX)");
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) !=
      0) {
    const int err = errno;
    ::close(fd);
    if (err == ENOENT) {
      return NotFoundError("socket " + socket_path + " does not exist");
    }
    if (err == EACCES || err == EPERM) {
      return PermissionDeniedError("connect " + socket_path + ": " +
                                   std::strerror(err));
    }
    return UnavailableError("connect " + socket_path + ": " +
                            std::strerror(err));
  }
  const int cancel = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (cancel < 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoError(err, "eventfd");
  }
  return std::unique_ptr<UnixHttpConnection>(
      new UnixHttpConnection(fd, cancel));
}

UnixHttpConnection::UnixHttpConnection(int fd, int cancel_fd)
    : fd_(fd), cancel_fd_(cancel_fd) {}

UnixHttpConnection::~UnixHttpConnection() {
  ::close(fd_);
  ::close(cancel_fd_);
}

void UnixHttpConnection::Cancel() {
  const uint64_t one = 1;
  static_cast<void>(::write(cancel_fd_, &one, sizeof(one)));
}

Status UnixHttpConnection::Send(std::string_view method,
                                std::string_view target,
                                std::string_view content_type,
                                std::string_view body, Deadline deadline) {
  std::string request;
  request.reserve(256 + body.size());
  request.append(method).append(" ").append(target).append(
      " HTTP/1.1\r\nHost: docker\r\nUser-Agent: lens\r\n"
      "Accept: application/json\r\nConnection: close\r\n");
  if (!body.empty()) {
    request.append("Content-Type: ").append(content_type).append("\r\n");
  }
  request.append("Content-Length: ")
      .append(std::to_string(body.size()))
      .append("\r\n\r\n")
      .append(body);
  size_t sent = 0;
  while (sent < request.size()) {
    pollfd fds[2] = {{fd_, POLLOUT, 0}, {cancel_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, PollTimeout(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, "poll");
    if (fds[1].revents != 0) return CancelledError("request cancelled");
    if (n == 0) return DeadlineExceededError("sending the request timed out");
    const ssize_t w = ::send(fd_, request.data() + sent, request.size() - sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) return UnavailableError(std::string("send: ") + strerror(errno));
    sent += static_cast<size_t>(w);
  }
  return OkStatus();
}

StatusOr<bool> UnixHttpConnection::Fill(Deadline deadline) {
  while (true) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {cancel_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, PollTimeout(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, "poll");
    if (fds[1].revents != 0) return CancelledError("read cancelled");
    if (n == 0) return DeadlineExceededError("no answer in time");
    char buf[kReadBytes];
    const ssize_t r = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) return UnavailableError(std::string("recv: ") + strerror(errno));
    if (r == 0) return false;
    in_.append(buf, static_cast<size_t>(r));
    return true;
  }
}

StatusOr<std::string> UnixHttpConnection::ReadLine(size_t max,
                                                   Deadline deadline) {
  size_t scanned = 0;
  while (true) {
    const size_t eol = in_.find("\r\n", scanned > 0 ? scanned - 1 : 0);
    if (eol != std::string::npos && eol <= max) {
      std::string line = in_.substr(0, eol);
      in_.erase(0, eol + 2);
      return line;
    }
    if (in_.size() > max + 1) {
      return ResourceExhaustedError("line over " + std::to_string(max) +
                                    " bytes");
    }
    scanned = in_.size();
    LENS_ASSIGN_OR_RETURN(bool more, Fill(deadline));
    if (!more) return UnavailableError("connection closed mid-line");
  }
}

StatusOr<HttpHead> UnixHttpConnection::ReadHead(Deadline deadline) {
  HttpHead head;
  size_t total = 0;
  auto line = ReadLine(kMaxHeadBytes, deadline);
  if (!line.ok()) return line.status().WithContext("response status line");
  total += line->size();
  // "HTTP/1.1 200 OK"
  if (line->rfind("HTTP/1.", 0) != 0 || line->size() < 12 ||
      (*line)[8] != ' ' || !std::isdigit((*line)[9]) ||
      !std::isdigit((*line)[10]) || !std::isdigit((*line)[11])) {
    return InvalidArgumentError("not an HTTP/1.x status line: '" +
                                line->substr(0, 64) + "'");
  }
  head.status = std::stoi(line->substr(9, 3));
  while (true) {
    auto h = ReadLine(kMaxHeadBytes - std::min(total, kMaxHeadBytes), deadline);
    if (!h.ok()) return h.status().WithContext("response headers");
    total += h->size() + 2;
    if (h->empty()) break;
    const size_t colon = h->find(':');
    if (colon == std::string::npos || colon == 0) {
      return InvalidArgumentError("malformed header line '" + h->substr(0, 64) +
                                  "'");
    }
    head.headers[Lower(std::string_view(*h).substr(0, colon))] =
        std::string(Trim(std::string_view(*h).substr(colon + 1)));
  }
  auto te = head.headers.find("transfer-encoding");
  auto cl = head.headers.find("content-length");
  if (te != head.headers.end() && Lower(te->second) == "chunked") {
    framing_ = Framing::kChunked;
  } else if (cl != head.headers.end()) {
    framing_ = Framing::kLength;
    const std::string& v = cl->second;
    if (v.empty() || v.size() > 18 ||
        !std::all_of(v.begin(), v.end(), ::isdigit)) {
      return InvalidArgumentError("bad Content-Length '" + v + "'");
    }
    left_ = std::stoull(v);
    done_ = left_ == 0;
  } else {
    framing_ = Framing::kClose;
  }
  if (head.status == 204 || head.status == 304) done_ = true;
  return head;
}

StatusOr<bool> UnixHttpConnection::ReadBody(std::string* out,
                                            Deadline deadline) {
  while (!done_) {
    if (framing_ == Framing::kChunked && !in_chunk_) {
      LENS_ASSIGN_OR_RETURN(std::string line,
                            ReadLine(kMaxChunkLine, deadline));
      const std::string size = line.substr(0, line.find(';'));
      char* end = nullptr;
      const unsigned long long n = std::strtoull(size.c_str(), &end, 16);
      if (size.empty() || size.size() > 15 ||
          end != size.c_str() + size.size()) {
        return InvalidArgumentError("malformed chunk size line '" +
                                    line.substr(0, 32) + "'");
      }
      if (n == 0) {  // trailers end with an empty line
        while (true) {
          LENS_ASSIGN_OR_RETURN(std::string t,
                                ReadLine(kMaxHeadBytes, deadline));
          if (t.empty()) break;
        }
        done_ = true;
        return false;
      }
      left_ = n;
      in_chunk_ = true;
    }
    if (in_.empty()) {
      LENS_ASSIGN_OR_RETURN(bool more, Fill(deadline));
      if (!more) {
        if (framing_ == Framing::kClose) {
          done_ = true;
          return false;
        }
        return UnavailableError("connection closed mid-body");
      }
      continue;
    }
    size_t take = in_.size();
    if (framing_ != Framing::kClose) take = std::min<uint64_t>(take, left_);
    out->append(in_, 0, take);
    in_.erase(0, take);
    if (framing_ != Framing::kClose) left_ -= take;
    if (left_ == 0 && framing_ == Framing::kLength) done_ = true;
    if (left_ == 0 && framing_ == Framing::kChunked) {
      LENS_ASSIGN_OR_RETURN(std::string crlf, ReadLine(0, deadline));
      in_chunk_ = false;
    }
    return true;
  }
  return false;
}

StatusOr<std::string> UnixHttpConnection::ReadAll(size_t max_bytes,
                                                  Deadline deadline) {
  std::string body;
  while (true) {
    LENS_ASSIGN_OR_RETURN(bool more, ReadBody(&body, deadline));
    if (body.size() > max_bytes) {
      return ResourceExhaustedError("response body over " +
                                    std::to_string(max_bytes >> 10) + " KiB");
    }
    if (!more) return body;
  }
}

}  // namespace lens::containers::docker
