// Real-format fixture logs (test/fixtures/training/README.md says where each format comes
// from): every fixture parses with the expected records, runs and events, and no format drift.
#include <gtest/gtest.h>

#include "lens/training.h"

namespace lens {
namespace {

TrainingLog Load(const std::string& name) {
  auto log = ParseTrainingLogFile(std::string(LENS_FIXTURES_DIR) + "/training/" + name);
  EXPECT_TRUE(log.ok()) << log.status();
  return log.ok() ? *log : TrainingLog();
}

}  // namespace
}  // namespace lens
