// Helpers of the config tests: temp YAML files, a fake environment, and the
// error message of a config that must not load.
#ifndef LENS_TEST_CORE_CONFIG_TEST_UTIL_H_
#define LENS_TEST_CORE_CONFIG_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "service/config.h"

namespace lens {

// Files written by WriteTemp, removed when the test program exits.
struct TempFiles {
  ~TempFiles() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
  std::vector<std::string> paths;
};

// Writes `content` to a fresh file under the test temp dir and returns its
// path.
inline std::string WriteTemp(const std::string& content) {
  static TempFiles files;
  const std::string path = testing::TempDir() + "lens_config_test_" +
                           std::to_string(::getpid()) + "_" +
                           std::to_string(files.paths.size()) + ".yaml";
  std::ofstream(path, std::ios::binary) << content;
  files.paths.push_back(path);
  return path;
}

// Loader options with a fake environment (the process environment is not
// consulted).
inline ConfigLoadOptions WithEnv(std::map<std::string, std::string> env) {
  ConfigLoadOptions options;
  options.getenv = [env = std::move(env)](
                       const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return options;
}

// Loads `yaml` from a temp file with an empty environment; returns the error
// message with the temp path replaced by "F".
inline std::string LoadError(const std::string& yaml,
                             StatusCode want = StatusCode::kInvalidArgument) {
  const std::string path = WriteTemp(yaml);
  auto config = LoadConfigFile(path, WithEnv({}));
  EXPECT_FALSE(config.ok()) << yaml;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), want) << config.status();
  std::string msg = config.status().message();
  for (size_t pos; (pos = msg.find(path)) != std::string::npos;)
    msg.replace(pos, path.size(), "F");
  return msg;
}

}  // namespace lens

#endif  // LENS_TEST_CORE_CONFIG_TEST_UTIL_H_
