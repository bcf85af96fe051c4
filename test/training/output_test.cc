#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>

#include "lens/training.h"

namespace lens {
namespace {

TEST(TrainingJsonTest, RecordIsValidJsonWithOnlyPresentFields) {
  IterationRecord r;
  r.run = 2;
  r.iteration = 42;
  r.line = 9;
  r.format = TrainingFormat::kPrimus;
  r.Set(IterationField::kLoss, NAN);
  r.Set(IterationField::kElapsedMs, 1234.5);
  r.Set(IterationField::kConsumedSamples, 1024);
  r.Set(IterationField::kMfu, INFINITY);
  r.extra.emplace_back("ds \"tflops\"", 7.5);
  std::string out;
  AppendJson(r, &out);
  rapidjson::Document d;
  d.Parse(out.c_str());
  ASSERT_FALSE(d.HasParseError()) << out;
  EXPECT_STREQ(d["type"].GetString(), "iteration");
  EXPECT_EQ(d["run"].GetInt(), 2);
  EXPECT_EQ(d["iteration"].GetInt(), 42);
  EXPECT_STREQ(d["format"].GetString(), "primus");
  EXPECT_STREQ(d["loss"].GetString(), "nan");
  EXPECT_STREQ(d["mfu"].GetString(), "inf");
  EXPECT_DOUBLE_EQ(d["elapsed_ms"].GetDouble(), 1234.5);
  EXPECT_TRUE(d["consumed_samples"].IsInt64());
  EXPECT_FALSE(d.HasMember("learning_rate"));
  EXPECT_FALSE(d.HasMember("timestamp"));
  EXPECT_DOUBLE_EQ(d["extra"]["ds \"tflops\""].GetDouble(), 7.5);
}

TEST(TrainingJsonTest, EventHasTypeNameAndEscapedPath) {
  TrainingEvent e;
  e.type = TrainingEventType::kCheckpointSaveEnd;
  e.iteration = 100;
  e.duration_s = 2.5;
  e.path = "/ckpt/\"x\"\n";
  std::string out;
  AppendJson(e, &out);
  rapidjson::Document d;
  d.Parse(out.c_str());
  ASSERT_FALSE(d.HasParseError()) << out;
  EXPECT_STREQ(d["type"].GetString(), "checkpoint_save_end");
  EXPECT_EQ(d["iteration"].GetInt(), 100);
  EXPECT_STREQ(d["path"].GetString(), "/ckpt/\"x\"\n");
}

TEST(TrainingCsvTest, RowsHaveTheHeaderColumnCount) {
  IterationRecord r;
  r.iteration = 3;
  r.Set(IterationField::kLoss, 1.25);
  std::string header = CsvHeader(), row;
  AppendCsvRow(r, &row);
  auto count = [](const std::string& s) {
    return std::count(s.begin(), s.end(), ',');
  };
  EXPECT_EQ(count(header), count(row));
  EXPECT_NE(row.find(",1.25,"), std::string::npos);
  EXPECT_EQ(header.rfind("run,iteration,", 0), 0u);
}

TEST(TrainingFieldsTest, NamesAreUniqueSnakeCase) {
  std::set<std::string_view> names;
  for (const auto& f : IterationFields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    for (char c : f.name)
      EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9'));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(IterationField::kCount));
}

}  // namespace
}  // namespace lens
