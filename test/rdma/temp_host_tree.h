// A private copy of a fixture host tree (test/fixtures/hosts/<host>) for
// tests that change it: devices appear, disappear, counters move.
#ifndef LENS_TEST_RDMA_TEMP_HOST_TREE_H_
#define LENS_TEST_RDMA_TEMP_HOST_TREE_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lens/host.h"

namespace lens::testing_rdma {

inline std::string FixtureHost(const std::string& host) {
  return std::string(LENS_FIXTURES_DIR) + "/hosts/" + host;
}

// Copies the host's sys/ (symlinks kept as links, so the relative links of
// class/infiniband stay inside the copy); removed on destruction.
class TempHostTree {
 public:
  explicit TempHostTree(const std::string& host) {
    std::string pattern = ::testing::TempDir() + "lens_rdma_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << pattern;
      return;
    }
    root_ = pattern;
    std::filesystem::copy(FixtureHost(host) + "/sys", root_ + "/sys",
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::copy_symlinks);
  }
  ~TempHostTree() {
    std::error_code ignored;
    if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
  }
  TempHostTree(const TempHostTree&) = delete;
  TempHostTree& operator=(const TempHostTree&) = delete;

  const std::string& root() const { return root_; }
  HostRoots roots() const { return HostRoots::Under(root_); }
  std::string sys(const std::string& rel) const {
    return root_ + "/sys/" + rel;
  }

 private:
  std::string root_;
};

// Rewrites a file in place (same inode, so kept-open descriptors see it).
inline void Overwrite(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace lens::testing_rdma

#endif  // LENS_TEST_RDMA_TEMP_HOST_TREE_H_
