// HttpServer over cpp-httplib (the only file that sees httplib types).
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/constant_time.h"
#include "http/listen_address.h"
#include "lens/http.h"
#include "lens/log.h"

namespace lens {
namespace {

// Escapes the regex metacharacters of an exact path for httplib's routes.
std::string ExactPathPattern(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

HttpRequest ToRequest(const httplib::Request& in) {
  HttpRequest out;
  out.method = in.method;
  out.path = in.path;
  for (const auto& [k, v] : in.params) out.query.emplace(k, v);
  for (const auto& [k, v] : in.headers) out.headers.emplace(Lower(k), v);
  out.body = in.body;
  out.remote_addr = in.remote_addr;
  return out;
}

void ApplyResponse(const HttpResponse& in, httplib::Response& out) {
  out.status = in.status;
  for (const auto& [k, v] : in.headers) out.set_header(k, v);
  out.set_content(in.body, in.content_type.c_str());
}

void Envelope(int status, std::string_view message, httplib::Response& out) {
  HttpResponse r;
  RespondError(status, message, &r);
  ApplyResponse(r, out);
}

class HttplibServer final : public HttpServer {
 public:
  HttplibServer(HttpServerOptions options,
                std::unique_ptr<httplib::Server> server,
                http::ListenAddress address, bool tls)
      : options_(std::move(options)),
        server_(std::move(server)),
        address_(std::move(address)),
        tls_(tls) {
    public_paths_.insert(options_.public_paths.begin(),
                         options_.public_paths.end());
  }
  ~HttplibServer() override { Stop(); }

  void Handle(std::string method, std::string path,
              HttpHandler handler) override {
    {
      std::lock_guard lock(mu_);
      methods_[path].insert(method);
    }
    auto wrapped = [handler = std::move(handler)](const httplib::Request& req,
                                                  httplib::Response& res) {
      HttpResponse out;
      try {
        handler(ToRequest(req), &out);
      } catch (const std::exception& e) {
        LENS_LOG(ERROR).Field("path", req.path).Field("error", e.what())
            << "http handler failed";
        RespondError(500, "internal error", &out);
      }
      ApplyResponse(out, res);
    };
    const std::string pattern = ExactPathPattern(path);
    if (method == "GET")
      server_->Get(pattern, wrapped);
    else if (method == "POST")
      server_->Post(pattern, wrapped);
    else if (method == "PUT")
      server_->Put(pattern, wrapped);
    else if (method == "DELETE")
      server_->Delete(pattern, wrapped);
    else if (method == "PATCH")
      server_->Patch(pattern, wrapped);
  }

  Status Start() override {
    if (started_.exchange(true))
      return FailedPreconditionError("http server already started");
    server_->set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) {
          return PreRoute(req, res);
        });
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // httplib's stop() does nothing until the accept loop runs, so a Stop()
    // right after Start() would leave the thread listening forever: wait for
    // the loop to start.
    for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!server_->is_running())
      return InternalError("http server did not start listening");
    return OkStatus();
  }

  void Stop() override {
    std::lock_guard lock(stop_mu_);
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const override { return address_.port; }
  std::string url() const override {
    std::string host = address_.host;
    if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
    if (host == "::") host = "::1";
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    return std::string(tls_ ? "https://" : "http://") + host + ":" +
           std::to_string(address_.port);
  }

 private:
  // Auth, then 404/405 for what no route serves; everything else goes on to
  // httplib's router.
  httplib::Server::HandlerResponse PreRoute(const httplib::Request& req,
                                            httplib::Response& res) {
    using R = httplib::Server::HandlerResponse;
    if (!options_.bearer_token.empty() && !public_paths_.count(req.path)) {
      const std::string auth = req.get_header_value("Authorization");
      constexpr std::string_view kBearer = "Bearer ";
      const bool ok =
          auth.size() > kBearer.size() &&
          std::string_view(auth).substr(0, kBearer.size()) == kBearer &&
          ConstantTimeEquals(std::string_view(auth).substr(kBearer.size()),
                             options_.bearer_token);
      if (!ok) {
        Envelope(401,
                 auth.empty() ? "missing bearer token" : "invalid bearer token",
                 res);
        res.set_header("WWW-Authenticate", "Bearer");
        return R::Handled;
      }
    }
    std::lock_guard lock(mu_);
    auto it = methods_.find(req.path);
    if (it == methods_.end()) {
      Envelope(404, "no such path: " + req.path, res);
      return R::Handled;
    }
    const bool head_of_get = req.method == "HEAD" && it->second.count("GET");
    if (!it->second.count(req.method) && !head_of_get) {
      std::string allow;
      for (const auto& m : it->second) allow += (allow.empty() ? "" : ", ") + m;
      Envelope(405,
               req.method + " not allowed on " + req.path +
                   " (allowed: " + allow + ")",
               res);
      res.set_header("Allow", allow);
      return R::Handled;
    }
    return R::Unhandled;
  }

  const HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  const http::ListenAddress address_;
  const bool tls_;
  std::set<std::string> public_paths_;
  std::mutex mu_;
  std::unordered_map<std::string, std::set<std::string>>
      methods_;  // GUARDED_BY(mu_)
  std::atomic<bool> started_{false};
  std::mutex stop_mu_;
  std::thread thread_;
};

}  // namespace

HttpServer::~HttpServer() = default;

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(
    const HttpServerOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  LENS_ASSIGN_OR_RETURN(http::ListenAddress address,
                        http::ParseListenAddress(options.listen));
  const bool tls = !options.tls_cert_file.empty();
  std::unique_ptr<httplib::Server> server;
  if (tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(
        options.tls_cert_file.c_str(), options.tls_key_file.c_str());
    if (!ssl->is_valid()) {
      return InvalidArgumentError("TLS: cannot load certificate " +
                                  options.tls_cert_file + " with key " +
                                  options.tls_key_file);
    }
    server = std::move(ssl);
  } else {
    server = std::make_unique<httplib::Server>();
  }
  const int threads = options.threads;
  server->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would
  // let a second agent bind the same port and silently take half the scrapes.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server->set_payload_max_length(options.max_body_bytes);
  server->set_read_timeout(options.read_timeout);
  server->set_write_timeout(options.write_timeout);
  server->set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        Envelope(res.status,
                 res.status == 413 ? "request body too large"
                                   : "request failed: " + req.path,
                 res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  if (address.port == 0) {
    const int port = server->bind_to_any_port(address.host);
    if (port <= 0)
      return UnavailableError("cannot listen on " + options.listen);
    address.port = port;
  } else if (!server->bind_to_port(address.host, address.port)) {
    return UnavailableError(
        "cannot listen on " + options.listen +
        " (address in use, or not an address of this machine)");
  }
  return std::unique_ptr<HttpServer>(
      new HttplibServer(options, std::move(server), std::move(address), tls));
}

}  // namespace lens
