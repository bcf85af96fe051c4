// The unix-socket HTTP/1.1 client of the Docker source against a scripted
// peer: framing (Content-Length, chunked split anywhere, end of
// connection), size limits, cancellation, and the API version check.
#include "containers/docker/docker_http.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "containers/docker/docker_client.h"

namespace lens::containers::docker {
namespace {

using std::chrono::milliseconds;

Deadline In(milliseconds d) { return std::chrono::steady_clock::now() + d; }

// Accepts connections on a socket in a temp dir and answers each with the
// next scripted reply, written in pieces of `piece` bytes.
class ScriptedPeer {
 public:
  explicit ScriptedPeer(std::vector<std::string> replies,
                        size_t piece = 1 << 20)
      : replies_(std::move(replies)) {
    std::string dir = ::testing::TempDir() + "lens_dockhttp_XXXXXX";
    EXPECT_NE(::mkdtemp(dir.data()), nullptr);
    dir_ = dir;
    path_ = dir_ + "/d.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    thread_ = std::thread([this, piece] {
      for (const std::string& reply : replies_) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buf[4096];
        std::string request;
        while (request.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::read(c, buf, sizeof(buf));
          if (n <= 0) break;
          request.append(buf, n);
        }
        {
          std::lock_guard lock(mu_);
          requests_.push_back(request.substr(0, request.find("\r\n")));
        }
        for (size_t at = 0; at < reply.size(); at += piece) {
          if (::send(c, reply.data() + at, std::min(piece, reply.size() - at),
                     MSG_NOSIGNAL) < 0) {
            break;
          }
        }
        if (hold_open_) {
          while (::read(c, buf, sizeof(buf)) > 0) {
          }
        }
        ::close(c);
      }
    });
  }
  ~ScriptedPeer() {
    ::shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }
  // Keep each connection open after its reply until the client closes it.
  void HoldOpen() { hold_open_ = true; }
  // The request lines received so far.
  std::vector<std::string> Requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> requests_;  // GUARDED_BY(mu_)
  std::vector<std::string> replies_;
  std::string dir_, path_;
  int fd_ = -1;
  std::atomic<bool> hold_open_{false};
  std::thread thread_;
};

StatusOr<std::string> Get(const std::string& path, size_t max = 1 << 20) {
  LENS_ASSIGN_OR_RETURN(auto conn, UnixHttpConnection::Connect(path));
  LENS_RETURN_IF_ERROR(conn->Send("GET", "/x", "", "", In(milliseconds(2000))));
  LENS_ASSIGN_OR_RETURN(HttpHead head, conn->ReadHead(In(milliseconds(2000))));
  if (head.status != 200) return InternalError(std::to_string(head.status));
  return conn->ReadAll(max, In(milliseconds(2000)));
}

TEST(DockerHttpTest, ReadsEveryFraming) {
  const std::string chunked =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n";
  ScriptedPeer peer({"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
                     chunked, chunked,
                     "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil eof"});
  EXPECT_EQ(*Get(peer.path()), "hello");
  EXPECT_EQ(*Get(peer.path()), "hello, world");
  EXPECT_EQ(*Get(peer.path()), "hello, world");
  EXPECT_EQ(*Get(peer.path()), "until eof");
  EXPECT_EQ(peer.Requests().at(0), "GET /x HTTP/1.1");
}

TEST(DockerHttpTest, ReassemblesChunksSplitAnywhere) {
  const std::string reply =
      "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nTransfer-Encoding: chunked\r\n"
      "\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n3\r\n123\r\n0\r\n\r\n";
  ScriptedPeer peer({reply}, 1);  // one byte per write
  auto body = Get(peer.path());
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, "abcdefghijklmnopqrstuvwxyz123");
}

TEST(DockerHttpTest, RefusesOversizedAndMalformedResponses) {
  ScriptedPeer peer(
      {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'),
       "SSH-2.0-OpenSSH\r\n\r\n",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
       "HTTP/1.1 200 OK\r\nX: " + std::string(kMaxHeadBytes + 10, 'h') +
           "\r\n\r\n"});
  EXPECT_EQ(Get(peer.path(), 50).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(Get(peer.path()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Get(peer.path()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Get(peer.path()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(Get(peer.path()).status().code(), StatusCode::kResourceExhausted);
}

TEST(DockerHttpTest, CancelEndsABlockedStreamAtOnce) {
  ScriptedPeer peer({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"});
  peer.HoldOpen();
  auto conn = UnixHttpConnection::Connect(peer.path());
  ASSERT_TRUE(conn.ok()) << conn.status();
  ASSERT_TRUE(
      (*conn)->Send("GET", "/events", "", "", In(milliseconds(2000))).ok());
  ASSERT_TRUE((*conn)->ReadHead(In(milliseconds(2000))).ok());
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(50));
    (*conn)->Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  std::string out;
  auto more = (*conn)->ReadBody(&out, Deadline::max());
  canceller.join();
  EXPECT_EQ(more.status().code(), StatusCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST(DockerHttpTest, NamesAMissingSocket) {
  auto conn = UnixHttpConnection::Connect("/nonexistent/docker.sock");
  EXPECT_EQ(conn.status().code(), StatusCode::kNotFound);
  DockerClient client("/nonexistent/docker.sock", HostRoots{},
                      milliseconds(500));
  auto list = client.List();
  EXPECT_EQ(list.status().code(), StatusCode::kNotFound);
  EXPECT_NE(list.status().message().find("/nonexistent/docker.sock"),
            std::string::npos)
      << list.status();
}

TEST(DockerHttpTest, NegotiatesTheApiVersion) {
  const std::string ping =
      "HTTP/1.1 200 OK\r\nApi-Version: @\r\nContent-Length: 2\r\n\r\nOK";
  auto with = [&](const std::string& v) {
    std::string r = ping;
    r.replace(r.find('@'), 1, v);
    return r;
  };
  ScriptedPeer peer({with("1.45"), with("1.12"), with("1.30"),
                     "HTTP/1.1 404 Not Found\r\nContent-Length: 38\r\n\r\n"
                     "{\"message\":\"No such container: nope\"}\n"});
  DockerClient client(peer.path(), HostRoots{}, milliseconds(2000));
  EXPECT_EQ(*client.Negotiate(), "1.41") << "capped at what Lens knows";
  auto old = client.Negotiate();
  EXPECT_EQ(old.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(old.status().message().find("1.12"), std::string::npos);
  EXPECT_EQ(*client.Negotiate(), "1.30");
  int http_status = 0;
  auto missing = client.Inspect("nope", &http_status);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(http_status, 404);
  EXPECT_NE(missing.status().message().find("No such container"),
            std::string::npos);
  EXPECT_EQ(peer.Requests().back(), "GET /v1.30/containers/nope/json HTTP/1.1");
  EXPECT_EQ(client.Inspect("../../etc").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ApiVersionNumber("1.41"), 1041);
  EXPECT_EQ(ApiVersionNumber("1."), -1);
  EXPECT_EQ(ApiVersionNumber("x.4"), -1);
}

}  // namespace
}  // namespace lens::containers::docker
