// lens-scheduler-extender: a kube-scheduler extender over the Lens store.
//   lens-scheduler-extender --store URL [--promql URL] [--listen HOST:PORT]
//                           [--refresh SECONDS] [--tls-cert F --tls-key F
//                           [--client-ca F]]
// POST /filter and /prioritize take ExtenderArgs (README.md). The view of the
// cluster is read every --refresh seconds in the background; requests are
// answered from the last one, so a slow store never holds the scheduler.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster_view.h"
#include "policy.h"
#include "protocol.h"

namespace {

struct Flags {
  std::string store, promql, listen = "127.0.0.1:8888", cert, key, client_ca;
  int refresh_s = 30;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i], value = argv[i + 1];
    if (name == "--store")
      f->store = value;
    else if (name == "--promql")
      f->promql = value;
    else if (name == "--listen")
      f->listen = value;
    else if (name == "--refresh")
      f->refresh_s = std::atoi(value.c_str());
    else if (name == "--tls-cert")
      f->cert = value;
    else if (name == "--tls-key")
      f->key = value;
    else if (name == "--client-ca")
      f->client_ca = value;
    else
      return false;
  }
  return argc % 2 == 1 && !f->store.empty() && f->refresh_s > 0 &&
         f->cert.empty() == f->key.empty();
}

// The last view read, swapped whole by the refresher.
class Views {
 public:
  using Map = std::map<std::string, extender::NodeView>;
  void Set(std::shared_ptr<const Map> v) {
    std::lock_guard lock(mu_);
    view_ = std::move(v);
  }
  std::shared_ptr<const Map> Get() const {
    std::lock_guard lock(mu_);
    return view_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Map> view_ = std::make_shared<Map>();
};

lens::Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

httplib::Server* g_server = nullptr;
void OnSignal(int) {
  if (g_server) g_server->stop();  // shuts the listener; handlers finish
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: %s --store URL [--promql URL] [--listen HOST:PORT] "
                 "[--refresh SECONDS] [--tls-cert FILE --tls-key FILE "
                 "[--client-ca FILE]]\n",
                 argv[0]);
    return 2;
  }
  auto store = lens::Store::Open(
      flags.store, {.migrate = false, .create_if_missing = false});
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<lens::TimeSeriesSource> series;
  if (flags.promql.empty()) {
    series = lens::NewSampleHistorySource(store->get());
  } else {
    auto promql = lens::NewPromQlSource({.url = flags.promql});
    if (!promql.ok()) {
      std::fprintf(stderr, "promql: %s\n", promql.status().ToString().c_str());
      return 1;
    }
    series = std::move(*promql);
  }

  Views views;
  auto refresh = [&] {
    auto view = extender::ReadClusterView(**store, *series, Now());
    if (!view.ok()) {  // keep answering from the last good view
      std::fprintf(stderr, "refresh: %s\n", view.status().ToString().c_str());
      return;
    }
    views.Set(std::make_shared<const Views::Map>(std::move(*view)));
  };
  refresh();  // the first answers already know the cluster

  std::unique_ptr<httplib::Server> server;
  if (flags.cert.empty()) {
    server = std::make_unique<httplib::Server>();
  } else {  // with --client-ca, only clients with a certificate it signed
    server = std::make_unique<httplib::SSLServer>(
        flags.cert.c_str(), flags.key.c_str(),
        flags.client_ca.empty() ? nullptr : flags.client_ca.c_str());
  }
  server->set_payload_max_length(16 << 20);  // a NodeList of thousands of nodes
  auto handle = [&](auto answer) {
    return [&, answer](const httplib::Request& req, httplib::Response& res) {
      const auto view = views.Get();
      auto find = [&](const std::string& node) -> const extender::NodeView* {
        auto it = view->find(node);
        return it == view->end() ? nullptr : &it->second;
      };
      const extender::NodeJudge judge{
          [&](const extender::PodRequest& p, const std::string& n) {
            return extender::Filter(p, find(n));
          },
          [&](const extender::PodRequest& p, const std::string& n) {
            return extender::Score(p, find(n));
          }};
      auto body = answer(req.body, judge);
      if (!body.ok()) {
        res.status = 400;
        res.set_content(body.status().message() + "\n", "text/plain");
        return;
      }
      res.set_content(*body, "application/json");
    };
  };
  server->Post("/filter", handle(extender::AnswerFilter));
  server->Post("/prioritize", handle(extender::AnswerPrioritize));
  server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });

  const size_t colon = flags.listen.rfind(':');
  const std::string host = flags.listen.substr(0, colon);
  int port = std::atoi(flags.listen.substr(colon + 1).c_str());
  port = port == 0 ? server->bind_to_any_port(host)
                   : (server->bind_to_port(host, port) ? port : -1);
  if (colon == std::string::npos || port <= 0) {
    std::fprintf(stderr, "cannot listen on %s\n", flags.listen.c_str());
    return 1;
  }
  std::printf("listening on %s:%d\n", host.c_str(), port);
  std::fflush(stdout);

  std::atomic<bool> stop{false};
  std::thread refresher([&] {
    while (!stop) {
      for (int i = 0; i < flags.refresh_s * 10 && !stop; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!stop) refresh();
    }
  });
  g_server = server.get();
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  server->listen_after_bind();
  stop = true;
  refresher.join();
  return 0;
}
