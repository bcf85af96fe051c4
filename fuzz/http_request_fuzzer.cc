// libFuzzer target for the HTTP server's request parser (built with
// LENS_BUILD_FUZZERS=ON and clang).
//
// Input layout: byte 0 chooses the chunk size the bytes arrive in and whether
// the smallest limits apply; the rest is what a client sent. Besides crashes
// and UB, it checks the scanner's contract: where a head ends (or which error
// it is) does not depend on how the bytes were split, errors are the limit
// statuses or 400 family, and a head that ends also parses or fails cleanly
// with a status in 400..505.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>

#include "http/request_parser.h"

namespace {

// The scanner's verdict on `data` fed `chunk` bytes at a time: the head's
// length, or -status.
long Scan(const std::string& data, size_t chunk,
          const lens::http::RequestLimits& limits, std::string* buf) {
  lens::http::HeadScanner scanner;
  buf->clear();
  for (size_t at = 0; at < data.size(); at += chunk) {
    buf->append(data, at, chunk);
    auto r = scanner.Scan(buf, limits);
    if (auto* e = std::get_if<lens::http::ParseError>(&r)) return -e->status;
    if (std::get<size_t>(r) != 0) return static_cast<long>(std::get<size_t>(r));
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  lens::http::RequestLimits limits;
  if (control & 0x80) {
    limits.request_line = 64;
    limits.header_bytes = 256;
    limits.header_count = 4;
    limits.body = 16;
  }
  const size_t chunk = 1 + (control & 0x3f);
  std::string whole_buf, split_buf;
  const long whole = Scan(input, input.size() + 1, limits, &whole_buf);
  const long split = Scan(input, chunk, limits, &split_buf);
  // A split can find an error earlier than the whole (a limit crossed before
  // the line end arrived), never a different head.
  if (whole > 0 && split > 0 && whole != split) {
    std::fprintf(stderr, "head length %ld whole, %ld split by %zu\n", whole,
                 split, chunk);
    std::abort();
  }
  if (split < 0 &&
      !(-split == 400 || -split == 414 || -split == 431 || -split == 505)) {
    std::fprintf(stderr, "scanner status %ld\n", -split);
    std::abort();
  }
  if (whole > 0) {
    auto head = lens::http::ParseHead(
        std::string_view(whole_buf).substr(0, static_cast<size_t>(whole)),
        limits);
    if (auto* e = std::get_if<lens::http::ParseError>(&head)) {
      if (e->status < 400 || e->status > 505 || e->message.empty())
        std::abort();
    } else {
      const auto& h = std::get<lens::http::RequestHead>(head);
      if (h.method.empty() || h.path.empty() || h.content_length > limits.body)
        std::abort();
      if (h.headers.size() > limits.header_count) std::abort();
    }
  }
  (void)lens::http::PercentDecode(input, control & 1);
  return 0;
}
