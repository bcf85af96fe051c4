// The API server's JSON decoded where it enters: watch event lines (the
// object's text taken from the line as written, or re-serialised when the
// line is shaped otherwise), list pages and Status bodies.
#include "kube/kube_json.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

namespace lens {
namespace {

constexpr char kPod[] =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml",)"
    R"("uid":"u-1","resourceVersion":"42"},"spec":{"nodeName":"n1"}})";

bool SameJson(const std::string& a, const std::string& b) {
  rapidjson::Document x, y;
  x.Parse(a.c_str());
  y.Parse(b.c_str());
  return !x.HasParseError() && !y.HasParseError() && x == y;
}

TEST(KubeJsonTest, AWatchEventKeepsItsObjectsTextWhole) {
  const std::string line =
      std::string(R"({"type":"MODIFIED","object":)") + kPod + "}\n";
  auto event = ParseKubeWatchEvent(line, "watch pods");
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->type, KubeWatchType::kModified);
  EXPECT_EQ(event->object.uid, "u-1");
  EXPECT_EQ(event->object.namespace_name, "ml");
  EXPECT_EQ(event->object.resource_version, "42");
  EXPECT_EQ(event->object.json, kPod);  // the slice, byte for byte

  // Another member order or spacing: re-serialised, the same object.
  const std::string spaced =
      std::string(R"({ "object": )") + kPod + R"(, "type": "ADDED" })";
  auto other = ParseKubeWatchEvent(spaced, "watch pods");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->type, KubeWatchType::kAdded);
  EXPECT_TRUE(SameJson(other->object.json, kPod)) << other->object.json;
}

TEST(KubeJsonTest, BookmarksErrorsAndBadLines) {
  auto bookmark = ParseKubeWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"77"}}})",
      "w");
  ASSERT_TRUE(bookmark.ok());
  EXPECT_EQ(bookmark->type, KubeWatchType::kBookmark);
  EXPECT_EQ(bookmark->object.resource_version, "77");
  auto expired = ParseKubeWatchEvent(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (90)","reason":"Expired","code":410}})json",
      "w");
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired->type, KubeWatchType::kError);
  EXPECT_EQ(expired->error.code, 410);
  EXPECT_EQ(expired->error.reason, "Expired");
  for (const char* bad : {"", "not json", R"({"type":"ADDED"})",
                          R"({"type":"SOMETHING","object":{}})",
                          R"({"type":"ADDED","object":{"kind":"Pod"}})"}) {
    auto e = ParseKubeWatchEvent(bad, "watch pods");
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(e.status().message().find("watch pods"), std::string::npos)
        << e.status();
  }
}

TEST(KubeJsonTest, ListPagesCarryVersionContinueAndItems) {
  const std::string body =
      std::string(
          R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"abc"},"items":[)") +
      kPod + "]}";
  auto page = ParseKubeList(body, "list pods");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->resource_version, "9");
  EXPECT_EQ(page->continue_token, "abc");
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_TRUE(SameJson(page->items[0].json, kPod));
  EXPECT_EQ(ParseKubeList(R"({"kind":"Status"})", "list pods").status().code(),
            StatusCode::kInvalidArgument);
  const KubeStatusInfo status = ParseKubeStatus(
      R"({"kind":"Status","code":409,"reason":"Conflict","message":"the object has been modified"})");
  EXPECT_EQ(status.code, 409);
  EXPECT_EQ(status.reason, "Conflict");
}

}  // namespace
}  // namespace lens
