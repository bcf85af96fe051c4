#include "core/json.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <limits>

namespace lens {
namespace {

TEST(AppendJsonStringTest, EscapesQuotesBackslashesAndControlBytes) {
  std::string out = "x";
  AppendJsonString("a\"b\\c\nd\te\x01\x1f\xc3\xa9", &out);
  EXPECT_EQ(out, "x\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\xc3\xa9\"");
}

TEST(AppendJsonStringTest, EmptyStringIsTwoQuotes) {
  std::string out;
  AppendJsonString("", &out);
  EXPECT_EQ(out, "\"\"");
}

TEST(AppendJsonStringTest, InvalidUtf8AndNulBecomeReplacementCharacters) {
  std::string out;
  AppendJsonString(std::string_view("a\xff"
                                    "b\0c\xc3",
                                    6),
                   &out);
  EXPECT_EQ(out,
            "\"a\xef\xbf\xbd"
            "b\xef\xbf\xbd"
            "c\xef\xbf\xbd\"");
  rapidjson::Document d;
  d.Parse(out.data(), out.size());
  EXPECT_FALSE(d.HasParseError());
}

TEST(JsonWriterTest, PlacesCommasAndColonsInNestedDocuments) {
  JsonWriter w;
  w.StartObject();
  w.Key("a");
  w.Int(1);
  w.Key("list");
  w.StartArray();
  w.StartObject();
  w.EndObject();
  w.StartArray();
  w.EndArray();
  w.String("x");
  w.Null();
  w.Bool(false);
  w.EndArray();
  w.Member("b", true);
  w.Member("c", "text");
  w.Key("d");
  w.RawValue("{\"raw\":[1,2]}");
  w.EndObject();
  EXPECT_EQ(w.str(),
            R"({"a":1,"list":[{},[],"x",null,false],"b":true,"c":"text",)"
            R"("d":{"raw":[1,2]}})");
}

TEST(JsonWriterTest, WritesIntegersExactlyAndDoublesShortest) {
  JsonWriter w;
  w.StartArray();
  w.Int64(std::numeric_limits<int64_t>::min());
  w.Uint64(std::numeric_limits<uint64_t>::max());
  w.Double(0.1 + 0.2);
  w.Double(0.8995);
  w.Double(2.0);
  w.Double(-0.0);
  w.Double(1e300);
  w.EndArray();
  EXPECT_EQ(w.str(),
            "[-9223372036854775808,18446744073709551615,"
            "0.30000000000000004,0.8995,2,-0,1e+300]");
  rapidjson::Document d;
  d.Parse(w.str().data(), w.str().size());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_EQ(d[2].GetDouble(), 0.1 + 0.2);
}

TEST(JsonWriterTest, NonFiniteIsNullOrAStringByOption) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  JsonWriter plain;
  plain.StartArray();
  plain.Double(nan);
  plain.Double(inf);
  plain.Double(-inf);
  plain.EndArray();
  EXPECT_EQ(plain.str(), "[null,null,null]");

  JsonWriter kept({.non_finite_as_strings = true});
  kept.StartArray();
  kept.Double(nan);
  kept.Double(inf);
  kept.Double(-inf);
  kept.EndArray();
  EXPECT_EQ(kept.str(), R"(["nan","inf","-inf"])");
}

TEST(JsonWriterTest, KeysAreEscapedAndRepairedLikeValues) {
  JsonWriter w;
  w.StartObject();
  w.Member(std::string_view("k\"\xff", 3), "v\n");
  w.EndObject();
  EXPECT_EQ(w.str(), "{\"k\\\"\xef\xbf\xbd\":\"v\\n\"}");
}

TEST(JsonWriterTest, InAnObjectAStringWhereANameIsDueIsTheName) {
  JsonWriter w;
  w.StartObject();
  w.String("kind");
  w.String("Secret");
  w.String("data");
  w.StartObject();
  w.String("a");
  w.Int(1);
  w.EndObject();
  w.Key("list");
  w.StartArray();
  w.String("x");
  w.String("y");
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"kind":"Secret","data":{"a":1},"list":["x","y"]})");
}

TEST(JsonWriterTest, VerbatimStringsKeepTheirBytesAndAreStillEscaped) {
  JsonWriter w({.verbatim_strings = true});
  w.StartObject();
  w.Member("uid", std::string_view("7a\xff"
                                   "b\0\"",
                                   6));
  w.EndObject();
  EXPECT_EQ(w.str(), std::string("{\"uid\":\"7a\xff"
                                 "b\\u0000\\\"\"}"));
}

TEST(JsonWriterTest, TakeMovesTheTextOutAndStartsAgain) {
  JsonWriter w;
  w.StartArray();
  w.Int(1);
  w.EndArray();
  EXPECT_EQ(w.Take(), "[1]");
  EXPECT_EQ(w.size(), 0u);
  w.StartArray();
  w.Int(2);
  w.EndArray();
  EXPECT_EQ(w.str(), "[2]");  // no comma left over from the first document
}

TEST(JsonWriterTest, StreamsIntoACallersStringThatIsDrainedBetweenValues) {
  std::string sink = "prefix ";
  std::string written;
  JsonWriter w(&sink);
  w.StartArray();
  for (int i = 0; i < 3; ++i) {
    w.StartObject();
    w.Member("i", i);
    w.EndObject();
    written += sink;  // written out, as a streamed document is
    sink.clear();
  }
  w.EndArray();
  written += sink;
  EXPECT_EQ(written, R"(prefix [{"i":0},{"i":1},{"i":2}])");
}

}  // namespace
}  // namespace lens
