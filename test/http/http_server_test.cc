// HttpServer against a real client over loopback: routing, envelope, auth,
// limits, TLS.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/metrics.h"
#include "http/http.h"

namespace lens {
namespace {

std::unique_ptr<HttpServer> StartServer(HttpServerOptions options) {
  options.listen = "127.0.0.1:0";
  auto server = HttpServer::Create(options);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  (*server)->Handle(
      "GET", "/hello", [](const HttpRequest& req, HttpResponse* out) {
        RespondData("\"hi " + req.Query("name", "nobody") + "\"", out);
      });
  (*server)->Handle("POST", "/echo",
                    [](const HttpRequest& req, HttpResponse* out) {
                      out->content_type = "text/plain";
                      out->body = req.body;
                    });
  (*server)->Handle("GET", "/boom", [](const HttpRequest&, HttpResponse*) {
    throw std::runtime_error("handler bug");
  });
  (*server)->Handle(
      "GET", "/healthz",
      [](const HttpRequest&, HttpResponse* out) { out->body = "ok"; });
  EXPECT_TRUE((*server)->Start().ok());
  return std::move(*server);
}

TEST(HttpServerTest, ServesRoutesWithTheEnvelope) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  httplib::Client client("127.0.0.1", server->port());
  auto res = client.Get("/hello?name=lens");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body,
            "{\"code\":0,\"data\":\"hi lens\",\"message\":\"success\"}\n");
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
}

TEST(HttpServerTest, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  auto missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("\"code\":404"), std::string::npos);
  EXPECT_NE(missing->body.find("/nope"), std::string::npos);
  auto wrong = client.Post("/hello", "x", "text/plain");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->get_header_value("Allow"), "GET");
}

TEST(HttpServerTest, PatternRoutesCaptureSegmentsAndExactRoutesWin) {
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  auto server = HttpServer::Create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto echo = [](std::string tag) {
    return [tag](const HttpRequest& req, HttpResponse* out) {
      std::string body = tag;
      for (const auto& [k, v] : req.path_params) body += " " + k + "=" + v;
      out->content_type = "text/plain";
      out->body = body;
    };
  };
  (*server)->HandlePattern("GET", "/nodes/{name}", echo("node"));
  (*server)->HandlePattern("GET", "/w/{uid}/runs/{run}", echo("run"));
  (*server)->Handle("GET", "/nodes/all", echo("exact"));
  ASSERT_TRUE((*server)->Start().ok());
  httplib::Client client("127.0.0.1", (*server)->port());
  auto node = client.Get("/nodes/gpu%2D1?x=1");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->status, 200);
  EXPECT_EQ(node->body, "node name=gpu-1");
  auto run = client.Get("/w/abc/runs/2");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->body, "run run=2 uid=abc");
  // An encoded '/' stays inside its segment (a log file's path as a uid).
  auto path_uid = client.Get("/w/%2Fdata%2Ftrain.log/runs/1");
  ASSERT_TRUE(path_uid);
  EXPECT_EQ(path_uid->body, "run run=1 uid=/data/train.log");
  auto exact = client.Get("/nodes/all");
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->body, "exact");
  for (const char* path : {"/nodes/", "/nodes", "/nodes/a/b", "/w/abc/runs"}) {
    auto missing = client.Get(path);
    ASSERT_TRUE(missing) << path;
    EXPECT_EQ(missing->status, 404) << path;
  }
  auto wrong = client.Delete("/nodes/x");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->get_header_value("Allow"), "GET");
}

// Every answer is counted by the route it was registered under (patterns
// stay patterns, so the label is bounded), and the refused ones as
// "unrouted".
TEST(HttpServerTest, CountsAnswersByRouteAndStatus) {
  Registry registry;
  HttpServerOptions options;
  options.metrics = &registry;
  options.bearer_token = "s3cret";
  options.public_paths = {"/healthz", "/hello", "/boom"};
  options.listen = "127.0.0.1:0";
  auto server = HttpServer::Create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->Handle("GET", "/hello", [](const HttpRequest&, HttpResponse* out) {
    RespondData("1", out);
  });
  (*server)->Handle("GET", "/boom", [](const HttpRequest&, HttpResponse*) {
    throw std::runtime_error("handler bug");
  });
  (*server)->HandlePattern("GET", "/items/{id}",
                           [](const HttpRequest&, HttpResponse* out) {
                             RespondError(404, "no such item", out);
                           });
  ASSERT_TRUE((*server)->Start().ok());
  httplib::Client client("127.0.0.1", (*server)->port());
  for (const char* path : {"/hello", "/hello", "/boom"}) {
    ASSERT_TRUE(client.Get(path)) << path;
  }
  client.set_bearer_token_auth("s3cret");
  ASSERT_TRUE(client.Get("/nowhere"));
  ASSERT_TRUE(client.Get("/items/a"));
  ASSERT_TRUE(client.Get("/items/b"));
  ASSERT_TRUE(client.Delete("/hello"));
  client.set_bearer_token_auth("wrong");
  ASSERT_TRUE(client.Get("/items/c"));
  const std::string text = registry.Render();
  for (const char* line : {
           "lens_http_requests_total{route=\"/hello\",code=\"200\"} 2\n",
           "lens_http_requests_total{route=\"/boom\",code=\"500\"} 1\n",
           "lens_http_requests_total{route=\"/items/{id}\",code=\"404\"} 2\n",
           "lens_http_requests_total{route=\"unrouted\",code=\"404\"} 1\n",
           "lens_http_requests_total{route=\"unrouted\",code=\"405\"} 1\n",
           "lens_http_requests_total{route=\"unrouted\",code=\"401\"} 1\n",
           "lens_http_request_duration_seconds_count{route=\"/items/{id}\"} "
           "2\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.find("/items/a"), std::string::npos) << text;
}

TEST(HttpServerTest, HandlerExceptionBecomes500) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  auto res = client.Get("/boom");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(res->body.find("handler bug"), std::string::npos)
      << "internals leak: " << res->body;
}

TEST(HttpServerTest, BearerTokenGuardsEverythingButPublicPaths) {
  HttpServerOptions options;
  options.bearer_token = "s3cret-token";
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  auto none = client.Get("/hello");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer");
  auto wrong = client.Get("/hello", {{"Authorization", "Bearer s3cret-tokeN"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(wrong->body.find("s3cret"), std::string::npos);
  auto shorter = client.Get("/hello", {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(shorter);
  EXPECT_EQ(shorter->status, 401);
  auto good = client.Get("/hello", {{"Authorization", "Bearer s3cret-token"}});
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, 200);
  // Unknown paths do not reveal themselves to unauthenticated clients.
  auto unknown = client.Get("/nope");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(HttpServerTest, OversizedBodyIs413) {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  auto ok = client.Post("/echo", std::string(1000, 'a'), "text/plain");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body.size(), 1000u);
  auto big = client.Post("/echo", std::string(4096, 'a'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

TEST(HttpServerTest, BindingATakenPortIsUnavailableNamingTheAddress) {
  auto first = StartServer({});
  ASSERT_NE(first, nullptr);
  HttpServerOptions options;
  options.listen = "127.0.0.1:" + std::to_string(first->port());
  auto second = HttpServer::Create(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(options.listen), std::string::npos);
}

TEST(HttpServerTest, RejectsBadOptions) {
  HttpServerOptions options;
  options.listen = "localhost";
  EXPECT_EQ(HttpServer::Create(options).status().code(),
            StatusCode::kInvalidArgument);
  options.listen = "127.0.0.1:0";
  options.tls_cert_file = "/tmp/cert.pem";
  EXPECT_EQ(HttpServer::Create(options).status().code(),
            StatusCode::kInvalidArgument);
  options.tls_key_file = "/nonexistent/key.pem";
  options.tls_cert_file = "/nonexistent/cert.pem";
  auto s = HttpServer::Create(options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent/cert.pem"),
            std::string::npos);
}

TEST(HttpServerTest, ServesHttpsWithTheGivenCertificate) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("lens-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string();
  const std::string key = (dir / "key.pem").string();
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
      "-keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0)
    GTEST_SKIP() << "openssl CLI not available to make a cert";
  HttpServerOptions options;
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->url().rfind("https://", 0), 0u);
  httplib::SSLClient client("127.0.0.1", server->port());
  client.set_ca_cert_path(cert.c_str());
  client.enable_server_certificate_verification(true);
  auto res = client.Get("/hello");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  // Plain HTTP to the TLS port gets nothing useful.
  httplib::Client plain("127.0.0.1", server->port());
  auto bad = plain.Get("/hello");
  EXPECT_TRUE(!bad || bad->status != 200);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lens
