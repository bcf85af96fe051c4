// libFuzzer target for fluent-bit `http` output bodies as lens-telemetry
// receives them on /v1/logs (built with LENS_BUILD_FUZZERS=ON and clang).
//
// Input layout: byte 0 chooses the format (0: json, 1: json_lines, 2: by
// the first byte); the rest is the body. Besides crashes and UB, it checks
// the decoder's contract: a body is taken whole or not at all (records only
// on success), every record's views lie inside the decoded buffer, and a
// body that decodes is ingested (parsers fed, no store) without an error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "telemetry/log_decode.h"
#include "telemetry/logs.h"

namespace {

using lens::telemetry::DecodedLogs;
using lens::telemetry::LogFormat;

void Fail(const char* what) {
  std::fprintf(stderr, "fluentbit_logs_fuzzer: %s\n", what);
  std::abort();
}

bool Inside(std::string_view view, const std::string& buffer) {
  if (view.empty()) return true;
  return view.data() >= buffer.data() &&
         view.data() + view.size() <= buffer.data() + buffer.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr LogFormat kFormats[] = {
      LogFormat::kJson, LogFormat::kJsonLines, LogFormat::kAuto};
  const LogFormat format = kFormats[data[0] % 3];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  lens::telemetry::LogDecodeLimits limits;
  limits.max_message_bytes = 4096;  // exercise truncation
  DecodedLogs decoded;
  const lens::Status st =
      lens::telemetry::DecodeFluentBitLogs(body, format, limits, &decoded);
  if (!st.ok()) {
    if (!decoded.records.empty()) Fail("records left after an error");
    return 0;
  }
  for (const auto& r : decoded.records) {
    for (std::string_view v :
         {r.message, r.time_text, r.pod_name, r.namespace_name, r.pod_id,
          r.container_name, r.host}) {
      if (!Inside(v, decoded.buffer)) Fail("a view outside the buffer");
    }
    if (r.message.size() > limits.max_message_bytes) {
      Fail("a message over the limit");
    }
  }
  // The whole path without a store: one ingest per process run is enough
  // to keep parser state across inputs (as across requests).
  static lens::telemetry::LogIngest* ingest = new lens::telemetry::LogIngest(
      lens::telemetry::LogIngestOptions{}, nullptr, {});
  const lens::Timestamp now{std::chrono::microseconds(1795624473000000)};
  if (!ingest->Ingest(body, format, now).ok()) {
    Fail("a body that decodes was refused by the ingest");
  }
  if (!ingest->Flush(now).ok()) Fail("flush without a store failed");
  return 0;
}
