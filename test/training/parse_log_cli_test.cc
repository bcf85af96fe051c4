// `lens parse-log` (the real binary): every (run, iteration) printed once in
// every per-record format, in input order, as many as the library parses.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "core/text.h"
#include "lens/store.h"
#include "lens/training.h"

namespace lens {
namespace {

std::string RunCli(const std::string& args) {
  std::string out;
  FILE* p = ::popen((std::string(LENS_CLI_BIN) + " " + args).c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << args;
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  return lines;
}

class ParseLogCliTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ParseLogCliTest, PrintsEveryIterationOnceInEveryFormat) {
  const std::string path =
      std::string(LENS_FIXTURES_DIR) + "/training/" + GetParam();
  auto log = ParseTrainingLogFile(path);
  ASSERT_TRUE(log.ok());
  const size_t want = log->records.size();
  ASSERT_GT(want, 0u);

  // jsonl: the records in order, each (run, iteration) once, as the library.
  std::set<std::pair<int, long>> seen;
  size_t i = 0;
  for (const std::string& line :
       Lines(RunCli("parse-log --format jsonl " + path))) {
    if (line.find("\"type\":\"iteration\"") == std::string::npos) continue;
    ASSERT_LT(i, want);
    std::string lib;
    AppendJson(log->records[i], &lib);
    EXPECT_EQ(line, lib);
    EXPECT_TRUE(
        seen.emplace(log->records[i].run, log->records[i].iteration).second);
    ++i;
  }
  EXPECT_EQ(i, want);
  // csv and table: a header and one row per record.
  EXPECT_EQ(Lines(RunCli("parse-log --format csv " + path)).size(), want + 1);
  EXPECT_EQ(Lines(RunCli("parse-log --format table " + path)).size(),
            want + Lines(TableHeader()).size());
}

// --store writes what the parser found: records, events, validations and
// memory reports, once however often the log is stored.
TEST(ParseLogCliStoreTest, StoresValidationsAndMemoryReports) {
  const std::string path =
      std::string(LENS_FIXTURES_DIR) + "/training/megatron_lm_core_r0.x.log";
  char dir[] = "/tmp/lens-parse-log-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string url = std::string("sqlite://") + dir + "/lens.db";
  for (int i = 0; i < 2; ++i)
    RunCli("parse-log --format summary --store " + url + " --workload w1 " +
           path + " 2>/dev/null");
  auto log = ParseTrainingLogFile(path);
  ASSERT_TRUE(log.ok());
  auto store = Store::Open(url);
  ASSERT_TRUE(store.ok()) << store.status();
  auto validations = (*store)->training().ListValidations("w1");
  ASSERT_TRUE(validations.ok()) << validations.status();
  EXPECT_EQ(validations->size(), log->validations.size());
  auto reports = (*store)->training().ListMemoryReports("w1", {1, 1});
  ASSERT_TRUE(reports.ok()) << reports.status();
  EXPECT_EQ(reports->total, static_cast<int64_t>(log->memory_reports.size()));
  store->reset();
  std::filesystem::remove_all(dir);
}

// `args` run by the shell with stderr captured (stdout to `stdout_to` when
// given); returns {exit code, output}.
std::pair<int, std::string> RunCliStatus(const std::string& args,
                                         const std::string& stdout_to = "") {
  std::string out;
  std::string cmd = std::string(LENS_CLI_BIN) + " " + args + " 2>&1";
  if (!stdout_to.empty()) cmd += " >" + stdout_to;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, out};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(LensCliExitTest, UsageErrorsExit2NamingTheChoices) {
  const std::string log =
      std::string(LENS_FIXTURES_DIR) + "/training/polaris_2024.log";
  auto [code, out] = RunCliStatus("parse-log --format bogus " + log);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("\"bogus\" is not an output format"), std::string::npos)
      << out;
  EXPECT_NE(out.find("jsonl"), std::string::npos) << out;
  EXPECT_EQ(out.find("->"), std::string::npos) << "CLI11 internals: " << out;
  std::tie(code, out) = RunCliStatus("");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("a command is required: parse-log, db, probe"),
            std::string::npos)
      << out;
  std::tie(code, out) = RunCliStatus("bogus");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("unknown command \"bogus\""), std::string::npos) << out;
  std::tie(code, out) = RunCliStatus("db");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("migrate, status"), std::string::npos) << out;
  std::tie(code, out) = RunCliStatus("db bogus");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("lens db: unknown command \"bogus\"; commands: migrate, "
                     "status"),
            std::string::npos)
      << out;
  std::tie(code, out) = RunCliStatus("probe --sysfs-root /nonexistent/sys");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("/nonexistent/sys"), std::string::npos) << out;
}

TEST(LensCliExitTest, OutputThatCannotBeWrittenExits1) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  const std::string log =
      std::string(LENS_FIXTURES_DIR) + "/training/polaris_2024.log";
  for (const std::string format : {"summary", "jsonl", "csv", "json"}) {
    auto [code, out] =
        RunCliStatus("parse-log --format " + format + " " + log, "/dev/full");
    EXPECT_EQ(code, 1) << format << ": " << out;
    EXPECT_NE(out.find("cannot write output: No space left on device"),
              std::string::npos)
        << out;
  }
  auto [code, out] = RunCliStatus("probe --json", "/dev/full");
  EXPECT_EQ(code, 1) << out;
}

// Every command that takes a database URL, fed a password in each form a
// URL or libpq DSN can carry one: no output may contain it.
TEST(LensCliSecretsTest, NoCommandPrintsAPassword) {
  const std::string log =
      std::string(LENS_FIXTURES_DIR) + "/training/polaris_2024.log";
  // Quoted for the shell that runs the command.
  const std::string urls[] = {
      "'postgresql://lens:s3cretA@127.0.0.1:1/db'",
      "'postgresql://lens@127.0.0.1:1/db?password=s3cretB'",
      "'postgresql://lens@127.0.0.1:1/db?sslmode=disable&sslpassword=s3cretC'",
      "'host=127.0.0.1 port=1 password=s3cretD'",
      "'mysql://root:s3cretE@db/lens'",
      "'postgresql://lens:s3c/ret@F@127.0.0.1:1/db'",
  };

  for (const std::string& url : urls) {
    for (const std::string& cmd :
         {"db status --url " + url, "db migrate --url " + url,
          "parse-log --store " + url + " --workload w " + log}) {
      auto [code, out] = RunCliStatus(cmd, "/dev/null");
      EXPECT_NE(code, 0) << cmd;
      EXPECT_FALSE(out.empty()) << cmd << ": no error message";
      EXPECT_EQ(out.find("s3c"), std::string::npos) << cmd << ": " << out;
    }
  }
}

// Invalid UTF-8, NUL and surrogates in a log never reach the JSON outputs:
// they become U+FFFD, so standard JSON readers accept every line.
TEST(LensCliBytesTest, JsonOutputIsValidUtf8WhateverTheLogHolds) {
  const std::string path = ::testing::TempDir() + "/lens-bad-bytes-" +
                           std::to_string(::getpid()) + ".log";
  // A checkpoint path with 0xFF, a UTF-16 surrogate and a NUL byte.
  constexpr char kCheckpoint[] =
      "saving checkpoint at iteration       1 to "
      "/ckpt/r\xff\xed\xa0\x80\x00n\n";
  {
    std::ofstream out(path, std::ios::binary);
    out << " iteration        1/      10 | consumed samples: 8 | lm loss: "
           "9.5E+00 | w\xff\xc3x: 1.5 |\n"
        << std::string(kCheckpoint, sizeof(kCheckpoint) - 1)
        << " iteration        2/      10 | lm loss: 9.0E+00 |\n";
  }
  for (const std::string format : {"jsonl", "json"}) {
    auto [code, out] =
        RunCliStatus("parse-log --format " + format + " " + path);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("\xef\xbf\xbd"), std::string::npos) << format;
    std::string copy = out;
    EXPECT_FALSE(SanitizeUtf8(&copy)) << format << ": invalid UTF-8 or NUL";
    EXPECT_NE(out.find("/ckpt/r"), std::string::npos) << out;
  }
  std::remove(path.c_str());
}

// Numbers in JSON are the shortest form of what the log printed: a percent
// becomes 0.8995, not 0.8995000000000001; 1.005 s becomes 1005 ms, not
// 1004.9999999999999.
TEST(LensCliBytesTest, JsonNumbersAreThePrintedDecimals) {
  const std::string path = ::testing::TempDir() + "/lens-decimals-" +
                           std::to_string(::getpid()) + ".log";
  {
    std::ofstream out(path);
    out << " iteration        1/      10 | train step timing in s: 1.005 | "
           "rocm mem usage/free/total/usage_ratio: "
           "253.38GB/2.60GB/255.98GB/89.95% | lm loss: 9.5E+00 |\n";
  }
  auto [code, out] = RunCliStatus("parse-log --format jsonl " + path);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("0.8995"), std::string::npos) << out;
  EXPECT_EQ(out.find("0.8995000"), std::string::npos) << out;
  EXPECT_NE(out.find(":1005"), std::string::npos) << out;
  EXPECT_EQ(out.find("1004.99"), std::string::npos) << out;
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Training, ParseLogCliTest,
                         ::testing::Values("alcf_resumed_2025.log",
                                           "polaris_2024.log",
                                           "megatron_deepspeed.log",
                                           "deepspeed.log", "torchtitan.log"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

}  // namespace
}  // namespace lens
