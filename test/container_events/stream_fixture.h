// A ContainerEventServer on a fresh SQLite store, for the stream tests that
// need one backend only (parts, identity, queue bounds); the store
// conformance of the stream runs on both backends in server_test.cc.
#ifndef LENS_TEST_CONTAINER_EVENTS_STREAM_FIXTURE_H_
#define LENS_TEST_CONTAINER_EVENTS_STREAM_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "container_events/container_events.h"
#include "lens/store.h"
#include "test_agent.h"

namespace lens::test {

class StreamTest : public testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("lens_stream_" + std::to_string(::getpid()) + "_" +
            std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    StoreOptions so;
    so.retry_deadline = std::chrono::milliseconds(60000);
    auto store = Store::Open(url(), so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    server_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string url() const { return "sqlite://" + (dir_ / "lens.db").string(); }
  std::string db_path() const { return (dir_ / "lens.db").string(); }

  void StartServer(ContainerEventServerOptions options = {}) {
    options.listen = "127.0.0.1:0";
    server_ = std::make_unique<ContainerEventServer>(options, store_.get());
    const Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st;
  }
  std::string Target() const {
    return "127.0.0.1:" + std::to_string(server_->port());
  }
  std::shared_ptr<grpc::Channel> Channel() const {
    return grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials());
  }

  int64_t Count(const std::string& node, const std::string& state = "") {
    ContainerQuery q;
    q.node = node;
    if (!state.empty()) q.state = ParseContainerState(state);
    q.page = {1, 1};
    auto page = store_->containers().ListContainers(q);
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->total : -1;
  }
  std::string State(const std::string& id) {
    auto c = store_->containers().GetContainer(id);
    return c.ok() ? std::string(ToString(c->state)) : c.status().ToString();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ContainerEventServer> server_;
};

}  // namespace lens::test

#endif  // LENS_TEST_CONTAINER_EVENTS_STREAM_FIXTURE_H_
