// Shared by the tests that need a real dockerd: one private dockerd per test
// binary (a global test environment; register it in main()) with the busybox
// image imported.
#ifndef LENS_TEST_CONTAINERS_DOCKER_ENV_H_
#define LENS_TEST_CONTAINERS_DOCKER_ENV_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "docker_harness.h"

namespace lens::test {

inline const std::string kDockerBusyboxImage = "lens.test/busybox:1";

// One dockerd for the whole binary: starting one takes a second.
inline DockerServer* g_docker = nullptr;
inline std::string g_docker_skip;

class DockerEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    auto server = DockerServer::Start();
    if (!server.ok()) {
      g_docker_skip = server.status().message();
      return;
    }
    server_ = std::move(*server);
    Status st = server_->ImportBusyboxImage(kDockerBusyboxImage);
    ASSERT_TRUE(st.ok()) << st;
    g_docker = server_.get();
  }
  void TearDown() override {
    g_docker = nullptr;
    if (server_) (void)server_->Stop();
  }

 private:
  std::unique_ptr<DockerServer> server_;
};

}  // namespace lens::test

#endif  // LENS_TEST_CONTAINERS_DOCKER_ENV_H_
