// The api_service tests' common ground: a fresh SQLite store in a temp dir
// that knows node gpu-node-7 (8 GPUs), removed after each test.
#ifndef LENS_TEST_API_API_SERVICE_FIXTURE_H_
#define LENS_TEST_API_API_SERVICE_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "lens/store.h"

namespace lens::test {

class ApiStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "api-service-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    database_ = "sqlite://" + dir_ + "/lens.db";
    auto store = Store::Open(database_);
    ASSERT_TRUE(store.ok()) << store.status();
    NodeRecord node;
    node.name = "gpu-node-7";
    node.status = "Ready";
    node.gpu_count = 8;
    node.updated_at = Timestamp(std::chrono::seconds(1795624473));
    ASSERT_TRUE((*store)->nodes().UpsertNode(node).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  std::string database_;
};

}  // namespace lens::test

#endif  // LENS_TEST_API_API_SERVICE_FIXTURE_H_
