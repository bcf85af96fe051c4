// The HTTP request-head parser: framing, limits known while bytes arrive,
// and the strictness that prevents request smuggling.
#include "http/request_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace lens::http {
namespace {

// Scans then parses a whole head; the error status, or 0 when it parsed.
int StatusOfHead(std::string text, RequestHead* out = nullptr,
                 RequestLimits limits = {}) {
  HeadScanner scanner;
  auto scan = scanner.Scan(&text, limits);
  if (auto* e = std::get_if<ParseError>(&scan)) return e->status;
  const size_t n = std::get<size_t>(scan);
  if (n == 0) return -1;  // incomplete
  auto head = ParseHead(std::string_view(text).substr(0, n), limits);
  if (auto* e = std::get_if<ParseError>(&head)) return e->status;
  if (out) *out = std::get<RequestHead>(head);
  return 0;
}

TEST(RequestParserTest, ParsesMethodPathQueryAndHeaders) {
  RequestHead h;
  ASSERT_EQ(StatusOfHead("GET /a%20b/c?x=1&y=two+words&x=%2F&flag HTTP/1.1\r\n"
                         "Host: lens\r\nX-Thing:  spaced value \t\r\n\r\n",
                         &h),
            0);
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.path, "/a b/c");
  ASSERT_EQ(h.query.count("x"), 2u);
  EXPECT_EQ(h.query.find("y")->second, "two words");
  EXPECT_EQ(h.query.count("flag"), 1u);
  EXPECT_EQ(h.headers.find("x-thing")->second, "spaced value");
  EXPECT_TRUE(h.keep_alive);
  EXPECT_EQ(h.content_length, 0u);
}

TEST(RequestParserTest, AHeadArrivingByteByByteEndsExactlyOnce) {
  const std::string request =
      "\r\nPOST /echo HTTP/1.1\nContent-Length: 3\n\nabc";
  HeadScanner scanner;
  std::string buf;
  size_t found = 0;
  for (char c : request) {
    buf += c;
    auto scan = scanner.Scan(&buf, {});
    ASSERT_FALSE(std::holds_alternative<ParseError>(scan));
    if (std::get<size_t>(scan) != 0) {
      found = std::get<size_t>(scan);
      break;
    }
  }
  // The leading blank line is dropped; bare LF line ends are accepted.
  ASSERT_EQ(found, buf.size());
  EXPECT_EQ(buf.substr(0, 4), "POST");
  auto head = ParseHead(buf, {});
  ASSERT_TRUE(std::holds_alternative<RequestHead>(head));
  EXPECT_EQ(std::get<RequestHead>(head).content_length, 3u);
}

TEST(RequestParserTest, LimitsAreKnownBeforeTheHeadEnds) {
  RequestLimits limits;
  limits.request_line = 100;
  limits.header_bytes = 300;
  HeadScanner scanner;
  std::string line = "GET /" + std::string(200, 'a');  // no line end yet
  auto scan = scanner.Scan(&line, limits);
  ASSERT_TRUE(std::holds_alternative<ParseError>(scan));
  EXPECT_EQ(std::get<ParseError>(scan).status, 414);

  scanner.Reset();
  std::string headers = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 20; ++i)
    headers += "X-" + std::to_string(i) + ": aaaaaaaaaaaaaaaaaaaa\r\n";
  scan = scanner.Scan(&headers, limits);
  ASSERT_TRUE(std::holds_alternative<ParseError>(scan));
  EXPECT_EQ(std::get<ParseError>(scan).status, 431);
  EXPECT_NE(std::get<ParseError>(scan).message.find("300"), std::string::npos);
}

TEST(RequestParserTest, TooManyHeaderLinesIs431) {
  std::string text = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) text += "A: b\r\n";
  EXPECT_EQ(StatusOfHead(text + "\r\n"), 431);
}

TEST(RequestParserTest, AGarbageFirstLineIsRefusedWhenItEnds) {
  HeadScanner scanner;
  std::string junk = "\x16\x03\x01 garbage here\r\nmore";
  auto scan = scanner.Scan(&junk, {});
  ASSERT_TRUE(std::holds_alternative<ParseError>(scan));
  EXPECT_EQ(std::get<ParseError>(scan).status, 400);
  // The message shows a printable excerpt, never raw bytes.
  for (char c : std::get<ParseError>(scan).message)
    EXPECT_GE(static_cast<unsigned char>(c), 0x20);
}

TEST(RequestParserTest, RefusesWhatCouldSmuggleARequest) {
  EXPECT_EQ(StatusOfHead("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n"),
            400);
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                         "Content-Length: 4\r\n\r\n"),
            400);
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: 3x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("GET / HTTP/1.1\r\nA: x\x01y\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("GET /a%00b HTTP/1.1\r\n\r\n"), 400);
  // Identical repeated lengths are harmless.
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                         "Content-Length: 3\r\n\r\n"),
            0);
}

TEST(RequestParserTest, StatusesForVersionsBodiesAndTargets) {
  EXPECT_EQ(StatusOfHead("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(StatusOfHead("GET / HTTX/1.1\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("GET  / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(StatusOfHead("GET relative HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(
      StatusOfHead("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
      411);
  RequestLimits limits;
  limits.body = 10;
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n",
                         nullptr, limits),
            413);
  EXPECT_EQ(StatusOfHead("POST / HTTP/1.1\r\nContent-Length: "
                         "99999999999999999999999\r\n\r\n"),
            400);
  RequestHead h;
  ASSERT_EQ(
      StatusOfHead("GET http://node:8989/metrics?a=b HTTP/1.1\r\n\r\n", &h), 0);
  EXPECT_EQ(h.path, "/metrics");
  EXPECT_EQ(h.query.find("a")->second, "b");
}

TEST(RequestParserTest, KeepAliveAndExpectFollowTheVersion) {
  RequestHead h;
  ASSERT_EQ(StatusOfHead("GET / HTTP/1.0\r\n\r\n", &h), 0);
  EXPECT_FALSE(h.keep_alive);
  ASSERT_EQ(
      StatusOfHead("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &h), 0);
  EXPECT_TRUE(h.keep_alive);
  ASSERT_EQ(
      StatusOfHead("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n", &h), 0);
  EXPECT_FALSE(h.keep_alive);
  ASSERT_EQ(StatusOfHead("PUT / HTTP/1.1\r\nExpect: 100-Continue\r\n"
                         "Content-Length: 5\r\n\r\n",
                         &h),
            0);
  EXPECT_TRUE(h.expect_continue);
}

TEST(RequestParserTest, PercentDecodingLeavesMalformedEscapes) {
  EXPECT_EQ(PercentDecode("a%2", false), "a%2");
  EXPECT_EQ(PercentDecode("%zz%41", false), "%zzA");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
}

}  // namespace
}  // namespace lens::http
