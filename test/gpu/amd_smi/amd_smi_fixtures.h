// Reading the amd-smi fixtures (test/fixtures/amd-smi/, see its README.md).
#ifndef LENS_TEST_GPU_AMD_SMI_AMD_SMI_FIXTURES_H_
#define LENS_TEST_GPU_AMD_SMI_AMD_SMI_FIXTURES_H_

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "lens/amd_smi.h"

namespace lens {

// The bytes of test/fixtures/amd-smi/<name>.
inline std::string AmdSmiFixture(const std::string& name) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/amd-smi/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fixtures parsed and merged as RunAmdSmi would (empty on failure, which
// is reported).
inline std::vector<AmdSmiGpu> ParseAmdSmiFixtures(
    const std::vector<std::string>& names) {
  std::vector<std::string> texts;
  for (const std::string& name : names) texts.push_back(AmdSmiFixture(name));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  auto gpus = ParseAmdSmiOutputs(views);
  EXPECT_TRUE(gpus.ok()) << gpus.status();
  return gpus.ok() ? *std::move(gpus) : std::vector<AmdSmiGpu>();
}

}  // namespace lens

#endif  // LENS_TEST_GPU_AMD_SMI_AMD_SMI_FIXTURES_H_
