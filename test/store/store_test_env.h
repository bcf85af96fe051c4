// Fresh databases for store tests: a temp SQLite file, or a new database on
// the test process's own PostgreSQL server (test/support).
#ifndef LENS_TEST_STORE_STORE_TEST_ENV_H_
#define LENS_TEST_STORE_STORE_TEST_ENV_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "lens/store.h"
#include "postgres_server.h"

namespace lens::test {

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(const testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "sqlite" : "postgres";
}

// One empty database per call; SQLite files live under a temp dir removed
// by the destructor.
class TestDatabase {
 public:
  explicit TestDatabase(Backend backend) {
    static std::atomic<int> counter{0};
    const std::string name =
        "lens_t" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    if (backend == Backend::kSqlite) {
      dir_ = std::filesystem::path(testing::TempDir()) / name;
      std::filesystem::remove_all(dir_);
      std::filesystem::create_directories(dir_);
      url_ = "sqlite://" + (dir_ / "lens.db").string();
    } else {
      auto url = PostgresServer::Shared().CreateDatabase(name);
      if (!url.ok()) {
        ADD_FAILURE() << "create PostgreSQL database: " << url.status();
      } else {
        url_ = *url;
      }
    }
  }
  ~TestDatabase() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  const std::string& url() const { return url_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string url_;
};

inline Timestamp At(int64_t us) {
  return Timestamp(std::chrono::microseconds(us));
}

}  // namespace lens::test

#endif  // LENS_TEST_STORE_STORE_TEST_ENV_H_
