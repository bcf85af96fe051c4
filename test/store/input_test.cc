// Bad input reaches neither SQL errors nor corrupted rows, on both backends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lens/store.h"
#include "store/text.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

class StoreInput : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  NodeRecord Node(std::string name) {
    NodeRecord n;
    n.name = std::move(name);
    n.updated_at = At(1700000000000000);
    return n;
  }
  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreInput, InvalidUtf8AndNulAreReplacedTheSameEverywhere) {
  NodeRecord n = Node("gpu-node-\xff\xfe");
  n.os_image = std::string("Ubuntu\0 22.04 \xc3\x28", 16);
  ASSERT_TRUE(store_->nodes().UpsertNode(n).ok());
  auto got = store_->nodes().GetNode("gpu-node-\xEF\xBF\xBD\xEF\xBF\xBD");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->os_image, "Ubuntu\xEF\xBF\xBD 22.04 \xEF\xBF\xBD(");
  // Valid multi-byte text is untouched.
  NodeRecord jp = Node("ノード-1");
  ASSERT_TRUE(store_->nodes().UpsertNode(jp).ok());
  EXPECT_TRUE(store_->nodes().GetNode("ノード-1").ok());
}

TEST_P(StoreInput, OversizedValuesNameTableAndField) {
  NodeRecord n = Node(std::string(300, 'a'));
  Status st = store_->nodes().UpsertNode(n);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("nodes.name"), std::string::npos) << st;
  n = Node("n1");
  n.labels = {{"k", std::string(70000, 'x')}};
  st = store_->nodes().UpsertNode(n);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("nodes.labels"), std::string::npos) << st;
  EXPECT_EQ(store_->nodes().ListNodes({})->total, 0);
}

TEST_P(StoreInput, MalformedJsonAndMissingKeysAreRejected) {
  // Labels are a map and cannot be malformed; the JSON columns that are
  // still text (a storage backend's config) are checked where they enter.
  StorageRecord storage;
  storage.name = "s3-main";
  storage.kind = "s3";
  storage.updated_at = At(1700000000000000);
  storage.config_json = "{\"zone\": ";
  Status st = store_->storage().UpsertStorage(storage);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not valid JSON at offset"), std::string::npos)
      << st;
  storage.config_json = "42";
  EXPECT_EQ(store_->storage().UpsertStorage(storage).code(),
            StatusCode::kInvalidArgument);
  NodeRecord n = Node("");
  st = store_->nodes().UpsertNode(n);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("must not be empty"), std::string::npos);
  n = Node("n1");
  n.updated_at = {};
  EXPECT_EQ(store_->nodes().UpsertNode(n).code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreInput, SqlInFiltersIsData) {
  ASSERT_TRUE(store_->nodes().UpsertNode(Node("n1")).ok());
  NodeQuery q;
  q.status = "' OR 1=1 --";
  q.name_prefix = "%";
  auto page = store_->nodes().ListNodes(q);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 0);
}

TEST_P(StoreInput, BadUrlsAreClearAndNeverShowPasswords) {
  auto s = Store::Open("mysql://root:hunter2@db/lens");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().find("hunter2"), std::string::npos);
  EXPECT_NE(s.status().message().find("unknown scheme"), std::string::npos);
  s = Store::Open("sqlite:///nonexistent-dir-xyz/lens.db");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent-dir-xyz/"),
            std::string::npos);
  StoreOptions no_create;
  no_create.create_if_missing = false;
  const std::string missing = "sqlite://" + testing::TempDir() +
                              "lens-absent-" + std::to_string(::getpid()) +
                              ".db";
  s = Store::Open(missing, no_create);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound) << s.status();
  EXPECT_FALSE(std::filesystem::exists(missing.substr(9)));
  s = Store::Open("postgresql://lens:hunter2@127.0.0.1:1/lens");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status();
  EXPECT_NE(s.status().message().find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(s.status().message().find("hunter2"), std::string::npos);
}

TEST(StoreText, SanitizeKeepsValidAndReplacesInvalid) {
  std::string s = "ok \xe2\x82\xac \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf";
  EXPECT_TRUE(store::SanitizeUtf8(&s));
  EXPECT_EQ(s,
            "ok \xe2\x82\xac \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD "
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD "
            "\xEF\xBF\xBD\xEF\xBF\xBD");
  std::string valid = "plain";
  EXPECT_FALSE(store::SanitizeUtf8(&valid));
}

// A labels column that is not a JSON object of strings (a row written by
// another tool, or by hand) reads back as empty labels; the row is kept.
TEST(StoreText, LabelsThatAreNotAnObjectReadBackEmpty) {
  const std::vector<std::string> bad = {
      "",        "not json",
      "{\"a\":", "{\"a\":\"b\"} trailing",
      "[1, 2]",  "\"text\"",
      "42",      "null",
      "{'a':1}", std::string("{\"a\":\"b\"}\0{\"c\":1}", 17)};
  for (const std::string& labels : bad) {
    EXPECT_TRUE(store::ReadLabels(labels).empty()) << labels;
  }
  const Labels mixed = store::ReadLabels(R"({"a":"b","n":1,"o":{"x":"y"}})");
  EXPECT_EQ(mixed, (Labels{{"a", "b"}})) << "non-string members are skipped";
}

TEST(StoreText, LabelsColumnIsValidUtf8Json) {
  auto column = store::LabelsColumn("pods", {{"k\xc3", "v\"\n"}});
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_EQ(*column, "{\"k\xEF\xBF\xBD\":\"v\\\"\\n\"}");
  EXPECT_EQ(store::ReadLabels(*column), (Labels{{"k\xEF\xBF\xBD", "v\"\n"}}));
  EXPECT_EQ(*store::LabelsColumn("pods", {}), "{}");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreInput,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
