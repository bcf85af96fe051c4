// HTTP/1.1 request heads, parsed under limits before anything else sees them.
// Pure functions over bytes (no sockets), so the fuzzer and the unit tests
// drive exactly what the server runs.
#ifndef LENS_HTTP_REQUEST_PARSER_H_
#define LENS_HTTP_REQUEST_PARSER_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace lens::http {

struct RequestLimits {
  size_t request_line = 8 << 10;   // longer: 414
  size_t header_bytes = 16 << 10;  // header section after the request line: 431
  size_t header_count = 100;       // more header lines: 431
  size_t body = 1 << 20;           // a larger Content-Length: 413
};

// What was wrong with a request, as the status to answer and a message for
// the envelope (never echoing more than a short prefix of the client's bytes).
struct ParseError {
  int status = 400;
  std::string message;
};

// Finds where a request head ends while its bytes arrive. Keeps its position
// between calls, so a head that arrives one byte at a time costs linear time.
class HeadScanner {
 public:
  // Drops blank lines before a request line (RFC 9112 2.2), then looks for the
  // blank line that ends the head. Returns the head's length in bytes
  // (including that blank line), 0 while more bytes are needed, or the error
  // for a request line or header section over `limits` (414, 431), known as
  // soon as the bytes exceed them.
  std::variant<size_t, ParseError> Scan(std::string* buf,
                                        const RequestLimits& limits);
  // Starts over for the next request on the connection.
  void Reset() { *this = HeadScanner(); }

 private:
  size_t scanned_ = 0;
  size_t first_line_end_ = std::string_view::npos;
};

struct RequestHead {
  std::string method;
  std::string path;      // percent-decoded, query removed
  std::string raw_path;  // as sent (pattern routes split it before decoding)
  std::multimap<std::string, std::string> query;    // decoded, '+' is space
  std::multimap<std::string, std::string> headers;  // names lower case
  size_t content_length = 0;
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"
  bool expect_continue = false;
};

// Parses a head as delimited by HeadScanner. Errors: 400 (malformed line,
// conflicting lengths), 505 (not HTTP/1.x), 431 (too many headers), 411
// (Transfer-Encoding: bodies need a Content-Length), 413 (Content-Length over
// limits.body).
std::variant<RequestHead, ParseError> ParseHead(std::string_view head,
                                                const RequestLimits& limits);

// %XX decoding; malformed escapes stay as they are.
std::string PercentDecode(std::string_view text, bool plus_is_space);

}  // namespace lens::http

#endif  // LENS_HTTP_REQUEST_PARSER_H_
